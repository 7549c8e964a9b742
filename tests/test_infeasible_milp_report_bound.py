"""An infeasible MILP round's report has no bound or gap: ``lp_bound`` and ``gap_rel`` are null like ``objective``
and ``dual_objective`` (helper-166: an infeasible LB round reported ``lp_bound`` -2,614,907,777 and ``gap_rel``
"inf")."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from formats.reports import round_report
from solver.api import solve_problem
from solver.model.problem import Problem


def test_infeasible_milp_report_has_null_bound_and_gap():
    # x1 + x2 >= 5 with binaries: no integer (or LP) point
    p = Problem.from_arrays(cost=[1.0, 2.0], col_lower=[0.0, 0.0], col_upper=[1.0, 1.0], row_lower=[5.0],
                            row_upper=[np.inf], matrix=sp.csc_array(np.array([[1.0, 1.0]])), col_names=["a", "b"],
                            row_names=["need"], integrality=[1, 1])
    res = solve_problem(p)
    assert res.status.is_model_failure, res.status
    rep = round_report(round_=1, result=res, seconds={})
    assert rep["objective"] is None and rep["dual_objective"] is None
    assert rep["lp_bound"] is None and rep["gap_rel"] is None, (rep["lp_bound"], rep["gap_rel"])
