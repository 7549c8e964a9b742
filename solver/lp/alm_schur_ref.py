"""Plain-numpy twins of ``solver.lp.alm_schur``'s kernels (same arguments and outputs), compared by the tests.

The twins build the dense generalised Hessian V and eliminate its assignment block with numpy, the way the
module docstring of ``solver.lp.alm_schur`` writes it, instead of the kernels' one-pass accumulations."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _matrix(cp, ci, cv, m: int) -> sp.csc_array:
    return sp.csc_array((cv, ci, cp), shape=(m, cp.shape[0] - 1))


def assignment_rows_ref(cp, ci, cv, m):
    """Twin of :func:`solver.lp.alm_schur.assignment_rows`."""
    A = _matrix(cp, ci, cv, m).tocsr()
    A.sort_indices()
    n = cp.shape[0] - 1
    cnt = np.diff(A.indptr)
    row_of_col = np.full(n, -1, dtype=np.int64)
    taken = np.zeros(m, dtype=bool)
    for i in np.argsort(cnt, kind="mergesort"):
        cols = A.indices[A.indptr[i]:A.indptr[i + 1]]
        if (row_of_col[cols] < 0).all():
            taken[i] = True
            row_of_col[cols] = i
    coef_of_col = np.zeros(n)
    has = row_of_col >= 0
    coef_of_col[has] = np.asarray(A[row_of_col[has], np.flatnonzero(has)]).reshape(-1)
    coupling = np.flatnonzero(~taken).astype(np.int64)
    pos = np.full(m, -1, dtype=np.int64)
    pos[coupling] = np.arange(coupling.size)
    kept = np.where(taken, cnt, 0)  # only the assignment rows' columns are returned
    rp = np.concatenate(([0], np.cumsum(kept))).astype(np.int64)
    rc = np.concatenate([A.indices[A.indptr[i]:A.indptr[i + 1]] for i in np.flatnonzero(taken)] or [[]])
    return row_of_col, coef_of_col, pos, coupling, rp, rc.astype(np.int32)


def assignment_rows_given_ref(cp, ci, cv, coupling, m):
    """Twin of :func:`solver.lp.alm_schur.assignment_rows_given` (None where the kernel returns an empty ``pos``)."""
    coupling = np.asarray(coupling, dtype=np.int64)
    n = cp.shape[0] - 1
    if coupling.size and (coupling.min() < 0 or coupling.max() >= m):
        return None
    taken = np.ones(m, dtype=bool)
    taken[coupling] = False
    A = _matrix(cp, ci, cv, m).tocsc()
    A.sort_indices()
    on = taken[A.indices]
    acc = np.concatenate(([0], np.cumsum(on)))
    per_col = acc[A.indptr[1:]] - acc[A.indptr[:-1]]
    if (per_col > 1).any():
        return None
    row_of_col = np.full(n, -1, dtype=np.int64)
    coef_of_col = np.zeros(n)
    cols = np.repeat(np.arange(n), np.diff(A.indptr))[on]
    row_of_col[cols] = A.indices[on]
    coef_of_col[cols] = A.data[on]
    out = np.flatnonzero(~taken).astype(np.int64)
    pos = np.full(m, -1, dtype=np.int64)
    pos[out] = np.arange(out.size)
    order = np.lexsort((cols, row_of_col[cols]))
    rc = cols[order].astype(np.int32)
    cnt = np.bincount(row_of_col[cols], minlength=m) if cols.size else np.zeros(m, dtype=np.int64)
    rp = np.concatenate(([0], np.cumsum(cnt))).astype(np.int64)
    return row_of_col, coef_of_col, pos, out, rp, rc


def _blocks(cp, ci, cv, col_active, tau, diag, pos):
    """Dense V = tau A_J A_J' + diag(diag) and the assignment rows' mask."""
    m = diag.shape[0]
    AJ = _matrix(cp, ci, cv, m)[:, np.flatnonzero(col_active)]
    V = tau * (AJ @ AJ.T).toarray() + np.diag(diag)
    return V, pos < 0


def block_bound_ref(cp, ci, pos, rp, rc):
    """Twin of :func:`solver.lp.alm_schur.block_bound` (prefix sums instead of the kernel's loops)."""
    m2 = int((pos >= 0).sum())
    on = np.concatenate(([0], np.cumsum(pos[ci] >= 0)))
    per_col = on[cp[1:]] - on[cp[:-1]]
    acc = np.concatenate(([0], np.cumsum(per_col[rc])))
    per_row = np.minimum(acc[rp[1:]] - acc[rp[:-1]], m2)[pos < 0]
    return int(per_row.max()) if per_row.size else 0


def _assembled(cp, ci, cv, col_active, tau, prec, pos, coupling):
    """The dense C = tau (A_J A_J')[R2, R2] - V21 diag(1/prec[R1]) V12 (both triangles)."""
    m = prec.shape[0]
    V, r1 = _blocks(cp, ci, cv, col_active, tau, np.zeros(m), pos)  # off-diagonal blocks: no diagonal needed
    V21 = V[np.ix_(coupling, r1)]
    return V[np.ix_(coupling, coupling)] - (V21 / prec[r1]) @ V21.T, r1


def schur_assemble_ref(cp, ci, cv, col_active, tau, prec, row_of_col, coef_of_col, pos, coupling, rp, rc,
                       u, touched, mark, blk, C):
    """Twin of :func:`solver.lp.alm_schur.schur_assemble` (writes both triangles of C); the multiply-adds
    counted from the sparsity patterns: sum over active columns of (coupling entries)^2 plus sum over
    assignment rows of (coupling rows their active columns reach)^2."""
    C[:], r1 = _assembled(cp, ci, cv, col_active, tau, prec, pos, coupling)
    m = prec.shape[0]
    pattern = (_matrix(cp, ci, np.ones_like(cv), m)[:, np.flatnonzero(col_active)]).tocsr()
    on_coupling = pattern[coupling, :]
    per_column = np.asarray(on_coupling.sum(axis=0)).reshape(-1)
    reach = (pattern[np.flatnonzero(r1), :] @ on_coupling.T) != 0  # assignment row x coupling row
    per_row = np.asarray(reach.sum(axis=1)).reshape(-1)
    return int((per_column ** 2).sum() + (per_row ** 2).sum())


def schur_update_ref(cp, ci, cv, col_active, col_active_old, tau, prec, prec_old, row_of_col, coef_of_col, pos,
                     rp, rc, u, touched, mark, blk, flag, max_rows, C):
    """Twin of :func:`solver.lp.alm_schur.schur_update`: C assembled afresh for ``col_active`` and ``prec``
    (both triangles), or -1 (C untouched) when more than ``max_rows`` assignment rows changed. Returns 0
    otherwise (the twin does not count the update's multiply-adds)."""
    r1 = pos < 0
    changed = np.zeros(pos.shape[0], dtype=bool)
    moved = (col_active != col_active_old) & (row_of_col >= 0)
    changed[row_of_col[moved]] = True
    changed |= r1 & (prec != prec_old)
    if changed.sum() > max_rows:
        return -1
    coupling = np.flatnonzero(~r1)  # assignment_rows lists them in increasing order
    C[:] = _assembled(cp, ci, cv, col_active, tau, prec, pos, coupling)[0]
    return 0


def schur_finish_ref(C, diag, coupling, S, S32):
    """Twin of :func:`solver.lp.alm_schur.schur_finish` (S's upper triangle, diagonal included; S32's too, rounded to
    float32, when it has S's shape)."""
    upper = np.triu_indices(coupling.shape[0])
    S[upper] = (C + np.diag(diag[coupling]))[upper]
    if S32.shape == S.shape:
        S32[upper] = S[upper].astype(np.float32)


def schur_rhs_ref(cp, ci, cv, col_active, tau, prec, row_of_col, coef_of_col, coupling, pos, g, t):
    """Twin of :func:`solver.lp.alm_schur.schur_rhs` (``prec`` is V's diagonal)."""
    V, r1 = _blocks(cp, ci, cv, col_active, tau, prec, pos)  # V21 does not depend on the diagonal
    V21 = V[np.ix_(coupling, r1)]
    t[:] = g[coupling] - V21 @ (g[r1] / prec[r1])


def schur_back_ref(cp, ci, cv, col_active, tau, prec, row_of_col, coef_of_col, coupling, pos, g, d2, d):
    """Twin of :func:`solver.lp.alm_schur.schur_back`."""
    V, r1 = _blocks(cp, ci, cv, col_active, tau, prec, pos)
    d[coupling] = d2
    d[r1] = (g[r1] - V[np.ix_(r1, coupling)] @ d2) / prec[r1]


def upper_cholesky_solve_ref(U, t, out):
    """Twin of :func:`solver.lp.alm_schur.upper_cholesky_solve` (U's upper triangle)."""
    upper = np.triu(U)
    out[:] = np.linalg.solve(upper.T @ upper, t)
