"""Restart controller: the primal weight keeps adapting in the situations PDHG meets in practice."""

import math

import numpy as np
import pytest

from solver.restart import RestartController
from solver.settings import Settings


def test_primal_weight_adapts_when_the_iterate_is_exactly_primal_feasible():
    # load-balancing LPs sit at a primal residual of ~1e-20 for thousands of iterations while the dual
    # lags; a residual-ratio safeguard used to reset w to its start value at every restart
    ctrl = RestartController(Settings(), 2.41)
    w = ctrl.update_weight(dx_norm=1e-3, dy_norm=1.0, rel_primal=1e-20, rel_dual=0.088)
    assert w != 2.41
    # e = log(w dx / dy) < 0 -> w grows toward dy/dx
    assert w > 2.41


def test_primal_weight_resets_to_the_best_seen_value_when_a_displacement_vanishes():
    ctrl = RestartController(Settings(), 1.0)
    w1 = ctrl.update_weight(dx_norm=0.5, dy_norm=1.0, rel_primal=1e-3, rel_dual=1e-3)
    ctrl.update_weight(dx_norm=0.1, dy_norm=1.0, rel_primal=1e-2, rel_dual=1e-5)
    assert ctrl.update_weight(dx_norm=0.0, dy_norm=1.0, rel_primal=1e-3, rel_dual=1e-3) == w1
    assert math.isfinite(w1) and w1 > 0


def test_primal_weight_does_not_run_away_once_the_dual_has_converged():
    # found by hypothesis (test_random_feasible_boxed_lps_match_highs): on HiGHS's 3x4 presolved LP the dual
    # displacement fell to round-off, ||dy|| / ||dx|| drove w from 0.18 to the 1e-10 clamp and the primal
    # residual rose from 4e-8 to 5e-6: ITERATION_LIMIT at tol 1e-8 (the unpresolved LP: 454 iterations)
    import scipy.sparse as sp

    from solver.pdhg import solve
    from solver.problem import Problem
    from solver.settings import Settings
    from solver.status import Status

    A = sp.csc_matrix((np.array([-1.32588247, 1.5756829, -0.61150734, -1.82326357, 0.75931228, 1.32771564,
                                 -1.38445146, -2.47578111, 0.72749886]),
                       np.array([0, 3, 0, 3, 0, 1, 0, 1, 2]), np.array([0, 2, 4, 6, 9])), shape=(4, 4))
    p = Problem.from_arrays(cost=[-0.38751072, 1.5186178, -0.36793462, -0.77660416],
                            col_lower=[-0.14582885, -0.82062568, -1.74220996, -1.0346537],
                            col_upper=[0.49999025, 1.01563134, -0.40385886, 1.47793916],
                            row_lower=[-0.23453174, -np.inf, -1.00374549, -np.inf],
                            row_upper=[np.inf, 0.36379311, np.inf, 0.65258111], matrix=A, offset=-1.5623479496360861)
    r = solve(p, Settings(tol=1e-8, iteration_limit=20_000))
    assert r.status == Status.OPTIMAL, r.message
    assert r.objective == pytest.approx(-2.3261807299212744, rel=1e-7)
    # a presolved solve reports no weight (it belongs to the reduced LP); the direct solve's must stay sane too
    direct = solve(p, Settings(tol=1e-8, iteration_limit=20_000, presolve="off"))
    assert direct.status == Status.OPTIMAL, direct.message
    assert 1e-6 < direct.state.primal_weight < 1e6
