"""Each numba kernel of solver.lp.alm_kernels agrees with its plain-numpy twin in solver.lp.alm_kernels_ref,
and both with the definitions they implement (random sparse data, hypothesis)."""

from __future__ import annotations

import numpy as np
import pytest
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
    out = dict(v=np.empty(n), x=np.empty(n), s=np.empty(m), ax=np.empty(m), grad=np.empty(m),
               col_active=np.zeros(n, np.uint8), row_active=np.zeros(m, np.uint8))
    psi = fn(*csc, d["w"], d["c"], d["xbar"], d["lv"], d["uv"], tau, d["sbar"], d["lc"], d["uc"], tau_s, d["y"],
             sigma, out["v"], out["x"], out["s"], out["ax"], out["grad"], out["col_active"], out["row_active"])
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
    np.testing.assert_allclose(o1["v"], A.T @ d["w"] - d["c"], rtol=1e-12, atol=1e-12)
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
@given(shapes, steps, steps, steps, st.floats(0.0, 4.0))
def test_line_kernels_equal_a_fresh_evaluation_at_the_trial_point(shape, tau, tau_s, sigma, alpha):
    """psi_on_line / dual_on_line move along d from v = A'w - c and A'd; they must give what dual_eval gives at
    w + alpha d (and match their twins), or the line search would accept steps Psi does not take."""
    m, n, seed = shape
    A, csc, rng, d = _case(m, n, seed)
    _, o = _eval(K.dual_eval, csc, d, tau, tau_s, sigma, m, n)
    dirn = rng.standard_normal(m)
    gd = A.T @ dirn
    fresh_psi, fresh = _eval(K.dual_eval, csc, dict(d, w=d["w"] + alpha * dirn), tau, tau_s, sigma, m, n)
    scale = 1.0 + abs(fresh_psi)
    common = (d["xbar"], d["lv"], d["uv"], tau, d["w"], dirn, d["sbar"], d["lc"], d["uc"], tau_s, d["y"], sigma)
    p_line = K.psi_on_line(alpha, o["v"], gd, *common)
    assert abs(p_line - fresh_psi) <= 1e-10 * scale
    assert abs(R.psi_on_line_ref(alpha, o["v"], gd, *common) - p_line) <= 1e-10 * scale
    rest = (d["xbar"], d["lv"], d["uv"], tau, d["sbar"], d["lc"], d["uc"], tau_s, d["y"], sigma)
    outs = []
    for fn in (K.dual_on_line, R.dual_on_line_ref):
        out = dict(w2=np.empty(m), v=np.empty(n), x=np.empty(n), s=np.empty(m), ax=np.empty(m), grad=np.empty(m),
                   col_active=np.zeros(n, np.uint8), row_active=np.zeros(m, np.uint8))
        psi = fn(*csc, alpha, o["v"], gd, d["w"], dirn, *rest, out["w2"], out["v"], out["x"], out["s"], out["ax"],
                 out["grad"], out["col_active"], out["row_active"])
        assert abs(psi - fresh_psi) <= 1e-10 * scale
        outs.append(out)
    assert K.dual_on_line(*csc, alpha, o["v"], gd, d["w"], dirn, *rest, *[np.empty_like(a) for a in outs[0].values()]) \
        == p_line  # the same sums in the same order: the accepted step's Psi is the one the search tested
    for k in fresh:
        np.testing.assert_allclose(outs[0][k], fresh[k], rtol=1e-10, atol=1e-10 * (1 + alpha))
        np.testing.assert_allclose(outs[1][k], fresh[k], rtol=1e-10, atol=1e-10 * (1 + alpha))
    np.testing.assert_allclose(outs[0]["w2"], d["w"] + alpha * dirn, rtol=1e-15, atol=0)


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


@settings(max_examples=60, deadline=None)
@given(shapes, st.floats(1e-3, 1e3))
def test_primal_screen_is_original_kkts_primal_measures(shape, theta_b):
    """The ALM skips its full KKT test of a Newton iterate when primal_screen says the primal measures fail:
    it must compute what original_kkt's primal residual and worst row measure from the unscaled point."""
    from solver.lp.kernels import bound_violation
    from solver.lp.termination import row_absmax, row_violation_rel

    m, n, seed = shape
    A, csc, rng, d = _case(m, n, seed)
    d1, d2 = rng.uniform(0.1, 10.0, m), rng.uniform(0.1, 10.0, n)
    As = (sp.diags(d1) @ A @ sp.diags(d2)).tocsc()
    xs = rng.standard_normal(n)
    ax_s = As @ xs
    ax = A @ (xs * d2 / theta_b)  # the point in original units, as ALM's x_to_orig maps it
    lo, hi = d["lc"] * 3.0, d["uc"] * 3.0
    absmax = row_absmax(A.indices.astype(np.int32), A.data, m)
    floor = np.maximum(1.0, absmax)
    want_pres2 = sum(bound_violation(a, b_lo, b_hi) ** 2 for a, b_lo, b_hi in zip(ax, lo, hi, strict=True))
    want_worst = row_violation_rel(ax, lo, hi, absmax)[0]
    for fn in (K.primal_screen, R.primal_screen_ref):
        pres2, worst = fn(ax_s, d1, theta_b, lo, hi, floor)
        assert abs(pres2 - want_pres2) <= 1e-9 * (1.0 + want_pres2)
        assert abs(worst - want_worst) <= 1e-9 * (1.0 + want_worst)
    nan_ax = ax_s.copy()
    nan_ax[0] = np.nan  # no violation from a nan row: the full test, which sees it, decides
    assert K.primal_screen(nan_ax, d1, theta_b, lo, hi, floor) == pytest.approx(
        R.primal_screen_ref(nan_ax, d1, theta_b, lo, hi, floor))


def test_primal_screen_twins_agree_on_an_empty_row_box():
    """A row whose lower bound is above its upper (an MPS file may hold one: the model is infeasible) with its
    activity between them: the kernel measures it as original_kkt does (kernels.bound_violation: below the lower
    bound first), the twin added both sides (5.5 against the kernel's 5.25 here)."""
    from solver.lp.kernels import bound_violation

    ax, d1, floor = np.array([1.5, 3.0, 0.0]), np.ones(3), np.ones(3)
    lo, hi = np.array([2.0, 2.0, 1.0]), np.array([1.0, 1.0, 1.0])
    want = sum(bound_violation(a, b, c) ** 2 for a, b, c in zip(ax, lo, hi, strict=True))
    got_k, got_r = K.primal_screen(ax, d1, 1.0, lo, hi, floor), R.primal_screen_ref(ax, d1, 1.0, lo, hi, floor)
    assert got_k[0] == pytest.approx(want) and got_r == pytest.approx(got_k), (got_k, got_r, want)


@settings(max_examples=100, deadline=None)
@given(shapes, steps, steps, steps, st.floats(0.1, 30.0))
def test_line_root_matches_twin_and_is_where_the_slope_along_the_line_crosses_zero(shape, tau, tau_s, sigma, length):
    """line_root gives the minimiser of phi(alpha) = Psi(w + alpha d) in (0, 1) along a descent direction (its
    slope, the gradient there along d, crosses 0; dual_eval's gradient is the definition), or -1 when phi still
    falls at 1; and the slope and curvature it walks are those of phi."""
    m, n, seed = shape
    A, csc, rng, d = _case(m, n, seed)
    _, o = _eval(K.dual_eval, csc, d, tau, tau_s, sigma, m, n)
    dirn = -length * o["grad"]  # a descent direction, often far past the minimiser (a cut Newton step)
    slope = float(o["grad"] @ dirn)
    if not slope < 0.0:
        return
    gd = A.T @ dirn
    common = (d["xbar"], d["lv"], d["uv"], tau, d["w"], dirn, d["sbar"], d["lc"], d["uc"], tau_s, d["y"], sigma)
    no_y = common[:10] + common[11:]  # line_root takes no y: the slope at 0 carries it
    a1 = K.line_root(o["v"], gd, *no_y, slope)
    a2 = R.line_root_ref(o["v"], gd, *no_y, slope)
    assert abs(a1 - a2) <= 1e-9 * (1.0 + abs(a2))
    # the definition: phi' at alpha is dual_eval's gradient there along d
    def phi_slope(alpha):
        g = R.line_slope_ref(alpha, o["v"], gd, *common)[0]
        _, at = _eval(K.dual_eval, csc, dict(d, w=d["w"] + alpha * dirn), tau, tau_s, sigma, m, n)
        terms = np.abs(gd) @ np.abs(at["x"]) + np.abs(dirn) @ (np.abs(at["s"]) + np.abs(at["ax"]))
        assert abs(g - at["grad"] @ dirn) <= 1e-9 * (1.0 + terms + np.abs(dirn) @ np.abs(d["w"] - d["y"]) / sigma)
        return g
    scale = abs(slope) + abs(phi_slope(1.0))
    if a1 == -1.0:
        assert phi_slope(1.0) <= 1e-9 * scale
        return
    assert 0.0 < a1 < 1.0
    assert abs(phi_slope(a1)) <= 1e-7 * scale
    eps = 1e-6 * a1
    assert phi_slope(a1 - eps) <= 1e-7 * scale and phi_slope(a1 + eps) >= -1e-7 * scale
