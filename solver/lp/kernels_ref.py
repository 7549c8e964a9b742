"""Plain-numpy reference twins of the numba kernels in ``solver.lp.kernels``, one per kernel, named
``<kernel>_ref`` with the kernel's own arguments and outputs (the same in-place contract).

They are the readable statement of what each kernel computes (scipy products, whole-array numpy
expressions, and for :func:`check_measures_ref` the reference modules' own termination, restart and
infeasibility functions) and exist for the tests, which compare every kernel against its twin
(``tests/test_kernels.py``) and ``solver.lp.original_kkt.original_kkt_ref``. Never on the solve path.
"""

from __future__ import annotations

import numpy as np

from solver.lp.infeasibility import dual_infeasibility_ratio, primal_infeasibility_ratio
from solver.lp.restart import fixed_point_residual
from solver.lp.scaling import ScaledLP
from solver.lp.termination import OrigLP, evaluate


def spmv_csr_ref(rp, ri, rv, x, out):
    """numpy twin of :func:`solver.lp.kernels.spmv_csr`."""
    import scipy.sparse as sp
    m = rp.shape[0] - 1
    out[:] = sp.csr_array((rv, ri, rp), shape=(m, x.shape[0])) @ x


def spmv_csc_t_ref(cp, ci, cv, y, out):
    """numpy twin of :func:`solver.lp.kernels.spmv_csc_t`."""
    import scipy.sparse as sp
    n = cp.shape[0] - 1
    out[:] = sp.csc_array((cv, ci, cp), shape=(y.shape[0], n)).T @ y


def spmv_csc_ref(cp, ci, cv, x, out):
    """numpy twin of :func:`solver.lp.kernels.spmv_csc`."""
    out[:] = np.bincount(ci, weights=cv * np.repeat(x, np.diff(cp)), minlength=out.shape[0])


def row_violation_scan_ref(ax, lo, hi, absmax):
    """numpy twin of :func:`solver.lp.kernels.row_violation_scan` (whole-array expressions)."""
    if ax.size == 0:
        return 0.0, -1
    floor = 1.0 if absmax.shape[0] == 0 else np.maximum(1.0, absmax)
    with np.errstate(invalid="ignore"):
        below = np.where(ax < lo, (lo - ax) / np.maximum(floor, np.abs(lo)), 0.0)
        above = np.where(ax > hi, (ax - hi) / np.maximum(floor, np.abs(hi)), 0.0)
    worst = np.maximum(below, above)
    worst[np.isnan(ax)] = np.inf
    i = int(np.argmax(worst))
    return (float(worst[i]), i) if worst[i] > 0.0 else (0.0, -1)


def violation_max_ref(v, lo, hi):
    """numpy twin of :func:`solver.lp.kernels.violation_max` (``point_quality``'s former whole-array form)."""
    if v.size == 0:
        return 0.0, 0.0
    with np.errstate(invalid="ignore"):
        below = np.where(np.isfinite(lo), lo - v, -np.inf)
        above = np.where(np.isfinite(hi), v - hi, -np.inf)
        viol = np.maximum(np.maximum(below, above), 0.0)
        bound = np.where(below >= above, np.abs(lo), np.abs(hi))
    bound[~np.isfinite(bound)] = 0.0
    return float(viol.max()), float((viol / np.maximum(1.0, bound)).max())


def row_absmax_scan_ref(ci, cv, out):
    """numpy twin of :func:`solver.lp.kernels.row_absmax_scan`."""
    np.maximum.at(out, ci, np.abs(cv))


def row_counts_ref(ci, m):
    """numpy twin of :func:`solver.lp.kernels.row_counts`."""
    return np.bincount(ci, minlength=m).astype(np.int64)


def csc_is_canonical_ref(cp, ci, cv, m):
    """numpy twin of :func:`solver.lp.kernels.csc_is_canonical`."""
    if ci.size == 0:
        return True
    if not np.isfinite(cv).all() or (cv == 0).any() or ci.min() < 0 or ci.max() >= m:
        return False
    starts = np.zeros(ci.size, dtype=bool)
    starts[cp[:-1][np.diff(cp) > 0]] = True  # a column's first entry may be below its predecessor's
    return bool(np.all((np.diff(ci) > 0) | starts[1:]))


def primal_step_ref(x, aty, c, lv, uv, tau, xh):
    """numpy twin of :func:`solver.lp.kernels.primal_step`."""
    xh[:] = np.minimum(np.maximum(x - tau * (c - aty), lv), uv)


def row_pass_ref(rp, ri, rv, xh, ax, ax0, y, y0, lc, uc, sigma, w1, w0, g, halpern_update, yh, axh):
    """numpy twin of :func:`solver.lp.kernels.row_pass`."""
    spmv_csr_ref(rp, ri, rv, xh, axh)
    u = 2.0 * axh - ax - y / sigma
    yh[:] = sigma * (np.minimum(np.maximum(u, lc), uc) - u)
    if halpern_update:
        y[:] = w1 * (2 * g * yh + (1 - 2 * g) * y) + w0 * y0
        ax[:] = w1 * (2 * g * axh + (1 - 2 * g) * ax) + w0 * ax0


def col_pass_ref(cp, ci, cv, yh, x, x0, aty, aty0, c, lv, uv, tau, w1, w0, g, halpern_update, xh, atyh):
    """numpy twin of :func:`solver.lp.kernels.col_pass`."""
    spmv_csc_t_ref(cp, ci, cv, yh, atyh)
    if halpern_update:
        x[:] = w1 * (2 * g * xh + (1 - 2 * g) * x) + w0 * x0
        aty[:] = w1 * (2 * g * atyh + (1 - 2 * g) * aty) + w0 * aty0
        primal_step_ref(x, aty, c, lv, uv, tau, xh)


def run_block_ref(rp, ri, rv, cp, ci, cv, c, lc, uc, lv, uv, tau, sigma, g, k, count,
                  x, y, x0, y0, ax, aty, ax0, aty0, xh, yh, axh, atyh):
    """numpy twin of :func:`solver.lp.kernels.run_block`."""
    for t in range(count):
        kk = k + t
        w1 = (kk + 1.0) / (kk + 2.0)
        w0 = 1.0 / (kk + 2.0)
        row_pass_ref(rp, ri, rv, xh, ax, ax0, y, y0, lc, uc, sigma, w1, w0, g, True, yh, axh)
        col_pass_ref(cp, ci, cv, yh, x, x0, aty, aty0, c, lv, uv, tau, w1, w0, g, True, xh, atyh)
    row_pass_ref(rp, ri, rv, xh, ax, ax0, y, y0, lc, uc, sigma, 0.0, 0.0, g, False, yh, axh)
    col_pass_ref(cp, ci, cv, yh, x, x0, aty, aty0, c, lv, uv, tau, 0.0, 0.0, g, False, xh, atyh)
    return k + count


def halpern_step_ref(k, g, x, y, ax, aty, xh, yh, axh, atyh, x0, y0, ax0, aty0, c, lv, uv, tau):
    """numpy twin of :func:`solver.lp.kernels.halpern_step`."""
    w1, w0 = (k + 1.0) / (k + 2.0), 1.0 / (k + 2.0)
    for cur, hat, anc in ((x, xh, x0), (y, yh, y0), (ax, axh, ax0), (aty, atyh, aty0)):
        cur[:] = w1 * (2 * g * hat + (1 - 2 * g) * cur) + w0 * anc
    primal_step_ref(x, aty, c, lv, uv, tau, xh)


def power_iteration_ref(rp, ri, rv, cp, ci, cv, v, max_iter, rel_tol):
    """numpy twin of :func:`solver.lp.kernels.power_iteration`."""
    import scipy.sparse as sp
    m, n = rp.shape[0] - 1, cp.shape[0] - 1
    A = sp.csr_array((rv, ri, rp), shape=(m, n))
    nv = np.linalg.norm(v)
    if nv == 0.0:
        return 0.0, 0
    v /= nv
    est, it = 0.0, 0
    for it in range(1, max_iter + 1):
        w = A.T @ (A @ v)
        lam = np.linalg.norm(w)
        if lam == 0.0:
            return 0.0, it
        new = np.sqrt(lam)
        v[:] = w / lam
        if abs(new - est) <= rel_tol * new:
            est = new
            break
        est = new
    return est, it


def check_measures_ref(c_s, d1, d2, tb, tc, tau, eta, w, c_o, lc_o, uc_o, lv_o, uv_o,
                       lc_f, uc_f, lv_f, uv_f, rp, ri, rv,
                       x, y, x0, y0, ax, aty, ax0, aty0, xh, yh, axh, atyh, rays, work_n, work_m):
    """numpy twin of :func:`solver.lp.kernels.check_measures`, composed of the reference modules' own functions."""
    import scipy.sparse as sp
    m, n = y.shape[0], x.shape[0]
    lp = OrigLP(c=c_o, lc=lc_o, uc=uc_o, lv=lv_o, uv=uv_o, b_norm=0.0, c_norm=0.0, offset=0.0)
    sc = ScaledLP(c=c_s, lc=lc_o, uc=uc_o, lv=lv_o, uv=uv_o, csr=(rp, ri, rv), csc=None, d1=d1, d2=d2,
                  theta_b=tb, theta_c=tc)
    kkt, _, _, _ = evaluate(lp, sc, x, aty, xh, yh, axh, atyh, tau)
    fp = fixed_point_residual(x - xh, y - yh, ax - axh, eta, w)
    pr = dr = np.inf
    if rays:
        y_size = float(max(np.max(np.abs(sc.y_to_orig(yh)), initial=0.0), np.max(np.abs(sc.y_to_orig(y0)), initial=0.0)))
        x_size = float(max(np.max(np.abs(sc.x_to_orig(xh)), initial=0.0), np.max(np.abs(sc.x_to_orig(x0)), initial=0.0)))
        pr = primal_infeasibility_ratio(lp, sc.y_to_orig(yh - y0), (atyh - aty0) / (d2 * tc), y_size)
        A = sp.csr_array((rv, ri, rp), shape=(m, n)) / d1[:, None] / d2[None, :]
        dr = dual_infeasibility_ratio(lp, sp.csc_array(A), sc.x_to_orig(xh - x0), x_size)
    return (kkt.primal_objective, kkt.dual_objective, kkt.primal_residual, kkt.dual_residual, fp, pr, dr)
