"""The numba kernels of solver.integer.kernels against their plain-numpy twins (kernels_ref).

Random small MILPs with integer data (so incremental and from-scratch sums are exact), including
choice rows, capacity rows, VUB links r <= x and general integers with infinite bounds.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.integer import kernels as K
from solver.integer import kernels_ref as R
from solver.integer.rounding import build_model, initial_state, scratch
from solver.integer.structure import detect_structure
from solver.model.problem import Problem


def random_milp(seed: int) -> Problem:
    rng = np.random.default_rng(seed)
    nb, ng, nc = rng.integers(2, 7), rng.integers(0, 3), rng.integers(0, 3)
    n = nb + ng + nc
    rows = []
    rl, ru = [], []
    for _ in range(rng.integers(1, 4)):  # choice rows over binaries
        r = np.zeros(n)
        r[rng.choice(nb, size=min(nb, rng.integers(2, 4)), replace=False)] = 1
        rows.append(r)
        rl.append(rng.choice([-np.inf, 1.0]))
        ru.append(1.0)
    for _ in range(rng.integers(1, 4)):  # general rows
        r = rng.integers(-3, 4, size=n).astype(float) * (rng.random(n) < 0.6)
        if not r.any():
            r[0] = 1
        rows.append(r)
        lo_ = float(rng.integers(-4, 3))
        rl.append(rng.choice([-np.inf, lo_]))
        ru.append(rng.choice([np.inf, lo_ + float(rng.integers(0, 6))]))
    for k in range(nc):  # VUB: r_k - x_k <= 0 (binary parent k)
        r = np.zeros(n)
        r[nb + ng + k] = 1
        r[k] = -1
        rows.append(r)
        rl.append(-np.inf)
        ru.append(0.0)
    A = np.array(rows)
    lo = np.concatenate([np.zeros(nb), rng.choice([-np.inf, -2.0], size=ng), np.zeros(nc)])
    up = np.concatenate([np.ones(nb), rng.choice([np.inf, 3.0], size=ng), np.ones(nc)])
    integ = np.concatenate([np.ones(nb + ng, dtype=bool), np.zeros(nc, dtype=bool)])
    cost = rng.integers(-5, 6, size=n).astype(float)
    return Problem.from_arrays(cost=cost, col_lower=lo, col_upper=up, row_lower=rl, row_upper=ru, matrix=A,
                               integrality=integ)


def _setup(seed):
    p = random_milp(seed)
    stc = detect_structure(p)
    M = build_model(p, stc)
    return p, stc, M


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_incremental_activity_matches_numpy_recomputation(seed):
    p, stc, M = _setup(seed)
    S = initial_state(M, stc.lower, stc.upper)
    fmin, nmin, fmax, nmax = R.activity_ref(M, S[0], S[1])
    assert np.array_equal(S[2], fmin) and np.array_equal(S[3], nmin)
    assert np.array_equal(S[4], fmax) and np.array_equal(S[5], nmax)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), force=st.booleans())
def test_decide_pass_kernel_matches_numpy_twin(seed, force):
    p, stc, M = _setup(seed)
    rng = np.random.default_rng(seed + 1)
    ints = np.flatnonzero(p.integrality)
    lo = np.where(np.isfinite(stc.lower), stc.lower, -3.0)
    up = np.where(np.isfinite(stc.upper), stc.upper, 3.0)
    pref = np.floor(lo + rng.random(p.n_cols) * (up - lo + 1)).clip(lo, up)
    alt = np.floor(lo + rng.random(p.n_cols) * (up - lo + 1)).clip(lo, up)
    order = rng.permutation(ints).astype(np.int64)
    S = initial_state(M, stc.lower, stc.upper)
    dl0, du0 = S[0].copy(), S[1].copy()
    dec, forced = K.decide_pass(order, pref, alt, force, M, S, scratch(M))
    dl, du, dec_r, forced_r = R.decide_pass_ref(order, pref, alt, force, M, dl0, du0)
    assert (dec, forced) == (dec_r, forced_r)
    assert np.array_equal(S[0], dl) and np.array_equal(S[1], du)
    fmin, nmin, fmax, nmax = R.activity_ref(M, dl, du)
    assert np.array_equal(S[2], fmin) and np.array_equal(S[5], nmax)


def _decided_state(seed):
    p, stc, M = _setup(seed)
    rng = np.random.default_rng(seed + 2)
    lo = np.where(np.isfinite(stc.lower), stc.lower, -3.0)
    up = np.where(np.isfinite(stc.upper), stc.upper, 3.0)
    v = np.floor(lo + rng.random(p.n_cols) * (up - lo + 1)).clip(lo, up)
    dl = np.where(p.integrality, v, stc.lower)
    du = np.where(p.integrality, v, stc.upper)
    return p, stc, M, dl, du


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_repair_pass_kernel_matches_numpy_twin(seed):
    p, stc, M, dl, du = _decided_state(seed)
    S = initial_state(M, dl, du)
    dl0, du0 = S[0].copy(), S[1].copy()
    tabu = np.zeros(p.n_cols, dtype=np.int8)
    moves, left = K.repair_pass(200, M, S, scratch(M), tabu)
    dl_r, du_r, tabu_r, moves_r, left_r = R.repair_pass_ref(200, M, dl0, du0, np.zeros(p.n_cols, dtype=np.int8))
    assert (moves, left) == (moves_r, left_r)
    assert np.array_equal(S[0], dl_r) and np.array_equal(S[1], du_r) and np.array_equal(tabu, tabu_r)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_fill_pass_kernel_matches_numpy_twin(seed):
    p, stc, M, dl, du = _decided_state(seed)
    S = initial_state(M, dl, du)
    dl0, du0 = S[0].copy(), S[1].copy()
    order = np.flatnonzero(p.integrality).astype(np.int64)
    changed, gain = K.fill_pass(order, M, S, scratch(M))
    dl_r, du_r, changed_r, gain_r = R.fill_pass_ref(order, M, dl0, du0)
    assert changed == changed_r and gain == gain_r
    assert np.array_equal(S[0], dl_r) and np.array_equal(S[1], du_r)


def test_repair_never_makes_a_feasible_state_infeasible_and_fixes_a_capacity_overflow():
    # x0 + x1 + x2 <= 1 (choice), 3 x0 + 2 x1 + 1 x2 <= 2 (capacity); start at x0 = 1 (overflow)
    A = np.array([[1, 1, 1], [3, 2, 1]], float)
    p = Problem.from_arrays(cost=[-3, -2, -1], col_lower=[0, 0, 0], col_upper=[1, 1, 1], row_lower=[-np.inf] * 2,
                            row_upper=[1, 2], matrix=A, integrality=[1, 1, 1])
    stc = detect_structure(p)
    M = build_model(p, stc)
    v = np.array([1.0, 0.0, 0.0])
    S = initial_state(M, v, v)
    moves, left = K.repair_pass(100, M, S, scratch(M), np.zeros(3, dtype=np.int8))
    assert left == 0 and moves == 1
    assert S[0].tolist() == [0.0, 0.0, 0.0]  # the least valuable undo here is the only one: drop x0


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_swap_pass_kernel_matches_numpy_twin(seed):
    from solver.integer.rounding import choice_lists

    p, stc, M, dl, du = _decided_state(seed)
    S = initial_state(M, dl, du)
    dl0, du0 = S[0].copy(), S[1].copy()
    cp, cc = choice_lists(stc)
    swaps, gain = K.swap_pass(cp, cc, M, S, scratch(M))
    dl_r, du_r, swaps_r, gain_r = R.swap_pass_ref(cp, cc, M, dl0, du0)
    assert swaps == swaps_r and gain == gain_r
    assert np.array_equal(S[0], dl_r) and np.array_equal(S[1], du_r)


def test_swap_moves_a_job_to_a_better_configuration_that_fits():
    # one job, configs (2 GPUs, value 1) chosen and (3 GPUs, value 2) free; capacity 3 fits the swap only
    A = np.array([[1, 1], [2, 3]], float)
    p = Problem.from_arrays(cost=[-1, -2], col_lower=[0, 0], col_upper=[1, 1], row_lower=[-np.inf] * 2,
                            row_upper=[1, 3], matrix=A, integrality=[1, 1])
    from solver.integer.rounding import choice_lists

    stc = detect_structure(p)
    M = build_model(p, stc)
    v = np.array([1.0, 0.0])
    S = initial_state(M, v, v)
    cp, cc = choice_lists(stc)
    swaps, gain = K.swap_pass(cp, cc, M, S, scratch(M))
    assert swaps == 1 and gain == -1.0 and S[0].tolist() == [0.0, 1.0]
