"""``copter export`` names the model after the base problem and the round exported, ``<base name>-round-N``: an
export of round 4 kept the base's name (``NAME sia-128gpus-max-round0``), passing the later round off as the base
model to whoever read the file (an input hunt). The state folder's name stands for a base without a name
(tests/test_cli_state.py); a space in the name is written as ``_`` (free-format MPS splits fields on it)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from tests.helpers import cli_json, small_lp


def _named_state(tmp_path, name: str):
    """A state of ``small_lp`` read from ``name``.mps (an MPS problem is named after its file), at round 2."""
    base = tmp_path / f"{name}.mps"
    write_problem(small_lp(), base)
    st = tmp_path / "st"
    code, out = cli_json("init", base, "--state", st, "--json")
    assert code == 0, out
    for r in (1, 2):
        d = tmp_path / f"d{r}.parquet"
        write_delta(Delta.concat([Delta.vars(["x3"], cost=[float(r)])], base_round=r - 1), d)
        code, out = cli_json("step", d, "--state", st, "--json")
        assert code == 0, out
    return st


def _name_line(path) -> list[str]:
    return path.read_text().splitlines()[0].split()


def test_an_exported_round_is_named_with_its_round(tmp_path):
    st = _named_state(tmp_path, "sia-128gpus-max-round0")
    for args, round_ in (((), 2), (("--round", "1"), 1), (("--round", "0"), 0)):
        out = tmp_path / f"r{round_}.mps"
        code, answer = cli_json("export", "--state", st, "-o", out, *args, "--json")
        assert code == 0 and json.loads(answer)["round"] == round_, answer
        assert _name_line(out) == ["NAME", f"sia-128gpus-max-round0-round-{round_}"]


def test_a_parquet_export_carries_the_same_name(tmp_path):
    st = _named_state(tmp_path, "base")
    out = tmp_path / "r2.parquet"
    code, answer = cli_json("export", "--state", st, "-o", out, "--json")
    assert code == 0, answer
    meta = pq.read_schema(out).metadata
    assert meta[b"copter.name"] == b"base-round-2" and meta[b"copter.round"] == b"2"


def test_a_name_with_a_space_stays_one_mps_field(tmp_path):
    st = _named_state(tmp_path, "my model")
    out = tmp_path / "r2.mps"
    code, answer = cli_json("export", "--state", st, "-o", out, "--json")
    assert code == 0, answer
    assert _name_line(out) == ["NAME", "my_model-round-2"]
