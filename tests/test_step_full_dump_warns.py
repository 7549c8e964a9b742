"""A full dump of the model written by pandas or pyarrow (no copter metadata) and given to ``copter step`` is a
delta: it changes only what it names, so the variables the dump left out keep their values. A user meaning it as the
new model got another model without a word (helper-219: Sia 64, 74.35 where the dump's optimum is 71.71). Such a
delta now warns, naming how many it leaves out and how to make the delta; a small delta, a dump that names every
variable, and a file copter wrote do not."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq

from formats.io import write_problem
from tests.helpers import client_allocation, run_main


def _state(tmp_path, capsys):
    write_problem(client_allocation(n_clients=10), tmp_path / "base.parquet")  # 20 variables
    st = tmp_path / "st"
    assert run_main(capsys, "init", tmp_path / "base.parquet", "--state", st)[0] == 0
    assert run_main(capsys, "export", "-o", tmp_path / "now.parquet", "--state", st)[0] == 0
    return st, pq.read_table(tmp_path / "now.parquet").to_pylist()


def _step(tmp_path, capsys, st, rows, name, meta=None) -> list[str]:
    t = pa.Table.from_pylist(rows)
    pq.write_table(t.replace_schema_metadata(meta) if meta else t, tmp_path / name)
    code, out, err = run_main(capsys, "step", tmp_path / name, "--state", st, "--json")
    assert code == 0, err
    return [w for w in json.loads(out).get("warnings", []) if "like a full dump" in w]


def test_a_dump_leaving_variables_out_warns(tmp_path, capsys):
    st, rows = _state(tmp_path, capsys)
    gone = {"c9/a", "c9/b"}  # the dump of a model without client 9's variables
    dump = [r for r in rows if r["var"] not in gone and not (r["kind"] == "con" and r["con"] == "c9/demand")]
    said = _step(tmp_path, capsys, st, dump, "dump.parquet")
    assert len(said) == 1 and "names 18 of the model's 20 variables" in said[0] and "'c9/a'" in said[0], said
    assert "copter diff current.parquet NEW.parquet" in said[0]


def test_a_small_delta_a_whole_dump_and_a_marked_file_do_not(tmp_path, capsys):
    st, rows = _state(tmp_path, capsys)
    small = [r for r in rows if r["kind"] == "var"][:3]
    assert _step(tmp_path, capsys, st, small, "small.parquet") == []
    assert _step(tmp_path, capsys, st, rows, "whole.parquet") == []  # every variable named: nothing left out
    part = [r for r in rows if r["var"] not in {"c9/a", "c9/b"}]
    assert _step(tmp_path, capsys, st, part, "marked.parquet", {b"copter.format": b"delta"}) == []
    costs = [{**r, "value": r["value"] * 1.1} for r in rows if r["kind"] == "var" and r["var"] != "c9/a"]
    assert _step(tmp_path, capsys, st, costs, "costs.parquet") == []  # 19 of 20 costs moved: a delta, not a dump
