"""Numba kernels of ``solver/differential/`` (imported lazily: ``copter convert`` never needs numba).

Each kernel has a plain-numpy reference twin in ``solver/differential/`` that the tests compare with.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver import kernel_cache

kernel_cache.install()  # cached kernels load without numba's compiler set-up (solver/kernel_cache.py)


@njit(cache=True)
def find_entries_kernel(indptr, indices, cols, rows):  # pragma: no cover - compiled
    out = np.full(cols.shape[0], -1, dtype=np.int64)
    for t in range(cols.shape[0]):
        j, i = cols[t], rows[t]
        if j < 0 or i < 0 or j >= indptr.shape[0] - 1:
            continue
        lo, hi = indptr[j], indptr[j + 1]
        while lo < hi:
            mid = (lo + hi) // 2
            if indices[mid] < i:
                lo = mid + 1
            else:
                hi = mid
        if lo < indptr[j + 1] and indices[lo] == i:
            out[t] = lo
    return out


@njit(cache=True)
def merge_csc_kernel(indptr, indices, data, col_map, row_map, chg_pos, chg_val,
                     ins_col, ins_row, ins_val):  # pragma: no cover - compiled
    n_new = col_map.shape[0]
    cap = indices.shape[0] + ins_row.shape[0]
    out_ptr = np.zeros(n_new + 1, dtype=np.int64)
    out_idx = np.empty(cap, dtype=np.int32)
    out_val = np.empty(cap, dtype=np.float64)
    t = 0
    c = 0
    q = 0
    n_chg = chg_pos.shape[0]
    n_ins = ins_col.shape[0]
    for jn in range(n_new):
        jo = col_map[jn]
        p = 0
        pe = 0
        if jo >= 0:
            p = indptr[jo]
            pe = indptr[jo + 1]
        r = -1
        v = 0.0
        while True:
            # next surviving old entry of this column (row kept, not removed), value updated
            while p < pe:
                while c < n_chg and chg_pos[c] < p:
                    c += 1
                v = data[p]
                if c < n_chg and chg_pos[c] == p:
                    v = chg_val[c]
                r = row_map[indices[p]]
                if v != 0.0 and r >= 0:
                    break
                p += 1
            has_old = p < pe
            has_ins = q < n_ins and ins_col[q] == jn
            if not has_old and not has_ins:
                break
            if has_ins and (not has_old or ins_row[q] < r):
                out_idx[t] = ins_row[q]
                out_val[t] = ins_val[q]
                q += 1
            else:
                out_idx[t] = r
                out_val[t] = v
                p += 1
            t += 1
        out_ptr[jn + 1] = t
    return out_ptr, out_idx, out_val, t
