"""numba kernel of ``solver.partition.split.build_part_problems``: one part's sub-matrix in two passes over its
columns' nonzeros, written straight into the part's CSC arrays. It releases the GIL (``nogil``): the parts are
built in threads (``build_part_problems``).

The numpy formulation (``solver.partition.split_ref``, the twin the tests compare) built eight nnz-sized
temporaries per part (positions, rows, the keep mask, the remapped rows, the gathered values): 0.9-1.3 s of a
TE Kdl partitioned round's set-up at K = 4 (30.9M nonzeros; session 23, line-timed), every round.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver import kernel_cache

kernel_cache.install()  # cached kernels load without numba's compiler set-up (solver/kernel_cache.py)


@njit(cache=True, nogil=True)
def part_matrix(cp, ci, cv, cols, everywhere, row_part, p, m):
    """Part ``p``'s sub-matrix: the columns ``cols`` of A restricted to the rows the part holds.

    A nonzero (i, j) of a column in ``cols`` is kept when row i is ``everywhere`` (shared or global: every part
    holds it) or owned by part p (``row_part[i] == p``; a global column also touches other parts' rows, which
    are dropped). The part's rows are the rows of its kept nonzeros, in increasing order, renumbered 0.. so each
    column's rows stay sorted. :func:`part_pattern` then :func:`part_fill` into new arrays (the two passes).

    Args:
        cp (n+1,) int64, ci (nnz,) int32, cv (nnz,) float64: the CSC arrays of A (m x n).
        cols (n_p,) int64: the part's columns, increasing. everywhere (m,) bool. row_part (m,) int64: the part
            owning each row (-1: none). p: the part. m: rows of A.
    Returns:
        (sub_ptr (n_p+1,) int64, rows (m_p,) int64: the part's rows as rows of A, sub_idx (nnz_p,) int32: the
        kept nonzeros' part rows, sub_data (nnz_p,) float64: their values).
    """
    sub_ptr, rows, new_row = part_pattern(cp, ci, cols, everywhere, row_part, p, m)
    nnz_p = sub_ptr[cols.shape[0]]
    sub_idx = np.empty(nnz_p, dtype=np.int32)
    sub_data = np.empty(nnz_p, dtype=np.float64)
    part_fill(cp, ci, cv, cols, everywhere, row_part, p, new_row, sub_idx, sub_data)
    return sub_ptr, rows, sub_idx, sub_data


@njit(cache=True, nogil=True)
def part_pattern(cp, ci, cols, everywhere, row_part, p, m):
    """:func:`part_matrix`'s first pass: (sub_ptr (n_p+1,) int64, rows (m_p,) int64, new_row (m,) int64: each
    row's index among the part's rows, valid where the part holds the row), so that the caller can place the
    (nnz_p,) = sub_ptr[-1] entries where it wants them (``solver.partition.shipping.shared_empty``)."""
    n_p = cols.shape[0]
    held = np.zeros(m, dtype=np.uint8)
    sub_ptr = np.zeros(n_p + 1, dtype=np.int64)
    for t in range(n_p):
        j = cols[t]
        c = 0
        for q in range(cp[j], cp[j + 1]):
            i = ci[q]
            if everywhere[i] or row_part[i] == p:
                held[i] = 1
                c += 1
        sub_ptr[t + 1] = sub_ptr[t] + c
    new_row = np.empty(m, dtype=np.int64)
    m_p = 0
    for i in range(m):
        new_row[i] = m_p
        m_p += held[i]
    rows = np.empty(m_p, dtype=np.int64)
    for i in range(m):
        if held[i]:
            rows[new_row[i]] = i
    return sub_ptr, rows, new_row


@njit(cache=True, nogil=True)
def part_fill(cp, ci, cv, cols, everywhere, row_part, p, new_row, sub_idx, sub_data):
    """:func:`part_matrix`'s second pass: the kept entries' part rows into ``sub_idx`` (nnz_p,) int32 and their
    values into ``sub_data`` (nnz_p,) float64, column by column (``new_row``: :func:`part_pattern`'s)."""
    o = 0
    for t in range(cols.shape[0]):
        j = cols[t]
        for q in range(cp[j], cp[j + 1]):
            i = ci[q]
            if everywhere[i] or row_part[i] == p:
                sub_idx[o] = new_row[i]
                sub_data[o] = cv[q]
                o += 1
