"""The CSC matrix side of applying a delta: entry lookup, the one-pass merge, and :func:`assemble`.

Value-only coefficient changes copy ``a_data`` once and share the rest; structural changes (drops,
inserted/removed entries) rebuild the CSC arrays in one linear pass (:func:`merge_csc`, numba). Entry
lookup is a per-column binary search (:func:`find_entries`, numba). Each kernel (``kernels.py``) has a
plain-numpy twin here (``*_numpy``) that the tests compare with.
"""

from __future__ import annotations

import numpy as np

from solver.model.problem import Problem

SMALL_NNZ = 20_000
"""Matrices with at most this many entries use the numpy twins (a few ms at this size): a ``copter step``
process on a small model then loads no differential kernel (and does not pay numba's import, ~1 s on the
loaded 2-core machine, in its apply phase); larger ones use the numba kernels (issue #15)."""


def find_entries_numpy(indptr: np.ndarray, indices: np.ndarray, cols: np.ndarray, rows: np.ndarray,
                       n_rows: int) -> np.ndarray:
    """Reference twin of :func:`find_entries`: O(nnz) via global sorted keys ``col * m + row``."""
    counts = np.diff(indptr)
    keys = np.repeat(np.arange(counts.size, dtype=np.int64), counts) * max(n_rows, 1) + indices
    q = cols.astype(np.int64) * max(n_rows, 1) + rows
    pos = np.searchsorted(keys, q)
    pos_c = np.minimum(pos, max(keys.size - 1, 0))
    hit = (keys.size > 0) & (pos < keys.size) & (keys[pos_c] == q) & (cols >= 0) & (rows >= 0) \
        if keys.size else np.zeros(q.shape, dtype=bool)
    return np.where(hit, pos, -1).astype(np.int64)


def find_entries(indptr: np.ndarray, indices: np.ndarray, cols: np.ndarray, rows: np.ndarray,
                 n_rows: int) -> np.ndarray:
    """Storage position of each entry ``A[rows[t], cols[t]]`` in the CSC arrays, -1 when absent.

    Binary search inside each column's slice: O(k log(nnz per column)) for k queries, the matrix is not
    scanned. Args: indptr (n+1,) int64, indices (nnz,) int32 sorted per column, cols/rows (k,) int64
    (negative = absent). Returns (k,) int64. Numba kernel; twin: :func:`find_entries_numpy`.
    """
    if not cols.size or not indices.size:
        return np.full(cols.shape[0], -1, dtype=np.int64)
    if indices.size <= SMALL_NNZ:
        return find_entries_numpy(indptr, indices, cols, rows, n_rows)
    from solver.differential.kernels import find_entries_kernel  # lazy: numba import costs ~0.5 s

    return find_entries_kernel(np.ascontiguousarray(indptr, dtype=np.int64), indices,
                                np.ascontiguousarray(cols, dtype=np.int64),
                                np.ascontiguousarray(rows, dtype=np.int64))


def assemble(problem: Problem, col_keep, row_keep, old_to_new_col, old_to_new_row, n_new, m_new,
              c_cols_old, c_rows_old, c_cols_new, c_rows_new, c_vals, keys_sorted=False):
    """Build the new CSC arrays. Returns (indptr, indices, data, n_changed, changed_fields)."""
    indptr, indices, data = problem.a_indptr, problem.a_indices, problem.a_data
    n_old = problem.n_cols
    structural_drop = (col_keep is not None) or (row_keep is not None)
    k = c_vals.size
    if indices.size == 0 or (col_keep is not None and not col_keep.any()) or \
            (row_keep is not None and not row_keep.any()):
        # no old entry survives (e.g. a problem file applied to the empty problem): inserts only
        return _inserts_only(indices.size, n_old, n_new, m_new, c_cols_new, c_rows_new, c_vals, keys_sorted)
    pos = (find_entries(indptr, indices, c_cols_old, c_rows_old, problem.n_rows) if k
           else np.zeros(0, np.int64))
    found = pos >= 0
    upd = found & (c_vals != 0)
    if upd.any():
        upd &= data[np.where(found, pos, 0)] != c_vals  # unchanged values are not changes
    dele = found & (c_vals == 0)
    ins = ~found & (c_vals != 0)
    n_changed = int(upd.sum() + dele.sum() + ins.sum())
    changed = set()
    if not structural_drop and not dele.any() and not ins.any():
        if upd.any():
            data = data.copy()
            data[pos[upd]] = c_vals[upd]
            changed.add("a_data")
        if n_new != n_old:
            indptr = np.concatenate([indptr, np.full(n_new - n_old, indptr[-1], dtype=np.int64)])
            changed.add("a_indptr")
        return indptr, indices, data, n_changed, changed
    # general path: one pass over the matrix (numba merge; numpy twin: merge_csc_numpy)
    chg = upd | dele
    chg_pos, chg_val = pos[chg], np.where(dele[chg], 0.0, c_vals[chg])
    if chg_pos.size > 1:
        o = np.argsort(chg_pos)
        chg_pos, chg_val = chg_pos[o], chg_val[o]
    ic, ir, iv = c_cols_new[ins], c_rows_new[ins], c_vals[ins]
    if ic.size > 1 and not (keys_sorted and ins.all()):
        ikeys = ic * max(m_new, 1) + ir
        if not np.all(ikeys[1:] > ikeys[:-1]):
            o = np.argsort(ikeys, kind="stable")
            ic, ir, iv = ic[o], ir[o], iv[o]
    n_surv = n_old if col_keep is None else int(col_keep.sum())
    col_map = np.concatenate([np.arange(n_old, dtype=np.int64) if col_keep is None
                              else np.flatnonzero(col_keep).astype(np.int64),
                              np.full(n_new - n_surv, -1, dtype=np.int64)])
    row_map = np.arange(problem.n_rows, dtype=np.int64) if row_keep is None else old_to_new_row
    new_indptr, new_indices, new_data = merge_csc(indptr, indices, data, col_map, row_map, chg_pos, chg_val,
                                                  ic, ir, iv)
    return new_indptr, new_indices, new_data, n_changed, {"a_indptr", "a_indices", "a_data"}


def merge_csc_numpy(indptr, indices, data, col_map, row_map, chg_pos, chg_val, ins_col, ins_row, ins_val):
    """Reference twin of :func:`merge_csc` in plain numpy (several vectorised passes)."""
    n_old, n_new = indptr.size - 1, col_map.size
    old_to_new = np.full(n_old, -1, dtype=np.int64)
    live = col_map >= 0
    old_to_new[col_map[live]] = np.flatnonzero(live)
    ecol = np.repeat(np.arange(n_old, dtype=np.int64), np.diff(indptr))
    vals = data.copy()
    vals[chg_pos] = chg_val
    keep = (vals != 0) & (old_to_new[ecol] >= 0) & (row_map[indices] >= 0)
    new_cols = old_to_new[ecol[keep]]
    new_rows = row_map[indices[keep]].astype(np.int64)
    vals = vals[keep]
    m = int(max(row_map.max(initial=-1), ins_row.max(initial=-1))) + 1 if (row_map.size or ins_row.size) else 1
    at = np.searchsorted(new_cols * m + new_rows, ins_col.astype(np.int64) * m + ins_row)
    new_cols = np.insert(new_cols, at, ins_col)
    new_rows = np.insert(new_rows, at, ins_row)
    vals = np.insert(vals, at, ins_val)
    new_indptr = np.zeros(n_new + 1, dtype=np.int64)
    np.cumsum(np.bincount(new_cols, minlength=n_new), out=new_indptr[1:])
    return new_indptr, new_rows.astype(np.int32), vals.astype(np.float64)


def merge_csc(indptr, indices, data, col_map, row_map, chg_pos, chg_val, ins_col, ins_row, ins_val):
    """New CSC arrays from the old ones in ONE pass: keep the columns ``col_map`` names, remap rows,
    apply value changes, drop removed entries, merge inserted entries.

    Args:
        indptr (n_old+1,) int64, indices (nnz,) int32, data (nnz,) float64: the old matrix.
        col_map: (n_new,) int64 old column of each new column (-1 = new, empty), survivors increasing.
        row_map: (m_old,) int64 new row of each old row (-1 = dropped), increasing where >= 0.
        chg_pos, chg_val: (c,) sorted old entry positions and their new values (0 removes the entry).
        ins_col, ins_row, ins_val: (i,) entries to insert, sorted by (new column, new row), absent
            from the old matrix.
    Returns:
        (indptr (n_new+1,) int64, indices int32, data float64), canonical (rows sorted per column).
    Numba kernel (``kernels.merge_csc_kernel``); twin: :func:`merge_csc_numpy` (used up to
    :data:`SMALL_NNZ` entries).
    """
    if indices.size <= SMALL_NNZ:
        return merge_csc_numpy(indptr, indices, data, np.asarray(col_map, dtype=np.int64),
                               np.asarray(row_map, dtype=np.int64), np.asarray(chg_pos, dtype=np.int64),
                               np.asarray(chg_val, dtype=np.float64), np.asarray(ins_col, dtype=np.int64),
                               np.asarray(ins_row, dtype=np.int64), np.asarray(ins_val, dtype=np.float64))
    from solver.differential.kernels import merge_csc_kernel

    ptr, idx, val, t = merge_csc_kernel(
        indptr.astype(np.int64, copy=False), indices, data, col_map.astype(np.int64, copy=False),
        row_map.astype(np.int64, copy=False), np.ascontiguousarray(chg_pos, dtype=np.int64),
        np.ascontiguousarray(chg_val, dtype=np.float64), np.ascontiguousarray(ins_col, dtype=np.int64),
        np.ascontiguousarray(ins_row, dtype=np.int64), np.ascontiguousarray(ins_val, dtype=np.float64))
    if t < 0.75 * idx.size:  # many entries removed: do not keep the spare capacity alive
        return ptr, idx[:t].copy(), val[:t].copy()
    return ptr, idx[:t], val[:t]




def _inserts_only(nnz_old: int, n_old: int, n_new: int, m_new: int, c_cols_new, c_rows_new, c_vals,
                  keys_sorted: bool):
    """:func:`assemble` when no old entry survives: the nonzero coef rows are the whole matrix."""
    nz = c_vals != 0
    ic, ir, iv = (c_cols_new, c_rows_new, c_vals) if nz.all() else \
        (c_cols_new[nz], c_rows_new[nz], c_vals[nz])
    if not keys_sorted and ic.size > 1:
        order = np.argsort(ic * max(m_new, 1) + ir, kind="stable")
        ic, ir, iv = ic[order], ir[order], iv[order]
    new_indptr = np.zeros(n_new + 1, dtype=np.int64)
    np.cumsum(np.bincount(ic, minlength=n_new), out=new_indptr[1:])
    changed = {"a_indptr", "a_indices", "a_data"} if (nnz_old or ic.size or n_new != n_old) else set()
    return new_indptr, ir.astype(np.int32), np.ascontiguousarray(iv, dtype=np.float64), int(ic.size), changed
