"""The Lagrangian LP bound (solver.integer.bound): valid for any dual point, tight at the exact dual."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.highs_bridge import new_highs, to_highs_lp
from solver.integer.bound import implied_bounds, lagrangian_bound
from solver.model.problem import Problem


def random_lp(seed: int, sense: int) -> Problem:
    """A feasible LP with some free/unbounded columns and ranged rows (feasible by construction)."""
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(2, 6)), int(rng.integers(2, 7))
    A = rng.integers(-3, 4, size=(m, n)).astype(float)
    A[A == 0] = 1.0
    x0 = rng.uniform(-2, 2, n)
    act = A @ x0
    rl = np.where(rng.random(m) < 0.3, -np.inf, act - rng.uniform(0, 2, m))
    ru = np.where(rng.random(m) < 0.3, np.inf, act + rng.uniform(0, 2, m))
    lo = np.where(rng.random(n) < 0.3, -np.inf, x0 - rng.uniform(0, 3, n))
    up = np.where(rng.random(n) < 0.3, np.inf, x0 + rng.uniform(0, 3, n))
    # keep it bounded: every column gets finite bounds on at least the side its cost pushes to
    c = rng.integers(-4, 5, size=n).astype(float)
    push_down = sense * c > 0
    lo = np.where(push_down & ~np.isfinite(lo), x0 - 5, lo)
    up = np.where(~push_down & ~np.isfinite(up), x0 + 5, up)
    return Problem.from_arrays(cost=c, col_lower=lo, col_upper=up, row_lower=rl, row_upper=ru, matrix=A,
                               sense=sense, offset=float(rng.normal()))


def highs_optimum(p: Problem):
    h = new_highs()
    h.passModel(to_highs_lp(p, with_names=False))
    h.run()
    assert h.modelStatusToString(h.getModelStatus()) == "Optimal"
    sol = h.getSolution()
    return float(h.getInfo().objective_function_value), np.asarray(sol.col_value), np.asarray(sol.row_dual)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 100_000), sense=st.sampled_from([1, -1]), noise=st.floats(0, 2))
def test_bound_from_any_dual_point_never_cuts_off_the_optimum(seed, sense, noise):
    p = random_lp(seed, sense)
    opt, x, y = highs_optimum(p)
    rng = np.random.default_rng(seed)
    yn = y + noise * rng.normal(size=y.size)
    b = lagrangian_bound(p, yn, p.col_lower, p.col_upper)
    assert sense * (opt - b) >= -1e-7 * max(1.0, abs(opt))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 100_000), sense=st.sampled_from([1, -1]))
def test_bound_at_the_exact_dual_equals_the_optimum(seed, sense):
    p = random_lp(seed, sense)
    opt, x, y = highs_optimum(p)
    b = lagrangian_bound(p, y, p.col_lower, p.col_upper)
    assert abs(b - opt) <= 1e-6 * max(1.0, abs(opt))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_implied_bounds_contain_every_feasible_point_tried(seed):
    p = random_lp(seed, 1)
    lo, up = implied_bounds(p, p.col_lower, p.col_upper)
    assert np.all(lo >= p.col_lower) and np.all(up <= p.col_upper)
    for sense in (1, -1):  # optima in many directions are feasible points at the boundary
        for k in range(3):
            c = np.random.default_rng(seed + k).normal(size=p.n_cols)
            q = p.replace(cost=c, sense=sense, col_lower=np.maximum(p.col_lower, -50), col_upper=np.minimum(p.col_upper, 50))
            _, x, _ = highs_optimum(q)
            assert np.all(x >= lo - 1e-7) and np.all(x <= up + 1e-7)
