"""``copter solve`` of an infeasible model reports ``gap_rel`` (and a MILP's ``lp_bound``) null, as its objectives:
box1 (PRIMAL_INFEASIBLE) reported ``gap_rel`` 0.99998 beside null objectives (a user's trial, session 36)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

from formats.io import write_problem
from solver.model.problem import Problem
from tests.helpers import run_main


def _write_infeasible(path, integer: bool) -> None:
    """x0 <= 1 by its bounds, and a row forces x0 + x1 >= 5 with x1 <= 1 (x0 integer when ``integer``)."""
    bad = Problem.from_arrays(cost=np.ones(2), col_lower=np.zeros(2), col_upper=np.ones(2),
                              row_lower=np.array([5.0]), row_upper=np.array([np.inf]),
                              matrix=sp.csc_matrix(np.array([[1.0, 1.0]])), row_names=["force"],
                              col_names=["x0", "x1"], integrality=np.array([integer, False]))
    write_problem(bad, path)


@pytest.mark.parametrize("integer", [False, True])
def test_an_infeasible_solve_has_no_gap_nor_bound(tmp_path, capsys, integer):
    _write_infeasible(tmp_path / "bad.parquet", integer)
    code, out, err = run_main(capsys, "solve", tmp_path / "bad.parquet", "--json")
    rep = json.loads(out)
    assert rep["status"] == "PRIMAL_INFEASIBLE", rep
    assert rep["objective"] is None and rep["dual_objective"] is None and rep["gap_rel"] is None, rep
    assert rep.get("lp_bound") is None


def test_the_summary_says_no_gap_either(tmp_path, capsys):
    _write_infeasible(tmp_path / "bad.parquet", True)
    code, out, err = run_main(capsys, "solve", tmp_path / "bad.parquet", "--json")
    rep = json.loads(out)
    assert "lp_bound" in rep and rep["lp_bound"] is None and rep["mip"]["gap_rel"] is None, rep
    assert rep["mip"]["lp_bound"] is None
    code, out, err = run_main(capsys, "solve", tmp_path / "bad.parquet")
    assert "Relative gap        : -\n" in out + err, out + err
