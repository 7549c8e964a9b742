"""Break-it checks of the presolved LP path (``solver.lp.presolve``): every OPTIMAL it reports must pass the
original-space measure it judges reduced points with (``solver.lp.original_kkt``), recomputed here from the
raw data (``independent_kkt``), with no slack on the gap."""

from __future__ import annotations

import numpy as np
import pytest

from formats.io import read_problem
from solver.highs_bridge import new_highs, to_highs_lp
from solver.lp.dispatch import solve
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.status import Status
from tests.helpers import assert_certified_optimal, independent_kkt, require_data

INF = np.inf


@pytest.mark.data
@pytest.mark.parametrize(("name", "tol"), [("bell5.mps", 1e-6), ("gt2.mps", 1e-4)])
def test_point_accepted_after_the_judges_original_step_passes_the_original_space_gap(name, tol):
    # the judge's one PDHG step on the original LP used to be accepted on PDHG's own (prox-step reduced
    # cost) measure: bell5's relaxation came back OPTIMAL with a gap of 1.8e-4 at tol 1e-6, gt2's 3.3e-4
    # at 1e-4, in the measure that had just rejected the postsolved point
    p = read_problem(require_data("mps") / name)
    res = solve(p, Settings(tol=tol, time_limit_seconds=60))
    assert_certified_optimal(p, res, tol)
    assert independent_kkt(p, res.x, res.y)["gap"] <= tol * (1 + 1e-9), res.message


def _reducible_lp(seed: int):
    """A random LP built for HiGHS presolve to bite: singleton and doubleton rows, fixed columns, equality,
    ranged and free rows, infinite bounds, zero costs, either sense, an objective constant; feasible by
    construction (rows hold at a random point), maybe unbounded; and, for odd seeds, infeasible through a
    copy of a row pushed past its activity range."""
    rng = np.random.default_rng(seed)
    n, m = int(rng.integers(2, 12)), int(rng.integers(1, 10))
    A = np.zeros((m, n))
    for i in range(m):
        k = int(rng.choice([1, 2, 2, rng.integers(1, n + 1)]))
        cols = rng.choice(n, size=min(k, n), replace=False)
        A[i, cols] = rng.choice([-1, 1], cols.size) * rng.uniform(0.2, 3.0, cols.size)
    x0 = rng.uniform(-2, 3, n)
    lo, up = x0 - rng.uniform(0, 3, n), x0 + rng.uniform(0, 3, n)
    lo[rng.random(n) < 0.2] = -INF
    up[rng.random(n) < 0.2] = INF
    fixed = rng.random(n) < 0.1
    lo[fixed] = up[fixed] = x0[fixed]
    ax = A @ x0
    rl, ru = ax - rng.uniform(0, 2, m), ax + rng.uniform(0, 2, m)
    eq = rng.random(m) < 0.35
    rl[eq] = ru[eq] = ax[eq]
    rl[rng.random(m) < 0.25] = -INF
    ru[rng.random(m) < 0.25] = INF
    if seed % 2:
        row = A[rng.integers(m)]
        top = float(np.where(row > 0, up, np.where(row < 0, lo, 0.0)) @ row)  # max activity
        if np.isfinite(top):
            A, rl, ru = np.vstack([A, row]), np.append(rl, top + 1.0), np.append(ru, INF)
    cost = rng.standard_normal(n) * (rng.random(n) > 0.15)
    return Problem.from_arrays(cost=cost, matrix=A, row_lower=rl, row_upper=ru, col_lower=lo, col_upper=up,
                               sense=int(rng.choice([1, -1])), offset=float(rng.standard_normal()))


@pytest.mark.parametrize("tol", [1e-4, 1e-7])
def test_random_presolvable_lps_are_optimal_only_when_highs_agrees_and_certified(tol):
    import highspy

    seen = {"optimal": 0, "infeasible": 0}
    for seed in range(60):
        p = _reducible_lp(seed)
        h = new_highs()
        h.passModel(to_highs_lp(p, with_names=False, relax=True))
        h.run()
        hstat, hobj = h.getModelStatus(), h.getInfo().objective_function_value
        res = solve(p, Settings(tol=tol, iteration_limit=100_000))
        if hstat == highspy.HighsModelStatus.kInfeasible:
            seen["infeasible"] += 1
            assert res.status != Status.OPTIMAL, seed
        elif res.status == Status.OPTIMAL:
            seen["optimal"] += 1
            assert hstat == highspy.HighsModelStatus.kOptimal, (seed, hstat)
            assert_certified_optimal(p, res, tol)
            assert independent_kkt(p, res.x, res.y)["gap"] <= tol * (1 + 1e-9), (seed, res.message)
            assert abs(res.objective - hobj) <= 1e3 * tol * (1 + abs(hobj)), (seed, res.objective, hobj)
    assert seen["optimal"] >= 20 and seen["infeasible"] >= 5, seen  # the generator does what it says


@pytest.mark.data
def test_polish_stopped_by_the_iteration_limit_names_the_users_limit():
    # the polish runs on the iterations left after the reduced run; its message used to name that
    # remainder ("iteration limit 47116 reached" on forplan with a limit of 950,000)
    p = read_problem(require_data("mps") / "bell5.mps")  # its relaxation at 1e-4 ends in a polish
    full = solve(p, Settings(tol=1e-4))
    assert full.status == Status.OPTIMAL and "polished" in full.message, full.message
    limit = full.iterations - 3 * Settings().check_every  # the reduced run is unchanged, the polish ends short
    res = solve(p, Settings(tol=1e-4, iteration_limit=limit))
    assert res.status == Status.ITERATION_LIMIT and "polished" in res.message, res.message
    assert f"iteration limit {limit} reached" in res.message and res.iterations <= limit, res.message
