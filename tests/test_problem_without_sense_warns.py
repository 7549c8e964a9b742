"""A Parquet problem without ``copter.sense`` (pandas and pyarrow's ``Table.from_*`` drop a file's metadata) is a
minimisation. A maximisation written that way (a TE ring's max flow) ended OPTIMAL at 0 through ``init`` and
``solve`` without a word: the right optimum of the wrong model. Now the reader warns, naming the file and the key
to write; a file that says its sense, that copter wrote (``copter.format``: its writer knew the sense it was
given, min by default), or whose costs are all 0, reads without the warning."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from tests.helpers import client_allocation, run_main


def _without_metadata(tmp_path, keep: dict | None = None):
    src, bare = tmp_path / "with.parquet", tmp_path / "bare.parquet"
    write_problem(client_allocation(n_clients=4), src)
    t = pq.read_table(src)
    assert t.schema.metadata[b"copter.sense"] == b"max"
    pq.write_table(t.replace_schema_metadata(keep), bare)
    return src, bare


@pytest.mark.parametrize("command", ["init", "solve"])
def test_a_problem_without_sense_is_minimised_with_a_warning(tmp_path, capsys, command):
    _, bare = _without_metadata(tmp_path)
    args = [command, bare, "--json"] + (["--state", tmp_path / "st"] if command == "init" else [])
    code, out, err = run_main(capsys, *args)
    assert code == 0, err
    said = [w for w in json.loads(out).get("warnings", []) if "no copter.sense" in w]
    assert len(said) == 1 and str(bare) in said[0] and "copter.sense=max" in said[0], out
    assert "no copter.sense" in err


def test_a_problem_that_says_its_sense_reads_without_the_warning(tmp_path, capsys):
    src, said_min = _without_metadata(tmp_path, {b"copter.sense": b"min"})
    for path in (src, said_min):
        code, out, err = run_main(capsys, "solve", path, "--json")
        assert code == 0 and "copter.sense" not in err and "copter.sense" not in out, (path, err)


def test_a_zero_objective_needs_no_sense(tmp_path, capsys):
    src = tmp_path / "zero.parquet"
    problem = client_allocation(n_clients=4)
    write_problem(problem.replace(cost=problem.cost * 0), src)
    t = pq.read_table(src)
    pq.write_table(t.replace_schema_metadata(None), src)
    code, out, err = run_main(capsys, "solve", src, "--json")
    assert code == 0 and "copter.sense" not in err, err


def test_diff_gives_new_no_minimised_warning_and_keeps_olds(tmp_path, capsys):
    src, bare = _without_metadata(tmp_path)
    code, out, err = run_main(capsys, "diff", src, bare, "-o", tmp_path / "d.parquet", "--json")
    assert code == 0, err
    said = " ".join(json.loads(out).get("warnings", []))
    assert "is minimised" not in said and "OLD's max is kept" in said  # diff's own note, not the reader's
    code, out, err = run_main(capsys, "diff", bare, src, "-o", tmp_path / "d2.parquet", "--json")
    assert code == 0, err
    assert any(str(bare) in w and "is minimised" in w for w in json.loads(out)["warnings"])  # OLD's own note


def test_a_problem_copter_wrote_without_a_sense_reads_without_the_warning(tmp_path, capsys):
    d = Delta.concat([Delta.vars(["x"], cost=[1.0], upper=[4.0]), Delta.cons(["r"], lower=[1.0]),
                      Delta.coefs(["x"], ["r"], [1.0])])
    d.format = "problem"
    write_delta(d, tmp_path / "p.parquet")
    meta = pq.read_schema(tmp_path / "p.parquet").metadata
    assert meta[b"copter.format"] == b"problem" and meta[b"copter.sense"] == b"min"  # a problem file says its sense
    code, out, err = run_main(capsys, "solve", tmp_path / "p.parquet", "--json")
    assert code == 0 and json.loads(out)["objective"] == 1.0 and "copter.sense" not in err, err
