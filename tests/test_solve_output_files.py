"""``copter solve PROBLEM -o FILE`` (docs/formats.md "Round outputs"): the duals go to FILE's twin, ``sol.parquet`` ->
``sol.duals.parquet`` and ``sol.pq`` -> ``sol.pq.duals.parquet``; both are written whatever the status, a failed
solve's holding the point it stopped at (its exit code and report say it is no solution)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from formats.io import write_problem
from tests.helpers import run_main, small_lp


@pytest.mark.parametrize("name, twin", [("sol.parquet", "sol.duals.parquet"), ("sol.pq", "sol.pq.duals.parquet")])
def test_the_duals_twin_and_a_failed_solves_files(tmp_path, capsys, name, twin):
    write_problem(small_lp(), tmp_path / "p.parquet")
    code, out, err = run_main(capsys, "solve", tmp_path / "p.parquet", "-o", tmp_path / name, "--json",
                              "--iteration-limit", "1", "--presolve", "off")
    assert code == 5 and json.loads(out)["status"] == "ITERATION_LIMIT", (code, out, err)
    assert pq.read_schema(tmp_path / name).names == ["name", "value", "reduced_cost"]
    assert pq.read_schema(tmp_path / twin).names == ["name", "activity", "dual"]
