"""A folder in the state whose name only looks like a generation's (``gen-0000019``: seven digits, ``gen-００００１９``:
fullwidth digits, which ``\\d`` matched) is no generation: ``gen_name`` writes six ASCII digits or more, no zero
padding beyond six. Such a folder was taken for round 19: a ``step`` after a rollback tried to move
``gen-000019`` into ``abandoned/`` and ended exit 1 (FileNotFoundError) leaving an empty ``abandoned/<stamp>``
folder, and the lock's clean-up removed the folder as an incomplete generation."""

from __future__ import annotations

import shutil

import pytest

from formats.checkpoint import StateStore
from formats.generation import gen_round
from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from solver.model.settings import Settings
from tests.helpers import run_main, small_lp


@pytest.mark.parametrize("name", ["gen-0000019", "gen-\uff10\uff10\uff10\uff10\uff11\uff19", "gen-000019\n"])
def test_a_name_that_only_looks_like_a_generation_is_left_alone(tmp_path, capsys, name):
    st = tmp_path / "st"
    rounds.init(small_lp(), st, Settings())
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), tmp_path / "d1.parquet")
    rounds.step(tmp_path / "d1.parquet", st)
    rounds.rollback(st, to=0)
    stray = st / name
    shutil.copytree(st / "gen-000001", stray)  # e.g. a copy kept aside by hand
    assert StateStore(st).generations() == [0, 1]
    code, out, err = run_main(capsys, "step", str(tmp_path / "d1.parquet"), "--state", str(st))
    assert code == 0, (out, err)
    assert stray.is_dir() and (stray / "generation.json").is_file()  # neither moved nor removed
    assert (st / "CURRENT").read_text() == "1\n"


def test_gen_round_reads_the_names_gen_name_writes():
    assert gen_round("gen-000001") == 1 and gen_round("gen-1234567") == 1234567
    for name in ("gen-0000019", "gen-00001", "gen-\uff10\uff10\uff10\uff10\uff11\uff19", "gen-000019\n", "xgen-000001",
                 "gen-000001-old", "gen--00001"):
        assert gen_round(name) is None, name
