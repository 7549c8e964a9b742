"""numba kernels of the proximal augmented Lagrangian engine (``solver.lp.alm``), one pass each.

The engine's inner problem (``solver.lp.alm_newton``) is the dual of one proximal-ALM step on

    min c'x  s.t.  A x - s = 0,  lv <= x <= uv,  lc <= s <= uc

(x: n columns, s: m row activities, A: m x n CSC). For a multiplier estimate y (m,), prox centres
xbar (n,), sbar (m,), primal steps tau (columns) and tau_s (rows) and the penalty sigma it minimises

    Psi(w) = sum_j [v_j x_j - (x_j - xbar_j)^2 / (2 tau)]          v = A'w - c,  x = clip(xbar + tau v)
           + sum_i [-w_i s_i - (s_i - sbar_i)^2 / (2 tau_s)]        s = clip(sbar - tau_s w)
           + ||w||^2 / (2 sigma) - w'y / sigma

whose gradient is A x(w) - s(w) + (w - y) / sigma and whose generalised Hessian is
tau A_J A_J' + diag(tau_s [i in I] + 1/sigma), J the columns inside their (non-degenerate) box, I the
rows inside theirs (Li, Sun & Toh, SIAM J. Optim. 30(3), 2020, sections 3-4: the same construction
with slack rows added so that ranged rows need no special case).

Every kernel has a plain-numpy twin in ``solver.lp.alm_kernels_ref`` that the tests compare.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver import kernel_cache
from solver.lp.kernels import bound_violation

kernel_cache.install()  # cached kernels load without numba's compiler set-up (solver/kernel_cache.py)


@njit(cache=True)
def _project(z, lo, hi):
    """(clip(z, lo, hi), 1 if lo <= z <= hi and lo < hi else 0): a column's x_j or a row's s_i and whether it is
    active (the module docstring's J and I; a kink counts as active)."""
    if z < lo:
        return lo, 0
    if z > hi:
        return hi, 0
    return z, 1 if lo < hi else 0


@njit(cache=True)
def _column(j, v_j, cp, ci, cv, xbar, lv, uv, tau, h, x, ax, col_active):
    """Column j at v_j = (A'w - c)_j: x_j(w) and its activity into ``x`` and ``col_active``, x_j a_j added to ``ax``;
    returns its terms of Psi, v_j x_j - (x_j - xbar_j)^2 / (2 tau) (h = 0.5 / tau)."""
    xj, col_active[j] = _project(xbar[j] + tau * v_j, lv[j], uv[j])
    x[j] = xj
    d = xj - xbar[j]
    if xj != 0.0:
        for p in range(cp[j], cp[j + 1]):
            ax[ci[p]] += cv[p] * xj
    return v_j * xj - h * d * d


@njit(cache=True)
def _row_term(wi, sbar_i, lc_i, uc_i, tau_s, hs, isig, y_i):
    """Row i's s_i(w), its activity and its terms of Psi: -w_i s_i - (s_i - sbar_i)^2 / (2 tau_s) + w_i^2 / (2 sigma)
    - w_i y_i / sigma (hs = 0.5 / tau_s, isig = 1 / sigma)."""
    si, active = _project(sbar_i - tau_s * wi, lc_i, uc_i)
    d = si - sbar_i
    return si, active, -wi * si - hs * d * d + 0.5 * isig * wi * wi - isig * wi * y_i


@njit(cache=True)
def dual_eval(cp, ci, cv, w, c, xbar, lv, uv, tau, sbar, lc, uc, tau_s, y, sigma,
              v, x, s, ax, grad, col_active, row_active):
    """Evaluate Psi(w) and fill its gradient and the maps x(w), s(w) (module docstring).

    Args:
        cp (n+1,) int64, ci (nnz,) int32, cv (nnz,) float64: CSC of A.
        w (m,): the point; c, xbar, lv, uv (n,); sbar, lc, uc, y (m,); tau, tau_s, sigma > 0 scalars.
    Outputs (overwritten): v = A'w - c (n,) (what :func:`psi_on_line` and :func:`dual_on_line` move along
        a direction), x (n,), s (m,), ax = A x (m,), grad (m,), col_active (n,) uint8 (1 where
        lv <= xbar + tau v <= uv and lv < uv), row_active (m,) uint8 (1 where lc <= sbar - tau_s w <= uc
        and lc < uc). At a kink (equality) the generalised Jacobian may take either side; the active side
        keeps the Newton system from ignoring columns that any move of w activates (many ties at a warm
        start whose duals are 0).
    Returns:
        Psi(w) (float).
    """
    n = c.shape[0]
    m = w.shape[0]
    for i in range(m):
        ax[i] = 0.0
    psi = 0.0
    h = 0.5 / tau
    for j in range(n):
        g = 0.0
        for p in range(cp[j], cp[j + 1]):
            g += cv[p] * w[ci[p]]
        v_j = g - c[j]
        v[j] = v_j
        psi += _column(j, v_j, cp, ci, cv, xbar, lv, uv, tau, h, x, ax, col_active)
    hs = 0.5 / tau_s
    isig = 1.0 / sigma
    for i in range(m):
        si, row_active[i], term = _row_term(w[i], sbar[i], lc[i], uc[i], tau_s, hs, isig, y[i])
        s[i] = si
        psi += term
        grad[i] = ax[i] - si + isig * (w[i] - y[i])
    return psi


@njit(cache=True)
def psi_on_line(alpha, v, gd, xbar, lv, uv, tau, w, d, sbar, lc, uc, tau_s, y, sigma):
    """Psi(w + alpha d) without touching the matrix: A'(w + alpha d) - c = v + alpha gd (the line search's
    shorter trials, ``solver.lp.alm_newton``).

    Args:
        alpha: the step. v = A'w - c (n,) (:func:`dual_eval`'s output), gd = A'd (n,),
        w, d (m,): the point and the direction; the rest as :func:`dual_eval`.
    Returns:
        Psi(w + alpha d) (float), the same sums in the same order as :func:`dual_on_line` (O(n + m) work).
    """
    psi = 0.0
    h = 0.5 / tau
    for j in range(v.shape[0]):
        v_j = v[j] + alpha * gd[j]
        xj = _project(xbar[j] + tau * v_j, lv[j], uv[j])[0]
        dx = xj - xbar[j]
        psi += v_j * xj - h * dx * dx
    hs = 0.5 / tau_s
    isig = 1.0 / sigma
    for i in range(w.shape[0]):
        psi += _row_term(w[i] + alpha * d[i], sbar[i], lc[i], uc[i], tau_s, hs, isig, y[i])[2]
    return psi


@njit(cache=True)
def _interior_interval(z0, rate, lo, hi):
    """The (t1, t2) of alpha over which z0 + alpha rate lies strictly inside (lo, hi) (lo < hi, rate != 0)."""
    a = (lo - z0) / rate
    b = (hi - z0) / rate
    if rate > 0.0:
        return a, b
    return b, a


@njit(cache=True)
def line_root(v, gd, xbar, lv, uv, tau, w, d, sbar, lc, uc, tau_s, sigma, slope):
    """The minimiser over alpha in (0, 1) of phi(alpha) = Psi(w + alpha d), exactly, without touching the matrix
    (``solver.lp.alm_newton.line_minimum``: the first trial of a cut Newton step).

    phi is convex and once differentiable; phi' is continuous and piecewise linear: a column j adds tau gd_j^2 to
    its slope while xbar_j + tau (v_j + alpha gd_j) is strictly inside (lv_j, uv_j), a row i adds tau_s d_i^2 while
    sbar_i - tau_s (w_i + alpha d_i) is strictly inside (lc_i, uc_i), and ||d||^2 / sigma is always there. One pass
    collects where in (0, 1) those intervals start and end, a sort orders them, and a walk from phi'(0) = ``slope``
    finds where phi' crosses 0 (the breakpoint search for a piecewise-linear equation, as in the continuous
    quadratic knapsack; Helgason, Kennington & Lall, Math. Program. 18, 1980).

    Args: as :func:`psi_on_line` (v = A'w - c (n,), gd = A'd (n,), w, d (m,)), without y: the slope at 0 carries
        it; slope: phi'(0) = grad' d < 0.
    Returns:
        alpha in (0, 1) with phi'(alpha) = 0 (up to round-off), or -1.0 when phi' stays <= 0 on all of (0, 1)
        (the unit step is then phi's minimiser on [0, 1]). O(n + m + k log k) work, k breakpoints in (0, 1).
    """
    n = v.shape[0]
    m = w.shape[0]
    h = 0.0
    for i in range(m):
        h += d[i] * d[i]
    h /= sigma
    at = np.empty(0)
    dh = np.empty(0)
    k = 0
    for fill in range(2):  # 0: count the breakpoints in (0, 1) and sum the curvature just right of 0; 1: store them
        if fill:
            at = np.empty(k)
            dh = np.empty(k)
            k = 0
        for e in range(n + m):  # the columns, then the rows
            if e < n:
                z0, rate, lo, hi, c = xbar[e] + tau * v[e], tau * gd[e], lv[e], uv[e], tau * gd[e] * gd[e]
            else:
                i = e - n
                z0, rate, lo, hi, c = sbar[i] - tau_s * w[i], -tau_s * d[i], lc[i], uc[i], tau_s * d[i] * d[i]
            if rate == 0.0 or not lo < hi:
                continue
            t1, t2 = _interior_interval(z0, rate, lo, hi)
            if not fill:
                if t1 <= 0.0 < t2:
                    h += c
                k += (0.0 < t1 < 1.0) + (0.0 < t2 < 1.0)
                continue
            if 0.0 < t1 < 1.0:
                at[k] = t1
                dh[k] = c
                k += 1
            if 0.0 < t2 < 1.0:
                at[k] = t2
                dh[k] = -c
                k += 1
    order = np.argsort(at)
    a = 0.0
    g = slope
    for q in range(k):
        b = at[order[q]]
        g_b = g + h * (b - a)
        if g_b >= 0.0:
            return a - g / h
        a = b
        g = g_b
        h += dh[order[q]]
    root = a - g / h
    return root if root < 1.0 else -1.0


@njit(cache=True)
def dual_on_line(cp, ci, cv, alpha, v, gd, w, d, xbar, lv, uv, tau, sbar, lc, uc, tau_s, y, sigma,
                 w2, v2, x, s, ax, grad, col_active, row_active):
    """:func:`dual_eval` at w2 = w + alpha d from v = A'w - c and gd = A'd: no gather pass, one scatter
    pass (A x) over the columns with x != 0 (the accepted step of the line search).

    Outputs (overwritten): w2 (m,), v2 = v + alpha gd (n,) and :func:`dual_eval`'s x, s, ax, grad,
    col_active, row_active at w2. Returns Psi(w2), equal to :func:`psi_on_line` (alpha, ...).
    """
    m = w.shape[0]
    for i in range(m):
        ax[i] = 0.0
    psi = 0.0
    h = 0.5 / tau
    for j in range(v.shape[0]):
        v_j = v[j] + alpha * gd[j]
        v2[j] = v_j
        psi += _column(j, v_j, cp, ci, cv, xbar, lv, uv, tau, h, x, ax, col_active)
    hs = 0.5 / tau_s
    isig = 1.0 / sigma
    for i in range(m):
        wi = w[i] + alpha * d[i]
        w2[i] = wi
        si, row_active[i], term = _row_term(wi, sbar[i], lc[i], uc[i], tau_s, hs, isig, y[i])
        s[i] = si
        psi += term
        grad[i] = ax[i] - si + isig * (wi - y[i])
    return psi


@njit(cache=True)
def primal_screen(ax, d1, theta_b, lo, hi, floor):
    """The primal measures of ``solver.lp.original_kkt`` on the rows of a scaled activity, without a matrix pass.

    Args:
        ax (m,): A~ x~ of the scaled matrix A~ = D1 A D2 (``solver.lp.scaling.ScaledLP``); the original activity
            of row i is ax_i / (d1_i theta_b). d1 (m,): the row factors; theta_b > 0: the bound scalar.
        lo, hi (m,): the rows' original bounds. floor (m,): max(1, max_j |a_ij|) of each original row.
    Returns:
        (sum of the squared violations in original units, the worst row's relative violation
        viol_i / max(floor_i, |b_i|)): ``original_kkt``'s sums over these rows (its ``pres2``, its
        ``row_violation_rel``), up to round-off. A nan activity counts as no violation (the full test sees it).
    """
    pres2 = 0.0
    worst = 0.0
    for i in range(ax.shape[0]):
        v = bound_violation(ax[i] / (d1[i] * theta_b), lo[i], hi[i])  # original_kkt's own measure of a row
        if v == 0.0:
            continue
        pres2 += v * v
        rel = abs(v) / max(floor[i], abs(lo[i] if v < 0.0 else hi[i]))
        if rel > worst:
            worst = rel
    return pres2, worst


@njit(cache=True)
def active_columns(col_active):
    """(k,) int64 indices of the columns with ``col_active`` set, in increasing order."""
    k = 0
    for j in range(col_active.shape[0]):
        k += col_active[j]
    out = np.empty(k, dtype=np.int64)
    k = 0
    for j in range(col_active.shape[0]):
        if col_active[j]:
            out[k] = j
            k += 1
    return out


@njit(cache=True)
def hessian_diagonal(cp, ci, cv, cols, tau, row_active, tau_s, sigma, diag, prec):
    """diag = tau_s [row active] + 1/sigma (m,), prec = diag + tau * sum_{j in cols} a_ij^2 (m,):
    the diagonal part of the generalised Hessian and its Jacobi preconditioner."""
    m = diag.shape[0]
    isig = 1.0 / sigma
    for i in range(m):
        diag[i] = tau_s * row_active[i] + isig
        prec[i] = diag[i]
    for k in range(cols.shape[0]):
        j = cols[k]
        for p in range(cp[j], cp[j + 1]):
            prec[ci[p]] += tau * cv[p] * cv[p]


@njit(cache=True)
def hessian_vector(cp, ci, cv, cols, tau, diag, v, out):
    """out = tau A_J (A_J' v) + diag * v (m,): the generalised Hessian times v, one pass over the
    active columns ``cols`` (gather A_J' v per column, scatter it back)."""
    m = v.shape[0]
    for i in range(m):
        out[i] = diag[i] * v[i]
    for k in range(cols.shape[0]):
        j = cols[k]
        t = 0.0
        for p in range(cp[j], cp[j + 1]):
            t += cv[p] * v[ci[p]]
        t *= tau
        if t != 0.0:
            for p in range(cp[j], cp[j + 1]):
                out[ci[p]] += cv[p] * t


@njit(cache=True)
def pcg(cp, ci, cv, cols, tau, diag, prec, rhs, rel_tol, max_iter, d, r, z, q, pdir):
    """Jacobi-preconditioned conjugate gradients on (tau A_J A_J' + diag) d = rhs, from d = 0.

    Stops when ||r||_2 <= rel_tol ||rhs||_2 or after ``max_iter`` iterations. d, r, z, q, pdir (m,)
    are work arrays (d holds the answer). Returns the number of iterations taken.
    """
    m = rhs.shape[0]
    rz = 0.0
    rn2 = 0.0
    for i in range(m):
        d[i] = 0.0
        r[i] = rhs[i]
        z[i] = r[i] / prec[i]
        pdir[i] = z[i]
        rz += r[i] * z[i]
        rn2 += r[i] * r[i]
    stop2 = rel_tol * rel_tol * rn2
    it = 0
    while it < max_iter and rn2 > stop2 and rz > 0.0:
        hessian_vector(cp, ci, cv, cols, tau, diag, pdir, q)
        pq = 0.0
        for i in range(m):
            pq += pdir[i] * q[i]
        if not (pq > 0.0):
            break
        alpha = rz / pq
        rz_new = 0.0
        rn2 = 0.0
        for i in range(m):
            d[i] += alpha * pdir[i]
            r[i] -= alpha * q[i]
            z[i] = r[i] / prec[i]
            rz_new += r[i] * z[i]
            rn2 += r[i] * r[i]
        beta = rz_new / rz
        rz = rz_new
        for i in range(m):
            pdir[i] = z[i] + beta * pdir[i]
        it += 1
    return it


@njit(cache=True)
def dot(a, b):
    """a'b of two (k,) vectors, serially (numpy's BLAS dot spawns threads that stall on a busy machine:
    measured 15 ms for a 39k-vector norm with the other core loaded)."""
    t = 0.0
    for i in range(a.shape[0]):
        t += a[i] * b[i]
    return t


@njit(cache=True)
def diff_norm(a, b):
    """||a - b||_2 of two (k,) vectors without a temporary."""
    t = 0.0
    for i in range(a.shape[0]):
        d = a[i] - b[i]
        t += d * d
    return np.sqrt(t)


@njit(cache=True)
def csc_matvec(cp, ci, cv, x, out):
    """out = A x (m,) for the CSC arrays of A and x (n,)."""
    for i in range(out.shape[0]):
        out[i] = 0.0
    for j in range(cp.shape[0] - 1):
        xj = x[j]
        if xj != 0.0:
            for p in range(cp[j], cp[j + 1]):
                out[ci[p]] += cv[p] * xj
