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


@njit(cache=True)
def reduced_costs(cp, ci, cv, c, y, out):
    """out = c - A'y (n,), one pass."""
    for j in range(cp.shape[0] - 1):
        t = c[j]
        for p in range(cp[j], cp[j + 1]):
            t -= cv[p] * y[ci[p]]
        out[j] = t


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
        if r > 0.0:
            if not np.isfinite(lo[j]):
                unbounded = True
            else:
                total += r * lo[j]
        elif r < 0.0:
            if not np.isfinite(up[j]):
                unbounded = True
            else:
                total += r * up[j]
    return total, unbounded


@njit(cache=True)
def column_terms(cp, ci, cv, is_shared, y_shared_cols, r_base, lo, up):
    """:func:`column_term` for k candidate duals in one pass over the matrix (``solver.partition.bound``'s
    ``best_bound`` evaluates its candidates together).

    Candidate c's results are bitwise those of ``column_term`` called with ``y_shared_cols[:, c]`` alone: its
    r_j starts at r_base[j] and subtracts the shared entries in the same order, and its sum runs over the
    columns in the same order.

    Args: cp, ci, cv: CSC of A; is_shared (m,) uint8; y_shared_cols (m, k) C-contiguous duals, candidate c in
        column c (read on shared rows only); r_base, lo, up (n,).

    Returns: (totals (k,), unbounded (k,) bool), candidate c's ``column_term`` result in entry c.
    """
    k = y_shared_cols.shape[1]
    totals = np.zeros(k)
    unbounded = np.zeros(k, dtype=np.bool_)
    r = np.empty(k)
    for j in range(cp.shape[0] - 1):
        rb = r_base[j]
        for c in range(k):
            r[c] = rb
        for p in range(cp[j], cp[j + 1]):
            i = ci[p]
            if is_shared[i]:
                a = cv[p]
                for c in range(k):
                    r[c] -= a * y_shared_cols[i, c]
        lj = lo[j]
        uj = up[j]
        for c in range(k):
            rc = r[c]
            if rc > 0.0:
                if not np.isfinite(lj):
                    unbounded[c] = True
                else:
                    totals[c] += rc * lj
            elif rc < 0.0:
                if not np.isfinite(uj):
                    unbounded[c] = True
                else:
                    totals[c] += rc * uj
    return totals, unbounded
