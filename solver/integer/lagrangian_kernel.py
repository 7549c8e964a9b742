"""numba kernel of the choice-row Lagrangian (``bound.ChoiceLagrangian``): the inner problem in one pass.

The dual ascent (``ascent.py``) evaluates the Lagrangian a few dozen times per relaxation stage; with numpy
each evaluation was 13 ms on Sia 10,240 (231,000 columns: A'y, a noise bound with |A|'|y|, a segmented
minimum, A x, each a pass of its own). This kernel does the column pass (reduced costs and their noise
bound), the per-row choice and the activity of the minimiser together. Its plain-numpy twin is
``ChoiceLagrangian.evaluate_ref``, which the tests compare with it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver import kernel_cache

kernel_cache.install()  # cached kernels load without numba's compiler set-up (solver/kernel_cache.py)

NOISE = 64 * np.finfo(np.float64).eps  #: reduced costs within NOISE * (|c| + |A|'|y|) of 0 count as 0


@njit(cache=True)
def choice_inner(cp, ci, cv, c, ym, lower, upper, other, free_ptr, free_mem, forced_col, eq1, z, x, act):
    """Inner minimum of the choice-row Lagrangian (minimisation form, row term excluded).

    Args (n columns, m rows, k kept choice rows):
        cp, ci, cv: CSC of A ((n+1,), (nnz,), (nnz,)).
        c: (n,) minimisation-form cost; ym: (m,) minimisation-form duals, 0 on the kept choice rows.
        lower, upper: (n,) column bounds (integer bounds rounded inward).
        other: (n,) bool, columns outside the kept choice rows (their box decides them).
        free_ptr: (k+1,) int64 segment starts into ``free_mem`` ((f,) int64), the members of each kept row
            that may be 0 or 1; forced_col: (k,) int64, the member fixed at 1 or -1; eq1: (k,) bool.
        z, x: (n,) outputs, the reduced costs (noise set to 0) and the inner minimiser.
        act: (m,) output, A x.
    Returns:
        (value, mag, ok): sum over columns of z_j x_j; the scale of its rounding error (sum of
        (|c_j| + |A|'|y|_j) |x_j|, with max(|l_j|, |u_j|) for a z_j set to 0 as noise; see
        ``bound._col_mag``); False when some z_j needs an infinite bound or is not finite (the caller then
        uses the numpy path, which tries bounds implied by the rows or reports no bound).
    """
    n = cp.shape[0] - 1
    value = 0.0
    mag = 0.0
    ok = True
    for j in range(n):
        s = 0.0
        t = 0.0
        for p in range(cp[j], cp[j + 1]):
            v = cv[p] * ym[ci[p]]
            s += v
            t += abs(cv[p]) * abs(ym[ci[p]])
        zj = c[j] - s
        zm = abs(c[j]) + t
        if abs(zj) <= NOISE * zm:
            zj = 0.0
        if not np.isfinite(zj):
            ok = False
        z[j] = zj
        xj = 0.0
        if other[j]:
            if zj > 0.0:
                xj = lower[j]
            elif zj < 0.0:
                xj = upper[j]
            else:
                xj = min(max(0.0, lower[j]), upper[j])
            if zj != 0.0:
                if not np.isfinite(xj):
                    ok = False
                else:
                    value += zj * xj
                    mag += zm * abs(xj)
            else:
                b = 0.0
                if np.isfinite(lower[j]):
                    b = abs(lower[j])
                if np.isfinite(upper[j]) and abs(upper[j]) > b:
                    b = abs(upper[j])
                mag += zm * b
        x[j] = xj
    for r in range(forced_col.shape[0]):
        f = forced_col[r]
        if f >= 0:
            value += z[f]
            mag += _zmag(cp, ci, cv, c, ym, f)
            x[f] = 1.0
            continue
        best = np.inf
        arg = -1
        for q in range(free_ptr[r], free_ptr[r + 1]):
            j = free_mem[q]
            if z[j] < best:
                best = z[j]
                arg = j
        if arg < 0 or (not eq1[r] and best >= 0.0):
            continue  # "at most one": none is best
        value += best
        mag += _zmag(cp, ci, cv, c, ym, arg)
        x[arg] = 1.0
    act[:] = 0.0
    for j in range(n):
        xj = x[j]
        if xj != 0.0 and np.isfinite(xj):
            for p in range(cp[j], cp[j + 1]):
                act[ci[p]] += cv[p] * xj
    return value, mag, ok


@njit(cache=True)
def _zmag(cp, ci, cv, c, ym, j):
    """|c_j| + sum_i |a_ij| |y_i| (the scale of z_j's rounding error), for one column."""
    t = abs(c[j])
    for p in range(cp[j], cp[j + 1]):
        t += abs(cv[p]) * abs(ym[ci[p]])
    return t
