"""Plain-numpy twins of ``solver.partition.bound_kernels`` (same arguments and results), compared by the tests:
the numpy formulation ``solver.partition.bound`` used before the kernels (session 21)."""

from __future__ import annotations

import numpy as np


def implied_upper_ref(cp, ci, cv, lo, up, ru, m):
    """Twin of :func:`solver.partition.bound_kernels.implied_upper`."""
    n = cp.shape[0] - 1
    nnz_col = np.repeat(np.arange(n, dtype=np.int64), np.diff(cp))
    rows, a = ci, cv
    lo_e = lo[nnz_col]
    bad = (a < 0) | (lo_e < 0) | ~np.isfinite(lo_e)
    row_bad = np.bincount(rows[bad], minlength=m) > 0
    min_act = np.bincount(rows, weights=a * np.where(np.isfinite(lo_e), lo_e, 0.0), minlength=m)
    usable = ~row_bad & np.isfinite(ru)
    sel = usable[rows] & (a > 0)
    cand = np.full(rows.size, np.inf)
    cand[sel] = lo[nnz_col[sel]] + (ru[rows[sel]] - min_act[rows[sel]]) / a[sel]
    out = up.copy()
    nonempty = np.diff(cp) > 0
    if rows.size:  # CSC: a column's nonzeros are contiguous, so a segmented minimum
        seg = np.minimum.reduceat(cand, cp[:-1][nonempty])
        out[nonempty] = np.minimum(out[nonempty], seg)
    return np.maximum(out, lo)


def reduced_costs_ref(cp, ci, cv, c, y, out):
    """Twin of :func:`solver.partition.bound_kernels.reduced_costs`."""
    nnz_col = np.repeat(np.arange(cp.shape[0] - 1, dtype=np.int64), np.diff(cp))
    out[:] = c - np.bincount(nnz_col, weights=cv * y[ci], minlength=cp.shape[0] - 1)


def column_term_ref(cp, ci, cv, is_shared, y_shared_full, r_base, lo, up):
    """Twin of :func:`solver.partition.bound_kernels.column_term`."""
    n = cp.shape[0] - 1
    nnz_col = np.repeat(np.arange(n, dtype=np.int64), np.diff(cp))
    sel = is_shared[ci].astype(bool)
    r = r_base - np.bincount(nnz_col[sel], weights=cv[sel] * y_shared_full[ci[sel]], minlength=n)
    pos, neg = r > 0, r < 0
    if (pos & ~np.isfinite(lo)).any() or (neg & ~np.isfinite(up)).any():
        return 0.0, True
    return float(np.where(pos, r * np.where(pos, lo, 0.0), 0.0).sum()
                 + np.where(neg, r * np.where(neg, up, 0.0), 0.0).sum()), False


def column_terms_ref(cp, ci, cv, is_shared, y_shared_cols, r_base, lo, up):
    """Twin of :func:`solver.partition.bound_kernels.column_terms`."""
    n = cp.shape[0] - 1
    nnz_col = np.repeat(np.arange(n, dtype=np.int64), np.diff(cp))
    sel = is_shared[ci].astype(bool)
    ys = y_shared_cols[ci[sel]]  # (nnz_sh, k)
    r = r_base[:, None] - np.stack([np.bincount(nnz_col[sel], weights=cv[sel] * ys[:, c], minlength=n)
                                    for c in range(y_shared_cols.shape[1])], axis=1)  # (n, k)
    pos, neg = r > 0, r < 0
    unbounded = (pos & ~np.isfinite(lo)[:, None]).any(axis=0) | (neg & ~np.isfinite(up)[:, None]).any(axis=0)
    lo_f = np.where(np.isfinite(lo), lo, 0.0)[:, None]  # an unbounded candidate's sum is replaced by 0 below
    up_f = np.where(np.isfinite(up), up, 0.0)[:, None]
    totals = (np.where(pos, r * np.where(pos, lo_f, 0.0), 0.0).sum(axis=0)
              + np.where(neg, r * np.where(neg, up_f, 0.0), 0.0).sum(axis=0))
    return np.where(unbounded, 0.0, totals), unbounded
