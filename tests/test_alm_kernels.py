"""Each numba kernel of solver.lp.alm_kernels agrees with its plain-numpy twin in solver.lp.alm_kernels_ref,
and both with the definitions they implement (random sparse data, hypothesis)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.lp import alm_kernels as K
from solver.lp import alm_kernels_ref as R


def _case(m, n, seed, density=0.3):
    rng = np.random.default_rng(seed)
    A = sp.random_array((m, n), density=density, format="csc", rng=rng,
                        data_sampler=lambda size: rng.uniform(-2, 2, size))
    A.sort_indices()
    csc = (A.indptr.astype(np.int64), A.indices.astype(np.int32), A.data.copy())

    def bounds(k):
        lo = rng.uniform(-1, 0.5, k)
        hi = lo + rng.uniform(0, 2, k)
        lo[rng.random(k) < 0.25] = -np.inf
        hi[rng.random(k) < 0.25] = np.inf
        fixed = rng.random(k) < 0.1
        hi[fixed & np.isfinite(lo)] = lo[fixed & np.isfinite(lo)]
        return lo, hi

    lv, uv = bounds(n)
    lc, uc = bounds(m)
    xbar = np.clip(rng.standard_normal(n), lv, uv)
    sbar = np.clip(rng.standard_normal(m), lc, uc)
    return A, csc, rng, dict(c=rng.standard_normal(n), lv=lv, uv=uv, lc=lc, uc=uc, xbar=xbar, sbar=sbar,
                             y=rng.standard_normal(m), w=rng.standard_normal(m))


def _eval(fn, csc, d, tau, tau_s, sigma, m, n):
    out = dict(x=np.empty(n), s=np.empty(m), ax=np.empty(m), grad=np.empty(m),
               col_active=np.zeros(n, np.uint8), row_active=np.zeros(m, np.uint8))
    psi = fn(*csc, d["w"], d["c"], d["xbar"], d["lv"], d["uv"], tau, d["sbar"], d["lc"], d["uc"], tau_s, d["y"],
             sigma, out["x"], out["s"], out["ax"], out["grad"], out["col_active"], out["row_active"])
    return psi, out


shapes = st.tuples(st.integers(1, 40), st.integers(1, 40), st.integers(0, 2**31 - 1))
steps = st.floats(1e-3, 1e3)


@settings(max_examples=60, deadline=None)
@given(shapes, steps, steps, steps)
def test_dual_eval_matches_twin_and_gradient_is_the_derivative(shape, tau, tau_s, sigma):
    m, n, seed = shape
    A, csc, rng, d = _case(m, n, seed)
    p1, o1 = _eval(K.dual_eval, csc, d, tau, tau_s, sigma, m, n)
    p2, o2 = _eval(R.dual_eval_ref, csc, d, tau, tau_s, sigma, m, n)
    scale = 1.0 + abs(p2)
    assert abs(p1 - p2) <= 1e-10 * scale
    for k in o1:
        np.testing.assert_allclose(o1[k], o2[k], rtol=1e-10, atol=1e-10)
    # the maps are the projections the module docstring defines
    np.testing.assert_allclose(o1["x"], np.clip(d["xbar"] + tau * (A.T @ d["w"] - d["c"]), d["lv"], d["uv"]))
    np.testing.assert_allclose(o1["s"], np.clip(d["sbar"] - tau_s * d["w"], d["lc"], d["uc"]))
    # the gradient is the derivative of Psi (central differences along a random direction)
    v = rng.standard_normal(m)
    h = 1e-6 / (1.0 + np.abs(v).max())
    d_plus, d_minus = dict(d, w=d["w"] + h * v), dict(d, w=d["w"] - h * v)
    fd = (_eval(R.dual_eval_ref, csc, d_plus, tau, tau_s, sigma, m, n)[0]
          - _eval(R.dual_eval_ref, csc, d_minus, tau, tau_s, sigma, m, n)[0]) / (2 * h)
    assert abs(fd - o1["grad"] @ v) <= 1e-4 * (1.0 + abs(fd)) * (1.0 + tau + tau_s + 1.0 / sigma)


@settings(max_examples=60, deadline=None)
@given(shapes, steps, steps, steps)
def test_hessian_kernels_match_twins_and_the_dense_matrix(shape, tau, tau_s, sigma):
    m, n, seed = shape
    A, csc, rng, d = _case(m, n, seed)
    _, o = _eval(K.dual_eval, csc, d, tau, tau_s, sigma, m, n)
    cols = K.active_columns(o["col_active"])
    np.testing.assert_array_equal(cols, R.active_columns_ref(o["col_active"]))
    dg1, pr1, dg2, pr2 = np.empty(m), np.empty(m), np.empty(m), np.empty(m)
    K.hessian_diagonal(*csc, cols, tau, o["row_active"], tau_s, sigma, dg1, pr1)
    R.hessian_diagonal_ref(*csc, cols, tau, o["row_active"], tau_s, sigma, dg2, pr2)
    np.testing.assert_allclose(dg1, dg2, rtol=1e-12)
    np.testing.assert_allclose(pr1, pr2, rtol=1e-12)
    Ad = A.toarray()[:, cols]
    H = tau * Ad @ Ad.T + np.diag(dg1)
    np.testing.assert_allclose(pr1, np.diag(H), rtol=1e-12)
    v = rng.standard_normal(m)
    h1, h2 = np.empty(m), np.empty(m)
    K.hessian_vector(*csc, cols, tau, dg1, v, h1)
    R.hessian_vector_ref(*csc, cols, tau, dg1, v, h2)
    np.testing.assert_allclose(h1, h2, rtol=1e-10, atol=1e-10 * (1 + tau))
    np.testing.assert_allclose(h1, H @ v, rtol=1e-10, atol=1e-10 * (1 + tau))


@settings(max_examples=40, deadline=None)
@given(shapes, steps, st.floats(1e-2, 1e2))
def test_pcg_matches_twin_and_solves_the_system(shape, tau, sigma):
    m, n, seed = shape
    A, csc, rng, d = _case(m, n, seed)
    _, o = _eval(K.dual_eval, csc, d, tau, 1.0, sigma, m, n)
    cols = K.active_columns(o["col_active"])
    dg, pr = np.empty(m), np.empty(m)
    K.hessian_diagonal(*csc, cols, tau, o["row_active"], 1.0, sigma, dg, pr)
    rhs = rng.standard_normal(m)
    work1 = [np.empty(m) for _ in range(5)]
    work2 = [np.empty(m) for _ in range(5)]
    # at most the same few steps of the same recurrences (early: round-off has not amplified yet; a run
    # may stop a step earlier when its residual is exactly 0, and then it already holds the solution)
    k = min(3, m)
    assert K.pcg(*csc, cols, tau, dg, pr, rhs, 0.0, k, *work1) <= k
    assert R.pcg_ref(*csc, cols, tau, dg, pr, rhs, 0.0, k, *work2) <= k
    np.testing.assert_allclose(work1[0], work2[0], rtol=1e-8, atol=1e-8 * (1 + np.abs(work2[0]).max()))
    # run to convergence: the answer solves the system
    K.pcg(*csc, cols, tau, dg, pr, rhs, 1e-12, 20 * m + 20, *work1)
    Ad = A.toarray()[:, cols]
    H = tau * Ad @ Ad.T + np.diag(dg)
    np.testing.assert_allclose(H @ work1[0], rhs, rtol=1e-8, atol=1e-8 * (1 + np.abs(rhs).max()))


@settings(max_examples=40, deadline=None)
@given(shapes)
def test_vector_kernels_match_twins(shape):
    m, n, seed = shape
    A, csc, rng, d = _case(m, n, seed)
    a, b = rng.standard_normal(m), rng.standard_normal(m)
    assert abs(K.dot(a, b) - R.dot_ref(a, b)) <= 1e-12 * (1 + np.abs(a) @ np.abs(b))
    assert abs(K.diff_norm(a, b) - R.diff_norm_ref(a, b)) <= 1e-12 * (1 + R.diff_norm_ref(a, b))
    x = rng.standard_normal(n)
    o1, o2 = np.empty(m), np.empty(m)
    K.csc_matvec(*csc, x, o1)
    R.csc_matvec_ref(*csc, x, o2)
    np.testing.assert_allclose(o1, o2, rtol=1e-12, atol=1e-12)
