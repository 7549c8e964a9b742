"""Plain-numpy twin of ``solver.partition.split_kernels`` (the formulation ``split.build_part_problems`` used
before the kernel, session 23), compared by the tests."""

from __future__ import annotations

import numpy as np


def part_matrix_ref(cp, ci, cv, cols, everywhere, row_part, p, m):
    """Twin of :func:`solver.partition.split_kernels.part_matrix`."""
    lens = np.diff(cp)[cols]
    ptr = np.zeros(cols.size + 1, dtype=np.int64)
    np.cumsum(lens, out=ptr[1:])
    pos = np.repeat(cp[cols] - ptr[:-1], lens) + np.arange(ptr[-1], dtype=np.int64)
    old_rows = ci[pos]
    keep = everywhere[old_rows] | (row_part[old_rows] == p)
    pos, old_rows = pos[keep], old_rows[keep]
    sub_ptr = np.zeros(cols.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(np.repeat(np.arange(cols.size), lens)[keep], minlength=cols.size), out=sub_ptr[1:])
    held = np.zeros(m, dtype=bool)
    held[old_rows] = True
    rows = np.flatnonzero(held).astype(np.int64)
    new_row = np.cumsum(held) - 1
    return sub_ptr, rows, new_row[old_rows].astype(np.int32), cv[pos].astype(np.float64)
