"""The LP core on tiny hand-made LPs covering every part of the HiGHS form, checked against HiGHS and
by recomputing residuals and gap from the raw data (``independent_kkt``, also used by the other
``test_pdhg*`` files)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.highs_bridge import new_highs, to_highs_lp
from solver.lp.pdhg import solve
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.status import Status

INF = np.inf


def independent_kkt(p: Problem, x: np.ndarray, y: np.ndarray) -> dict:
    """Relative primal/dual residual and gap of (x, y) recomputed from the problem's raw arrays.

    Reduced costs are r = c - A'y projected onto the signs the column bounds allow (PDLP/cuPDLPx
    definitions, minimisation form; y is in the problem's sense, HiGHS convention).
    """
    A = p.matrix().toarray()
    cm, ym = p.sense * p.cost, p.sense * np.asarray(y)
    ax = A @ x
    lc, uc, lv, uv = p.row_lower, p.row_upper, p.col_lower, p.col_upper
    fin = lambda v: np.where(np.isfinite(v), v, 0.0)  # noqa: E731
    eq = lc == uc
    bnorm = np.sqrt(np.sum(fin(lc) ** 2) + np.sum(fin(np.where(eq, 0.0, uc)) ** 2))
    pres = np.linalg.norm(ax - np.clip(ax, lc, uc)) / (1 + bnorm)
    r = cm - A.T @ ym
    r_ok = np.where(np.isfinite(lv), np.maximum(r, 0), 0) + np.where(np.isfinite(uv), np.minimum(r, 0), 0)
    dres = np.linalg.norm(r - r_ok) / (1 + np.linalg.norm(p.cost))
    pobj = cm @ x + p.sense * p.offset
    dobj = (fin(lc) @ np.maximum(ym, 0) + fin(uc) @ np.minimum(ym, 0) + fin(lv) @ np.maximum(r_ok, 0)
            + fin(uv) @ np.minimum(r_ok, 0) + p.sense * p.offset)
    sign_ok = bool(np.all(ym[~np.isfinite(lc)] <= 0) and np.all(ym[~np.isfinite(uc)] >= 0))
    return {"primal": pres, "dual": dres, "gap": abs(pobj - dobj) / (1 + abs(pobj) + abs(dobj)),
            "in_bounds": bool(np.all(x >= lv) and np.all(x <= uv)), "dual_signs_ok": sign_ok,
            "reduced_cost": p.cost - A.T @ y, "activity": ax}


def assert_certified_optimal(p: Problem, res, tol: float) -> None:
    """OPTIMAL, and the point really satisfies the relative KKT conditions (recomputed here)."""
    assert res.status == Status.OPTIMAL, res.message
    k = independent_kkt(p, res.x, res.y)
    assert k["in_bounds"] and k["dual_signs_ok"]
    assert k["primal"] <= tol * (1 + 1e-9)
    assert k["dual"] <= tol * (1 + 1e-9)
    assert k["gap"] <= 10 * tol  # r here is proj(c - A'y), not the solver's prox-step reduced cost
    np.testing.assert_allclose(res.reduced_cost, k["reduced_cost"], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(res.row_activity, k["activity"], rtol=1e-9, atol=1e-9)
    assert np.isclose(res.objective, p.cost @ res.x + p.offset, rtol=1e-12, atol=1e-12)


def highs_solution(p: Problem):
    h = new_highs()
    h.passModel(to_highs_lp(p, with_names=False, relax=True))
    h.run()
    sol = h.getSolution()
    return (h.getModelStatus().name if hasattr(h.getModelStatus(), "name") else str(h.getModelStatus()),
            h.getInfo().objective_function_value, np.array(sol.row_dual))


def lp(cost, A, rl, ru, cl, cu, sense=1, offset=0.0):
    return Problem.from_arrays(cost=cost, matrix=np.array(A, dtype=float).reshape(len(rl), len(cost)),
                               row_lower=rl, row_upper=ru, col_lower=cl, col_upper=cu, sense=sense,
                               offset=offset)


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
