"""The Lagrangian bound with choice rows kept in the inner problem (solver.integer.bound), its numba kernel,
and the dual ascent that maximises it over the coupling rows' duals (solver.integer.ascent).

It must be valid for every integer point whatever the dual point (the coupling rows' duals may be far off,
the choice rows' duals are ignored), never weaker than the plain Lagrangian bound at the same duals, and
robust to what breaks the "pick one member" inner problem (shared members, members fixed at 1 or 0).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.highs_bridge import new_highs, to_highs_lp
from solver.integer.ascent import coupling_dual_ascent
from solver.integer.bound import ChoiceLagrangian, choice_lagrangian_bound, lagrangian_bound
from solver.integer.structure import EQ1, detect_structure
from solver.model.problem import Problem


def choice_milp(seed: int, sense: int) -> Problem:
    """J choice rows (<= 1 or = 1, scaled by a random factor) over C binaries each, K capacity rows, some
    members fixed at 0 or 1, and optionally one extra choice row sharing members with the others."""
    rng = np.random.default_rng(seed)
    J, C, K = int(rng.integers(1, 5)), int(rng.integers(2, 5)), int(rng.integers(1, 4))
    n = J * C
    rows, rl, ru = [], [], []
    for j in range(J):
        a = float(rng.choice([1.0, 2.0, -3.0]))
        r = np.zeros(n)
        r[j * C:(j + 1) * C] = a
        eq = rng.random() < 0.4
        lo, hi = (1.0 if eq else -np.inf), 1.0
        rows.append(r)
        rl.append(a * lo if a > 0 else a * hi)
        ru.append(a * hi if a > 0 else (a * lo if eq else np.inf))
    if J > 1 and rng.random() < 0.3:  # a choice row over members of two jobs
        r = np.zeros(n)
        r[[0, C]] = 1.0
        rows.append(r)
        rl.append(-np.inf)
        ru.append(1.0)
    W = rng.integers(1, 6, size=(K, n)).astype(float)
    cap = W.sum(axis=1) * rng.uniform(0.2, 0.6, K)
    A = np.vstack([np.array(rows), W])
    rl = np.r_[rl, np.full(K, -np.inf)]
    ru = np.r_[ru, cap]
    lo, up = np.zeros(n), np.ones(n)
    for j in range(J):
        u = rng.random()
        if u < 0.15:
            lo[j * C] = 1.0
        elif u < 0.35:
            up[j * C + int(rng.integers(C))] = 0.0
    return Problem.from_arrays(cost=rng.integers(-5, 6, size=n).astype(float), col_lower=lo, col_upper=up,
                               row_lower=rl, row_upper=ru, matrix=A, integrality=np.ones(n, dtype=bool),
                               sense=sense, offset=float(rng.normal()))


def milp_optimum(p: Problem):
    h = new_highs()
    h.passModel(to_highs_lp(p, with_names=False))
    h.run()
    status = h.modelStatusToString(h.getModelStatus())
    return float(h.getInfo().objective_function_value) if status == "Optimal" else None, status


def choice_lagrangian(p: Problem):
    """(ChoiceLagrangian, Structure) of ``p``."""
    s = detect_structure(p)
    return ChoiceLagrangian(p, s.lower, s.upper, s.choice_rows, s.choice_kind, s.csr_indptr, s.csr_indices), s


def lp_duals(p: Problem) -> np.ndarray:
    h = new_highs()
    h.passModel(to_highs_lp(p, with_names=False, relax=True))
    h.run()
    y = np.asarray(h.getSolution().row_dual, dtype=float)
    return y if y.shape == (p.n_rows,) else np.zeros(p.n_rows)


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 100_000), sense=st.sampled_from([1, -1]), noise=st.floats(0, 3))
def test_choice_bound_never_cuts_off_the_integer_optimum_and_is_never_weaker(seed, sense, noise):
    p = choice_milp(seed, sense)
    opt, status = milp_optimum(p)
    s = detect_structure(p)
    assert s.choice_rows.size > 0
    y = lp_duals(p) + noise * np.random.default_rng(seed).normal(size=p.n_rows)
    b = choice_lagrangian_bound(p, y, s.lower, s.upper, s.choice_rows, s.choice_kind, s.csr_indptr, s.csr_indices)
    plain = lagrangian_bound(p, y, s.lower, s.upper)
    tol = 1e-7 * (1 + abs(plain) if np.isfinite(plain) else 1)
    if np.isfinite(plain):
        assert sense * (b - plain) >= -tol  # at least as tight
    if opt is not None and np.isfinite(b):
        assert sense * (opt - b) >= -1e-7 * (1 + abs(opt))  # valid for the integer optimum


def test_choice_bound_picks_the_best_member_against_the_coupling_duals_by_hand():
    # max 3a + 2b + 2c  s.t.  a + b <= 1 (choice), c alone, 4a + 1b + 1c <= 4 (capacity), binaries.
    # With capacity dual 1: reduced costs a: 3 - 4 = -1, b: 1, c: 1 -> pick b, c; bound = 4*1 + 1 + 1 = 6
    A = np.array([[1.0, 1.0, 0.0], [4.0, 1.0, 1.0]])
    p = Problem.from_arrays(cost=[3.0, 2.0, 2.0], col_lower=np.zeros(3), col_upper=np.ones(3),
                            row_lower=[-np.inf, -np.inf], row_upper=[1.0, 4.0], matrix=A,
                            integrality=np.ones(3, dtype=bool), sense=-1)
    s = detect_structure(p)
    assert s.choice_rows.tolist() == [0] and s.choice_kind.tolist() != [EQ1]
    b = choice_lagrangian_bound(p, np.array([123.0, 1.0]), s.lower, s.upper, s.choice_rows, s.choice_kind,
                                s.csr_indptr, s.csr_indices)
    assert 6.0 <= b <= 6.0 + 1e-12  # 6 plus the rounding-error allowance (bound._allowance)
    # the plain bound dualizes the choice row too: with its dual 123 it is far weaker
    assert lagrangian_bound(p, np.array([123.0, 1.0]), s.lower, s.upper) > 6.0


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 100_000), sense=st.sampled_from([1, -1]), noise=st.floats(0, 3))
def test_choice_lagrangian_kernel_matches_its_numpy_twin_value_point_and_activity(seed, sense, noise):
    p = choice_milp(seed, sense)
    lag, s = choice_lagrangian(p)
    y = lp_duals(p) + noise * np.random.default_rng(seed).normal(size=p.n_rows)
    b, x, act = lag.evaluate(y)
    b_ref, x_ref, act_ref = lag.evaluate_ref(y)
    assert b == pytest.approx(b_ref, rel=1e-12, abs=1e-12)
    assert (x is None) == (x_ref is None)
    if x is not None:
        np.testing.assert_array_equal(x, x_ref)
        np.testing.assert_allclose(act, act_ref, rtol=1e-12, atol=1e-12)
        assert np.all(x >= s.lower) and np.all(x <= s.upper)  # the inner minimiser lies in the box


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 100_000), sense=st.sampled_from([1, -1]), noise=st.floats(0, 5))
def test_dual_ascent_never_weakens_the_start_bound_and_never_cuts_off_the_integer_optimum(seed, sense, noise):
    p = choice_milp(seed, sense)
    opt, status = milp_optimum(p)
    lag, s = choice_lagrangian(p)
    y0 = lp_duals(p) + noise * np.random.default_rng(seed).normal(size=p.n_rows)
    start = lag.evaluate(y0)[0]
    target = opt if opt is not None else (start + sense * 10.0 if np.isfinite(start) else 0.0)
    b, y, info = coupling_dual_ascent(lag, y0, target, 0.0, max_steps=25)
    if np.isfinite(start):
        assert sense * (b - start) >= -1e-9 * (1 + abs(start))  # the best value seen: never weaker
    assert lag.evaluate(y)[0] == pytest.approx(b, rel=1e-12, abs=1e-12)  # the duals returned give it
    if opt is not None and np.isfinite(b):
        assert sense * (opt - b) >= -1e-7 * (1 + abs(opt))  # valid for the integer optimum


def test_dual_ascent_reaches_the_lp_optimum_from_far_off_capacity_duals_on_a_sia_round():
    from solver.baselines.highs import solve_highs
    from solver.workloads.sia import SiaScenario

    p = SiaScenario(total_gpus=256, seed=3).base()
    lag, s = choice_lagrangian(p)
    lp_opt = solve_highs(p.replace(integrality=np.zeros(p.n_cols, dtype=bool)), solver="simplex").objective
    opt, _ = milp_optimum(p)
    y0 = lp_duals(p)
    y0[lag.dualized] *= 3.0  # capacity duals 3x too large: a bound well above the LP optimum
    start = lag.evaluate(y0)[0]
    assert p.sense == -1 and start > lp_opt * 1.01
    b, _, info = coupling_dual_ascent(lag, y0, opt, 0.0, max_steps=200)
    assert b >= lp_opt - 1e-6 * abs(lp_opt)  # a valid bound: max L is the LP optimum (integral choice polytopes)
    assert (b - lp_opt) <= 0.1 * (start - lp_opt)  # and most of the way there


def test_bounds_stay_valid_when_huge_coefficients_cancel_in_floating_point():
    # found by a break-it pass: terms of +-1e11 x in one row absorbed the small reduced costs, and the
    # plain sums gave 4.4999994 for a max problem whose optimum is 4.5 (an invalid bound, reported OPTIMAL)
    from solver.integer import solve_milp
    from solver.model.settings import Settings

    A = np.array([[1.0, 1e11, -1e11, 0, 0, 0, 0], [0, 0, 0, 1, 1, 1, 1], [0, 0, 0, 1, 1, 2, 1]])
    p = Problem.from_arrays(cost=[1.0, 0, 0, 1, 4, 3, 4], col_lower=[0.3, 1, 0, 0, 0, 0, 0],
                            col_upper=[np.inf, 5, 1, 1, 1, 1, 1], row_lower=[-np.inf] * 3, row_upper=[0.5, 1.0, 2.0],
                            matrix=A, integrality=[False] + [True] * 6, sense=-1)
    opt, _ = milp_optimum(p)
    assert opt == pytest.approx(4.5, abs=1e-9)
    s = detect_structure(p)
    assert lagrangian_bound(p, np.array([1.0, 3.9999994, 0.0]), s.lower, s.upper) >= 4.5
    assert lagrangian_bound(p, np.zeros(3), s.lower, s.upper) >= 4.5  # through implied bounds (x0 <= 0.5)
    r = solve_milp(p, Settings(), None)
    assert r.mip["lp_bound"] >= 4.5


@pytest.mark.parametrize("scale", [1e10, 1e14, 1e300])
def test_huge_duals_give_a_valid_or_no_bound_never_a_wrong_one(scale):
    # min -0.3 x2 s.t. 1 <= x0 <= 2 (row 0), x0 + x1 <= 1 (choice), binaries: optimum -0.3
    A = np.array([[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]])
    p = Problem.from_arrays(cost=[0.0, 0.0, -0.3], col_lower=np.zeros(3), col_upper=np.ones(3),
                            row_lower=[1.0, -np.inf], row_upper=[2.0, 1.0], matrix=A, integrality=np.ones(3, bool))
    lag, s = choice_lagrangian(p)
    y = np.array([scale, 0.0])
    for b in (lag.evaluate(y)[0], lag.evaluate_ref(y)[0], lagrangian_bound(p, y, s.lower, s.upper),
              coupling_dual_ascent(lag, y, -0.3, 0.0, max_steps=10)[0]):
        assert not np.isnan(b) and b <= -0.3 + 1e-12
