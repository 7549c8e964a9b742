"""Each numba kernel of solver.lp.kernels agrees with its plain-numpy twin in solver.lp.kernels_ref
(random sparse data)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from solver.lp import kernels as K
from solver.lp import kernels_ref as R


def _matrix(m, n, density, seed):
    rng = np.random.default_rng(seed)
    A = sp.random_array((m, n), density=density, format="csc", rng=rng,
                        data_sampler=lambda size: rng.uniform(-2, 2, size))
    A.sort_indices()
    csc = (A.indptr.astype(np.int64), A.indices.astype(np.int32), A.data.copy())
    R = sp.csr_array(A)
    R.sort_indices()
    csr = (R.indptr.astype(np.int64), R.indices.astype(np.int32), R.data.copy())
    return A, csr, csc, rng


def _bounds(rng, k):
    lo = rng.uniform(-1, 0, k)
    hi = lo + rng.uniform(0, 2, k)
    lo[rng.random(k) < 0.2] = -np.inf
    hi[rng.random(k) < 0.2] = np.inf
    eq = rng.random(k) < 0.1
    hi[eq] = lo[eq] if np.isfinite(lo[eq]).all() else hi[eq]
    return lo, hi


@pytest.mark.parametrize("shape", [(40, 30), (1, 17), (25, 1), (60, 90)])
def test_spmv_kernels_match_numpy(shape):
    A, csr, csc, rng = _matrix(*shape, 0.2, 1)
    x = rng.standard_normal(shape[1])
    y = rng.standard_normal(shape[0])
    out1, out2 = np.empty(shape[0]), np.empty(shape[0])
    K.spmv_csr(*csr, x, out1)
    R.spmv_csr_ref(*csr, x, out2)
    np.testing.assert_allclose(out1, out2, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(out1, A @ x, rtol=1e-13, atol=1e-13)
    t1, t2 = np.empty(shape[1]), np.empty(shape[1])
    K.spmv_csc_t(*csc, y, t1)
    R.spmv_csc_t_ref(*csc, y, t2)
    np.testing.assert_allclose(t1, t2, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(t1, A.T @ y, rtol=1e-13, atol=1e-13)
    c1, c2 = np.empty(shape[0]), np.empty(shape[0])
    K.spmv_csc(*csc, x, c1)
    R.spmv_csc_ref(*csc, x, c2)
    np.testing.assert_allclose(c1, c2, rtol=1e-13, atol=1e-13)
    np.testing.assert_array_equal(c1, A.tocsc() @ x)  # same scatter order as scipy: bitwise equal


def _state(m, n, rng):
    names = ["x", "y", "x0", "y0", "ax", "aty", "ax0", "aty0", "xh", "yh", "axh", "atyh"]
    sizes = dict(x=n, y=m, x0=n, y0=m, ax=m, aty=n, ax0=m, aty0=n, xh=n, yh=m, axh=m, atyh=n)
    return {k: rng.standard_normal(sizes[k]) for k in names}


@pytest.mark.parametrize("halpern", [True, False])
@pytest.mark.parametrize("g", [1.0, 0.5])
def test_row_and_col_passes_match_numpy(halpern, g):
    m, n = 35, 50
    A, csr, csc, rng = _matrix(m, n, 0.15, 2)
    lc, uc = _bounds(rng, m)
    lv, uv = _bounds(rng, n)
    c = rng.standard_normal(n)
    s = _state(m, n, rng)
    t = {k: v.copy() for k, v in s.items()}
    K.row_pass(*csr, s["xh"], s["ax"], s["ax0"], s["y"], s["y0"], lc, uc, 0.7, 0.8, 0.2, g, halpern,
               s["yh"], s["axh"])
    R.row_pass_ref(*csr, t["xh"], t["ax"], t["ax0"], t["y"], t["y0"], lc, uc, 0.7, 0.8, 0.2, g, halpern,
                   t["yh"], t["axh"])
    K.col_pass(*csc, s["yh"], s["x"], s["x0"], s["aty"], s["aty0"], c, lv, uv, 0.3, 0.8, 0.2, g, halpern,
               s["xh"], s["atyh"])
    R.col_pass_ref(*csc, t["yh"], t["x"], t["x0"], t["aty"], t["aty0"], c, lv, uv, 0.3, 0.8, 0.2, g,
                   halpern, t["xh"], t["atyh"])
    for k in s:
        np.testing.assert_allclose(s[k], t[k], rtol=1e-12, atol=1e-12, err_msg=k)


def test_primal_step_matches_numpy_and_respects_bounds():
    rng = np.random.default_rng(3)
    n = 64
    lv, uv = _bounds(rng, n)
    x, aty, c = rng.standard_normal(n), rng.standard_normal(n), rng.standard_normal(n)
    a, b = np.empty(n), np.empty(n)
    K.primal_step(x, aty, c, lv, uv, 0.9, a)
    R.primal_step_ref(x, aty, c, lv, uv, 0.9, b)
    np.testing.assert_array_equal(a, b)
    assert np.all(a >= lv) and np.all(a <= uv)


@pytest.mark.parametrize("kernel", [K.run_block, K.run_block_parallel])
@pytest.mark.parametrize("k0,count", [(0, 0), (0, 7), (5, 20)])
def test_run_block_matches_numpy(kernel, k0, count):
    m, n = 30, 45
    A, csr, csc, rng = _matrix(m, n, 0.2, 4)
    lc, uc = _bounds(rng, m)
    lv, uv = _bounds(rng, n)
    c = rng.standard_normal(n)
    s = _state(m, n, rng)
    K.primal_step(s["x"], s["aty"], c, lv, uv, 0.2, s["xh"])
    t = {k: v.copy() for k, v in s.items()}
    order = ["x", "y", "x0", "y0", "ax", "aty", "ax0", "aty0", "xh", "yh", "axh", "atyh"]
    k1 = kernel(*csr, *csc, c, lc, uc, lv, uv, 0.2, 0.3, 1.0, k0, count, *[s[k] for k in order])
    k2 = R.run_block_ref(*csr, *csc, c, lc, uc, lv, uv, 0.2, 0.3, 1.0, k0, count, *[t[k] for k in order])
    assert k1 == k2 == k0 + count
    for k in order:
        np.testing.assert_allclose(s[k], t[k], rtol=1e-10, atol=1e-10, err_msg=k)


def test_parallel_block_gives_same_result_at_one_and_many_threads():
    import numba

    m, n = 200, 300
    A, csr, csc, rng = _matrix(m, n, 0.05, 5)
    lc, uc = _bounds(rng, m)
    lv, uv = _bounds(rng, n)
    c = rng.standard_normal(n)
    base = _state(m, n, rng)
    K.primal_step(base["x"], base["aty"], c, lv, uv, 0.2, base["xh"])
    order = ["x", "y", "x0", "y0", "ax", "aty", "ax0", "aty0", "xh", "yh", "axh", "atyh"]
    results = []
    old = numba.get_num_threads()
    try:
        for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(threads)
            s = {k: v.copy() for k, v in base.items()}
            K.run_block_parallel(*csr, *csc, c, lc, uc, lv, uv, 0.2, 0.3, 1.0, 0, 30, *[s[k] for k in order])
            results.append(s)
    finally:
        numba.set_num_threads(old)
    s = {k: v.copy() for k, v in base.items()}
    K.run_block(*csr, *csc, c, lc, uc, lv, uv, 0.2, 0.3, 1.0, 0, 30, *[s[k] for k in order])
    for r in results:
        for k in order:
            np.testing.assert_array_equal(r[k], s[k], err_msg=k)


def test_power_iteration_matches_numpy_and_svd():
    A, csr, csc, rng = _matrix(40, 25, 0.3, 6)
    v1 = rng.standard_normal(25)
    v2 = v1.copy()
    e1, i1 = K.power_iteration(*csr, *csc, v1, 2000, 1e-12)
    e2, i2 = R.power_iteration_ref(*csr, *csc, v2, 2000, 1e-12)
    assert i1 == i2
    np.testing.assert_allclose(e1, e2, rtol=1e-10)
    np.testing.assert_allclose(e1, np.linalg.norm(A.toarray(), 2), rtol=1e-5)


@pytest.mark.parametrize("rays", [True, False])
@pytest.mark.parametrize("seed", [3, 4, 5])
def test_check_measures_match_the_reference_termination_and_infeasibility_code(rays, seed):
    m, n = 30, 45
    A, csr, csc, rng = _matrix(m, n, 0.2, seed)
    st = _state(m, n, rng)
    lc, uc = _bounds(rng, m)
    lv, uv = _bounds(rng, n)
    d1, d2 = rng.uniform(0.5, 2, m), rng.uniform(0.5, 2, n)
    c_s, c_o = rng.standard_normal(n), rng.standard_normal(n)
    if seed == 5:  # a ray with negative cost: the dual-infeasibility branch runs
        c_o = -np.abs(c_o)
        st["xh"] = st["x0"] + np.abs(rng.standard_normal(n))
    fin = [np.where(np.isfinite(v), v, 0.0) for v in (lc, uc, lv, uv)]
    args = (c_s, d1, d2, 0.3, 0.7, 0.9, 0.998, 1.7, c_o, lc, uc, lv, uv, *fin, *csr,
            *(st[k] for k in ("x", "y", "x0", "y0", "ax", "aty", "ax0", "aty0", "xh", "yh", "axh", "atyh")),
            rays, np.empty(n), np.empty(m))
    got = K.check_measures(*args)
    ref = R.check_measures_ref(*args)
    np.testing.assert_allclose(got, ref, rtol=1e-10, atol=1e-12)
    if seed == 5 and rays:
        assert np.isfinite(got[6])


@pytest.mark.parametrize("g", [1.0, 0.5])
def test_halpern_step_matches_numpy(g):
    m, n = 20, 33
    rng = np.random.default_rng(7)
    st, ref = _state(m, n, rng), None
    ref = {k: v.copy() for k, v in st.items()}
    lv, uv = _bounds(rng, n)
    c = rng.standard_normal(n)
    order = ("x", "y", "ax", "aty", "xh", "yh", "axh", "atyh", "x0", "y0", "ax0", "aty0")
    K.halpern_step(5, g, *(st[k] for k in order), c, lv, uv, 0.7)
    R.halpern_step_ref(5, g, *(ref[k] for k in order), c, lv, uv, 0.7)
    for k in order:
        np.testing.assert_allclose(st[k], ref[k], rtol=1e-14, atol=1e-14)
    assert np.all(st["xh"] >= lv) and np.all(st["xh"] <= uv)


def test_csc_canonical_check_matches_numpy_and_catches_each_violation():
    A, _, csc, rng = _matrix(30, 20, 0.3, 5)
    cp, ci, cv = csc
    cases = [(cp, ci, cv, 30, True), (cp, ci, cv, 29, False)]  # a row index >= m
    for k, bad in enumerate((0.0, np.nan, np.inf)):
        v = cv.copy()
        v[3 * k + 1] = bad
        cases.append((cp, ci, v, 30, False))
    j = int(np.flatnonzero(np.diff(cp) >= 2)[0])  # swap two rows inside a column: unsorted
    i = ci.copy()
    i[cp[j]], i[cp[j] + 1] = i[cp[j] + 1], i[cp[j]]
    cases.append((cp, i, cv, 30, False))
    i = ci.copy()
    i[cp[j] + 1] = i[cp[j]]  # duplicate row in a column
    cases.append((cp, i, cv, 30, False))
    cases.append((np.zeros(4, dtype=np.int64), np.zeros(0, dtype=np.int32), np.zeros(0), 3, True))
    for cp_, ci_, cv_, m, expect in cases:
        assert K.csc_is_canonical(cp_, ci_, cv_, m) is expect
        assert R.csc_is_canonical_ref(cp_, ci_, cv_, m) is expect


@pytest.mark.parametrize("m, n, density, seed", [(30, 20, 0.3, 5), (200, 50, 0.05, 6), (7, 0, 0.5, 7)])
def test_row_absmax_scan_matches_numpy_and_the_dense_maximum(m, n, density, seed):
    A, _, csc, rng = _matrix(m, n, density, seed)
    cp, ci, cv = csc
    keep = ci != 0  # row 0 empty: it stays 0
    cp = np.concatenate([[0], np.cumsum(np.bincount(np.repeat(np.arange(n), np.diff(cp))[keep], minlength=n))])
    ci, cv = ci[keep], -np.abs(cv[keep]) * rng.uniform(0.5, 2.0, keep.sum())  # negatives: the magnitude counts
    out, ref = np.zeros(m), np.zeros(m)
    K.row_absmax_scan(ci, cv, out)
    R.row_absmax_scan_ref(ci, cv, ref)
    dense = np.abs(sp.csc_array((cv, ci, cp), shape=(m, n)).toarray())
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(out, dense.max(axis=1, initial=0.0))
    assert out[0] == 0.0


@pytest.mark.parametrize("m, seed", [(0, 1), (1, 2), (50, 3), (400, 4)])
@pytest.mark.parametrize("scaled", [False, True])
def test_row_violation_scan_matches_numpy_bitwise(m, seed, scaled):
    """The kernel's worst relative violation and its row are the twin's, bit for bit: violations on either side,
    infinite bounds, equality rows, nan and infinite activities, ties (the first row wins), and no violation."""
    rng = np.random.default_rng(seed)
    lo, hi = _bounds(rng, m)
    ax = np.where(rng.random(m) < 0.5, lo, hi) + rng.normal(0, 0.3, m) * rng.uniform(0, 1e3, m) ** rng.random(m)
    ax = np.where(np.isfinite(ax), ax, rng.normal(0, 5, m))
    if m >= 50:
        ax[3], ax[7] = np.nan, -np.inf
        ax[10:12] = hi[10:12] + 2.0  # a tie between two rows
        hi[10:12], lo[10:12] = 1.0, -1.0
    absmax = rng.uniform(0, 50, m) if scaled else np.empty(0)
    if scaled and m >= 50:
        absmax[10:12] = 0.5  # the tie holds in the scaled measure too
    cases = [ax, np.clip(np.where(np.isnan(ax), 0.0, ax), lo, hi)]  # the second has no violated row
    for a in cases:
        got = K.row_violation_scan(a, lo, hi, absmax)
        ref = R.row_violation_scan_ref(a, lo, hi, absmax)
        assert got[1] == ref[1]
        assert got[0] == ref[0] or (np.isnan(got[0]) and np.isnan(ref[0]))
    assert K.row_violation_scan(cases[1], lo, hi, absmax) == (0.0, -1)
    if m >= 50:
        assert K.row_violation_scan(ax, lo, hi, absmax) == (np.inf, 3)  # the nan activity, the first infinite
        ax2 = ax.copy()
        ax2[3], ax2[7] = 0.5 * (lo[3] + hi[3]) if np.isfinite(lo[3] + hi[3]) else 0.0, 0.0
        ax2 = np.clip(ax2, lo, hi)
        ax2[10:12] = 3.0
        assert K.row_violation_scan(ax2, lo, hi, absmax)[1] == 10


def test_row_violation_rel_takes_any_array_layout():
    """``termination.row_violation_rel`` hands the kernel C-contiguous float64 arrays whatever it is given (a
    read-only, strided or int array would otherwise be another signature, compiled mid-stream)."""
    from solver.lp.termination import row_violation_rel

    ax = np.arange(10, dtype=np.float64)[::-1].copy()
    lo, hi = np.zeros(20)[::2], np.full(10, 4.0)
    hi.setflags(write=False)
    before = len(K.row_violation_scan.signatures)
    assert row_violation_rel(ax, lo, hi) == (1.25, 0)  # 9 above 4: 5 / max(1, 4)
    assert row_violation_rel(ax.astype(np.int64), lo, hi, np.full(10, 8.0)) == (0.625, 0)  # 5 / max(8, 4)
    assert row_violation_rel(np.zeros(0), np.zeros(0), np.zeros(0)) == (0.0, -1)
    assert len(K.row_violation_scan.signatures) <= max(before, 1)


@pytest.mark.parametrize("k, seed", [(0, 1), (1, 2), (60, 3), (500, 4)])
def test_violation_max_matches_numpy(k, seed):
    """point_quality's one-pass measure equals its numpy twin (the former whole-array form): violations on either
    side, infinite bounds and entries, bounds of magnitude above 1, no violation, and a nan entry (nan both)."""
    rng = np.random.default_rng(seed)
    lo, hi = _bounds(rng, k)
    scale = rng.uniform(0, 1e3, k) ** rng.random(k)
    lo, hi = lo * scale, hi * scale  # bounds above 1 in magnitude: the relative measure divides by them
    v = np.where(rng.random(k) < 0.5, lo, hi) + rng.normal(0, 0.3, k) * scale
    v = np.where(np.isfinite(v), v, rng.normal(0, 5, k))
    if k >= 60:
        v[5], v[9] = np.inf, -np.inf
        lo[20], hi[20] = -np.inf, np.inf  # a free entry is never violated
        v[20] = 1e300
    inside = np.clip(v, lo, hi)
    for a in (v, inside):
        got, ref = K.violation_max(a, lo, hi), R.violation_max_ref(a, lo, hi)
        assert got == ref
    assert K.violation_max(inside, lo, hi) == (0.0, 0.0)
    if k >= 60:
        assert K.violation_max(v, lo, hi)[0] == np.inf
        with_nan = v.copy()
        with_nan[np.flatnonzero(np.isfinite(lo))[0]] = np.nan
        got, ref = K.violation_max(with_nan, lo, hi), R.violation_max_ref(with_nan, lo, hi)
        assert np.isnan(got).all() and np.isnan(ref).all()
        lo_n, hi_n = lo.copy(), hi.copy()
        lo_n[30], hi_n[30] = -np.inf, np.inf
        with_nan[:] = inside
        with_nan[30] = np.nan  # nan against two infinite bounds: no violation, as numpy's where/maximum read it
        assert K.violation_max(with_nan, lo_n, hi_n) == R.violation_max_ref(with_nan, lo_n, hi_n) == (0.0, 0.0)


def test_point_quality_measures_with_the_kernel_on_any_array_layout():
    """point_quality's row, relative row and bound violations on a small model (hand-computed), for strided,
    read-only and int inputs alike, without compiling another signature of the kernel."""
    from solver.baselines.result import point_quality
    from solver.model.problem import Problem

    p = Problem.from_arrays(cost=np.array([1.0, 2.0]), col_lower=np.array([0.0, 0.0]), col_upper=np.array([1.0, 5.0]),
                            row_lower=np.array([-np.inf, 2.0]), row_upper=np.array([4.0, np.inf]),
                            matrix=sp.csc_array(np.array([[1.0, 1.0], [1.0, 0.0]])))
    before = len(K.violation_max.signatures)
    x = np.array([3.0, 0.0, 9.0, 2.0])[::2]  # strided: x = (3, 9); rows 12 (<= 4: 8 over) and 3 (>= 2: inside)
    x.setflags(write=False)
    q = point_quality(p, x)
    assert (q.max_row_violation, q.max_row_violation_rel, q.max_bound_violation) == (8.0, 2.0, 4.0)
    q = point_quality(p, np.array([1, 1]), activity=np.array([2, 1]))  # int point and activities: row 2 1 under 2
    assert (q.max_row_violation, q.max_row_violation_rel, q.max_bound_violation) == (1.0, 0.5, 0.0)
    assert q.objective == 3.0
    assert len(K.violation_max.signatures) <= max(before, 1)


@pytest.mark.parametrize("m, n, density, seed", [(30, 20, 0.3, 8), (200, 50, 0.05, 9), (7, 0, 0.5, 10), (5, 40, 0.0, 11)])
def test_row_counts_match_bincount_and_the_dense_count(m, n, density, seed):
    A, _, csc, _ = _matrix(m, n, density, seed)
    cp, ci, cv = csc
    for idx in (ci.astype(np.int32), ci.astype(np.int64)):
        got = K.row_counts(idx, m)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, R.row_counts_ref(idx, m))
    np.testing.assert_array_equal(got, (sp.csc_array((cv, ci, cp), shape=(m, n)).toarray() != 0).sum(axis=1))


def test_the_trivial_reductions_count_rows_with_the_one_prepared_signature():
    """A Problem from the Python API may hold int64 or read-only row indices: the trivial reductions convert them
    rather than have numba compile another signature of ``row_counts`` mid-stream."""
    from solver.lp.trivial import reduce_trivial

    _, _, (cp, ci, cv), _ = _matrix(6, 9, 0.4, 12)
    n = cp.shape[0] - 1
    args = (np.ones(n), np.zeros(n), np.ones(n), np.full(6, -np.inf), np.ones(6))
    names = (np.array([f"x{j}" for j in range(n)], dtype=object), np.array([f"r{i}" for i in range(6)], dtype=object))
    reduce_trivial(*args, cp, ci.astype(np.int32), *names)
    before = len(K.row_counts.signatures)
    ro = ci.astype(np.int32)
    ro.flags.writeable = False
    for idx in (ci.astype(np.int64), ro):
        got = reduce_trivial(*args, cp, idx, *names)
        assert np.array_equal(got.keep_rows, reduce_trivial(*args, cp, ci.astype(np.int32), *names).keep_rows)
    assert len(K.row_counts.signatures) == before
