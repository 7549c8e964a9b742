"""Plain-numpy twins of ``solver.lp.alm_kernels`` (same arguments and outputs), compared by the tests."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _matrix(cp, ci, cv, m: int) -> sp.csc_array:
    return sp.csc_array((cv, ci, cp), shape=(m, cp.shape[0] - 1))


def _maps_ref(A, v, w, xbar, lv, uv, tau, sbar, lc, uc, tau_s, y, sigma, x, s, ax, grad, col_active, row_active):
    """x(w), s(w), their active sets, A x and the gradient at w, given v = A'w - c."""
    zx = xbar + tau * v
    x[:] = np.minimum(np.maximum(zx, lv), uv)
    col_active[:] = (zx >= lv) & (zx <= uv) & (lv < uv)
    zs = sbar - tau_s * w
    s[:] = np.minimum(np.maximum(zs, lc), uc)
    row_active[:] = (zs >= lc) & (zs <= uc) & (lc < uc)
    ax[:] = A @ x
    grad[:] = ax - s + (w - y) / sigma


def dual_eval_ref(cp, ci, cv, w, c, xbar, lv, uv, tau, sbar, lc, uc, tau_s, y, sigma,
                  v, x, s, ax, grad, col_active, row_active):
    """Twin of :func:`solver.lp.alm_kernels.dual_eval`."""
    A = _matrix(cp, ci, cv, w.shape[0])
    v[:] = A.T @ w - c
    _maps_ref(A, v, w, xbar, lv, uv, tau, sbar, lc, uc, tau_s, y, sigma, x, s, ax, grad, col_active, row_active)
    return float(v @ x - ((x - xbar) ** 2).sum() / (2 * tau) - w @ s - ((s - sbar) ** 2).sum() / (2 * tau_s)
                 + (w @ w) / (2 * sigma) - (w @ y) / sigma)


def psi_on_line_ref(alpha, v, gd, xbar, lv, uv, tau, w, d, sbar, lc, uc, tau_s, y, sigma):
    """Twin of :func:`solver.lp.alm_kernels.psi_on_line`."""
    va = v + alpha * gd
    x = np.minimum(np.maximum(xbar + tau * va, lv), uv)
    wa = w + alpha * d
    s = np.minimum(np.maximum(sbar - tau_s * wa, lc), uc)
    return float(va @ x - ((x - xbar) ** 2).sum() / (2 * tau) - wa @ s - ((s - sbar) ** 2).sum() / (2 * tau_s)
                 + (wa @ wa) / (2 * sigma) - (wa @ y) / sigma)


def line_slope_ref(alpha, v, gd, xbar, lv, uv, tau, w, d, sbar, lc, uc, tau_s, y, sigma):
    """phi'(alpha) = d' grad Psi(w + alpha d) and phi''(alpha) = d' V d (a kink counted active), phi(alpha) = Psi(w +
    alpha d): the definition :func:`line_root_ref` and :func:`solver.lp.alm_kernels.line_root` are tested against."""
    zx = xbar + tau * (v + alpha * gd)
    x = np.minimum(np.maximum(zx, lv), uv)
    col_active = (zx >= lv) & (zx <= uv) & (lv < uv)
    wa = w + alpha * d
    zs = sbar - tau_s * wa
    s = np.minimum(np.maximum(zs, lc), uc)
    row_active = (zs >= lc) & (zs <= uc) & (lc < uc)
    slope = float(gd @ x - d @ s + d @ (wa - y) / sigma)
    curvature = float(tau * (gd[col_active] ** 2).sum() + tau_s * (d[row_active] ** 2).sum() + (d @ d) / sigma)
    return slope, curvature


def _intervals(z0, rate, lo, hi, c):
    """Per element with rate != 0 and lo < hi: (t1, t2, c), the alpha interval where z0 + alpha rate is strictly
    inside (lo, hi) and the curvature it adds there."""
    keep = (rate != 0.0) & (lo < hi)
    z0, rate, lo, hi, c = z0[keep], rate[keep], lo[keep], hi[keep], c[keep]
    with np.errstate(invalid="ignore"):
        a, b = (lo - z0) / rate, (hi - z0) / rate
    return np.minimum(a, b), np.maximum(a, b), c


def line_root_ref(v, gd, xbar, lv, uv, tau, w, d, sbar, lc, uc, tau_s, sigma, slope):
    """Twin of :func:`solver.lp.alm_kernels.line_root`."""
    cols = _intervals(xbar + tau * v, tau * gd, lv, uv, tau * gd * gd)
    rows = _intervals(sbar - tau_s * w, -tau_s * d, lc, uc, tau_s * d * d)
    t1 = np.concatenate([cols[0], rows[0]])
    t2 = np.concatenate([cols[1], rows[1]])
    c = np.concatenate([cols[2], rows[2]])
    h0 = float((d @ d) / sigma + c[(t1 <= 0.0) & (0.0 < t2)].sum())
    starts, ends = (0.0 < t1) & (t1 < 1.0), (0.0 < t2) & (t2 < 1.0)
    at = np.concatenate([t1[starts], t2[ends]])
    dh = np.concatenate([c[starts], -c[ends]])
    order = np.argsort(at, kind="stable")
    at, dh = at[order], dh[order]
    knots = np.concatenate([[0.0], at, [1.0]])
    hs = h0 + np.concatenate([[0.0], np.cumsum(dh)])  # the slope of phi' on each piece
    g_at = slope + np.concatenate([[0.0], np.cumsum(hs * np.diff(knots))])  # phi' at each knot
    cross = np.flatnonzero(g_at[1:] >= 0.0)
    if cross.size == 0:
        return -1.0
    q = int(cross[0])
    root = float(knots[q] - g_at[q] / hs[q])
    return root if root < 1.0 else -1.0


def dual_on_line_ref(cp, ci, cv, alpha, v, gd, w, d, xbar, lv, uv, tau, sbar, lc, uc, tau_s, y, sigma,
                     w2, v2, x, s, ax, grad, col_active, row_active):
    """Twin of :func:`solver.lp.alm_kernels.dual_on_line`."""
    w2[:] = w + alpha * d
    v2[:] = v + alpha * gd
    _maps_ref(_matrix(cp, ci, cv, w.shape[0]), v2, w2, xbar, lv, uv, tau, sbar, lc, uc, tau_s, y, sigma, x, s, ax,
              grad, col_active, row_active)
    return psi_on_line_ref(alpha, v, gd, xbar, lv, uv, tau, w, d, sbar, lc, uc, tau_s, y, sigma)


def primal_screen_ref(ax, d1, theta_b, lo, hi, floor):
    """Twin of :func:`solver.lp.alm_kernels.primal_screen`."""
    a = ax / (d1 * theta_b)
    below = np.fmax(lo - a, 0.0)  # nan: no violation, as the kernel
    # below the lower bound first, as kernels.bound_violation: a row with lo > hi is not also above its upper
    above = np.where(below > 0, 0.0, np.fmax(a - hi, 0.0))
    with np.errstate(invalid="ignore"):
        rel = np.maximum(np.where(below > 0, below / np.maximum(floor, np.abs(lo)), 0.0),
                         np.where(above > 0, above / np.maximum(floor, np.abs(hi)), 0.0))
    return float(np.sum(below ** 2 + above ** 2)), float(rel.max(initial=0.0))


def active_columns_ref(col_active):
    """Twin of :func:`solver.lp.alm_kernels.active_columns`."""
    return np.flatnonzero(col_active).astype(np.int64)


def hessian_diagonal_ref(cp, ci, cv, cols, tau, row_active, tau_s, sigma, diag, prec):
    """Twin of :func:`solver.lp.alm_kernels.hessian_diagonal`."""
    A = _matrix(cp, ci, cv, diag.shape[0])[:, cols]
    diag[:] = tau_s * row_active + 1.0 / sigma
    prec[:] = diag + tau * np.asarray((A.multiply(A)).sum(axis=1)).reshape(-1)


def hessian_vector_ref(cp, ci, cv, cols, tau, diag, v, out):
    """Twin of :func:`solver.lp.alm_kernels.hessian_vector`."""
    A = _matrix(cp, ci, cv, v.shape[0])[:, cols]
    out[:] = tau * (A @ (A.T @ v)) + diag * v


def pcg_ref(cp, ci, cv, cols, tau, diag, prec, rhs, rel_tol, max_iter, d, r, z, q, pdir):
    """Twin of :func:`solver.lp.alm_kernels.pcg` (same recurrences, numpy vector operations)."""
    A = _matrix(cp, ci, cv, rhs.shape[0])[:, cols]
    d[:] = 0.0
    r[:] = rhs
    z[:] = r / prec
    pdir[:] = z
    rz, rn2 = float(r @ z), float(r @ r)
    stop2 = rel_tol * rel_tol * rn2
    it = 0
    while it < max_iter and rn2 > stop2 and rz > 0.0:
        q[:] = tau * (A @ (A.T @ pdir)) + diag * pdir
        pq = float(pdir @ q)
        if not pq > 0.0:
            break
        alpha = rz / pq
        d += alpha * pdir
        r -= alpha * q
        z[:] = r / prec
        rz_new, rn2 = float(r @ z), float(r @ r)
        pdir[:] = z + (rz_new / rz) * pdir
        rz = rz_new
        it += 1
    return it


def dot_ref(a, b):
    """Twin of :func:`solver.lp.alm_kernels.dot`."""
    return float(np.dot(a, b))


def diff_norm_ref(a, b):
    """Twin of :func:`solver.lp.alm_kernels.diff_norm`."""
    return float(np.linalg.norm(a - b))


def csc_matvec_ref(cp, ci, cv, x, out):
    """Twin of :func:`solver.lp.alm_kernels.csc_matvec`."""
    out[:] = _matrix(cp, ci, cv, out.shape[0]) @ x
