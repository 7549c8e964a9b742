"""The ALM's direct Newton solve (solver.lp.alm_schur): each kernel agrees with its numpy twin
(solver.lp.alm_schur_ref), the chosen assignment rows have pairwise disjoint supports, the direction solves
the generalised Hessian's system exactly, and the ALM reaches the same optimum with it as with CG."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.lp import alm_schur as K
from solver.lp import alm_schur_ref as R
from solver.lp.alm import ALMParameters, solve_alm
from solver.model.settings import Settings
from solver.model.status import Status


def _assignment_like(m1, m2, n, seed, extra=0.0):
    """A (m1 + m2, n) with every column in one of m1 'demand' rows and up to 3 of m2 'link' rows, rows
    shuffled; ``extra``: the share of columns with a second demand-row entry (breaks the disjointness)."""
    rng = np.random.default_rng(seed)
    rows, cols, vals = [], [], []
    for j in range(n):
        rows.append(rng.integers(m1))
        cols.append(j)
        vals.append(rng.uniform(0.5, 2.0))
        if rng.random() < extra:
            rows.append((rows[-1] + 1) % m1)
            cols.append(j)
            vals.append(rng.uniform(0.5, 2.0))
        for link in rng.choice(m2, size=int(rng.integers(0, min(m2, 3) + 1)), replace=False):
            rows.append(m1 + link)
            cols.append(j)
            vals.append(rng.normal())
    A = sp.csc_array((vals, (rows, cols)), shape=(m1 + m2, n))
    A = A[rng.permutation(m1 + m2), :].tocsc()
    A.sum_duplicates()
    A.sort_indices()
    return A, (A.indptr.astype(np.int64), A.indices.astype(np.int32), A.data.copy()), rng


def _close(got, want, rel=1e-10):
    np.testing.assert_allclose(got, want, rtol=rel, atol=rel * (1 + np.abs(want).max(initial=0.0)))


cases = st.tuples(st.integers(1, 25), st.integers(0, 10), st.integers(1, 60), st.integers(0, 2**31 - 1),
                  st.sampled_from([0.0, 0.2, 1.0]))


@settings(max_examples=60, deadline=None)
@given(cases)
def test_assignment_rows_match_twin_and_are_disjoint(case):
    m1, m2, n, seed, extra = case
    A, csc, _ = _assignment_like(m1, m2, n, seed, extra)
    m = m1 + m2
    got, want = K.assignment_rows(*csc, m), R.assignment_rows_ref(*csc, m)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_array_equal(g, w)
    row_of_col, coef, pos, coupling = got[:4]
    taken = np.flatnonzero(pos < 0)
    B = (A.tocsr()[taken, :] != 0).astype(int)
    assert (np.asarray(B.sum(axis=0)).reshape(-1) <= 1).all()  # pairwise disjoint supports
    for j in np.flatnonzero(row_of_col >= 0):
        assert A[row_of_col[j], j] == coef[j] != 0
    np.testing.assert_array_equal(np.sort(np.concatenate([taken, coupling])), np.arange(m))
    # rp / rc hold each assignment row's columns in increasing order and nothing for a coupling row
    rp, rc = got[4], got[5]
    assert rc.dtype == np.int32 and rp.shape == (m + 1,)
    csr = A.tocsr()
    csr.sort_indices()
    for i in range(m):
        want_cols = csr.indices[csr.indptr[i]:csr.indptr[i + 1]] if pos[i] < 0 else np.empty(0, np.int32)
        np.testing.assert_array_equal(rc[rp[i]:rp[i + 1]], want_cols)


@settings(max_examples=60, deadline=None)
@given(cases, st.integers(0, 2**31 - 1))
def test_carried_coupling_rows_rebuild_the_greedys_arrays(case, seed2):
    """The carried choice (its coupling rows) gives the greedy's arrays element for element, through the kernel and
    its twin; a choice that is not pairwise disjoint on this matrix, or names a row outside it, is refused."""
    m1, m2, n, seed, extra = case
    _, csc, _ = _assignment_like(m1, m2, n, seed, extra)
    m = m1 + m2
    want = K.assignment_rows(*csc, m)
    coupling = want[3]
    for got in (K.assignment_rows_given(*csc, coupling, m), R.assignment_rows_given_ref(*csc, coupling, m)):
        for g, w in zip(got, want, strict=True):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == w.dtype
    rng = np.random.default_rng(seed2)
    other = np.flatnonzero(rng.random(m) < 0.5).astype(np.int64)  # any choice: the twin decides which fit
    got, ref = K.assignment_rows_given(*csc, other, m), R.assignment_rows_given_ref(*csc, other, m)
    assert (got[2].shape[0] == 0) == (ref is None)
    if ref is not None:
        for g, w in zip(got, ref, strict=True):
            np.testing.assert_array_equal(g, w)
    for outside in (np.array([m], dtype=np.int64), np.array([-1], dtype=np.int64)):
        assert K.assignment_rows_given(*csc, outside, m)[2].shape[0] == 0
        assert R.assignment_rows_given_ref(*csc, outside, m) is None


def test_carried_choice_that_breaks_disjointness_is_refused():
    """Two assignment rows sharing a column (a matrix changed under a carried choice) are refused, not used."""
    A = sp.csc_array(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]))
    csc = (A.indptr.astype(np.int64), A.indices.astype(np.int32), A.data.copy())
    assert K.assignment_rows_given(*csc, np.array([], dtype=np.int64), 3)[2].shape[0] == 0
    assert R.assignment_rows_given_ref(*csc, np.array([], dtype=np.int64), 3) is None
    got = K.assignment_rows_given(*csc, np.array([1], dtype=np.int64), 3)
    np.testing.assert_array_equal(got[3], [1])
    np.testing.assert_array_equal(got[0], [0, 2])


def test_demand_rows_become_assignment_rows():
    """Without a second demand entry every demand row is taken and only link rows are coupled."""
    m1, m2 = 30, 8
    A, csc, _ = _assignment_like(m1, m2, 200, 3)
    row_of_col, _, pos, coupling = K.assignment_rows(*csc, m1 + m2)[:4]
    assert coupling.size <= m2 + 1  # a link row with fewer entries than a demand row may be taken instead


def _system(case, tau):
    m1, m2, n, seed, extra = case
    A, csc, rng = _assignment_like(m1, m2, n, seed, extra)
    m = m1 + m2
    act = (rng.random(n) < 0.7).astype(np.uint8)
    diag = rng.uniform(1e-3, 1.0, m)
    AJ = A[:, np.flatnonzero(act)]
    V = tau * (AJ @ AJ.T).toarray() + np.diag(diag)
    return csc, m, act, diag, np.diag(V).copy(), V, rng


def _eliminated(V, pos):
    """V21 V11^-1 V12 of the dense V (the part block elimination subtracts)."""
    r1 = pos < 0
    V21 = V[np.ix_(pos >= 0, r1)]
    return (V21 / np.diag(V)[r1]) @ V21.T


@settings(max_examples=60, deadline=None)
@given(cases, st.floats(1e-3, 1e3), st.floats(0.0, 0.5), st.integers(0, 2 ** 31))
def test_schur_update_matches_a_fresh_assembly(case, tau, flip, seed):
    """S updated from an earlier active set and V11 (columns entering and leaving J, rows whose diagonal
    moved) equals S assembled afresh for the new ones; above ``max_rows`` changed rows nothing is done."""
    csc, m, act, diag, prec, V, rng = _system(case, tau)
    struct = K.assignment_rows(*csc, m)
    row_of_col, coef, pos, coupling, rp, rc = struct
    k = coupling.size
    rng = np.random.default_rng(seed)
    new_act = np.where(rng.random(act.size) < flip, 1 - act, act).astype(np.uint8)
    new_diag = np.where(rng.random(m) < flip, diag * rng.uniform(0.5, 2.0, m), diag)
    A = sp.csc_array((csc[2], csc[1], csc[0]), shape=(m, act.size))
    AJ = A[:, np.flatnonzero(new_act)]
    new_V = tau * (AJ @ AJ.T).toarray() + np.diag(new_diag)
    new_prec = np.diag(new_V).copy()
    u, touched, mark = np.zeros(k), np.empty(k, np.int64), np.full(k, -1, np.int64)
    kb = K.block_bound(csc[0], csc[1], pos, rp, rc)
    blk, flag = np.empty((kb, kb)), np.zeros(m, np.uint8)
    C1, C2, S1 = np.empty((k, k)), np.empty((k, k)), np.empty((k, k))
    K.schur_assemble(*csc, act, tau, prec, *struct, u, touched, mark, blk, C1)
    before = C1.copy()
    changed = np.zeros(m, dtype=bool)
    changed[row_of_col[(new_act != act) & (row_of_col >= 0)]] = True
    changed |= (pos < 0) & (new_prec != prec)
    n_changed = int(changed.sum())
    if n_changed:  # too many: refused, C and the work arrays untouched
        assert K.schur_update(*csc, new_act, act, tau, new_prec, prec, row_of_col, coef, pos, rp, rc, u, touched,
                              mark, blk, flag, n_changed - 1, C1) == -1
        assert R.schur_update_ref(*csc, new_act, act, tau, new_prec, prec, row_of_col, coef, pos, rp, rc, u,
                                  touched, mark, blk, flag, n_changed - 1, C2) == -1
        assert np.array_equal(np.triu(C1), np.triu(before)) and not flag.any()
    assert K.schur_update(*csc, new_act, act, tau, new_prec, prec, row_of_col, coef, pos, rp, rc, u, touched, mark,
                          blk, flag, n_changed, C1) >= 0
    assert (mark == -1).all() and not flag.any()
    R.schur_update_ref(*csc, new_act, act, tau, new_prec, prec, row_of_col, coef, pos, rp, rc, u, touched, mark,
                       blk, flag, n_changed, C2)
    K.schur_finish(C1, new_diag, coupling, S1, np.zeros((0, 0), np.float32))
    _close(np.triu(S1), np.triu(new_V[np.ix_(coupling, coupling)] - _eliminated(new_V, pos)))
    _close(np.triu(C1), np.triu(C2))


@settings(max_examples=60, deadline=None)
@given(cases, st.floats(1e-3, 1e3))
def test_schur_kernels_match_twins(case, tau):
    csc, m, act, diag, prec, V, rng = _system(case, tau)
    struct = K.assignment_rows(*csc, m)
    row_of_col, coef, pos, coupling, rp, rc = struct
    k = coupling.size
    S1, S2 = np.empty((k, k)), np.empty((k, k))
    u, mark = np.zeros(k), np.full(k, -1, np.int64)
    kb = K.block_bound(csc[0], csc[1], pos, rp, rc)
    assert kb == R.block_bound_ref(csc[0], csc[1], pos, rp, rc)
    blk = np.full((kb, kb), np.nan)  # whatever it held: the kernel clears what it uses
    C1, C2 = np.full((k, k), np.nan), np.empty((k, k))
    ops1 = K.schur_assemble(*csc, act, tau, prec, *struct, u, np.empty(k, np.int64), mark, blk, C1)
    ops2 = R.schur_assemble_ref(*csc, act, tau, prec, *struct, u, None, None, None, C2)
    assert ops1 == ops2
    assert (mark == -1).all()
    S1[:], S2[:] = np.nan, np.nan  # the strict lower triangle is not written: it keeps what it held
    none = np.zeros((0, 0), np.float32)  # below SINGLE_MIN_ORDER: no single-precision copy
    K.schur_finish(C1, diag, coupling, S1, none)
    R.schur_finish_ref(C2, diag, coupling, S2, none)
    lower = np.tril_indices(k, -1)
    assert np.isnan(S1[lower]).all() and np.isnan(S2[lower]).all()
    _close(np.triu(S1), np.triu(S2))
    single1, single2 = np.full((k, k), np.nan, np.float32), np.full((k, k), np.nan, np.float32)
    S3, S4 = np.full((k, k), np.nan), np.full((k, k), np.nan)
    K.schur_finish(C1, diag, coupling, S3, single1)
    R.schur_finish_ref(C2, diag, coupling, S4, single2)
    np.testing.assert_array_equal(np.triu(S3), np.triu(S1))  # the same double triangle with the copy as without
    assert np.isnan(single1[lower]).all() and np.isnan(single2[lower]).all()
    upper = np.triu_indices(k)
    np.testing.assert_array_equal(single1[upper], S1[upper].astype(np.float32))  # S's own values, rounded once
    _close(np.triu(single1).astype(float), np.triu(single2).astype(float), rel=1e-6)  # float32: one rounding apart
    _close(np.triu(S2), np.triu(V[np.ix_(coupling, coupling)] - _eliminated(V, pos)))
    g = rng.standard_normal(m)
    t1, t2 = np.empty(k), np.empty(k)
    K.schur_rhs(*csc, act, tau, prec, row_of_col, coef, coupling, pos, g, t1)
    R.schur_rhs_ref(*csc, act, tau, prec, row_of_col, coef, coupling, pos, g, t2)
    _close(t1, t2)
    d2 = rng.standard_normal(k)
    b1, b2 = np.empty(m), np.empty(m)
    K.schur_back(*csc, act, tau, prec, row_of_col, coef, coupling, pos, g, d2, b1)
    R.schur_back_ref(*csc, act, tau, prec, row_of_col, coef, coupling, pos, g, d2, b2)
    _close(b1, b2)
    if k:
        U = np.linalg.cholesky(V[np.ix_(coupling, coupling)] - _eliminated(V, pos)).T.copy()
        U[np.tril_indices(k, -1)] = np.nan  # read nowhere
        c1, c2 = np.empty(k), np.empty(k)
        K.upper_cholesky_solve(U, t2, c1)
        R.upper_cholesky_solve_ref(U, t2, c2)
        _close(c1, c2, 1e-8)


@settings(max_examples=60, deadline=None)
@given(cases, st.floats(1e-2, 1e2))
def test_direction_solves_the_newton_system(case, tau):
    csc, m, act, diag, prec, V, rng = _system(case, tau)
    g = rng.standard_normal(m)
    d = np.empty(m)
    assert K.SchurSystem(*csc, m).solve(*csc, act, tau, diag, prec, g, d)
    np.testing.assert_allclose(V @ d, g, rtol=0, atol=1e-8 * (1 + np.abs(g).max()) * (1 + np.abs(V).max()))


@settings(max_examples=30, deadline=None)
@given(cases, st.floats(1e-2, 1e2))
def test_direction_through_lapack_in_place_factor_solves_the_newton_system(case, tau):
    # the in-place LAPACK factor (order >= LAPACK_MIN_ORDER, Kdl's 1,790 links) on these small systems
    old = K.LAPACK_MIN_ORDER
    K.LAPACK_MIN_ORDER = 0
    try:
        csc, m, act, diag, prec, V, rng = _system(case, tau)
        g = rng.standard_normal(m)
        d = np.empty(m)
        assert K.SchurSystem(*csc, m).solve(*csc, act, tau, diag, prec, g, d)
    finally:
        K.LAPACK_MIN_ORDER = old
    np.testing.assert_allclose(V @ d, g, rtol=0, atol=1e-8 * (1 + np.abs(g).max()) * (1 + np.abs(V).max()))


@pytest.mark.parametrize("k", [1, 7, 64, 300])
def test_factor_upper_reads_one_triangle_matches_numpy_and_refuses_what_is_not_positive_definite(k, monkeypatch):
    rng = np.random.default_rng(k)
    B = rng.standard_normal((k, k + 3))
    S = B @ B.T + 1e-3 * np.eye(k)
    ref = np.linalg.cholesky(S).T  # S = ref' ref
    lower = np.tril_indices(k, -1)
    half = S.copy()
    half[lower] = np.nan  # what schur_finish leaves there: never read
    # below the order: numpy's factor, S untouched
    monkeypatch.setattr(K, "LAPACK_MIN_ORDER", k + 1)
    S1 = half.copy()
    U1 = K.factor_upper(S1)
    np.testing.assert_array_equal(S1, half)
    assert U1.flags.c_contiguous
    np.testing.assert_allclose(np.triu(U1), ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    # from the order on: LAPACK in place, U is S itself, its upper triangle the factor
    monkeypatch.setattr(K, "LAPACK_MIN_ORDER", k)
    S2 = half.copy()
    U2 = K.factor_upper(S2)
    assert U2.flags.c_contiguous and np.shares_memory(U2, S2)
    np.testing.assert_allclose(np.triu(U2), ref, rtol=0, atol=1e-12 * np.abs(ref).max())
    for U in (U1, U2):
        t, out = rng.standard_normal(k), np.empty(k)
        K.upper_cholesky_solve(U, t, out)  # reads the upper triangle only: the nan below it do not matter
        np.testing.assert_allclose(S @ out, t, rtol=0, atol=1e-8 * (1 + np.abs(t).max()) * np.abs(S).max())
    # not positive definite: None on both paths
    bad = half.copy()
    bad[k // 2, k // 2] = -1.0
    for order in (k, k + 1):
        monkeypatch.setattr(K, "LAPACK_MIN_ORDER", order)
        assert K.factor_upper(bad.copy()) is None


def _te_like_lp(seed):
    """min -sum x over 'paths' x in [0, 1]: demand rows sum x <= demand, link rows sum x <= capacity."""
    from solver.model.problem import Problem

    m1, m2, n = 25, 6, 80
    A, csc, rng = _assignment_like(m1, m2, n, seed)
    A = abs(A)
    m = m1 + m2
    return Problem.from_arrays(cost=-rng.uniform(0.5, 1.5, n), col_lower=np.zeros(n), col_upper=np.ones(n),
                               row_lower=np.full(m, -np.inf), row_upper=rng.uniform(0.5, 2.0, m), matrix=A)


def test_alm_with_direct_newton_matches_cg_and_highs():
    from solver.baselines.highs import solve_highs

    for seed in range(4):
        p = _te_like_lp(seed)
        st_ = Settings(tol=1e-6)
        direct = solve_alm(p, st_, params=ALMParameters(handover=False))
        cg = solve_alm(p, st_, params=ALMParameters(handover=False, direct_max=0))
        assert direct.status == cg.status == Status.OPTIMAL
        assert ", 0 of them direct" in cg.message and ", 0 of them direct" not in direct.message
        ref = solve_highs(p, solver="simplex")
        assert abs(direct.objective - ref.objective) <= 1e-5 * (1 + abs(ref.objective))
        assert abs(cg.objective - ref.objective) <= 1e-5 * (1 + abs(ref.objective))


def test_single_path_demands_keep_their_column_from_small_links():
    """TE Cogentco's shape: a demand with one path has a one-entry row; a link used by two paths must not
    claim that column (session 17's order left 4,776 coupling rows there instead of 486)."""
    demands = sp.eye_array(10, format="csr")
    links = sp.csr_array((np.ones(10), (np.repeat(np.arange(5), 2), np.arange(10))), shape=(5, 10))
    A = sp.vstack([links, demands]).tocsc()  # the links come first in the row order
    A.sort_indices()
    csc = (A.indptr.astype(np.int64), A.indices.astype(np.int32), A.data.copy())
    coupling = K.assignment_rows(*csc, 15)[3]
    np.testing.assert_array_equal(coupling, np.arange(5))


def test_schur_system_is_kept_for_the_same_matrix_arrays():
    """A long-lived process (worker, part worker) on an unchanged matrix chooses the assignment rows once."""
    _, csc, _ = _assignment_like(10, 4, 30, 1)
    first = K.schur_system(*csc, 14)
    assert K.schur_system(*csc, 14) is first
    other = (csc[0], csc[1], csc[2].copy())  # new values (a coefficient delta): another system
    assert K.schur_system(*other, 14) is not first


@settings(max_examples=40, deadline=None)
@given(cases, st.integers(0, 2 ** 31))
def test_a_kept_schur_system_matches_a_fresh_one_over_a_sequence_of_steps(case, seed):
    """SchurSystem keeps S between solves and updates it: over a sequence of Newton-step-like changes
    (columns entering and leaving J, diagonals moving, a new tau, repeated identical calls, the workspace's
    arrays swapped) every S equals the one a fresh SchurSystem assembles."""
    csc, m, act, diag, prec, V, rng = _system(case, 1.0)
    A = sp.csc_array((csc[2], csc[1], csc[0]), shape=(m, act.size))
    rng = np.random.default_rng(seed)
    kept = K.SchurSystem(*csc, m)
    tau, other = 1.0, np.zeros_like(act)
    for _ in range(12):
        op = rng.integers(4)
        if op == 0:
            act = np.where(rng.random(act.size) < 0.2, 1 - act, act).astype(np.uint8)
        elif op == 1:
            diag = np.where(rng.random(m) < 0.3, diag * rng.uniform(0.5, 2.0, m), diag)
        elif op == 2:
            tau = float(rng.choice([0.5, 1.0, 3.0]))
        np.copyto(other, act)
        act, other = other, act  # Workspace.swap: the same values in another array
        AJ = A[:, np.flatnonzero(act)]
        prec = diag + tau * np.asarray(AJ.multiply(AJ).sum(axis=1)).reshape(-1)
        g = rng.standard_normal(m)
        d1, d2 = np.zeros(m), np.zeros(m)
        ok1 = kept.solve(*csc, act, tau, diag, prec, g, d1)
        fresh = K.SchurSystem(*csc, m)
        ok2 = fresh.solve(*csc, act, tau, diag, prec, g, d2)
        assert ok1 == ok2
        if kept.m2:
            _close(np.triu(kept.S), np.triu(fresh.S), rel=1e-9)  # the lower triangle is never written
        if ok1:
            _close(d1, d2, rel=1e-7)
