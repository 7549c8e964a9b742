"""numba kernel of ``solver.partition.clients``: the owning client of every row, one pass over the matrix.

The numpy formulation (``solver.partition.clients_ref``, the twin the tests compare) built four nnz-sized
temporaries and took 0.48 s of a partitioned round's set-up on TE Kdl (30.9M nonzeros), every round.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from solver import kernel_cache

kernel_cache.install()  # cached kernels load without numba's compiler set-up (solver/kernel_cache.py)


@njit(cache=True)
def row_clients(cp, ci, col_client, m, shared_value, empty_value, global_value):
    """(m,) int64 owning client of every row from the (n,) client of every column (>= 0, or a negative value
    for a global column): the one client its nonzeros touch, ``shared_value`` when they touch two or more,
    ``global_value`` when only global columns, ``empty_value`` when it has no nonzero.

    Args: cp (n+1,), ci (nnz,): the CSC pattern of A (m x n); col_client (n,) int64; m: rows.
    """
    first = np.full(m, -1, dtype=np.int64)
    shared = np.zeros(m, dtype=np.uint8)
    nonempty = np.zeros(m, dtype=np.uint8)
    for j in range(cp.shape[0] - 1):
        cl = col_client[j]
        for p in range(cp[j], cp[j + 1]):
            i = ci[p]
            nonempty[i] = 1
            if cl >= 0:
                if first[i] < 0:
                    first[i] = cl
                elif first[i] != cl:
                    shared[i] = 1
    out = np.empty(m, dtype=np.int64)
    for i in range(m):
        if not nonempty[i]:
            out[i] = empty_value
        elif first[i] < 0:
            out[i] = global_value
        elif shared[i]:
            out[i] = shared_value
        else:
            out[i] = first[i]
    return out


@njit(cache=True)
def presence(cp, ci, cv, col_part, pos, k, ns):
    """(k, ns) uint8: 1 where part p has a nonzero of shared row i (``pos[row]`` = i, -1 for a row not shared)
    on one of its own columns (``col_part[j]`` >= 0), one pass (``solver.partition.shares.presence``).

    Args: cp (n+1,), ci (nnz,), cv (nnz,): CSC of A; col_part (n,) int64; pos (m,) int64; k parts; ns shared rows.
    """
    out = np.zeros((k, ns), dtype=np.uint8)
    for j in range(cp.shape[0] - 1):
        p = col_part[j]
        if p < 0:
            continue
        for q in range(cp[j], cp[j + 1]):
            r = pos[ci[q]]
            if r >= 0 and cv[q] != 0.0:
                out[p, r] = 1
    return out
