"""Ruiz + Pock-Chambolle + bound/objective scaling: a pure change of variables that round-trips."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from solver.lp.scaling import combined_bound_norm, scale_lp


def _lp(seed=0, m=30, n=40):
    rng = np.random.default_rng(seed)
    A = sp.random_array((m, n), density=0.2, format="csc", rng=rng,
                        data_sampler=lambda size: rng.choice([-1, 1], size) * 10 ** rng.uniform(-3, 3, size))
    A.sort_indices()
    c = rng.standard_normal(n) * 100
    lc = rng.uniform(-5, 0, m)
    uc = lc + 3
    uc[:5] = np.inf
    lv, uv = np.zeros(n), np.full(n, 7.0)
    uv[:4] = np.inf
    return c, lc, uc, lv, uv, A


def test_scaled_matrix_is_d1_a_d2_and_csr_csc_agree():
    c, lc, uc, lv, uv, A = _lp()
    sc = scale_lp(c, lc, uc, lv, uv, A)
    expect = (sp.diags_array(sc.d1) @ A @ sp.diags_array(sc.d2)).toarray()
    cp, ci, cv = sc.csc
    rp, ri, rv = sc.csr
    np.testing.assert_allclose(sp.csc_array((cv, ci, cp), shape=A.shape).toarray(), expect, rtol=1e-12)
    np.testing.assert_allclose(sp.csr_array((rv, ri, rp), shape=A.shape).toarray(), expect, rtol=1e-12)


def test_ruiz_equilibrates_a_badly_scaled_matrix():
    c, lc, uc, lv, uv, A = _lp()
    sc = scale_lp(c, lc, uc, lv, uv, A, pock_chambolle_alpha=None)
    B = abs(sp.csc_array((sc.csc[2], sc.csc[1], sc.csc[0]), shape=A.shape))
    rmax = B.max(axis=1).toarray().ravel()
    cmax = B.max(axis=0).toarray().ravel()
    assert abs(A).max() / abs(A).data.min() > 1e5
    np.testing.assert_allclose(rmax[rmax > 0], 1.0, atol=0.05)
    np.testing.assert_allclose(cmax[cmax > 0], 1.0, atol=0.05)


def test_point_maps_round_trip_and_preserve_objective_and_feasibility():
    c, lc, uc, lv, uv, A = _lp(1)
    sc = scale_lp(c, lc, uc, lv, uv, A)
    rng = np.random.default_rng(2)
    x = np.clip(rng.uniform(-1, 8, c.size), lv, uv)
    y = rng.standard_normal(lc.size)
    y[~np.isfinite(uc)] = np.abs(y[~np.isfinite(uc)])
    xs = sc.x_to_scaled(x)
    np.testing.assert_allclose(sc.x_to_orig(xs), x, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(sc.y_to_orig(sc.y_to_scaled(y)), y, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(sc.c @ xs, sc.theta_b * sc.theta_c * (c @ x), rtol=1e-12)
    As = sp.csc_array((sc.csc[2], sc.csc[1], sc.csc[0]), shape=A.shape)
    np.testing.assert_allclose(As @ xs, sc.theta_b * sc.d1 * (A @ x), rtol=1e-12, atol=1e-14)


def test_bound_objective_scalars_follow_hpr_lp():
    c, lc, uc, lv, uv, A = _lp(3)
    sc = scale_lp(c, lc, uc, lv, uv, A)
    lcs, ucs = sc.lc / sc.theta_b, sc.uc / sc.theta_b
    assert np.isclose(sc.theta_b, 1 / (1 + combined_bound_norm(lcs, ucs)))
    assert np.isclose(sc.theta_c, 1 / (1 + np.linalg.norm(sc.c / sc.theta_c)))


def test_empty_rows_and_columns_keep_unit_factors():
    A = sp.csc_array(np.array([[0.0, 0.0, 0.0], [0.0, 4.0, 0.0]]))
    sc = scale_lp(np.ones(3), np.zeros(2), np.ones(2), np.zeros(3), np.ones(3), A)
    assert sc.d1[0] == 1.0 and sc.d2[0] == 1.0 and sc.d2[2] == 1.0


def _csc(A):
    return (A.indptr.astype(np.int64), A.indices.astype(np.int32), A.data.astype(np.float64).copy())


def test_scaling_kernels_match_scipy_twins():
    from solver.lp import scaling as S

    *_, A = _lp(4)
    m, n = A.shape
    for kernel, twin, extra in ((S.ruiz_pass, S.ruiz_pass_ref, ()),
                                (lambda *a: S.ruiz_passes(*a, 7), lambda *a: S.ruiz_passes_ref(*a, 7), ()),
                                (S.pock_chambolle_pass, S.pock_chambolle_pass_ref, (1.0,)),
                                (S.pock_chambolle_pass, S.pock_chambolle_pass_ref, (0.5,))):
        cp, ci, cv = _csc(A)
        cv2 = cv.copy()
        d1, d2, e1, e2 = np.ones(m), np.ones(n), np.ones(m), np.ones(n)
        kernel(cp, ci, cv, m, *extra, d1, d2)
        twin(cp, ci, cv2, m, *extra, e1, e2)
        np.testing.assert_allclose(cv, cv2, rtol=1e-13)
        np.testing.assert_allclose(d1, e1, rtol=1e-13)
        np.testing.assert_allclose(d2, e2, rtol=1e-13)
    cp, ci, cv = _csc(A)
    for a, b in zip(S.csc_to_csr(cp, ci, cv, m), S.csc_to_csr_ref(cp, ci, cv, m), strict=True):
        np.testing.assert_array_equal(a, b)


def test_pock_chambolle_scaling_bounds_the_operator_norm_by_one():
    # the LP core takes ||A~||_2 <= 1 for granted after this stage (Pock & Chambolle 2011, Lemma 2)
    for seed in range(5):
        c, lc, uc, lv, uv, A = _lp(seed, m=25, n=35)
        for alpha in (1.0, 0.5, 1.7):
            sc = scale_lp(c, lc, uc, lv, uv, A, pock_chambolle_alpha=alpha)
            As = sp.csc_array((sc.csc[2], sc.csc[1], sc.csc[0]), shape=A.shape).toarray()
            assert np.linalg.norm(As, 2) <= 1.0 + 1e-12


def test_scaling_from_csc_arrays_equals_scaling_the_scipy_matrix():
    from solver.lp.scaling import scale_lp_csc

    c, lc, uc, lv, uv, A = _lp(3, m=20, n=30)
    a = scale_lp(c, lc, uc, lv, uv, A)
    b = scale_lp_csc(c, lc, uc, lv, uv, A.indptr, A.indices, A.data, A.shape[0])
    for f in ("c", "lc", "uc", "lv", "uv", "d1", "d2"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    for u, v in zip((*a.csr, *a.csc), (*b.csr, *b.csc), strict=True):
        np.testing.assert_array_equal(u, v)


def test_fused_ruiz_passes_are_bitwise_the_loop_of_single_passes():
    """ruiz_passes fuses each pass's scaling with the next pass's maxima; the arithmetic is unchanged, so the
    values and factors equal the loop of ruiz_pass bit for bit (also with an empty row and column, 0 and 1 passes);
    the default Pock-Chambolle exponent 1 sums |a| without pow and gives what the pow form gives."""
    from solver.lp import scaling as S

    *_, A = _lp(7, m=25, n=35)
    A = A.tolil()
    A[3, :] = 0
    A[:, 5] = 0
    A = A.tocsc()
    A.eliminate_zeros()
    A.sort_indices()
    m, n = A.shape
    for passes in (0, 1, 2, 10):
        cp, ci, cv = _csc(A)
        cv2 = cv.copy()
        d1, d2, e1, e2 = np.ones(m), np.ones(n), np.ones(m), np.ones(n)
        S.ruiz_passes(cp, ci, cv, m, d1, d2, passes)
        for _ in range(passes):
            S.ruiz_pass(cp, ci, cv2, m, e1, e2)
        assert np.array_equal(cv, cv2) and np.array_equal(d1, e1) and np.array_equal(d2, e2), passes
    cp, ci, cv = _csc(A)
    cv2 = cv.copy()
    d1, d2, e1, e2 = np.ones(m), np.ones(n), np.ones(m), np.ones(n)
    S.pock_chambolle_pass(cp, ci, cv, m, 1.0, d1, d2)
    a = np.abs(cv2)
    cols = np.repeat(np.arange(n), np.diff(cp))
    S.apply_inv_sqrt_factors(cp, ci, cv2, np.bincount(ci, a ** 1.0, minlength=m).astype(float),
                             np.bincount(cols, a ** 1.0, minlength=n).astype(float), e1, e2)
    np.testing.assert_allclose(cv, cv2, rtol=1e-15)
    np.testing.assert_allclose(d1, e1, rtol=1e-15)
