"""A ray objective made of floating-point cancellation never certifies infeasibility (adversarial F1).

A row whose columns are all fixed, with bounds equal to its fixed activity up to round-off
(``1.1 x0 = 3.3000000000000003`` with x0 = 3), has an undetermined dual that PDHG moves; the ray along
it has zero violation and an objective that is 0 in exact arithmetic and ~1e-16 in floating point.
Deltas and fix-and-resolve create such rows, and warm starts (every ``copter step``) skip presolve.
"""

import numpy as np

from solver.api import solve_problem
from solver.lp.dispatch import solve
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status

INF = np.inf
A3 = np.array([[1.1, 0, 0], [1.1, 1.5561851765736385, -1.6979238577556095],
               [0, -1.9624385215152707, -0.8289881087218594]])
COST3 = [-0.5731292157665655, -0.6077406304422468, -2.2954241955331667]
ROWS3 = dict(row_lower=[1.1 * 3, 1.7758838667169243, -INF], row_upper=[1.1 * 3, INF, -1.29092798786168])
OPT3 = -16.23521178  # HiGHS


def _fixed_row_lp() -> Problem:
    return Problem.from_arrays(cost=COST3, matrix=A3, col_lower=[3, 0, 0], col_upper=[3, 5, 5], **ROWS3)


def test_feasible_lp_with_an_all_fixed_equality_row_is_optimal_without_presolve():
    r = solve(_fixed_row_lp(), Settings(presolve="off"))
    assert r.status == Status.OPTIMAL
    assert abs(r.objective - OPT3) <= 1e-4 * (1 + abs(OPT3))


def test_warm_started_solve_of_that_lp_is_optimal():
    r = solve(_fixed_row_lp(), Settings(), warm_start=(np.zeros(3), np.zeros(3)))
    assert r.status == Status.OPTIMAL
    assert abs(r.objective - OPT3) <= 1e-4 * (1 + abs(OPT3))


def test_warm_milp_round_with_inward_rounded_fixed_integer_is_not_declared_infeasible():
    p = Problem.from_arrays(cost=COST3, matrix=A3, col_lower=[2.6, 0, 0], col_upper=[3.2, 5, 5],
                            integrality=[True, False, True], **ROWS3)
    r = solve_problem(p, Settings(), warm_start=SolverState(x=np.zeros(3), y=np.zeros(3)))
    assert r.status in (Status.OPTIMAL, Status.FEASIBLE)


def test_unbounded_lp_with_an_all_fixed_equality_row_is_dual_infeasible():
    p = Problem.from_arrays(cost=[0, -1], matrix=np.array([[0.1, 0], [0, 1]]), row_lower=[0.1 * 3, -INF],
                            row_upper=[0.1 * 3, INF], col_lower=[3, 0], col_upper=[3, INF])
    for mode in ("on", "off"):
        assert solve(p, Settings(tol=1e-6, presolve=mode)).status == Status.DUAL_INFEASIBLE, mode


def test_genuinely_infeasible_fixed_row_is_still_certified():
    # the same row missing its fixed activity by 1e-4 relative: a real (if small) infeasibility
    p = Problem.from_arrays(cost=COST3, matrix=A3, col_lower=[3, 0, 0], col_upper=[3, 5, 5],
                            row_lower=[3.3 * (1 + 1e-4), 1.7758838667169243, -INF],
                            row_upper=[3.3 * (1 + 1e-4), INF, -1.29092798786168])
    assert solve(p, Settings(presolve="off", tol=1e-6)).status == Status.PRIMAL_INFEASIBLE
