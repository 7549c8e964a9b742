"""A partitioned LP round whose merged point has no proven bound is compared with a whole solve (hunt 38).

A free column (here ``c3/f`` in an equality row and on the shared ``cap/a``) makes the parts' Lagrangian bound
-inf: the round ended FEASIBLE, exit 0, ``gap_rel`` null, 3.4% below the optimum, with nothing to judge it by. A
MILP merge without a bound was already solved whole; an LP's now is too (``fallback.reason`` "no_bound"), and
the better point is kept."""

from __future__ import annotations

import numpy as np

from formats.io import write_problem
from solver.api import solve_problem
from solver.model.problem import Problem
from solver.model.settings import Settings
from tests.helpers import client_allocation, run_main


def _with_free_column(p: Problem) -> Problem:
    import scipy.sparse as sp

    A = sp.csc_array((p.a_data, p.a_indices, p.a_indptr), shape=(p.n_rows, p.n_cols)).toarray()
    names = p.row_names.tolist()
    eq = np.zeros((1, p.n_cols + 1))
    eq[0, p.col_names.tolist().index("c3/a")] = 1.0
    eq[0, -1] = 1.0  # c3/f + c3/a = -2
    A = np.vstack([np.hstack([A, np.zeros((p.n_rows, 1))]), eq])
    A[names.index("cap/a"), -1] = 1.0
    return Problem.from_arrays(cost=np.r_[p.cost, 0.5], col_lower=np.r_[p.col_lower, -np.inf],
                               col_upper=np.r_[p.col_upper, np.inf], row_lower=np.r_[p.row_lower, -2.0],
                               row_upper=np.r_[p.row_upper, -2.0], matrix=sp.csc_array(A),
                               col_names=[*p.col_names.tolist(), "c3/f"], row_names=[*names, "c3/eq"], sense=p.sense)


def test_a_merge_without_a_bound_is_solved_whole_and_the_better_point_kept(capsys, tmp_path):
    import json

    p = _with_free_column(client_allocation(8, 3))
    write_problem(p, tmp_path / "base.parquet")
    optimum = solve_problem(p, Settings(tol=1e-7)).objective
    code, out, err = run_main(capsys, "init", tmp_path / "base.parquet", "--state", tmp_path / "st", "--partitions",
                              "2", "--whole-below-nnz", "0", "--json")
    rep = json.loads(out)
    assert code == 0, err
    fb = rep["partitions"]["fallback"]
    assert fb["reason"] == "no_bound" and fb["kept"] == "whole", fb
    assert "no proven bound" in rep["message"]
    assert rep["status"] == "OPTIMAL" and abs(rep["objective"] - optimum) <= 1e-3 * abs(optimum)
