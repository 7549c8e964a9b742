"""The LP core on tiny hand-made LPs covering every part of the HiGHS form, checked against HiGHS and
by recomputing residuals and gap from the raw data (``tests.helpers.independent_kkt``, also used by the
other ``test_pdhg*`` files)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.lp.dispatch import solve
from solver.model.settings import Settings
from solver.model.status import Status
from tests.helpers import assert_certified_optimal, highs_solution, lp

INF = np.inf


TOL = 1e-8
CASES = {
    "ranged_rows": lp([1, 2, -1], [[1, 1, 1], [1, -1, 0]], [2, -1], [4, 1], [0, 0, 0], [3, 3, 3]),
    "equality_rows": lp([2, 3, 1], [[1, 1, 1], [1, 0, -1]], [6, 1], [6, 1], [0, 0, 0], [INF] * 3),
    "free_row": lp([1, 1], [[1, 1], [3, -7]], [1, -INF], [INF, INF], [0, 0], [5, 5]),
    "free_variable": lp([1, 0], [[1, -1], [1, 1]], [0, 2], [INF, INF], [-INF, -INF], [INF, INF]),
    "fixed_variable": lp([1, 1, 1], [[1, 1, 1]], [5], [INF], [2, 0, 0], [2, INF, INF]),
    "maximize": lp([3, 2], [[1, 1], [1, 3]], [-INF, -INF], [4, 6], [0, 0], [INF, INF], sense=-1),
    "objective_offset": lp([1, 1], [[1, 2]], [2], [INF], [0, 0], [INF, INF], offset=12.5),
    "negative_bounds": lp([-1, 1], [[1, 1]], [-3], [-1], [-5, -2], [-1, 4]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_small_lp_matches_highs_and_is_certified(name):
    p = CASES[name]
    res = solve(p, Settings(tol=TOL))
    assert_certified_optimal(p, res, TOL)
    _, hobj, _ = highs_solution(p)
    assert abs(res.objective - hobj) <= 1e-6 * (1 + abs(hobj))
    assert res.state is not None and res.state.x.shape == (p.n_cols,)


def test_maximization_reports_objective_and_duals_in_highs_convention():
    p = CASES["maximize"]  # max 3x+2y, x+y<=4, x+3y<=6: optimum x=4, y=0; dual of row 1 is 3 (HiGHS sign)
    res = solve(p, Settings(tol=1e-9))
    _, hobj, hdual = highs_solution(p)
    assert np.isclose(res.objective, hobj, rtol=1e-7)
    np.testing.assert_allclose(res.y, hdual, atol=1e-5)
    assert res.dual_objective == pytest.approx(hobj, rel=1e-6)


def test_empty_row_and_empty_column_are_solved_analytically():
    # row 2 has no coefficients (bounds contain 0), column 2 appears in no row (cost 3 >= lower bound 1)
    p = lp([1, 1, 3], [[1, 1, 0], [0, 0, 0]], [1, -1], [INF, 1], [0, 0, 1], [INF, INF, 9])
    res = solve(p, Settings(tol=TOL))
    assert_certified_optimal(p, res, TOL)
    assert res.x[2] == 1.0 and res.y[1] == 0.0
    assert res.objective == pytest.approx(1 + 3, rel=1e-6)


def test_problem_without_rows_is_solved_without_iterations():
    p = lp([1, -2, 0], np.zeros((0, 3)), [], [], [0, -1, -4], [5, 3, 4], offset=1.0)
    res = solve(p)
    assert res.status == Status.OPTIMAL and res.iterations == 0
    np.testing.assert_array_equal(res.x, [0, 3, 0])
    assert res.objective == -5.0


def test_empty_column_with_no_bound_in_improving_direction_is_unbounded():
    p = lp([1, -1], [[1, 0]], [1], [2], [0, 0], [INF, INF])
    assert solve(p).status == Status.DUAL_INFEASIBLE


@pytest.mark.parametrize("which", ["column", "row"])
def test_empty_box_is_primal_infeasible_before_iterating(which):
    if which == "column":
        p = lp([1, 1], [[1, 1]], [0], [1], [0, 3], [1, 2])
    else:
        p = lp([1, 1], [[1, 1]], [2], [1], [0, 0], [1, 1])
    res = solve(p)
    assert res.status == Status.PRIMAL_INFEASIBLE and res.iterations == 0
    assert ("x1" if which == "column" else "r0") in res.message


def test_empty_row_with_bounds_excluding_zero_is_primal_infeasible():
    p = lp([1, 1], [[1, 1], [0, 0]], [0, 1], [5, 2], [0, 0], [1, 1])
    res = solve(p)
    assert res.status == Status.PRIMAL_INFEASIBLE and "r1" in res.message


def test_infeasible_lp_is_certified_primal_infeasible():
    p = lp([1, 1], [[1, 1], [1, 1]], [3, -INF], [INF, 2], [0, 0], [INF, INF])
    res = solve(p, Settings(time_limit_seconds=10))
    assert res.status == Status.PRIMAL_INFEASIBLE


def test_unbounded_lp_is_certified_dual_infeasible():
    p = lp([-1, 0], [[1, -1]], [-INF], [1], [0, 0], [INF, INF])
    res = solve(p, Settings(time_limit_seconds=10))
    assert res.status == Status.DUAL_INFEASIBLE


def test_iteration_and_time_limits_are_reported():
    rng = np.random.default_rng(7)
    A = rng.uniform(-1, 1, (30, 40))
    p = lp(rng.standard_normal(40), A, A @ np.full(40, 0.5) - 1, A @ np.full(40, 0.5) + 1, np.zeros(40),
           np.ones(40))
    res = solve(p, Settings(tol=1e-15, iteration_limit=100, check_every=16))
    assert res.status == Status.ITERATION_LIMIT and res.iterations <= 100
    res = solve(p, Settings(tol=1e-15, time_limit_seconds=1e-9))
    assert res.status == Status.TIME_LIMIT


@st.composite
def feasible_boxed_lp(draw):
    m = draw(st.integers(1, 6))
    n = draw(st.integers(1, 8))
    seed = draw(st.integers(0, 2**31))
    rng = np.random.default_rng(seed)
    A = rng.uniform(-3, 3, (m, n)) * (rng.random((m, n)) < 0.6)
    lo = rng.uniform(-2, 0, n)
    hi = lo + rng.uniform(0.5, 3, n)
    x0 = rng.uniform(lo, hi)
    act = A @ x0
    kind = rng.integers(0, 4, m)  # 0: <=, 1: >=, 2: ranged, 3: equality
    rl = np.where((kind == 1) | (kind == 2), act - rng.uniform(0, 1, m), -INF)
    ru = np.where((kind == 0) | (kind == 2), act + rng.uniform(0, 1, m), INF)
    rl = np.where(kind == 3, act, rl)
    ru = np.where(kind == 3, act, ru)
    sense = draw(st.sampled_from([1, -1]))
    return lp(rng.standard_normal(n), A, rl, ru, lo, hi, sense=sense, offset=float(rng.normal()))


@settings(max_examples=25, deadline=None)
@given(feasible_boxed_lp())
def test_random_feasible_boxed_lps_match_highs(p):
    res = solve(p, Settings(tol=1e-8))
    assert_certified_optimal(p, res, 1e-8)
    _, hobj, _ = highs_solution(p)
    assert abs(res.objective - hobj) <= 1e-5 * (1 + abs(hobj))
