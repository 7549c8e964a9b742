"""A small LP's partitioned round keeps the whole solve's point over the merged one when their objectives are
within the round's tolerance of each other and the whole solve's rows are closer to feasible (a new user's TE B4
round 0 at K = 2 kept a merged point 8.4e-5 above the whole solve's, and above HiGHS's optimum: bought with row
violations within the tolerance)."""

from __future__ import annotations

import numpy as np

from solver.model.result import SolveResult
from solver.model.status import Status
from solver.partition.fallback import better_lp_point


class _Max:
    sense = -1  # maximise


def _res(objective: float, residual: float, feasible: bool = True) -> SolveResult:
    z = np.zeros(1)
    return SolveResult(status=Status.OPTIMAL, x=z, y=z, reduced_cost=z, row_activity=z, objective=objective,
                       dual_objective=objective, primal_residual_rel=residual, dual_residual_rel=0.0, gap_rel=0.0,
                       iterations=1, point_feasible=feasible)


def test_objectives_within_the_tolerance_are_a_tie_won_by_the_smaller_primal_residual():
    whole, merged = _res(26682.325, 1e-7), _res(26684.566, 8e-5)  # merged 8.4e-5 higher (maximise), looser rows
    assert better_lp_point(_Max, 1e-4, whole, merged)
    assert not better_lp_point(_Max, 1e-4, merged, whole)


def test_a_better_objective_beyond_the_tolerance_still_wins():
    whole, merged = _res(26682.325, 1e-7), _res(26700.0, 8e-5)  # 6.6e-4 higher: a better point, not a tie
    assert not better_lp_point(_Max, 1e-4, whole, merged)
    assert better_lp_point(_Max, 1e-4, merged, whole)


def test_an_infeasible_point_never_wins():
    assert not better_lp_point(_Max, 1e-4, _res(1.0, 0.0, feasible=False), _res(1.0, 1e-3))
    assert better_lp_point(_Max, 1e-4, _res(1.0, 1e-3), _res(1.0, 0.0, feasible=False))
