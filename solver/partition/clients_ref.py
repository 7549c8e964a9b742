"""Plain-numpy twin of ``solver.partition.clients_kernels`` (the formulation ``clients.row_clients`` used before
the kernel, session 21), compared by the tests."""

from __future__ import annotations

import numpy as np


def row_clients_ref(cp, ci, col_client, m, shared_value, empty_value, global_value):
    """Twin of :func:`solver.partition.clients_kernels.row_clients`."""
    nnz_client = np.repeat(col_client, np.diff(cp))
    own = nnz_client >= 0
    rows, cl = ci[own], nnz_client[own]
    some = np.full(m, -1, dtype=np.int64)
    some[rows] = cl  # one of each row's clients (whichever write lands)
    shared = np.zeros(m, dtype=bool)
    shared[rows[cl != some[rows]]] = True
    nonempty = np.bincount(ci, minlength=m) > 0
    out = np.where(~nonempty, empty_value, np.where(some < 0, global_value, np.where(shared, shared_value, some)))
    return out.astype(np.int64)


def presence_ref(cp, ci, cv, col_part, pos, k, ns):
    """Twin of :func:`solver.partition.clients_kernels.presence` (the numpy formulation of
    ``solver.partition.shares.presence`` before the kernel)."""
    nnz_part = np.repeat(col_part, np.diff(cp))
    r = pos[ci]
    sel = (r >= 0) & (nnz_part >= 0) & (cv != 0)
    flat = np.bincount(nnz_part[sel] * ns + r[sel], minlength=k * ns)
    return (flat.reshape(k, ns) > 0).astype(np.uint8)
