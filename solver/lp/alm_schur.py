"""The Newton system of ``solver.lp.alm_newton`` solved exactly by block elimination on the assignment rows.

The generalised Hessian V = tau A_J A_J' + diag(d) (m x m, J the active columns) has a block that is
diagonal whatever J is: rows whose supports are pairwise disjoint ("assignment rows", R1: every TE demand
row, every Sia job row, every LB placement row) share no column, so V11 = V[R1, R1] is diagonal with
V11_ii = d_i + tau sum_{j in J} a_ij^2. Eliminating them leaves the Schur complement on the other
("coupling") rows R2 (TE links, Sia GPU types, LB loads and memory):

    S = V22 - V21 V11^-1 V12 = diag(d_2) + tau sum_{j in J} a2_j a2_j' - sum_{i in R1} u_i u_i' / V11_ii,
    u_i = tau sum_{j in J, a_ij != 0} a_ij a2_j       (a2_j: column j's entries on R2)

and V d = g is solved by t = g2 - V21 V11^-1 g1, S d2 = t, d1 = V11^-1 (g1 - V12 d2) (Saad, "Iterative
Methods for Sparse Linear Systems", 2nd ed., 2003, section 14.2; Benzi, Golub & Liesen, Acta Numerica 14,
2005, section 5). S is symmetric positive definite (V is: d > 0) and as small as the coupling rows (72 on the
TE ring, ~500 on Cogentco, 1,790 on Kdl), so its dense Cholesky factor is cheap; SNIPAL (Li, Sun & Toh,
SIAM J. Optim. 30(3), 2020, section 4) likewise solves its Newton systems directly when their order is
moderate and by PCG otherwise. No factorisation of A is formed: the engine stays matrix-free in A.

Why (measured in session 17 with a scratch dense solve of S, matrix passes of warm-round chains): the
Jacobi-preconditioned CG's inexact directions, not the outer loop, are the TE rounds' cost: TE ring 8 rounds
9,339 -> 968 passes, Sia 1,024 7,393 -> 2,400, Cogentco rounds 1-5 95, 89, 69, 62, 202 -> 62, 26, 20, 30, 20.

Every kernel has a plain-numpy twin in ``solver.lp.alm_schur_ref`` that the tests compare.
"""

from __future__ import annotations

import math
import threading

import numpy as np
from numba import njit

from solver import kernel_cache

kernel_cache.install()  # cached kernels load without numba's compiler set-up (solver/kernel_cache.py)


@njit(cache=True)
def assignment_rows(cp, ci, cv, m):
    """Choose the assignment rows R1 (pairwise disjoint supports) greedily, once per problem.

    Rows are taken by increasing count (ties by index), each when none of its columns is already claimed
    by a taken row: the small rows first, so a TE demand's one-path row keeps its column from a link row.
    (Session 17's order, one-entry rows last, left 4,776 coupling rows on TE Cogentco: links used by two or
    three paths claimed the columns of single-path demands; by count: 486. TE ring 72, Sia 1,024 7, LB 256x32
    320 either way.)

    Args:
        cp (n+1,) int64, ci (nnz,) int32/int64, cv (nnz,) float64: CSC of A (m x n, no repeated entries).
        m: number of rows.
    Returns:
        (row_of_col (n,) int64: the assignment row holding column j, or -1; coef_of_col (n,) float64: a_ij
        for that row, else 0; pos (m,) int64: the row's index among the coupling rows, -1 for an assignment
        row; coupling (m2,) int64: the coupling rows in increasing order; rp (m+1,) int64, rc (nnz,) int64:
        the columns of every row (CSR pattern), which the Schur kernels walk).
    """
    n = cp.shape[0] - 1
    cnt = np.zeros(m, dtype=np.int64)
    for p in range(cp[n]):
        cnt[ci[p]] += 1
    rp = np.zeros(m + 1, dtype=np.int64)
    for i in range(m):
        rp[i + 1] = rp[i] + cnt[i]
    fill = rp[:m].copy()
    rc = np.empty(cp[n], dtype=np.int64)
    for j in range(n):
        for p in range(cp[j], cp[j + 1]):
            i = ci[p]
            rc[fill[i]] = j
            fill[i] += 1
    order = np.argsort(cnt, kind="mergesort")
    row_of_col = np.full(n, -1, dtype=np.int64)
    coef_of_col = np.zeros(n)
    taken = np.zeros(m, dtype=np.uint8)
    for k in range(m):
        i = order[k]
        free = True
        for q in range(rp[i], rp[i + 1]):
            if row_of_col[rc[q]] >= 0:
                free = False
                break
        if free:
            taken[i] = 1
            for q in range(rp[i], rp[i + 1]):
                row_of_col[rc[q]] = i
    for j in range(n):
        i = row_of_col[j]
        if i >= 0:
            for p in range(cp[j], cp[j + 1]):
                if ci[p] == i:
                    coef_of_col[j] = cv[p]
    pos = np.full(m, -1, dtype=np.int64)
    m2 = 0
    for i in range(m):
        if not taken[i]:
            m2 += 1
    coupling = np.empty(m2, dtype=np.int64)
    m2 = 0
    for i in range(m):
        if not taken[i]:
            pos[i] = m2
            coupling[m2] = i
            m2 += 1
    return row_of_col, coef_of_col, pos, coupling, rp, rc


@njit(cache=True)
def schur_assemble(cp, ci, cv, col_active, tau, diag, prec, row_of_col, coef_of_col, pos, coupling, rp, rc,
                   u, touched, S):
    """S = diag(d_2) + tau sum_J a2_j a2_j' - sum_{R1} u_i u_i' / V11_ii (module docstring), one pass.

    Args:
        cp, ci, cv: CSC of A. col_active (n,) uint8: J. tau: the column step. diag (m,): d. prec (m,): V's
            diagonal (``alm_kernels.hessian_diagonal``; on R1 it is V11). row_of_col, coef_of_col, pos,
            coupling, rp, rc: :func:`assignment_rows`'s output.
        u (m2,) float64, touched (m2,) int64: work arrays (u must be zero on entry; left zero).
    Output: S (m2, m2) float64, both triangles (overwritten).
    Returns:
        the number of multiply-adds into S (int; ``SchurSystem`` charges them as matrix passes).
    """
    m2 = coupling.shape[0]
    n = cp.shape[0] - 1
    ops = 0
    for a in range(m2):
        for b in range(m2):
            S[a, b] = 0.0
        S[a, a] = diag[coupling[a]]
    for j in range(n):  # tau a2_j a2_j' over the active columns
        if col_active[j]:
            for p in range(cp[j], cp[j + 1]):
                a = pos[ci[p]]
                if a >= 0:
                    va = tau * cv[p]
                    for q in range(cp[j], cp[j + 1]):
                        b = pos[ci[q]]
                        if b >= 0:
                            S[a, b] += va * cv[q]
                            ops += 1
    m = pos.shape[0]
    for i in range(m):  # - u_i u_i' / V11_ii over the assignment rows
        if pos[i] >= 0:
            continue
        k = 0
        for r in range(rp[i], rp[i + 1]):
            j = rc[r]
            if not col_active[j]:
                continue
            f = tau * coef_of_col[j]
            for p in range(cp[j], cp[j + 1]):
                a = pos[ci[p]]
                if a >= 0:
                    if u[a] == 0.0:
                        touched[k] = a
                        k += 1
                    u[a] += f * cv[p]
                    if u[a] == 0.0:  # cancelled to zero: keep it listed once (a tiny nonzero marks it)
                        u[a] = 1e-300
        if k > 0:
            h = 1.0 / prec[i]
            for x in range(k):
                a = touched[x]
                ua = u[a] * h
                for y in range(k):
                    b = touched[y]
                    S[a, b] -= ua * u[b]
            for x in range(k):
                u[touched[x]] = 0.0
            ops += k * k
    return ops


@njit(cache=True)
def schur_rhs(cp, ci, cv, col_active, tau, prec, row_of_col, coef_of_col, coupling, pos, g, t):
    """t = g2 - V21 V11^-1 g1 (m2,): one pass over the active columns.

    Args: as :func:`schur_assemble`; g (m,): the right-hand side. Output: t (m2,)."""
    for a in range(coupling.shape[0]):
        t[a] = g[coupling[a]]
    for j in range(cp.shape[0] - 1):
        i = row_of_col[j]
        if i < 0 or not col_active[j]:
            continue
        f = tau * coef_of_col[j] * g[i] / prec[i]
        if f == 0.0:
            continue
        for p in range(cp[j], cp[j + 1]):
            a = pos[ci[p]]
            if a >= 0:
                t[a] -= f * cv[p]


@njit(cache=True)
def schur_back(cp, ci, cv, col_active, tau, prec, row_of_col, coef_of_col, coupling, pos, g, d2, d):
    """d = V^-1 g from d2 = S^-1 t: d on R2 is d2, d1 = V11^-1 (g1 - V12 d2) (one pass over the active columns).

    Args: as :func:`schur_rhs`; d2 (m2,). Output: d (m,)."""
    m = g.shape[0]
    for i in range(m):
        d[i] = g[i] if pos[i] < 0 else 0.0
    for j in range(cp.shape[0] - 1):
        i = row_of_col[j]
        if i < 0 or not col_active[j]:
            continue
        t = 0.0
        for p in range(cp[j], cp[j + 1]):
            a = pos[ci[p]]
            if a >= 0:
                t += cv[p] * d2[a]
        d[i] -= tau * coef_of_col[j] * t
    for i in range(m):
        if pos[i] < 0:
            d[i] /= prec[i]
    for a in range(coupling.shape[0]):
        d[coupling[a]] = d2[a]


@njit(cache=True)
def cholesky_solve(L, t, out):
    """out = (L L')^-1 t for a lower-triangular L (m2, m2) and t (m2,): forward then back substitution."""
    k = t.shape[0]
    for a in range(k):
        v = t[a]
        for b in range(a):
            v -= L[a, b] * out[b]
        out[a] = v / L[a, a]
    for a in range(k - 1, -1, -1):
        v = out[a]
        for b in range(a + 1, k):
            v -= L[b, a] * out[b]
        out[a] = v / L[a, a]


DENSE_FLOP_SHARE = 1.0 / 15.0
"""What a flop of the dense Cholesky costs against one of a matrix pass (2 flops per nonzero), measured on
the 2-core machine: LAPACK's dpotrf single-threaded (the CLI's setting, ``copter_cli.entry``) 10-23 GFLOP/s at
order 500-3,000, a pass of the ALM's kernels ~0.7 GFLOP/s (TE ring: 17 us for ~6k nonzeros)."""


def factor_passes(m2: int, nnz: int) -> int:
    """The matrix passes a dense Cholesky factorisation of order ``m2`` is charged on a matrix of ``nnz``
    nonzeros: ceil(m2^3 / 3 * DENSE_FLOP_SHARE / (2 nnz))."""
    return int(math.ceil(m2 ** 3 / 3.0 * DENSE_FLOP_SHARE / (2.0 * max(nnz, 1))))


class SchurSystem:
    """The Newton systems of one ALM run solved by block elimination (module docstring).

    Built once per run from the scaled matrix (:func:`assignment_rows`); :meth:`solve` assembles S for the
    current active set, factors it (``numpy.linalg.cholesky``, LAPACK) and returns the exact direction.

    Attributes:
        m2: the number of coupling rows (the order of S). factor: the matrix passes a factorisation is
            charged (:func:`factor_passes`: m2^3 / 3 flops at :data:`DENSE_FLOP_SHARE` of a pass's flop).
            passes: what the last :meth:`solve` was charged (``solver.lp.alm_newton``'s work unit): the
            right-hand side and the back substitution, one pass each, the assembly's multiply-adds over nnz
            (TE Kdl: each active path's links squared, each demand's paths' links squared), and ``factor``.
    """

    def __init__(self, cp, ci, cv, m: int):
        (self.row_of_col, self.coef_of_col, self.pos, self.coupling, self.rp,
         self.rc) = assignment_rows(cp, ci, cv, m)
        self.m2 = k = int(self.coupling.shape[0])
        self.nnz = max(int(cp[-1]), 1)
        self.factor = factor_passes(k, self.nnz)
        self.passes = 0
        self.S = None  # (m2, m2) work arrays: allocated by the first solve (the caller may decline a large m2)

    def solve(self, cp, ci, cv, col_active, tau: float, diag, prec, g, d) -> bool:
        """d = V^-1 g (m,) for V = tau A_J A_J' + diag(diag) (``prec``: V's diagonal). False (d unchanged)
        when S is not numerically positive definite: the caller falls back to PCG."""
        if self.S is None:
            k = self.m2
            self.S, self.u, self.touched = np.empty((k, k)), np.zeros(k), np.empty(k, dtype=np.int64)
            self.t, self.d2 = np.empty(k), np.empty(k)
        ops = schur_assemble(cp, ci, cv, col_active, tau, diag, prec, self.row_of_col, self.coef_of_col,
                             self.pos, self.coupling, self.rp, self.rc, self.u, self.touched, self.S)
        self.passes = 2 + int(math.ceil(ops / self.nnz)) + self.factor
        schur_rhs(cp, ci, cv, col_active, tau, prec, self.row_of_col, self.coef_of_col, self.coupling, self.pos,
                  g, self.t)
        if self.m2:
            try:
                L = np.linalg.cholesky(self.S)
            except np.linalg.LinAlgError:
                return False
            cholesky_solve(L, self.t, self.d2)
            if not np.isfinite(self.d2).all():
                return False
        schur_back(cp, ci, cv, col_active, tau, prec, self.row_of_col, self.coef_of_col, self.coupling, self.pos,
                   g, self.d2, d)
        return True


_LAST: dict = {}
_LOCK = threading.Lock()


def schur_system(cp, ci, cv, m: int) -> SchurSystem:
    """The :class:`SchurSystem` of the CSC arrays (cp, ci, cv) with m rows, kept for the last matrix seen (keyed
    by the arrays' identity, as ``solver.lp.alm_scaling`` keeps its factors: a round whose delta leaves the matrix
    alone shares the scaled arrays, so a long-lived process, the worker or a part worker, chooses the assignment
    rows once, not every round). Its work arrays are reused; one ALM run uses it at a time."""
    with _LOCK:
        hit = _LAST.get("last")
        if hit is not None and hit[0] == m and hit[1][0] is cp and hit[1][1] is ci and hit[1][2] is cv:
            return hit[2]
    out = SchurSystem(cp, ci, cv, m)
    with _LOCK:
        _LAST["last"] = (m, (cp, ci, cv), out)
    return out
