"""A model exported by copter, edited with a tool that drops Parquet metadata (pandas, pyarrow's
``Table.from_pylist``) and given to ``copter diff`` as NEW read as a minimisation with offset 0: the delta turned the
state's maximisation into a minimisation without a word, and the next step ended OPTIMAL at 0, every client with
nothing (a user's trial, session 52). NEW without those keys now keeps OLD's sense and offset, with a warning; a
delta that does turn the sense is applied, and the round says so."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from formats.io import read_delta, write_problem
from tests.helpers import client_allocation, run_main


def _state(tmp_path, capsys, offset: float = 0.0):
    base = tmp_path / "base.parquet"
    write_problem(client_allocation(n_clients=6).replace(offset=offset), base)
    st = tmp_path / "st"
    assert run_main(capsys, "init", base, "--state", st)[0] == 0
    old = tmp_path / "old.parquet"
    assert run_main(capsys, "export", "-o", old, "--state", st)[0] == 0
    return st, old


def _edited_without_metadata(old, new, cap: float) -> None:
    rows = pq.read_table(old).to_pylist()
    for r in rows:
        if r["kind"] == "con" and r["con"] == "cap/a":
            r["upper"] = cap
    pq.write_table(pa.Table.from_pylist(rows), new)  # from_pylist: no schema, no metadata
    assert not any(k.startswith(b"copter.") for k in (pq.read_schema(new).metadata or {}))


def test_diff_keeps_olds_sense_and_offset_when_new_has_no_metadata(tmp_path, capsys):
    st, old = _state(tmp_path, capsys, offset=7.5)
    first = json.loads(run_main(capsys, "show", "--json", "--state", st)[1])["objective"]
    new, delta = tmp_path / "new.parquet", tmp_path / "d.parquet"
    _edited_without_metadata(old, new, 2.0)
    code, out, err = run_main(capsys, "diff", old, new, "-o", delta, "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["sense_changed"] is False and res["offset_changed"] is False
    assert res["counts"]["con"] == 1
    said = " ".join(res["warnings"])
    assert "no copter.sense" in said and "OLD's max is kept" in said and "no copter.objective_offset" in said
    d = read_delta(delta)
    assert d.sense is None and d.offset is None
    code, out, err = run_main(capsys, "step", delta, "--state", st, "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["status"] == "OPTIMAL" and 7.5 < rep["objective"] <= first  # still a maximisation, offset kept
    assert not any("turns the objective" in w for w in rep.get("warnings", []))


def test_a_delta_that_turns_the_sense_is_applied_and_said(tmp_path, capsys):
    st, old = _state(tmp_path, capsys)
    new, delta = tmp_path / "new.parquet", tmp_path / "d.parquet"
    _edited_without_metadata(old, new, 2.0)
    t = pq.read_table(new)
    pq.write_table(t.replace_schema_metadata({b"copter.sense": b"min"}), new)  # said in NEW: a real change
    code, out, err = run_main(capsys, "diff", old, new, "-o", delta, "--json")
    assert code == 0 and json.loads(out)["sense_changed"] is True, err
    code, out, err = run_main(capsys, "step", delta, "--state", st, "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["objective"] == 0.0  # minimising nonnegative costs: nothing allocated, as asked
    assert any("turns the objective from a maximisation into a minimisation" in w for w in rep["warnings"]), rep
