"""The numba kernels of the partitioned round's Lagrangian bound (solver.partition.bound_kernels) agree with their
numpy twins (solver.partition.bound_ref; the row-client kernel with clients_ref) on random sparse data with infinite and negative bounds (hypothesis),
the one-pass column_terms gives each of k candidates bitwise what column_term gives it alone (and so
LagrangianBound.evaluate_many / best_bound what evaluate gives), and LagrangianBound built on them still bounds
the LP optimum from below."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.partition import bound_kernels as K
from solver.partition import bound_ref as R


def _case(m, n, seed):
    rng = np.random.default_rng(seed)
    A = sp.random_array((m, n), density=0.3, format="csc", rng=rng,
                        data_sampler=lambda size: rng.choice([-1.0, 1.0], size, p=[0.15, 0.85]) * rng.uniform(0.1, 3, size))
    A.sort_indices()
    csc = (A.indptr.astype(np.int64), A.indices.astype(np.int32), A.data.copy())
    lo = np.where(rng.random(n) < 0.15, -np.inf, rng.uniform(-0.5, 1.0, n))
    lo[rng.random(n) < 0.5] = 0.0
    up = np.where(rng.random(n) < 0.5, np.inf, lo + rng.uniform(0, 5, n))
    ru = np.where(rng.random(m) < 0.2, np.inf, rng.uniform(0, 10, m))
    return csc, lo, up, ru, rng


shapes = st.tuples(st.integers(1, 30), st.integers(1, 30), st.integers(0, 2**31 - 1))


@settings(max_examples=80, deadline=None)
@given(shapes)
def test_implied_upper_matches_twin(shape):
    m, n, seed = shape
    csc, lo, up, ru, _ = _case(m, n, seed)
    np.testing.assert_array_equal(K.implied_upper(*csc, lo, up, ru, m), R.implied_upper_ref(*csc, lo, up, ru, m))


@settings(max_examples=80, deadline=None)
@given(shapes)
def test_reduced_costs_and_column_term_match_twins(shape):
    m, n, seed = shape
    csc, lo, up, ru, rng = _case(m, n, seed)
    c, y = rng.standard_normal(n), rng.standard_normal(m)
    r1, r2 = np.empty(n), np.empty(n)
    K.reduced_costs(*csc, c, y, r1)
    R.reduced_costs_ref(*csc, c, y, r2)
    np.testing.assert_allclose(r1, r2, rtol=1e-12, atol=1e-12)
    is_sh = (rng.random(m) < 0.4).astype(np.uint8)
    ysh = rng.standard_normal(m)
    up_i = K.implied_upper(*csc, lo, up, ru, m)
    t1, u1 = K.column_term(*csc, is_sh, ysh, r2, lo, up_i)
    t2, u2 = R.column_term_ref(*csc, is_sh, ysh, r2, lo, up_i)
    assert u1 == u2
    if not u1:
        assert abs(t1 - t2) <= 1e-9 * (1 + abs(t2))


@settings(max_examples=80, deadline=None)
@given(shapes, st.sampled_from([1, 2, 3, 5]))
def test_column_terms_is_column_term_per_candidate_bitwise(shape, k):
    m, n, seed = shape
    csc, lo, up, ru, rng = _case(m, n, seed)
    r_base = rng.standard_normal(n)
    r_base[rng.random(n) < 0.1] = 0.0
    is_sh = (rng.random(m) < 0.4).astype(np.uint8)
    Y = np.ascontiguousarray(rng.standard_normal((m, k)))
    Y[rng.random((m, k)) < 0.1] = 0.0
    up_i = K.implied_upper(*csc, lo, up, ru, m)  # keeps the +inf upper bounds of unbounded columns
    r_kept = np.full((n, k), np.nan)
    totals, unb = K.column_terms(*csc, is_sh, Y, r_base, lo, up_i, r_kept)
    assert totals.shape == (k,) and unb.shape == (k,)
    t0, u0 = K.column_terms(*csc, is_sh, Y, r_base, lo, up_i, np.empty((0, k)))  # nothing kept: the same sums
    assert t0.tobytes() == totals.tobytes() and np.array_equal(u0, unb)
    for c in range(k):
        t, u = K.column_term(*csc, is_sh, np.ascontiguousarray(Y[:, c]), r_base, lo, up_i)
        assert bool(unb[c]) == u
        assert np.float64(t).tobytes() == totals[c].tobytes()  # bitwise, the unbounded candidates' sums too
        # the kept reduced costs are r_base - A_shared' y_c
        want = r_base - np.array([sum(csc[2][p] * Y[csc[1][p], c] for p in range(csc[0][j], csc[0][j + 1])
                                      if is_sh[csc[1][p]]) for j in range(n)])
        np.testing.assert_allclose(r_kept[:, c], want, rtol=1e-12, atol=1e-12)
    r_ref = np.full((n, k), np.nan)
    t2, u2 = R.column_terms_ref(*csc, is_sh, Y, r_base, lo, up_i, r_ref)
    np.testing.assert_array_equal(unb, u2)
    ok = ~unb
    np.testing.assert_allclose(totals[ok], t2[ok], rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(r_kept, r_ref, rtol=1e-12, atol=1e-12)


@settings(max_examples=80, deadline=None)
@given(shapes, st.sampled_from([1, 3]))
def test_base_and_column_terms_is_the_two_kernels_in_one_pass_bitwise(shape, k):
    """The fused pass gives bitwise what reduced_costs then column_terms give (base reduced costs, each candidate's
    sum and unboundedness, the kept reduced costs), and what their numpy twins give."""
    m, n, seed = shape
    csc, lo, up, ru, rng = _case(m, n, seed)
    c = rng.standard_normal(n)
    y_base = rng.standard_normal(m)
    is_sh = (rng.random(m) < 0.4).astype(np.uint8)
    y_base[is_sh == 1] = 0.0  # as LagrangianBound holds it
    Y = np.ascontiguousarray(rng.standard_normal((m, k)))
    up_i = K.implied_upper(*csc, lo, up, ru, m)
    for kept in (True, False):
        r_base, r_out = np.full(n, np.nan), np.full((n, k), np.nan) if kept else np.empty((0, k))
        totals, unb = K.base_and_column_terms(*csc, c, y_base, is_sh, Y, lo, up_i, r_base, r_out)
        r_two, r_out_two = np.empty(n), np.full((n, k), np.nan) if kept else np.empty((0, k))
        K.reduced_costs(*csc, c, y_base, r_two)
        t2, u2 = K.column_terms(*csc, is_sh, Y, r_two, lo, up_i, r_out_two)
        assert r_base.tobytes() == r_two.tobytes() and r_out.tobytes() == r_out_two.tobytes()
        assert totals.tobytes() == t2.tobytes() and np.array_equal(unb, u2)
        r_ref, r_out_ref = np.empty(n), np.full((n, k), np.nan) if kept else np.empty((0, k))
        t3, u3 = R.base_and_column_terms_ref(*csc, c, y_base, is_sh, Y, lo, up_i, r_ref, r_out_ref)
        np.testing.assert_array_equal(unb, u3)
        np.testing.assert_allclose(r_base, r_ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(r_out, r_out_ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(totals[~unb], t3[~unb], rtol=1e-9, atol=1e-9)


def test_lagrangian_bound_computes_its_base_once_in_the_candidates_pass():
    """A LagrangianBound without r_base evaluates its candidates with the fused pass: the same floats as one built
    with the base given and as evaluate() per candidate, its r_base then the given one, bitwise."""
    from solver.partition.bound import LagrangianBound
    from solver.workloads import make_scenario

    p = make_scenario("te", 16, seed=4).base()
    rng = np.random.default_rng(2)
    y = rng.standard_normal(p.n_rows)
    shared = np.flatnonzero(rng.random(p.n_rows) < 0.3).astype(np.int64)
    cands = [rng.standard_normal(shared.size) for _ in range(3)]
    given_base = LagrangianBound(p, y, shared).r_base.copy()  # through the property: reduced_costs alone
    lazy = LagrangianBound(p, y, shared)
    reduced = np.empty((p.n_cols, 3))
    got = lazy.evaluate_many(cands, reduced)
    assert lazy.r_base.tobytes() == given_base.tobytes()
    eager = LagrangianBound(p, y, shared, r_base=given_base)
    reduced2 = np.empty((p.n_cols, 3))
    assert eager.evaluate_many(cands, reduced2) == got
    assert reduced.tobytes() == reduced2.tobytes()
    assert [LagrangianBound(p, y, shared).evaluate(c) for c in cands] == got


def test_column_terms_unbounded_candidates():
    """A column with r_j > 0 and lo_j = -inf, or r_j < 0 and up_j = +inf, makes only the candidates whose
    r_j has that sign unbounded."""
    cp = np.array([0, 1, 2], dtype=np.int64)
    ci = np.array([0, 0], dtype=np.int32)
    cv = np.array([1.0, 1.0])
    is_sh = np.ones(1, dtype=np.uint8)
    lo = np.array([-np.inf, 0.0])
    up = np.array([1.0, np.inf])
    r_base = np.zeros(2)
    Y = np.array([[-1.0, 0.0, 1.0]])  # r = -y: col 0 (lo = -inf) needs r <= 0, col 1 (up = inf) r >= 0
    totals, unb = K.column_terms(cp, ci, cv, is_sh, Y, r_base, lo, up, np.empty((0, 3)))
    assert list(unb) == [True, False, True]
    for c in range(3):
        t, u = K.column_term(cp, ci, cv, is_sh, np.ascontiguousarray(Y[:, c]), r_base, lo, up)
        assert u == bool(unb[c]) and np.float64(t).tobytes() == totals[c].tobytes()
    np.testing.assert_array_equal(R.column_terms_ref(cp, ci, cv, is_sh, Y, r_base, lo, up, np.empty((0, 3)))[1],
                                  unb)


@settings(max_examples=40, deadline=None)
@given(shapes, st.sampled_from([1, -1]))
def test_evaluate_many_and_best_bound_match_evaluate(shape, sense):
    from solver.model.problem import Problem
    from solver.partition.bound import LagrangianBound, best_bound, shared_dual_candidates

    m, n, seed = shape
    csc, lo, up, ru, rng = _case(m, n, seed)
    A = sp.csc_array((csc[2], csc[1], csc[0]), shape=(m, n))
    up = np.where(up == -np.inf, np.where(rng.random(n) < 0.5, np.inf, rng.uniform(0, 5, n)), up)  # lo = -inf
    rl = np.where(rng.random(m) < 0.4, -np.inf, rng.uniform(-5, 0, m))
    p = Problem.from_arrays(cost=rng.standard_normal(n), col_lower=lo, col_upper=up, row_lower=rl, row_upper=ru,
                            matrix=A, sense=sense, offset=float(rng.uniform(-3, 3)))
    shared = np.flatnonzero(rng.random(m) < 0.5).astype(np.int64)
    y = rng.standard_normal(m)
    lb = LagrangianBound(p, y, shared)
    cands = [rng.standard_normal(shared.size) for _ in range(int(rng.integers(1, 6)))]
    if cands and shared.size:
        cands[0][rng.random(shared.size) < 0.3] = np.nan
    got = lb.evaluate_many(cands)
    want = [lb.evaluate(c) for c in cands]
    assert [np.float64(v).tobytes() for v in got] == [np.float64(v).tobytes() for v in want]

    kp = 3
    duals = np.where(rng.random((kp, shared.size)) < 0.3, np.nan, rng.standard_normal((kp, shared.size)))
    same = rng.random(shared.size) < 0.2
    duals[:, same] = duals[0, same]
    if rng.random() < 0.3:
        duals[:] = duals[0]  # the candidates tie: the first wins
    shares = rng.uniform(0, 1, (kp, shared.size))
    b, name, ys, _ = best_bound(p, y, shared, duals, shares)
    ref_b, ref_name, ref_y = None, "", None
    named = shared_dual_candidates(duals, shares)
    ref_y = named["share_mean"]
    for nm, c in named.items():  # the loop best_bound ran before evaluate_many
        v = lb.evaluate(c)
        if np.isfinite(v) and (ref_b is None or sense * v > sense * ref_b):
            ref_b, ref_name, ref_y = float(v), nm, c
    assert (b, name) == (ref_b, ref_name)
    np.testing.assert_array_equal(ys, ref_y)


def test_lagrangian_bound_is_below_the_lp_optimum():
    from solver.baselines.highs import solve_highs
    from solver.model.problem import Problem
    from solver.partition.bound import LagrangianBound

    rng = np.random.default_rng(4)
    m, n = 12, 30
    A = sp.random_array((m, n), density=0.4, format="csc", rng=rng, data_sampler=lambda size: rng.uniform(0.5, 2, size))
    p = Problem.from_arrays(cost=-rng.uniform(0.5, 2, n), col_lower=np.zeros(n), col_upper=np.full(n, np.inf),
                            row_lower=np.full(m, -np.inf), row_upper=rng.uniform(1, 3, m), matrix=A)
    opt = solve_highs(p, solver="simplex")
    shared = np.arange(0, m, 3, dtype=np.int64)
    for _ in range(20):
        y = -np.abs(rng.standard_normal(m))  # <= rows: duals <= 0 in HiGHS's minimisation convention
        lb = LagrangianBound(p, y, shared)
        v = lb.evaluate(y[shared])
        assert v <= opt.objective + 1e-9 * (1 + abs(opt.objective))


@settings(max_examples=80, deadline=None)
@given(shapes, st.integers(1, 5))
def test_row_clients_matches_twin(shape, n_clients):
    from solver.partition import clients_kernels as CK
    from solver.partition import clients_ref as CR
    from solver.partition.clients import EMPTY, GLOBAL, SHARED

    m, n, seed = shape
    csc, lo, up, ru, rng = _case(m, n, seed)
    col_client = rng.integers(-1, n_clients, n).astype(np.int64)
    col_client[col_client < 0] = GLOBAL
    args = (csc[0], csc[1], col_client, m, SHARED, EMPTY, GLOBAL)
    np.testing.assert_array_equal(CK.row_clients(*args), CR.row_clients_ref(*args))


@settings(max_examples=80, deadline=None)
@given(shapes, st.integers(1, 4))
def test_presence_matches_twin(shape, k):
    from solver.partition import clients_kernels as CK
    from solver.partition import clients_ref as CR

    m, n, seed = shape
    csc, lo, up, ru, rng = _case(m, n, seed)
    cv = csc[2].copy()
    cv[rng.random(cv.size) < 0.1] = 0.0  # explicit zeros do not make a part present
    col_part = rng.integers(-1, k, n).astype(np.int64)
    rows = np.flatnonzero(rng.random(m) < 0.5)
    pos = np.full(m, -1, dtype=np.int64)
    pos[rows] = np.arange(rows.size)
    args = (csc[0], csc[1], cv, col_part, pos, k, rows.size)
    np.testing.assert_array_equal(CK.presence(*args), CR.presence_ref(*args))


def _rows_and_duals(m, seed):
    rng = np.random.default_rng(seed)
    rl = np.where(rng.random(m) < 0.3, -np.inf, rng.uniform(-5, 1, m))
    ru = np.where(rng.random(m) < 0.3, np.inf, rng.uniform(-1, 5, m))
    y = rng.standard_normal(m)
    y[rng.random(m) < 0.1] = np.nan
    y[rng.random(m) < 0.05] = np.inf
    y[rng.random(m) < 0.05] = -np.inf
    y[rng.random(m) < 0.1] = -0.0
    return rl, ru, y, rng


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 40), st.integers(0, 2**31 - 1), st.sampled_from([1.0, -1.0]))
def test_min_form_and_row_term_match_twins(m, seed, sense):
    rl, ru, y, _ = _rows_and_duals(m, seed)
    got = K.min_form(y, sense, rl, ru, np.empty(m))
    want = R.min_form_ref(y, sense, rl, ru, np.empty(m))
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))  # -0.0 kept where numpy keeps it
    assert np.isfinite(got).all()
    assert not (got[~np.isfinite(rl)] > 0).any() and not (got[~np.isfinite(ru)] < 0).any()
    fin = np.where(np.abs(got) < 1e300, got, 0.0)  # the row term of finite duals (an inf dual's is +-inf either way)
    t1, t2 = K.row_term(fin, rl, ru), R.row_term_ref(fin, rl, ru)
    scale = np.abs(fin * np.where(np.isfinite(rl), rl, 0.0)).sum() + np.abs(fin * np.where(np.isfinite(ru), ru, 0.0)).sum()
    assert abs(t1 - t2) <= 1e-12 * (1 + scale)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 30), st.integers(0, 40), st.integers(0, 2**31 - 1))
def test_without_assignment_entries_matches_twin(m, n, seed):
    rng = np.random.default_rng(seed)
    row_of_col = rng.integers(-1, m, n).astype(np.int64)
    coef = np.where(row_of_col >= 0, rng.uniform(-3, 3, n), 0.0)
    r_full, y = rng.standard_normal(n), rng.standard_normal(m)
    np.testing.assert_array_equal(K.without_assignment_entries(r_full, row_of_col, coef, y, np.empty(n)),
                                  R.without_assignment_entries_ref(r_full, row_of_col, coef, y, np.empty(n)))
