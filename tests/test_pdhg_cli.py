"""``copter solve``: JSON report, exit codes per status, solution/duals Parquet files, usage errors."""

from __future__ import annotations

import json

import numpy as np
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import write_problem
from solver.model.problem import Problem

runner = CliRunner()


def _write(tmp_path, name, **kw) -> str:
    base = dict(cost=[1.0, 2.0], matrix=np.array([[1.0, 1.0]]), row_lower=[1.0], row_upper=[np.inf],
                col_lower=[0.0, 0.0], col_upper=[np.inf, np.inf], col_names=["a", "b"], row_names=["need"])
    base.update(kw)
    path = tmp_path / name
    write_problem(Problem.from_arrays(**base), path)
    return str(path)


def test_solve_json_report_has_the_design_fields(tmp_path):
    path = _write(tmp_path, "lp.mps")
    res = runner.invoke(app, ["solve", path, "--json", "--tol", "1e-7"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout.strip().splitlines()[-1])
    for key in ("status", "objective", "dual_objective", "iterations", "seconds", "primal_residual_rel",
                "dual_residual_rel", "gap_rel", "max_row_violation", "warm_started"):
        assert key in rep
    assert rep["status"] == "OPTIMAL" and rep["warm_started"] is False
    assert rep["objective"] == pytest.approx(1.0, rel=1e-6)
    assert rep["seconds"]["total"] >= rep["seconds"]["solve"] >= 0


def test_solve_writes_solution_and_duals_parquet(tmp_path):
    path = _write(tmp_path, "lp.parquet")
    out = tmp_path / "sol.parquet"
    res = runner.invoke(app, ["solve", path, "-o", str(out), "--tol", "1e-8"])
    assert res.exit_code == 0, res.output
    sol = pq.read_table(out).to_pydict()
    duals = pq.read_table(tmp_path / "sol.duals.parquet").to_pydict()
    assert sol["name"] == ["a", "b"] and set(sol) == {"name", "value", "reduced_cost"}
    assert sol["value"][0] == pytest.approx(1.0, abs=1e-6)
    assert duals["name"] == ["need"] and set(duals) == {"name", "activity", "dual"}
    assert duals["dual"][0] == pytest.approx(1.0, abs=1e-5)  # HiGHS sign: >= 0 on an active lower bound
    assert "Model status" in res.stdout  # the summary is the answer without --json


def test_infeasible_model_exits_4(tmp_path):
    path = _write(tmp_path, "inf.mps", matrix=np.array([[1.0, 1.0], [1.0, 1.0]]), row_lower=[3.0, -np.inf],
                  row_upper=[np.inf, 1.0], row_names=["atleast3", "atmost1"])
    res = runner.invoke(app, ["solve", path, "--json"])
    assert res.exit_code == 4
    assert json.loads(res.stdout.strip().splitlines()[-1])["status"] == "PRIMAL_INFEASIBLE"


def test_iteration_limit_exits_5(tmp_path):
    rng = np.random.default_rng(0)
    A = rng.uniform(0.1, 1, (20, 30))
    path = _write(tmp_path, "hard.mps", cost=rng.uniform(1, 2, 30), matrix=A, row_lower=A @ np.ones(30),
                  row_upper=np.full(20, np.inf), col_lower=np.zeros(30), col_upper=np.full(30, np.inf),
                  col_names=None, row_names=None)
    res = runner.invoke(app, ["solve", path, "--json", "--tol", "1e-10", "--iteration-limit", "64"])
    assert res.exit_code == 5
    assert json.loads(res.stdout.strip().splitlines()[-1])["status"] == "ITERATION_LIMIT"


def test_missing_file_exits_3_with_json_error(tmp_path):
    res = runner.invoke(app, ["solve", str(tmp_path / "nope.mps"), "--json"])
    assert res.exit_code == 3
    assert "error" in json.loads(res.stdout.strip().splitlines()[-1])


def test_non_positive_tolerance_is_a_usage_error(tmp_path):
    path = _write(tmp_path, "lp.mps")
    res = runner.invoke(app, ["solve", path, "--tol", "0"])
    assert res.exit_code == 2
