"""The numba kernels of the LP core: sparse products, the two PDHG passes, power iteration and the
one-pass termination/restart/infeasibility measures. Each kernel has a plain-numpy reference twin of the
same name with ``_ref`` in ``solver.lp.kernels_ref``, which the tests compare it against.

Matrix storage: A (m x n) is held twice, as CSR (``rp, ri, rv``: row starts, column indices, values)
and as CSC (``cp, ci, cv``). ``A x`` is a gather over CSR rows and ``A' y`` a gather over CSC columns,
so every output entry is written by exactly one loop iteration (no racy scatter when run in parallel).

One reflected-Halpern PDHG iteration (cuPDLPx, arXiv 2507.14051; Lu & Yang, arXiv 2407.16144) from
z = (x, y) with anchor z0 = (x0, y0), Halpern counter k, weights w1 = (k+1)/(k+2), w0 = 1/(k+2) and
reflection coefficient g::

    xh  = proj_[lv,uv](x - tau (c - A'y))                      (primal step; already computed)
    yh  = y - sigma (A(2 xh - x) - proj_[lc,uc](A(2 xh - x) - y / sigma))      (dual step)
        = sigma (proj_[lc,uc](u) - u),  u = A(2 xh - x) - y / sigma        (computed this way: exact sign)
    x  <- w1 (2 g xh + (1 - 2 g) x) + w0 x0,  y likewise                (reflected Halpern update)

``A x`` and ``A' y`` of the current iterate are carried along by linearity (``ax``, ``aty``), so an
iteration costs exactly two passes over the matrix: a row pass (A xh, dual step, Halpern update of y)
and a column pass (A' yh, Halpern update of x, next primal step).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from solver import kernel_cache

kernel_cache.install()  # cached kernels load without numba's compiler set-up (solver/kernel_cache.py)

RAY_SIGNIFICANCE = 1e-9
"""An infeasibility ray's objective counts only above this fraction of the sum of its terms' magnitudes
(a compile-time constant of :func:`check_measures`; see ``solver.lp.infeasibility``)."""

# --------------------------------------------------------------------------- sparse products


@njit(cache=True)
def spmv_csr(rp, ri, rv, x, out):
    """out[i] = sum_j A[i, j] x[j] over CSR rows. Shapes: rp (m+1,), x (n,), out (m,)."""
    m = rp.shape[0] - 1
    for i in range(m):
        s = 0.0
        for p in range(rp[i], rp[i + 1]):
            s += rv[p] * x[ri[p]]
        out[i] = s


# A'y over the CSC arrays of A is exactly the CSR product with the arrays of A' (CSC of A = CSR of A'):
# one kernel serves both, and each output entry is still written by one loop iteration (no scatter).
spmv_csc_t = spmv_csr
"""out[j] = sum_i A[i, j] y[i] (A' y) over CSC columns: ``spmv_csc_t(cp, ci, cv, y, out)``, shapes
cp (n+1,), y (m,), out (n,). Same kernel as :func:`spmv_csr`."""


@njit(cache=True)
def spmv_csc(cp, ci, cv, x, out):
    """out = A x over the CSC arrays of A (column scatter, nonzeros in storage order, the order scipy's
    ``csc_matrix @ x`` uses, so the results agree bitwise). Shapes: cp (n+1,), x (n,), out (m,)."""
    n = cp.shape[0] - 1
    out[:] = 0.0
    for j in range(n):
        xj = x[j]
        for p in range(cp[j], cp[j + 1]):
            out[ci[p]] += cv[p] * xj


@njit(cache=True, nogil=True)  # nogil: a partitioned LP round runs it in a thread while its parts run
def row_absmax_scan(ci, cv, out):
    """out[i] = max(out[i], max_p |cv[p]| over the entries p of row i): one pass over the (nnz,) CSC entries
    (row ``ci[p]``, value ``cv[p]``) into the (m,) ``out``, zeroed by the caller. numpy's ``np.maximum.at`` took
    0.36-0.49 s on TE Kdl's 31M nonzeros, this kernel 0.08-0.15 s (session 23), once per step process."""
    for p in range(ci.shape[0]):
        v = abs(cv[p])
        r = ci[p]
        if v > out[r]:
            out[r] = v


@njit(cache=True)
def row_violation_scan(ax, lo, hi, absmax):
    """(worst, i): the largest relative violation of ``lo <= ax <= hi`` (all (m,) float64) and its first row, viol_i /
    max(floor_i, |b_i|) with b_i the bound violated and floor_i = max(1, absmax_i), or 1 when ``absmax`` is empty
    (shape (0,)); a nan activity is an infinite violation; (0.0, -1) when no row is violated. One pass over the
    rows: the numpy form (``solver.lp.kernels_ref.row_violation_scan_ref``) made a dozen (m,) temporaries, 0.04 s
    a call on TE Kdl's 570k rows, six calls per ALM round."""
    m = ax.shape[0]
    scaled = absmax.shape[0] > 0
    worst = 0.0
    at = -1
    for i in range(m):
        a = ax[i]
        if a != a:
            v = np.inf
        else:
            floor = max(1.0, absmax[i]) if scaled else 1.0
            v = 0.0
            if a < lo[i]:
                v = (lo[i] - a) / max(floor, abs(lo[i]))
            if a > hi[i]:
                w = (a - hi[i]) / max(floor, abs(hi[i]))
                if w > v:
                    v = w
        if v > worst:
            worst = v
            at = i
    return worst, at


@njit(cache=True)
def violation_max(v, lo, hi):
    """(largest violation, largest violation / max(1, |b_i|)) of ``lo <= v <= hi`` (all (k,) float64), b_i the
    bound the entry violates (the one it is further past; |hi_i| on a nan entry; 0 for an infinite one); an
    infinite bound is never violated; a nan entry with a finite bound makes both nan; (0.0, 0.0) when k = 0.
    ``solver.baselines.result.point_quality``'s row and bound measures in one pass: its numpy form (the twin,
    ``solver.lp.kernels_ref.violation_max_ref``) made eight (k,) temporaries per side, 0.13 s of a TE Kdl
    partitioned round's merge (570k rows, 1.06M columns). Every comparison is numpy's ``maximum``'s: the first
    argument on a tie or a nan."""
    worst = 0.0
    worst_rel = 0.0
    nan = False
    for i in range(v.shape[0]):
        a, lo_i, hi_i = v[i], lo[i], hi[i]
        below = lo_i - a if np.isfinite(lo_i) else -np.inf
        above = a - hi_i if np.isfinite(hi_i) else -np.inf
        m = below if (below >= above or below != below) else above
        viol = m if (m >= 0.0 or m != m) else 0.0
        if viol != viol:
            nan = True
            continue
        bound = abs(lo_i) if below >= above else abs(hi_i)
        if not np.isfinite(bound):
            bound = 0.0
        rel = viol / (1.0 if 1.0 >= bound else bound)
        if viol > worst:
            worst = viol
        if rel > worst_rel:
            worst_rel = rel
    if nan:
        return np.nan, np.nan
    return worst, worst_rel


def kernel_array(a, dtype) -> np.ndarray:
    """``a`` as a C-contiguous, writable array of ``dtype``: ``a`` itself when it is one, else one copy. numba types a
    read-only, non-contiguous or other-dtype array as another signature of a kernel, which would compile mid-stream
    (``solver.prepare`` compiles the signatures real rounds pass: writable int32 indices, float64 values)."""
    if a.dtype == dtype and a.flags.c_contiguous and a.flags.writeable:
        return a
    return np.array(a, dtype=dtype)


@njit(cache=True)
def row_counts(ci, m):
    """(m,) int64: the number of entries of each row, from the (nnz,) row indices ``ci`` of CSC arrays (every
    index in [0, m)). One pass, no copy of ``ci``: ``np.bincount`` first casts int32 indices to int64 (TE Kdl's
    31M entries: 0.3-0.4 s against ~0.03 s), once per LP solve (``solver.lp.trivial``: empty rows)."""
    out = np.zeros(m, dtype=np.int64)
    for p in range(ci.shape[0]):
        out[ci[p]] += 1
    return out


@njit(cache=True)
def csc_is_canonical(cp, ci, cv, m):
    """True when CSC arrays cp (n+1,), ci (nnz,), cv (nnz,) hold row indices in [0, m) strictly
    increasing within each column and only finite nonzero values (``Problem``'s matrix invariants);
    one pass, stops at the first violation."""
    n = cp.shape[0] - 1
    for j in range(n):
        prev = -1
        for p in range(cp[j], cp[j + 1]):
            i = ci[p]
            v = cv[p]
            if i <= prev or i >= m or v == 0.0 or not np.isfinite(v):
                return False
            prev = i
    return True


# --------------------------------------------------------------------------- PDHG passes


@njit(cache=True)
def clip(v, lo, hi):
    """v projected onto [lo, hi] (scalars; lo first, so lo > hi gives hi, as every pass has always done)."""
    if v < lo:
        v = lo
    if v > hi:
        v = hi
    return v


@njit(cache=True)
def halpern(w1, w0, a, b, t, z, z0):
    """One entry of the reflected Halpern update w1 (a T(z) + b z) + w0 z0 with a = 2 g, b = 1 - 2 g
    (scalars: t = T(z), z the current entry, z0 the anchor's)."""
    return w1 * (a * t + b * z) + w0 * z0


@njit(cache=True)
def halpern_column(j, w1, w0, a, b, atyh_j, x, x0, aty, aty0, c, lv, uv, tau, xh):
    """Column ``j``'s Halpern update of x and A'y (from xh[j] and ``atyh_j`` = (A'yh)[j]) followed by its
    next primal step xh[j] = clip(x[j] - tau (c[j] - (A'y)[j]), lv[j], uv[j]); shared by the column pass
    and :func:`halpern_step`."""
    xj = halpern(w1, w0, a, b, xh[j], x[j], x0[j])
    aj = halpern(w1, w0, a, b, atyh_j, aty[j], aty0[j])
    x[j] = xj
    aty[j] = aj
    xh[j] = clip(xj - tau * (c[j] - aj), lv[j], uv[j])


@njit(cache=True)
def primal_step(x, aty, c, lv, uv, tau, xh):
    """xh = clip(x - tau (c - aty), lv, uv). All arrays (n,)."""
    for j in range(x.shape[0]):
        xh[j] = clip(x[j] - tau * (c[j] - aty[j]), lv[j], uv[j])


@njit(cache=True)
def row_pass(rp, ri, rv, xh, ax, ax0, y, y0, lc, uc, sigma, w1, w0, g, halpern_update, yh, axh):
    """Row pass: axh = A xh; dual step yh; if ``halpern_update``: Halpern update of y and of ax = A x.

    Shapes: rp (m+1,), xh (n,), every other array (m,). ``g`` is the reflection coefficient.
    """
    m = rp.shape[0] - 1
    a = 2.0 * g
    b = 1.0 - 2.0 * g
    for i in range(m):
        s = 0.0
        for p in range(rp[i], rp[i + 1]):
            s += rv[p] * xh[ri[p]]
        axh[i] = s
        u = 2.0 * s - ax[i] - y[i] / sigma
        yi = sigma * (clip(u, lc[i], uc[i]) - u)  # = y - sigma (A xbar - v); this form keeps the dual sign exact
        yh[i] = yi
        if halpern_update:
            y[i] = halpern(w1, w0, a, b, yi, y[i], y0[i])
            ax[i] = halpern(w1, w0, a, b, s, ax[i], ax0[i])


@njit(cache=True)
def col_pass(cp, ci, cv, yh, x, x0, aty, aty0, c, lv, uv, tau, w1, w0, g, halpern_update, xh, atyh):
    """Column pass: atyh = A' yh; if ``halpern_update``: Halpern update of x and aty = A'y, then the next
    primal step xh = clip(x - tau (c - aty), lv, uv).

    Shapes: cp (n+1,), yh (m,), every other array (n,).
    """
    n = cp.shape[0] - 1
    a = 2.0 * g
    b = 1.0 - 2.0 * g
    for j in range(n):
        s = 0.0
        for p in range(cp[j], cp[j + 1]):
            s += cv[p] * yh[ci[p]]
        atyh[j] = s
        if halpern_update:
            halpern_column(j, w1, w0, a, b, s, x, x0, aty, aty0, c, lv, uv, tau, xh)


@njit(cache=True)
def run_block(rp, ri, rv, cp, ci, cv, c, lc, uc, lv, uv, tau, sigma, g, k, count,
              x, y, x0, y0, ax, aty, ax0, aty0, xh, yh, axh, atyh):
    """Run ``count`` full reflected-Halpern PDHG iterations from Halpern counter ``k``, then one more
    PDHG step *without* the Halpern update, so that on return (x, y) is the current iterate z_k,
    (xh, yh) = T(z_k), axh = A xh and atyh = A' yh (what termination and restart checks need).

    On entry xh must equal the primal step of (x, aty). Returns the new Halpern counter k + count.
    """
    for t in range(count):
        kk = k + t
        w1 = (kk + 1.0) / (kk + 2.0)
        w0 = 1.0 / (kk + 2.0)
        row_pass(rp, ri, rv, xh, ax, ax0, y, y0, lc, uc, sigma, w1, w0, g, True, yh, axh)
        col_pass(cp, ci, cv, yh, x, x0, aty, aty0, c, lv, uv, tau, w1, w0, g, True, xh, atyh)
    row_pass(rp, ri, rv, xh, ax, ax0, y, y0, lc, uc, sigma, 0.0, 0.0, g, False, yh, axh)
    col_pass(cp, ci, cv, yh, x, x0, aty, aty0, c, lv, uv, tau, 0.0, 0.0, g, False, xh, atyh)
    return k + count


@njit(cache=True)
def halpern_step(k, g, x, y, ax, aty, xh, yh, axh, atyh, x0, y0, ax0, aty0, c, lv, uv, tau):
    """The reflected Halpern update with counter ``k`` that ``run_block`` leaves out at a check,
    z <- w1 (2 g T(z) + (1 - 2 g) z) + w0 z0 for z = x, y, A x, A'y, then the next primal step
    xh = clip(x - tau (c - A'y), lv, uv), so that ``run_block`` can continue (one call instead of
    a dozen numpy passes per check). Shapes: x-like (n,), y-like (m,).
    """
    w1 = (k + 1.0) / (k + 2.0)
    w0 = 1.0 / (k + 2.0)
    a = 2.0 * g
    b = 1.0 - 2.0 * g
    for i in range(y.shape[0]):
        y[i] = halpern(w1, w0, a, b, yh[i], y[i], y0[i])
        ax[i] = halpern(w1, w0, a, b, axh[i], ax[i], ax0[i])
    for j in range(x.shape[0]):
        halpern_column(j, w1, w0, a, b, atyh[j], x, x0, aty, aty0, c, lv, uv, tau, xh)


# --------------------------------------------------------------------------- parallel variants
# Same arithmetic as run_block (the same clip / halpern helpers), with the row and column loops spread
# over numba threads (prange). Each output entry is written by one thread; results are bitwise equal to
# the serial kernels because every entry's sum runs in the same order.


@njit(cache=True, parallel=True)
def run_block_parallel(rp, ri, rv, cp, ci, cv, c, lc, uc, lv, uv, tau, sigma, g, k, count,
                       x, y, x0, y0, ax, aty, ax0, aty0, xh, yh, axh, atyh):
    """Parallel twin of :func:`run_block` (same contract, same results)."""
    m = rp.shape[0] - 1
    n = cp.shape[0] - 1
    a = 2.0 * g
    b = 1.0 - 2.0 * g
    for t in range(count + 1):
        halpern_update = t < count
        kk = k + t
        w1 = (kk + 1.0) / (kk + 2.0)
        w0 = 1.0 / (kk + 2.0)
        for i in prange(m):
            s = 0.0
            for p in range(rp[i], rp[i + 1]):
                s += rv[p] * xh[ri[p]]
            axh[i] = s
            u = 2.0 * s - ax[i] - y[i] / sigma
            yi = sigma * (clip(u, lc[i], uc[i]) - u)
            yh[i] = yi
            if halpern_update:
                y[i] = halpern(w1, w0, a, b, yi, y[i], y0[i])
                ax[i] = halpern(w1, w0, a, b, s, ax[i], ax0[i])
        for j in prange(n):
            s = 0.0
            for p in range(cp[j], cp[j + 1]):
                s += cv[p] * yh[ci[p]]
            atyh[j] = s
            if halpern_update:
                halpern_column(j, w1, w0, a, b, s, x, x0, aty, aty0, c, lv, uv, tau, xh)
    return k + count


# --------------------------------------------------------------------------- operator norm


@njit(cache=True)
def power_iteration(rp, ri, rv, cp, ci, cv, v, max_iter, rel_tol):
    """Estimate ||A||_2 by power iteration on A'A from the (n,) start vector ``v`` (overwritten).

    Returns (sigma_max estimate, iterations used). Stops when the estimate changes by less than
    ``rel_tol`` relative. The estimate approaches ||A||_2 from below.
    """
    m = rp.shape[0] - 1
    n = cp.shape[0] - 1
    av = np.zeros(m)
    w = np.zeros(n)
    nv = np.sqrt(np.sum(v * v))
    if nv == 0.0:
        return 0.0, 0
    v /= nv
    est = 0.0
    it = 0
    for it in range(1, max_iter + 1):
        spmv_csr(rp, ri, rv, v, av)
        spmv_csc_t(cp, ci, cv, av, w)
        lam = np.sqrt(np.sum(w * w))  # ||A'A v|| -> sigma_max^2
        if lam == 0.0:
            return 0.0, it
        new = np.sqrt(lam)
        for j in range(n):
            v[j] = w[j] / lam
        if abs(new - est) <= rel_tol * new:
            est = new
            break
        est = new
    return est, it


# --------------------------------------------------------------------------- termination check


@njit(cache=True)
def bound_violation(v, lo, hi):
    """v - lo below lo, v - hi above hi, else 0 (a row activity's signed primal residual)."""
    if v < lo:
        return v - lo
    if v > hi:
        return v - hi
    return 0.0


@njit(cache=True)
def check_measures(c_s, d1, d2, tb, tc, tau, eta, w, c_o, lc_o, uc_o, lv_o, uv_o,
                   lc_f, uc_f, lv_f, uv_f, rp, ri, rv,
                   x, y, x0, y0, ax, aty, ax0, aty0, xh, yh, axh, atyh, rays, work_n, work_m):
    """Everything a termination/restart check needs, in one pass over columns and one over rows.

    Inputs: the scaled cost ``c_s`` (n,), row/column factors d1 (m,), d2 (n,), theta_b ``tb`` and
    theta_c ``tc``; the ORIGINAL-unit reduced LP (``c_o``, bounds ``lc_o``/``uc_o`` (m,),
    ``lv_o``/``uv_o`` (n,) and their finite copies ``*_f`` with inf -> 0); the scaled CSR of A~
    (used only for the dual-infeasibility ray, when ``rays``); the PDHG state (current z = (x, y),
    anchor z0, A x, A'y, and the step T(z) = (xh, yh) with A xh, A'yh); work arrays (n,), (m,).

    Returns the tuple (primal objective, dual objective, ||primal residual||_2, ||dual residual||_2,
    fixed-point residual r(z), primal-infeasibility ratio, dual-infeasibility ratio), the first four
    in original units (see ``solver.lp.termination``; a reduced cost whose bound is not near x is dual
    residual, ``termination.near_bound``), r(z) in the PDHG metric (``solver.lp.restart``), the
    ratios as in ``solver.lp.infeasibility`` on the rays (yh - y0, xh - x0) (inf when ``rays`` is False,
    the ray's objective has the wrong sign, or the ray is not above RAY_SIGNIFICANCE x the largest |entry| of the
    iterates it is the difference of).
    """
    n = x.shape[0]
    m = y.shape[0]
    inf = np.inf
    pobj = 0.0
    dobj = 0.0
    dres2 = 0.0
    dxx = 0.0
    pviol = 0.0
    pray = 0.0
    pray_abs = 0.0  # the same terms without cancellation: pray must be significant against them
    cdx = 0.0
    cdx_abs = 0.0
    bmax = 0.0  # largest finite bound magnitude: the primal ray test is made in bound-scaled terms
    dmax = 0.0  # largest magnitude of the primal ray (original units): its violation counts against it too
    xmag = 0.0  # largest |entry| of xh and x0, ymag of yh and y0 (original units): a ray must be above their noise
    ymag = 0.0
    for j in range(n):
        s2 = d2[j] * tc
        xo = xh[j] * d2[j] / tb
        if xo < lv_o[j]:
            xo = lv_o[j]
        if xo > uv_o[j]:
            xo = uv_o[j]
        pobj += c_o[j] * xo
        ro = ((xh[j] - x[j]) / tau + (c_s[j] - aty[j])) / s2
        bnd = lv_o[j] if ro > 0.0 else uv_o[j]
        if not abs(xo - bnd) <= abs(xo):  # not near the bound it points at: dual residual (termination.near_bound)
            ro = 0.0
        dr = c_o[j] - atyh[j] / s2 - ro
        dres2 += dr * dr
        if ro > 0.0:
            dobj += lv_f[j] * ro
        else:
            dobj += uv_f[j] * ro
        dx = x[j] - xh[j]
        dxx += dx * dx
        if rays:
            bmax = max(bmax, abs(lv_f[j]), abs(uv_f[j]))
            xmag = max(xmag, abs(xh[j] * d2[j] / tb), abs(x0[j] * d2[j] / tb))
            r = -(atyh[j] - aty0[j]) / s2
            rok = 0.0
            if lv_o[j] > -inf and r > 0.0:
                rok += r
            if uv_o[j] < inf and r < 0.0:
                rok += r
            v = abs(r - rok)
            if v > pviol:
                pviol = v
            if rok > 0.0:
                pray += lv_f[j] * rok
                pray_abs += abs(lv_f[j] * rok)
            else:
                pray += uv_f[j] * rok
                pray_abs += abs(uv_f[j] * rok)
            dv = xh[j] - x0[j]  # scaled; the projection onto the recession cone keeps its sign
            if lv_o[j] > -inf and dv < 0.0:
                dv = 0.0
            if uv_o[j] < inf and dv > 0.0:
                dv = 0.0
            work_n[j] = dv
            if abs(dv * d2[j] / tb) > dmax:
                dmax = abs(dv * d2[j] / tb)
            cdx += c_o[j] * dv * d2[j] / tb
            cdx_abs += abs(c_o[j] * dv * d2[j] / tb)
    pres2 = 0.0
    dyy = 0.0
    dyadx = 0.0
    yscale = 0.0
    for i in range(m):
        s1 = d1[i] / tc
        axo = axh[i] / (d1[i] * tb)
        pr = bound_violation(axo, lc_o[i], uc_o[i])
        pres2 += pr * pr
        yo = yh[i] * s1
        if yo > 0.0:
            dobj += lc_f[i] * yo
        else:
            dobj += uc_f[i] * yo
        dy = y[i] - yh[i]
        dyy += dy * dy
        dyadx += dy * (ax[i] - axh[i])
        if rays:
            bmax = max(bmax, abs(lc_f[i]), abs(uc_f[i]))
            ymag = max(ymag, abs(yo), abs(y0[i] * s1))
            dyo = (yh[i] - y0[i]) * s1
            v = 0.0
            if lc_o[i] == -inf and dyo > 0.0:
                v = dyo
            if uc_o[i] == inf and dyo < 0.0:
                v = -dyo
            if v > pviol:
                pviol = v
            if dyo > 0.0:
                pray += lc_f[i] * dyo
                pray_abs += abs(lc_f[i] * dyo)
            else:
                pray += uc_f[i] * dyo
                pray_abs += abs(uc_f[i] * dyo)
            if abs(dyo) > yscale:
                yscale = abs(dyo)
    fp = (w / eta) * dxx + dyy / (eta * w) + 2.0 * dyadx
    fp = np.sqrt(fp) if fp > 0.0 else 0.0
    pratio = inf
    dratio = inf
    if rays:
        if pray > RAY_SIGNIFICANCE * pray_abs and yscale > 0.0 and yscale > RAY_SIGNIFICANCE * ymag and pray < inf:
            pratio = pviol * (1.0 + bmax) / pray  # solver.lp.infeasibility.primal_infeasibility_ratio
        if cdx < -RAY_SIGNIFICANCE * cdx_abs and cdx > -inf and dmax > RAY_SIGNIFICANCE * xmag:
            spmv_csr(rp, ri, rv, work_n, work_m)
            dviol = 0.0
            for i in range(m):
                ad = work_m[i] / (d1[i] * tb)
                if uc_o[i] < inf and ad > dviol:
                    dviol = ad
                if lc_o[i] > -inf and -ad > dviol:
                    dviol = -ad
            dratio = dviol / min(abs(cdx), dmax)  # solver.lp.infeasibility.dual_infeasibility_ratio
    return pobj, dobj, np.sqrt(pres2), np.sqrt(dres2), fp, pratio, dratio

