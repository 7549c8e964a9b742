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


def column_terms_ref(cp, ci, cv, is_shared, y_shared_cols, r_base, lo, up, r_out):
    """Twin of :func:`solver.partition.bound_kernels.column_terms` (``r_out`` filled the same way)."""
    n = cp.shape[0] - 1
    nnz_col = np.repeat(np.arange(n, dtype=np.int64), np.diff(cp))
    sel = is_shared[ci].astype(bool)
    ys = y_shared_cols[ci[sel]]  # (nnz_sh, k)
    r = r_base[:, None] - np.stack([np.bincount(nnz_col[sel], weights=cv[sel] * ys[:, c], minlength=n)
                                    for c in range(y_shared_cols.shape[1])], axis=1)  # (n, k)
    if r_out.shape[0] == n:
        r_out[:] = r
    pos, neg = r > 0, r < 0
    unbounded = (pos & ~np.isfinite(lo)[:, None]).any(axis=0) | (neg & ~np.isfinite(up)[:, None]).any(axis=0)
    lo_f = np.where(np.isfinite(lo), lo, 0.0)[:, None]  # an unbounded candidate's sum is replaced by 0 below
    up_f = np.where(np.isfinite(up), up, 0.0)[:, None]
    totals = (np.where(pos, r * np.where(pos, lo_f, 0.0), 0.0).sum(axis=0)
              + np.where(neg, r * np.where(neg, up_f, 0.0), 0.0).sum(axis=0))
    return np.where(unbounded, 0.0, totals), unbounded


def base_and_column_terms_ref(cp, ci, cv, c, y_base, is_shared, y_shared_cols, lo, up, r_base_out, r_out):
    """numpy twin of :func:`solver.partition.bound_kernels.base_and_column_terms`: the two twins in turn."""
    reduced_costs_ref(cp, ci, cv, c, y_base, r_base_out)
    return column_terms_ref(cp, ci, cv, is_shared, y_shared_cols, r_base_out, lo, up, r_out)


def assignment_duals_ref(rp, rc, coef, rows, r0, lo, up, rl, ru, y):
    """Twin of :func:`solver.partition.bound_kernels.assignment_duals`: every row's interval, first slope and
    sorted breakpoints at once (a lexsort by row and breakpoint, a cumulative sum of the slope changes)."""
    rows = np.asarray(rows, dtype=np.int64)
    ka = rows.size
    counts = rp[rows + 1] - rp[rows]
    owner = np.repeat(np.arange(ka), counts)  # entry -> position of its row in ``rows``
    first = np.cumsum(counts) - counts
    q = rp[rows][owner] + np.arange(owner.size) - first[owner]
    j = rc[q].astype(np.int64)
    a = coef[j]
    owner, j, a = owner[a != 0], j[a != 0], a[a != 0]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        t = r0[j] / a
        sl = np.where(a > 0, -a * lo[j], -a * up[j])
        sr = np.where(a > 0, -a * up[j], -a * lo[j])
    bad = np.bincount(owner, weights=~np.isfinite(t), minlength=ka) > 0
    t = np.where(np.isfinite(t), t, 0.0)
    rl_r, ru_r = rl[rows], ru[rows]
    lo_t = np.where(np.isfinite(ru_r), -np.inf, 0.0)
    hi_t = np.where(np.isfinite(rl_r), np.inf, 0.0)
    np.maximum.at(lo_t, owner[sl == np.inf], t[sl == np.inf])
    np.minimum.at(hi_t, owner[sr == -np.inf], t[sr == -np.inf])
    out = np.full(ka, np.nan)
    point = ~bad & (lo_t == hi_t)
    out[point] = lo_t[point]
    open_ = ~bad & (lo_t < hi_t)
    left = t <= lo_t[owner]
    col_slope = np.where(left, sr, sl)
    col_slope = np.where(open_[owner], col_slope, 0.0)  # rows not walked may hold infinite slopes
    slope0 = np.where(lo_t >= 0, rl_r, ru_r) + np.bincount(owner, weights=col_slope, minlength=ka)
    # breakpoints inside (lo_t, hi_t): the columns' and the row's own at 0
    inside = open_[owner] & ~left & (t < hi_t[owner])
    with np.errstate(invalid="ignore"):
        d_col = sr - sl
    row_bp = open_ & (lo_t < 0) & (hi_t > 0)
    ev_row = np.concatenate([owner[inside], np.flatnonzero(row_bp)])
    ev_t = np.concatenate([t[inside], np.zeros(int(row_bp.sum()))])
    ev_d = np.concatenate([d_col[inside], (rl_r - ru_r)[row_bp]])
    order = np.lexsort((ev_t, ev_row))
    ev_row, ev_t, ev_d = ev_row[order], ev_t[order], ev_d[order]
    after = slope0[ev_row] + _segment_cumsum(ev_d, ev_row)  # slope right of each breakpoint
    stops = np.flatnonzero(after <= 0)
    big = ev_row.size
    first_stop = np.full(ka, big)
    np.minimum.at(first_stop, ev_row[stops], stops)  # each row's earliest breakpoint with a slope <= 0 after it
    first_ev = np.full(ka, big)
    np.minimum.at(first_ev, ev_row, np.arange(big))
    t_ext = np.r_[ev_t, np.nan]  # index ``big``: no such breakpoint
    stop_t, ev0_t = t_ext[first_stop], t_ext[first_ev]
    finite_lo = np.isfinite(lo_t)
    hi_or_nan = np.where(np.isfinite(hi_t), hi_t, np.nan)
    for_open = np.where(
        slope0 < 0, np.where(finite_lo, lo_t, np.nan),  # decreasing from the left end
        np.where((slope0 == 0) & finite_lo, lo_t,
                 np.where((slope0 == 0) & (first_ev < big), ev0_t,  # flat from -inf: the first breakpoint
                          np.where(first_stop < big, stop_t, hi_or_nan))))
    out[open_] = for_open[open_]
    out = _inside_ref(out, owner, a, r0[j], lo[j], up[j], ka)
    y_new = y.copy()
    ok = np.isfinite(out)
    y_new[rows[ok]] = out[ok]
    return y_new, int(ok.sum())


def _inside_ref(t, owner, a, r0, lo, up, ka):
    """Twin of :func:`solver.partition.bound_kernels._inside` for every row's (ka,) maximiser ``t`` at once, from
    the rows' entries (owner, a, and the columns' r0, lo, up)."""
    from solver.partition.bound_kernels import NUDGES

    t = t.copy()
    for _ in range(NUDGES + 1):
        with np.errstate(invalid="ignore"):
            r = r0 - a * t[owner]
        wrong = ((r > 0) & (lo == -np.inf)) | ((r < 0) & (up == np.inf))
        rises = (r > 0) == (a > 0)
        up_needed = np.bincount(owner[wrong & rises], minlength=ka) > 0
        down_needed = np.bincount(owner[wrong & ~rises], minlength=ka) > 0
        t[up_needed & down_needed] = np.nan
        move = up_needed ^ down_needed
        if not move.any():
            return t
        t[move] = np.nextafter(t[move], np.where(up_needed[move], np.inf, -np.inf))
    still = np.zeros(ka, dtype=bool)
    with np.errstate(invalid="ignore"):
        r = r0 - a * t[owner]
    still[owner[((r > 0) & (lo == -np.inf)) | ((r < 0) & (up == np.inf))]] = True
    t[still] = np.nan
    return t


def _segment_cumsum(values, segment):
    """Cumulative sums of (k,) ``values`` restarting at each change of the sorted (k,) ``segment``."""
    c = np.cumsum(values)
    if values.size == 0:
        return c
    starts = np.flatnonzero(np.r_[True, segment[1:] != segment[:-1]])
    base = np.repeat(c[starts] - values[starts], np.diff(np.r_[starts, values.size]))
    return c - base


def min_form_ref(y, sense, rl, ru, out):
    """Twin of :func:`solver.partition.bound_kernels.min_form`."""
    v = sense * np.nan_to_num(np.asarray(y, dtype=np.float64))
    out[:] = np.where(v > 0, np.where(np.isfinite(rl), v, 0.0), np.where(np.isfinite(ru), v, 0.0))
    return out


def row_term_ref(y, rl, ru):
    """Twin of :func:`solver.partition.bound_kernels.row_term`."""
    pos = np.where(y > 0, y * np.where(np.isfinite(rl), rl, 0.0), 0.0)
    neg = np.where(y < 0, y * np.where(np.isfinite(ru), ru, 0.0), 0.0)
    return float(pos.sum() + neg.sum())


def without_assignment_entries_ref(r_full, row_of_col, coef, y, out):
    """Twin of :func:`solver.partition.bound_kernels.without_assignment_entries`."""
    has = row_of_col >= 0
    out[:] = r_full + np.where(has, coef * y[np.where(has, row_of_col, 0)], 0.0)
    return out
