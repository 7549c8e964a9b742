"""Plain-numpy twin of ``solver.integer.structure_kernels`` (the vectorised passes ``detect_structure`` used
before), compared with the kernel by tests/test_integer_structure_kernels.py."""

from __future__ import annotations

import numpy as np

from solver.integer.structure import row_reduce as _row_reduce


def row_stats_ref(rptr, rcol, rval, binary, is_int, lo, up):
    """Same arguments and result as :func:`solver.integer.structure_kernels.row_stats`."""
    m = rptr.shape[0] - 1
    nnz_row = np.diff(rptr)
    nonbin = _row_reduce(np.add, (~binary[rcol]).astype(np.float64), rptr, 0.0)
    amin = _row_reduce(np.minimum, rval, rptr, np.inf)
    amax = _row_reduce(np.maximum, rval, rptr, -np.inf)
    nint = _row_reduce(np.add, is_int[rcol].astype(np.float64), rptr, 0.0)
    row_of_nz = np.repeat(np.arange(m, dtype=np.int64), nnz_row)
    with np.errstate(invalid="ignore"):
        lo_c = np.where(rval > 0, rval * lo[rcol], rval * up[rcol])  # min contribution per nonzero
        hi_c = np.where(rval > 0, rval * up[rcol], rval * lo[rcol])
    minact = np.bincount(row_of_nz, weights=np.nan_to_num(lo_c, neginf=-1e300, posinf=1e300), minlength=m)
    maxact = np.bincount(row_of_nz, weights=np.nan_to_num(hi_c, neginf=-1e300, posinf=1e300), minlength=m)
    return nonbin, amin, amax, nint, minact.astype(np.float64), maxact.astype(np.float64)
