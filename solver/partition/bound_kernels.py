"""numba kernels of ``solver.partition.bound`` (the safe Lagrangian bound of a partitioned round's merged duals).

Each is one pass over the CSC matrix (the implied upper bounds: two), without the nnz-sized temporaries of
the numpy formulation, which took 4.1 s (setup) plus 0.2 s per candidate on TE Kdl (30.9M nonzeros) and was
the largest piece of a partitioned warm round's merge there once the parts' ALM rounds took 6 s (session 21).
Plain-numpy twins: ``solver.partition.bound_ref``, compared by ``tests/test_partition_bound_kernels.py``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver import kernel_cache

kernel_cache.install()  # cached kernels load without numba's compiler set-up (solver/kernel_cache.py)


@njit(cache=True, nogil=True)  # nogil: a partitioned LP round runs it in a thread while its parts run
def implied_upper(cp, ci, cv, lo, up, ru, m):
    """(n,) column upper bounds tightened by the rows that imply one (``solver.partition.bound``'s docstring):
    a row whose entries are all >= 0 on columns with finite lower bounds >= 0 and whose upper bound ru_i is
    finite bounds each column j it holds with a_ij > 0 by lo_j + (ru_i - sum_k a_ik lo_k) / a_ij; the result
    is max(min(up_j, those), lo_j).

    Args: cp (n+1,), ci (nnz,), cv (nnz,): CSC of A (m x n); lo, up (n,); ru (m,); m: rows.
    """
    n = cp.shape[0] - 1
    bad = np.zeros(m, dtype=np.uint8)
    min_act = np.zeros(m)
    for j in range(n):
        lj = lo[j]
        fin = np.isfinite(lj)
        for p in range(cp[j], cp[j + 1]):
            i = ci[p]
            a = cv[p]
            if a < 0.0 or not fin or lj < 0.0:
                bad[i] = 1
            if fin:
                min_act[i] += a * lj
    out = up.copy()
    for j in range(n):
        best = out[j]
        for p in range(cp[j], cp[j + 1]):
            i = ci[p]
            a = cv[p]
            if a > 0.0 and bad[i] == 0 and np.isfinite(ru[i]):
                v = lo[j] + (ru[i] - min_act[i]) / a
                if v < best:
                    best = v
        out[j] = best if best > lo[j] else lo[j]
    return out


_FLOAT_MAX = np.finfo(np.float64).max


@njit(cache=True, nogil=True)
def min_form(y, sense, rl, ru, out):
    """out (m,) = ``sense`` x y (m,) in minimisation form, NaN read as 0 and +-inf as +-the largest float (what
    ``numpy.nan_to_num`` does), projected on the signs the row bounds rl, ru (m,) allow: out_i > 0 only where rl_i
    is finite, out_i < 0 only where ru_i is (else 0). One pass; ``out`` may be ``y``. Twin: ``bound_ref.min_form_ref``
    (``solver.partition.bound``'s numpy formulation before session 48: 5-18 ms a call on TE Kdl's 570k rows, several
    calls a merge)."""
    inf = np.inf
    for i in range(y.shape[0]):
        v = y[i]
        if v != v:
            v = 0.0
        elif v == inf:
            v = _FLOAT_MAX
        elif v == -inf:
            v = -_FLOAT_MAX
        v = sense * v
        if v > 0.0:
            out[i] = v if -inf < rl[i] < inf else 0.0
        else:
            out[i] = v if -inf < ru[i] < inf else 0.0
    return out


@njit(cache=True, nogil=True)
def row_term(y, rl, ru):
    """The rows' part of L(y): sum_i rl_i y_i over y_i > 0 plus ru_i y_i over y_i < 0 for minimisation-form duals y
    (m,), an infinite bound read as 0 (``min_form`` leaves no dual on one). One pass, summed in row order. Twin:
    ``bound_ref.row_term_ref`` (equal to rounding: numpy sums pairwise)."""
    inf = np.inf
    total = 0.0
    for i in range(y.shape[0]):
        v = y[i]
        if v > 0.0:
            if -inf < rl[i] < inf:
                total += v * rl[i]
        elif v < 0.0:
            if -inf < ru[i] < inf:
                total += v * ru[i]
    return total


@njit(cache=True, nogil=True)
def without_assignment_entries(r_full, row_of_col, coef, y, out):
    """out (n,) = r_full + a_ij y_i for each column j's entry on its assignment row i = row_of_col[j] (coef[j] =
    a_ij; -1: none, r_full[j] kept): the reduced costs c - A'y without the assignment rows' terms, from those with
    them (``solver.partition.bound.assignment_step``). One pass over the columns. Twin:
    ``bound_ref.without_assignment_entries_ref``."""
    for j in range(r_full.shape[0]):
        i = row_of_col[j]
        out[j] = r_full[j] + coef[j] * y[i] if i >= 0 else r_full[j] + 0.0
    return out


@njit(cache=True)
def reduced_costs(cp, ci, cv, c, y, out):
    """out = c - A'y (n,), one pass."""
    for j in range(cp.shape[0] - 1):
        t = c[j]
        for p in range(cp[j], cp[j + 1]):
            t -= cv[p] * y[ci[p]]
        out[j] = t


@njit(cache=True, nogil=True)
def _add_column(total, unbounded, r, lj, uj):
    """(total, unbounded) after column j's term min(r l_j, r u_j) of L, r its reduced cost: r times the bound its
    sign needs added (nothing for r = 0), or unbounded when that bound is infinite (the term is -inf)."""
    if r > 0.0:
        if not np.isfinite(lj):
            return total, True
        return total + r * lj, unbounded
    if r < 0.0:
        if not np.isfinite(uj):
            return total, True
        return total + r * uj, unbounded
    return total, unbounded


@njit(cache=True)
def column_term(cp, ci, cv, is_shared, y_shared_full, r_base, lo, up):
    """The columns' part of L(y) for duals that differ from the base only on the shared rows, one pass.

    With r = r_base - A_sh' y (only the entries on rows with ``is_shared`` set), returns (sum_j min(r_j lo_j,
    r_j up_j) over the columns with r_j != 0, unbounded): ``unbounded`` is True when a column with r_j > 0 has
    lo_j = -inf or one with r_j < 0 has up_j = +inf (L(y) = -inf; the sum is then meaningless).

    Args: cp, ci, cv: CSC of A; is_shared (m,) uint8; y_shared_full (m,) duals (read on shared rows only);
        r_base, lo, up (n,).
    """
    total = 0.0
    unbounded = False
    for j in range(cp.shape[0] - 1):
        r = r_base[j]
        for p in range(cp[j], cp[j + 1]):
            i = ci[p]
            if is_shared[i]:
                r -= cv[p] * y_shared_full[i]
        total, unbounded = _add_column(total, unbounded, r, lo[j], up[j])
    return total, unbounded


@njit(cache=True, nogil=True)
def column_terms(cp, ci, cv, is_shared, y_shared_cols, r_base, lo, up, r_out):
    """:func:`column_term` for k candidate duals in one pass over the matrix (``solver.partition.bound``'s
    ``best_bound`` evaluates its candidates together).

    Candidate c's results are bitwise those of ``column_term`` called with ``y_shared_cols[:, c]`` alone: its
    r_j starts at r_base[j] and subtracts the shared entries in the same order, and its sum runs over the
    columns in the same order.

    Args: cp, ci, cv: CSC of A; is_shared (m,) uint8; y_shared_cols (m, k) C-contiguous duals, candidate c in
        column c (read on shared rows only); r_base, lo, up (n,); r_out (n, k) float64, filled with candidate c's
        reduced costs in column c (the assignment step starts from the best one's: one pass fewer), or (0, k):
        not kept.

    Returns: (totals (k,), unbounded (k,) bool), candidate c's ``column_term`` result in entry c.
    """
    return terms_range(cp, ci, cv, r_base, r_base, False, np.empty(0), is_shared, y_shared_cols, lo, up, r_out, 0,
                       cp.shape[0] - 1)


@njit(cache=True, nogil=True)  # nogil: ``solver.partition.bound`` runs column ranges of a large model in threads
def terms_range(cp, ci, cv, base, y_base, fill_base, r_base_out, is_shared, y_shared_cols, lo, up, r_out, j0, j1):
    """:func:`column_terms` (``fill_base`` False: ``base`` is r_base, read; y_base, r_base_out unused) or
    :func:`base_and_column_terms` (True: ``base`` is c, and r_base_out[j] = c_j - A_j' y_base is written first) over
    the columns j0 <= j < j1 only: their entries of ``r_base_out`` and ``r_out`` are written (each column's values
    do not depend on the range), and the returned (totals (k,), unbounded (k,) bool) are those columns' sums."""
    k = y_shared_cols.shape[1]
    totals = np.zeros(k)
    unbounded = np.zeros(k, dtype=np.bool_)
    r = np.empty(k)
    keep = r_out.shape[0] == cp.shape[0] - 1
    for j in range(j0, j1):
        rb = base[j]
        if fill_base:
            for p in range(cp[j], cp[j + 1]):
                rb -= cv[p] * y_base[ci[p]]
            r_base_out[j] = rb
        _candidate_terms(j, rb, cp, ci, cv, is_shared, y_shared_cols, lo, up, r, keep, r_out, totals, unbounded)
    return totals, unbounded


@njit(cache=True, nogil=True)
def _candidate_terms(j, rb, cp, ci, cv, is_shared, y_shared_cols, lo, up, r, keep, r_out, totals, unbounded):
    """Column j's part of :func:`column_terms` from its base reduced cost ``rb``: each candidate's r_j (rb minus the
    shared entries times the candidate's duals, in entry order), kept in ``r_out[j]`` when ``keep``, and its term
    added to ``totals`` / ``unbounded`` (k,)."""
    k = r.shape[0]
    for c in range(k):
        r[c] = rb
    for p in range(cp[j], cp[j + 1]):
        i = ci[p]
        if is_shared[i]:
            a = cv[p]
            for c in range(k):
                r[c] -= a * y_shared_cols[i, c]
    if keep:
        for c in range(k):
            r_out[j, c] = r[c]
    lj = lo[j]
    uj = up[j]
    for c in range(k):
        totals[c], unbounded[c] = _add_column(totals[c], unbounded[c], r[c], lj, uj)


@njit(cache=True, nogil=True)
def base_and_column_terms(cp, ci, cv, c, y_base, is_shared, y_shared_cols, lo, up, r_base_out, r_out):
    """:func:`reduced_costs` (``r_base_out`` = c - A' y_base) and :func:`column_terms` from it in one pass over the
    matrix instead of two: each column's nonzeros are read for its base reduced cost, then again, while they are in
    cache, for the candidates' shared entries. Bitwise the two kernels' results (the same operations in the same
    order). A TE Kdl partitioned merge (31M nonzeros): one matrix pass, ~0.08 s, fewer.

    Args: as :func:`reduced_costs` (c, y_base (m,)) and :func:`column_terms` (is_shared ... r_out), r_base_out (n,)
        float64 filled. Returns: :func:`column_terms`' (totals (k,), unbounded (k,) bool).
    """
    return terms_range(cp, ci, cv, c, y_base, True, r_base_out, is_shared, y_shared_cols, lo, up, r_out, 0,
                       cp.shape[0] - 1)


@njit(cache=True, nogil=True)
def assignment_duals(rp, rc, coef, rows, r0, lo, up, rl, ru, y):
    """The exact maximiser of L(y) over each assignment row's dual, all other duals fixed (minimisation form;
    ``solver.partition.bound.assignment_step``).

    The rows have pairwise disjoint column supports, so L separates over them; for row i with columns J_i
    and t = y_i,

        g(t) = rl_i t^+ + ru_i t^- + sum_{j in J_i} min((r0_j - a_ij t) lo_j, (r0_j - a_ij t) up_j),

    concave piecewise linear. Column j's term has slope sl_j left of its breakpoint r0_j / a_ij and sr_j right
    of it (a_ij > 0: -a_ij lo_j, -a_ij up_j; a_ij < 0: -a_ij up_j, -a_ij lo_j); an infinite slope there
    (+inf left, -inf right) confines t to the other side, and so does an infinite row bound (rl_i = -inf:
    t <= 0, ru_i = +inf: t >= 0). From the left end of that interval, the slope is accumulated over the
    breakpoints in increasing order until it is <= 0: there g is maximal (the leftmost maximiser).

    Rows are left at ``y`` when the interval is empty, its maximum is not attained at a finite t (g unbounded
    above: the LP is infeasible; or the slope stays > 0 up to +inf: a bound of -inf elsewhere), or a
    breakpoint is not finite (a_ij tiny against r0_j). Columns with a_ij = 0 do not depend on t and are
    skipped. A maximiser on the breakpoint of a column unbounded on one side is moved by a few ulps
    (:func:`_inside`) so that the reduced cost r0_j - a_ij t, as L's evaluation computes it, has the sign
    that side needs (else L = -inf there); the row keeps its dual when that fails.

    Args:
        rp (m+1,) int64, rc (n1,) int32: the columns of each row in ``rows`` (CSR-style, as
            ``solver.lp.alm_schur.assignment_rows`` returns them); coef (n,): a_ij of column j in its row.
        rows (ka,) int64: the assignment rows. r0 (n,): c - A'y over all rows but the column's assignment row.
        lo, up (n,): column bounds (up: implied where col_upper is inf). rl, ru (m,): row bounds.
        y (m,): the current duals (minimisation form, projected on the signs the row bounds allow).

    Returns:
        (y_new (m,): ``y`` with each row of ``rows`` whose maximiser was found set to it, solved: the number of
        those rows).
    """
    y_new = y.copy()
    solved = assignment_duals_range(rp, rc, coef, rows, 0, rows.shape[0], r0, lo, up, rl, ru, y_new)
    return y_new, solved


@njit(cache=True, nogil=True)  # nogil: ``solver.partition.bound`` runs row ranges of a large model in threads
def assignment_duals_range(rp, rc, coef, rows, q0, q1, r0, lo, up, rl, ru, y_new):
    """:func:`assignment_duals` for the rows ``rows[q0:q1]`` only, written into ``y_new`` (m,) in place (it holds
    the current duals on entry; other rows are not touched, and each row's maximiser does not depend on the range).
    Returns the number of those rows whose maximiser was found."""
    width = 1
    for q in range(q0, q1):
        i = rows[q]
        width = max(width, rp[i + 1] - rp[i] + 1)
    bt = np.empty(width)  # breakpoints, their slope changes, and the slopes either side (one row at a time)
    bd = np.empty(width)
    bl = np.empty(width)
    br = np.empty(width)
    solved = 0
    for q in range(q0, q1):
        i = rows[q]
        t = _row_maximiser(rp[i], rp[i + 1], rc, coef, r0, lo, up, rl[i], ru[i], bt, bd, bl, br)
        if np.isfinite(t):
            t = _inside(t, rp[i], rp[i + 1], rc, coef, r0, lo, up)
        if np.isfinite(t):
            y_new[i] = t
            solved += 1
    return solved


@njit(cache=True, nogil=True)
def _row_maximiser(start, stop, rc, coef, r0, lo, up, rl_i, ru_i, bt, bd, bl, br):
    """The leftmost maximiser of one row's g (:func:`assignment_duals`), NaN when there is none to use.

    Args: start, stop: the row's range in ``rc``; rl_i, ru_i: its bounds; bt, bd, bl, br: work arrays of at
        least stop - start + 1 entries. Other arguments: :func:`assignment_duals`'s.
    """
    lo_t = 0.0 if not np.isfinite(ru_i) else -np.inf  # t < 0 needs a finite ru_i, t > 0 a finite rl_i
    hi_t = 0.0 if not np.isfinite(rl_i) else np.inf
    k = 0
    for q in range(start, stop):
        j = rc[q]
        a = coef[j]
        if a == 0.0:
            continue
        t = r0[j] / a
        if not np.isfinite(t):
            return np.nan
        sl = -a * lo[j] if a > 0.0 else -a * up[j]
        sr = -a * up[j] if a > 0.0 else -a * lo[j]
        if sl == np.inf:
            lo_t = max(lo_t, t)
        if sr == -np.inf:
            hi_t = min(hi_t, t)
        bt[k], bl[k], br[k], bd[k] = t, sl, sr, sr - sl
        k += 1
    if lo_t > hi_t:
        return np.nan
    if lo_t == hi_t:
        return lo_t
    slope = rl_i if lo_t >= 0.0 else ru_i  # just right of lo_t: finite, since lo_t < hi_t
    for b in range(k):
        slope += br[b] if bt[b] <= lo_t else bl[b]
    if 0.0 > lo_t and 0.0 < hi_t:  # the row's own breakpoint
        bt[k], bd[k] = 0.0, rl_i - ru_i
        k += 1
    _sort_pairs(bt, bd, k)
    cur = lo_t
    if slope < 0.0:
        return cur if np.isfinite(cur) else np.nan
    for b in range(k):
        tb = bt[b]
        if tb <= lo_t:
            continue
        if slope <= 0.0 and np.isfinite(cur):
            return cur
        if tb >= hi_t:
            break
        cur = tb
        slope += bd[b]
    if slope <= 0.0 and np.isfinite(cur):
        return cur
    return hi_t if slope >= 0.0 and np.isfinite(hi_t) else np.nan


NUDGES = 8  #: ulps :func:`_inside` moves a maximiser at most
INSERTION_MAX = 32  #: rows with at most this many breakpoints are sorted in place (no allocation)


@njit(cache=True, nogil=True)
def _sort_pairs(keys, values, k):
    """Sort ``keys[:k]`` increasingly in place, permuting ``values[:k]`` alike: insertion sort up to
    :data:`INSERTION_MAX` entries (a TE demand row has a few paths: no allocation per row), else an argsort."""
    if k <= INSERTION_MAX:
        for a in range(1, k):
            key, val = keys[a], values[a]
            b = a - 1
            while b >= 0 and keys[b] > key:
                keys[b + 1] = keys[b]
                values[b + 1] = values[b]
                b -= 1
            keys[b + 1] = key
            values[b + 1] = val
        return
    order = np.argsort(keys[:k])
    sk, sv = keys[:k][order], values[:k][order]
    keys[:k] = sk
    values[:k] = sv


@njit(cache=True, nogil=True)
def _inside(t, start, stop, rc, coef, r0, lo, up):
    """``t`` moved by at most :data:`NUDGES` ulps until every column of the row that is unbounded on one side has
    its reduced cost r0_j - coef_j t (the float L's evaluation computes) on the bounded side: <= 0 when
    lo_j = -inf, >= 0 when up_j = +inf; NaN when no such t is found (a column needs it to move up, another down).
    """
    for _ in range(NUDGES + 1):
        up_needed, down_needed = False, False
        for q in range(start, stop):
            j = rc[q]
            a = coef[j]
            if a == 0.0:
                continue
            r = r0[j] - a * t
            if (r > 0.0 and lo[j] == -np.inf) or (r < 0.0 and up[j] == np.inf):
                if (r > 0.0) == (a > 0.0):  # r falls as t rises when a > 0
                    up_needed = True
                else:
                    down_needed = True
        if up_needed and down_needed:
            return np.nan
        if not up_needed and not down_needed:
            return t
        t = np.nextafter(t, np.inf if up_needed else -np.inf)
    return np.nan


@njit(cache=True)
def column_term_disjoint(row_of_col, coef, y_shared_full, r_base, lo, up):
    """:func:`column_term` when every column holds at most one entry on the shared rows (the assignment rows:
    ``row_of_col[j]`` that row or -1, ``coef[j]`` its entry): the same floats (r_j = r_base[j] - coef[j] y_i, the
    one subtraction column_term makes; the sum over the columns in the same order) in O(n) instead of a pass
    over the matrix.

    Args: row_of_col (n,) int64; coef (n,); y_shared_full (m,) (read on the shared rows only); r_base, lo, up (n,).
    Returns: (total, unbounded) as :func:`column_term`.
    """
    total = 0.0
    unbounded = False
    for j in range(r_base.shape[0]):
        r = r_base[j]
        i = row_of_col[j]
        if i >= 0:
            r -= coef[j] * y_shared_full[i]
        total, unbounded = _add_column(total, unbounded, r, lo[j], up[j])
    return total, unbounded
