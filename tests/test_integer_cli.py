"""`copter solve` / `copter init` / `copter step` on a MILP: integerization report and --integer-fallback."""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import write_problem
from solver.model.problem import Problem

runner = CliRunner()


def _milp(path):
    # one configuration per job (2 jobs x 2 configs), GPUs <= 3; maximize value
    A = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 2, 1, 2]], float)
    p = Problem.from_arrays(cost=[1.0, 1.8, 1.2, 2.0], col_lower=[0] * 4, col_upper=[1] * 4,
                            row_lower=[-np.inf] * 3, row_upper=[1, 1, 3], matrix=A, integrality=[True] * 4,
                            sense=-1)
    write_problem(p, path)
    return p


def _infeasible_milp(path):
    p = Problem.from_arrays(cost=[1.0], col_lower=[0], col_upper=[3], row_lower=[1], row_upper=[1],
                            matrix=np.array([[2.0]]), integrality=[True])
    write_problem(p, path)


def test_solve_reports_the_integer_point_and_its_bound(tmp_path):
    _milp(tmp_path / "m.parquet")
    res = runner.invoke(app, ["solve", str(tmp_path / "m.parquet"), "--integer-fallback", "none", "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    text = json.dumps(rep)
    assert "integer_objective" in text and "lp_bound" in text


def test_solve_without_fallback_reports_no_integer_solution(tmp_path):
    _infeasible_milp(tmp_path / "bad.parquet")
    res = runner.invoke(app, ["solve", str(tmp_path / "bad.parquet"), "--integer-fallback", "none", "--json"])
    assert res.exit_code != 0
    rep = json.loads(res.stdout)
    assert rep["status"] == "NO_INTEGER_SOLUTION"
    assert rep["objective"] is None and rep["point_feasible"] is False  # the rounded point is no answer
    text = runner.invoke(app, ["solve", str(tmp_path / "bad.parquet"), "--integer-fallback", "none"])
    assert "Objective value     : - (no integer-feasible point)" in text.output


def test_unknown_fallback_is_a_usage_error(tmp_path):
    _milp(tmp_path / "m.parquet")
    res = runner.invoke(app, ["solve", str(tmp_path / "m.parquet"), "--integer-fallback", "cplex"])
    assert res.exit_code == 2
    res = runner.invoke(app, ["init", str(tmp_path / "m.parquet"), "--state", str(tmp_path / "st"),
                              "--integer-fallback", "cplex"])
    assert res.exit_code == 2


def test_init_accepts_the_fallback_option_and_stores_an_integer_round(tmp_path):
    _milp(tmp_path / "m.parquet")
    res = runner.invoke(app, ["init", str(tmp_path / "m.parquet"), "--state", str(tmp_path / "st"),
                              "--integer-fallback", "none", "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["status"] in ("OPTIMAL", "FEASIBLE")
    # the round report carries the integerization report and the integer point's objective
    assert rep["mip"]["source"] == "heuristic" and {s["step"] for s in rep["mip"]["steps"]} >= {"round"}
    assert isinstance(rep["objective"], float)
