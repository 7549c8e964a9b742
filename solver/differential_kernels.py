"""Numba kernels of ``solver/differential.py`` (imported lazily: ``copter convert`` never needs numba).

Each kernel has a plain-numpy reference twin in ``solver/differential.py`` that the tests compare with.
"""

from __future__ import annotations

import numpy as np
from numba import njit


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
