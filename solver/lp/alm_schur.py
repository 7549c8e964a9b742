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
moderate and by PCG otherwise. No factorisation of A is formed: the engine stays matrix-free in A. From order
1,000 on S is factored in single precision and the solve refined in double to 1e-10 of its right-hand side
(:func:`refined_single_solve`): the same directions for about 0.6x of the double factor's time.

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


@njit(cache=True, nogil=True)  # nogil: a partitioned LP round runs it in a thread while its parts run
def assignment_rows(cp, ci, cv, m):
    """Choose the assignment rows R1 (pairwise disjoint supports) greedily, once per problem.

    Rows are taken by increasing count (ties by index), each when none of its columns is already claimed
    by a taken row: the small rows first, so a TE demand's one-path row keeps its column from a link row.
    (Session 17's order, one-entry rows last, left 4,776 coupling rows on TE Cogentco: links used by two or
    three paths claimed the columns of single-path demands; by count: 486. TE ring 72, Sia 1,024 7, LB 256x32
    320 either way.) The greedy walks every row's columns (an int32 transpose of the pattern: TE Kdl's 31M
    entries 0.46 -> 0.24 s against int64), but only the assignment rows' columns are returned: the Schur kernels
    walk nothing else, and they are at most n (Kdl: 1.06M entries kept instead of 31M, 4 MB instead of 250 MB).

    Args:
        cp (n+1,) int64, ci (nnz,) int32/int64, cv (nnz,) float64: CSC of A (m x n, no repeated entries,
            n < 2**31).
        m: number of rows.
    Returns:
        (row_of_col (n,) int64: the assignment row holding column j, or -1; coef_of_col (n,) float64: a_ij
        for that row, else 0; pos (m,) int64: the row's index among the coupling rows, -1 for an assignment
        row; coupling (m2,) int64: the coupling rows in increasing order; rp (m+1,) int64, rc (n1,) int32:
        the columns of every assignment row in increasing order, CSR-style (a coupling row's range is empty),
        which the Schur kernels walk).
    Raises:
        ValueError: n >= 2**31 (column indices held as int32).
    """
    n = cp.shape[0] - 1
    if n >= 2147483647:
        raise ValueError("assignment_rows: 2**31 columns or more")
    cnt = np.zeros(m, dtype=np.int64)
    for p in range(cp[n]):
        cnt[ci[p]] += 1
    rp = np.zeros(m + 1, dtype=np.int64)
    for i in range(m):
        rp[i + 1] = rp[i] + cnt[i]
    fill = rp[:m].copy()
    rc = np.empty(cp[n], dtype=np.int32)
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
    rp1 = np.zeros(m + 1, dtype=np.int64)
    for i in range(m):
        rp1[i + 1] = rp1[i] + (cnt[i] if taken[i] else 0)
    rc1 = np.empty(rp1[m], dtype=np.int32)
    for i in range(m):
        if taken[i]:
            for q in range(rp[i], rp[i + 1]):
                rc1[rp1[i] + q - rp[i]] = rc[q]
    pos, coupling = _number_coupling(taken)
    return row_of_col, coef_of_col, pos, coupling, rp1, rc1


@njit(cache=True, nogil=True)
def _number_coupling(taken):
    """(pos (m,) int64: each row's index among the rows not ``taken``, -1 for a taken one; those rows (m2,) int64 in
    increasing order) for ``taken`` (m,) uint8."""
    m = taken.shape[0]
    m2 = 0
    for i in range(m):
        m2 += 1 - taken[i]
    pos = np.full(m, -1, dtype=np.int64)
    out = np.empty(m2, dtype=np.int64)
    m2 = 0
    for i in range(m):
        if not taken[i]:
            pos[i] = m2
            out[m2] = i
            m2 += 1
    return pos, out


@njit(cache=True, nogil=True)
def assignment_rows_given(cp, ci, cv, coupling, m):
    """:func:`assignment_rows`'s arrays for a known choice: every row but ``coupling`` is an assignment row (one
    pass over the nonzeros instead of the greedy's transpose and walk: TE Kdl 0.35 s -> one sweep). For the
    coupling rows :func:`assignment_rows` returned on the same pattern the arrays are the same, element for
    element, so a round is the same whether its rows were chosen again or carried (``solver.lp.alm_scaling``).

    Args:
        cp (n+1,) int64, ci (nnz,) int32/int64, cv (nnz,) float64: CSC of A (m x n, no repeated entries).
        coupling: (m2,) int64 row indices (any order; a repeated one counts once).
        m: number of rows.
    Returns:
        :func:`assignment_rows`'s tuple, or an empty tuple-shaped result with ``pos.shape[0] == 0`` when the
        choice does not fit this matrix: an index outside [0, m), n >= 2**31, or a column with entries in two
        assignment rows (their supports must be pairwise disjoint). The caller then chooses afresh.
    """
    n = cp.shape[0] - 1
    taken = np.ones(m, dtype=np.uint8)
    bad = n >= 2147483647
    for k in range(coupling.shape[0]):
        i = coupling[k]
        if i < 0 or i >= m:
            bad = True
            break
        taken[i] = 0
    row_of_col = np.full(n if not bad else 0, -1, dtype=np.int64)
    coef_of_col = np.zeros(n if not bad else 0)
    cnt = np.zeros(m if not bad else 0, dtype=np.int64)
    if not bad:
        for j in range(n):
            for p in range(cp[j], cp[j + 1]):
                i = ci[p]
                if taken[i]:
                    if row_of_col[j] >= 0:
                        bad = True
                        break
                    row_of_col[j] = i
                    coef_of_col[j] = cv[p]
                    cnt[i] += 1
            if bad:
                break
    if bad:
        e = np.empty(0, dtype=np.int64)
        return e, np.empty(0), e, e, np.zeros(1, dtype=np.int64), np.empty(0, dtype=np.int32)
    rp1 = np.zeros(m + 1, dtype=np.int64)
    for i in range(m):
        rp1[i + 1] = rp1[i] + cnt[i]
    fill = rp1[:m].copy()
    rc1 = np.empty(rp1[m], dtype=np.int32)
    for j in range(n):  # columns in increasing order: each row's list increasing, as the greedy's transpose gives
        i = row_of_col[j]
        if i >= 0:
            rc1[fill[i]] = j
            fill[i] += 1
    pos, out = _number_coupling(taken)
    return row_of_col, coef_of_col, pos, out, rp1, rc1


def choose_assignment_rows(cp, ci, cv, m: int, coupling: np.ndarray | None = None) -> tuple:
    """:func:`assignment_rows`'s tuple for the CSC arrays (cp, ci, cv) with m rows: rebuilt from ``coupling`` ((m2,)
    the coupling rows a previous process chose for this matrix's pattern) in one checked pass
    (:func:`assignment_rows_given`) when they fit it, else chosen by the greedy (``coupling`` None, or refused)."""
    if coupling is not None:
        # a fresh int64 copy (m2 entries): one kernel signature whatever the caller holds (read-only, int32)
        got = assignment_rows_given(cp, ci, cv, np.array(coupling, dtype=np.int64), m)
        if got[2].shape[0] == m and got[0].shape[0] == cp.shape[0] - 1:  # not the refusal's empty arrays
            return got
    return assignment_rows(cp, ci, cv, m)


@njit(cache=True)
def block_bound(cp, ci, pos, rp, rc):
    """An upper bound on the coupling rows one assignment row's columns reach (the order of the dense block
    :func:`schur_assemble` builds per assignment row): max over assignment rows of min(m2, the coupling
    entries of its columns). 0 when there is no assignment row or no coupling row.

    Args:
        cp (n+1,), ci (nnz,): CSC pattern of A. pos (m,), rp (m+1,), rc (n1,): :func:`assignment_rows`'s output.
    Returns:
        the bound (int).
    """
    m = pos.shape[0]
    m2 = 0
    for i in range(m):
        if pos[i] >= 0:
            m2 += 1
    best = 0
    for i in range(m):
        if pos[i] >= 0:
            continue
        k = 0
        for r in range(rp[i], rp[i + 1]):
            j = rc[r]
            for p in range(cp[j], cp[j + 1]):
                if pos[ci[p]] >= 0:
                    k += 1
        k = min(k, m2)
        if k > best:
            best = k
    return best


@njit(cache=True)
def _row_block(i, sign, cp, ci, cv, col_active, tau, prec_i, coef_of_col, pos, rp, rc, u, touched, mark, blk, C):
    """Add ``sign`` x (tau sum_j a2_j a2_j' - u_i u_i' / V11_ii) of assignment row i (j: its active columns)
    to C's upper triangle, as one dense block over the k coupling rows its active columns reach. Returns the
    multiply-adds counted (its columns' coupling entries squared, plus k squared when k > 0)."""
    ops = 0
    k = 0
    for r in range(rp[i], rp[i + 1]):  # the coupling rows its active columns reach: block index mark[a]
        j = rc[r]
        if not col_active[j]:
            continue
        for p in range(cp[j], cp[j + 1]):
            a = pos[ci[p]]
            if a >= 0 and mark[a] < 0:
                mark[a] = k
                touched[k] = a
                u[k] = 0.0
                k += 1
    if k == 0:
        return 0
    for x in range(k):
        for y in range(k):
            blk[x, y] = 0.0
    for r in range(rp[i], rp[i + 1]):
        j = rc[r]
        if not col_active[j]:
            continue
        f = tau * coef_of_col[j]
        for p in range(cp[j], cp[j + 1]):
            a = pos[ci[p]]
            if a >= 0:
                x = mark[a]
                u[x] += f * cv[p]
                va = tau * cv[p]
                for q in range(cp[j], cp[j + 1]):
                    b = pos[ci[q]]
                    if b >= 0:
                        blk[x, mark[b]] += va * cv[q]
                        ops += 1
    h = 1.0 / prec_i
    for x in range(k):
        a = touched[x]
        ux = u[x] * h
        for y in range(k):
            b = touched[y]
            if b >= a:
                C[a, b] += sign * (blk[x, y] - ux * u[y])
    for x in range(k):
        mark[touched[x]] = -1
    return ops + k * k


@njit(cache=True)
def _column_outer(j, sign, cp, ci, cv, tau, pos, C):
    """Add ``sign`` x tau a2_j a2_j' of a column outside every assignment row to C's upper triangle; returns
    the multiply-adds counted (its coupling entries squared)."""
    ops = 0
    for p in range(cp[j], cp[j + 1]):
        a = pos[ci[p]]
        if a >= 0:
            va = sign * tau * cv[p]
            for q in range(cp[j], cp[j + 1]):
                b = pos[ci[q]]
                if b >= a:
                    C[a, b] += va * cv[q]
                if b >= 0:
                    ops += 1
    return ops


@njit(cache=True)
def schur_assemble(cp, ci, cv, col_active, tau, prec, row_of_col, coef_of_col, pos, coupling, rp, rc,
                   u, touched, mark, blk, C):
    """C = tau sum_J a2_j a2_j' - sum_{R1} u_i u_i' / V11_ii, the Schur complement S without its diagonal
    diag(d_2) (module docstring; :func:`schur_finish` adds it), upper triangle, one pass.

    Per assignment row i, its active columns' terms and its own u_i u_i' / V11_ii meet in one dense block
    over the k coupling rows they reach (``blk``, k <= :func:`block_bound`), added to C once; active columns
    outside every assignment row add tau a2_j a2_j' directly. Each coupling pair is then touched once per
    assignment row instead of once per column and once more for u_i u_i' (TE Kdl, a part of 266k columns
    and 1,790 coupling rows: 0.40-0.57 s -> 0.27-0.33 s per assembly, the same S to 4e-14 relative).

    Args:
        cp, ci, cv: CSC of A. col_active (n,) uint8: J. tau: the column step. prec (m,): V's diagonal
            (``alm_kernels.hessian_diagonal``; on R1 it is V11). row_of_col, coef_of_col, pos, coupling,
            rp, rc: :func:`assignment_rows`'s output.
        u (m2,) float64, touched (m2,) int64: work arrays. mark (m2,) int64: work array, all -1 on entry
            (left so). blk (kb, kb) float64: work array, kb >= :func:`block_bound`.
    Output: C (m2, m2) float64: the upper triangle (a <= b) is overwritten; the lower one is not used.
    Returns:
        the multiply-adds (sum over active columns of their coupling entries squared, plus sum over
        assignment rows of k squared; ``SchurSystem`` charges them as matrix passes).
    """
    m2 = coupling.shape[0]
    n = cp.shape[0] - 1
    ops = 0
    for a in range(m2):
        for b in range(a, m2):
            C[a, b] = 0.0
    for j in range(n):
        if col_active[j] and row_of_col[j] < 0:
            ops += _column_outer(j, 1.0, cp, ci, cv, tau, pos, C)
    for i in range(pos.shape[0]):
        if pos[i] < 0:
            ops += _row_block(i, 1.0, cp, ci, cv, col_active, tau, prec[i], coef_of_col, pos, rp, rc, u, touched,
                              mark, blk, C)
    return ops


@njit(cache=True)
def schur_update(cp, ci, cv, col_active, col_active_old, tau, prec, prec_old, row_of_col, coef_of_col, pos,
                 rp, rc, u, touched, mark, blk, flag, max_rows, C):
    """Bring C (:func:`schur_assemble`'s output for ``col_active_old`` and ``prec_old`` at the same ``tau``) to
    ``col_active`` and ``prec``, touching only what changed: an assignment row whose active columns or V11_ii
    changed has its old block subtracted and its new one added; a column outside every assignment row that
    entered or left J adds or subtracts tau a2_j a2_j'. Between two Newton steps of TE Kdl 12-1,034 of
    141,940 assignment rows changed (a part's warm round), so the assembly costs a small share of a full one.

    Args:
        as :func:`schur_assemble`, plus col_active_old (n,) uint8 and prec_old (m,): the state C was built
        for; flag (m,) uint8: work array, zero on entry (left so); max_rows: the changed assignment rows
        above which nothing is done (a full assembly is then cheaper).
    Output: C, upper triangle, updated in place (unless -1 is returned).
    Returns:
        the multiply-adds done, or -1 when more than ``max_rows`` assignment rows changed (C untouched).
    """
    n = cp.shape[0] - 1
    m = pos.shape[0]
    rows = 0
    for j in range(n):
        if (col_active[j] != 0) != (col_active_old[j] != 0):
            i = row_of_col[j]
            if i >= 0 and flag[i] == 0:
                flag[i] = 1
                rows += 1
    for i in range(m):
        if pos[i] < 0 and flag[i] == 0 and prec[i] != prec_old[i]:
            flag[i] = 1
            rows += 1
    if rows > max_rows:
        for i in range(m):
            flag[i] = 0
        return -1
    ops = 0
    for j in range(n):
        if (col_active[j] != 0) != (col_active_old[j] != 0) and row_of_col[j] < 0:
            ops += _column_outer(j, 1.0 if col_active[j] else -1.0, cp, ci, cv, tau, pos, C)
    for i in range(m):
        if flag[i]:
            flag[i] = 0
            ops += _row_block(i, -1.0, cp, ci, cv, col_active_old, tau, prec_old[i], coef_of_col, pos, rp, rc, u,
                              touched, mark, blk, C)
            ops += _row_block(i, 1.0, cp, ci, cv, col_active, tau, prec[i], coef_of_col, pos, rp, rc, u, touched,
                              mark, blk, C)
    return ops


@njit(cache=True)
def schur_finish(C, diag, coupling, S, S32):
    """S = C + diag(d_2) in S's upper triangle, diagonal included (C: upper triangle, :func:`schur_assemble`), the
    triangle :func:`factor_upper` reads; S (m2, m2) C-ordered, its strict lower triangle is not written; C is not
    changed. One contiguous copy of a triangle: writing the lower one too (a transposed, strided copy) took 9 ms
    at TE Kdl's order 1,790, a quarter of the factorisation, at every Newton step.

    S32 (float32, C-ordered): when it is (m2, m2), its upper triangle gets S's rounded to single precision in the
    same pass (what :func:`refined_single_solve` factors); any other shape ((0, 0): below
    :data:`SINGLE_MIN_ORDER`) is not written. One signature either way, so the warm-up's small problems compile
    the kernel that TE Kdl's order 1,790 runs."""
    m2 = coupling.shape[0]
    single = S32.shape[0] == m2 and S32.shape[1] == m2
    for a in range(m2):
        v = C[a, a] + diag[coupling[a]]
        S[a, a] = v
        if single:
            S32[a, a] = v
        for b in range(a + 1, m2):
            S[a, b] = C[a, b]
        if single:
            for b in range(a + 1, m2):
                S32[a, b] = C[a, b]


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
def upper_cholesky_solve(U, t, out):
    """out = (U' U)^-1 t for an upper-triangular U (m2, m2), C-ordered, and t (m2,): U' z = t, then U out = z,
    both walking U by rows (contiguous; the lower factor's back substitution walked it by columns). Reads U's
    upper triangle only (diagonal included)."""
    k = t.shape[0]
    for a in range(k):
        out[a] = t[a]
    for a in range(k):  # U' z = t, column a of U' = row a of U
        za = out[a] / U[a, a]
        out[a] = za
        for c in range(a + 1, k):
            out[c] -= U[a, c] * za
    for a in range(k - 1, -1, -1):  # U out = z
        v = out[a]
        for b in range(a + 1, k):
            v -= U[a, b] * out[b]
        out[a] = v / U[a, a]


LAPACK_MIN_ORDER = 1000
"""Order of S from which :func:`factor_upper` factors it in place with LAPACK's ``dpotrf`` (through
``scipy.linalg.lapack``) instead of ``numpy.linalg.cholesky``, which copies S into a work array, factors it
there and copies the factor out with its other triangle zeroed. TE Kdl's S (order 1,790, one BLAS thread):
0.076 s against 0.048 s a factorisation, 11 of them in a K = 4 part's warm round; below this order the
difference does not pay for importing ``scipy.linalg`` in a step process (0.12 s, once)."""


def factor_upper(S: np.ndarray) -> np.ndarray | None:
    """The upper Cholesky factor U (k, k) of the symmetric positive definite S = U' U (k, k, C-contiguous
    float64) from S's upper triangle (diagonal included; :func:`schur_finish` writes only that one), or None
    when S is not numerically positive definite. U is C-contiguous; only its upper triangle (diagonal included)
    is defined, which is all :func:`upper_cholesky_solve` reads. From order :data:`LAPACK_MIN_ORDER` on, S is
    overwritten: U is S itself (its strict lower triangle keeps whatever it held), else S is left as it was.

    Raises:
        RuntimeError: LAPACK reports an invalid argument (a bug, not a property of S).
    """
    if S.shape[0] < LAPACK_MIN_ORDER:
        try:
            # numpy reads its argument's lower triangle: S' holds S's upper one; S = L L' with L' = U
            return np.ascontiguousarray(np.linalg.cholesky(S.T).T)
        except np.linalg.LinAlgError:
            return None
    from scipy.linalg import lapack

    # S' is Fortran-ordered and its lower triangle is S's upper one: its lower factor L (S = L L'), written over
    # it, is U = L' read in C order
    L, info = lapack.dpotrf(S.T, lower=1, overwrite_a=1, clean=0)
    if info < 0:
        raise RuntimeError(f"LAPACK dpotrf: argument {-info} is invalid")
    if info > 0:
        return None
    return L.T


SINGLE_MIN_ORDER = LAPACK_MIN_ORDER
"""Order of S from which :class:`SchurSystem` solves it by :func:`refined_single_solve` (a single-precision factor,
refined in double) before :func:`factor_upper`'s double one. Below it the factorisation is a small share of a
Newton step and the double factor is kept (and the warm-up's small problems keep their exact directions)."""
REFINE_TOL = 1e-10
"""Relative residual ||S x - t||_2 / ||t||_2 that :func:`refined_single_solve`'s refinement must reach: far below
the Newton direction's own forcing term (``alm_newton.cg_forcing``, >= 1e-8 relative), about what the double factor
leaves on TE Kdl's S."""
REFINE_STEPS = 6  #: refinement steps at most; a step that does not halve the residual ends the attempt too


def refined_single_solve(S: np.ndarray, S32: np.ndarray, t: np.ndarray, out: np.ndarray) -> bool:
    """out = S^-1 t by a single-precision Cholesky factor and iterative refinement in double precision.

    S32 (S rounded to float32, :func:`schur_finish`) is factored in place by LAPACK's ``spotrf`` (half the flops'
    time of ``dpotrf``, and half the memory traffic); then x_0 = 0 and, while ||r|| > :data:`REFINE_TOL` ||t||,
    r = t - S x (BLAS ``dsymv`` on S's upper triangle, in double), x += S32^-1 r (``spotrs``): mixed-precision
    iterative refinement (Moler, J. ACM 14(2), 1967; Higham, "Accuracy and Stability of Numerical Algorithms", 2nd
    ed., 2002, chapter 12; Buttari et al., "Mixed precision iterative refinement techniques for the solution of
    dense linear systems", IJHPCA 21(4), 2007), which converges to double accuracy when kappa(S) times float32's
    unit round-off (6e-8) is well below 1. TE Kdl, a K = 4 part's warm round (order 1,790, one BLAS thread):
    9 factorisations of 52-79 ms each -> ~35 ms and 2-3 refinement steps, the same Newton steps and point; an
    order-1,790 system alone (``dpotrf`` + two triangular solves against this): 72 / 52 ms -> 45 / 30 ms (two runs).
    :class:`SchurSystem` charges it the double factor's passes (:func:`factor_passes`), so the work budget's
    decisions do not move with it.

    Args:
        S (k, k) float64 C-ordered: its upper triangle (diagonal included) is read; not changed.
        S32 (k, k) float32 C-ordered: its upper triangle holds S's rounded; overwritten by the factor.
        t (k,) float64: the right-hand side. out (k,) float64: the solution, written only on success.
    Returns:
        True with ``out`` set; False (``out`` unchanged) when S32 is not numerically positive definite, the
        refinement stops halving the residual or has taken :data:`REFINE_STEPS` steps, or a value is not finite:
        the caller then factors S in double (:func:`factor_upper`).
    Raises:
        RuntimeError: LAPACK reports an invalid argument (a bug, not a property of S).
    """
    from scipy.linalg import blas, lapack

    # S32' is Fortran-ordered and its lower triangle is S32's upper one (as factor_upper reads S)
    L, info = lapack.spotrf(S32.T, lower=1, overwrite_a=1, clean=0)
    if info < 0:
        raise RuntimeError(f"LAPACK spotrf: argument {-info} is invalid")
    if info > 0:
        return False
    t_norm = math.sqrt(float(np.dot(t, t)))
    if not math.isfinite(t_norm):
        return False
    if t_norm == 0.0:
        out[:] = 0.0
        return True
    x = np.zeros(t.shape[0])
    r, r_norm = t, t_norm
    for _ in range(REFINE_STEPS):
        z, info = lapack.spotrs(L, r.astype(np.float32), lower=1)
        if info < 0:
            raise RuntimeError(f"LAPACK spotrs: argument {-info} is invalid")
        x += z
        r = t - blas.dsymv(1.0, S.T, x, lower=1)  # S' Fortran-ordered: its lower triangle is S's upper one
        new = math.sqrt(float(np.dot(r, r)))
        if not math.isfinite(new):
            return False
        if new <= REFINE_TOL * t_norm:
            out[:] = x
            return True
        if new > 0.5 * r_norm:
            return False
        r_norm = new
    return False


DENSE_FLOP_SHARE = 1.0 / 15.0
"""What a flop of the dense Cholesky costs against one of a matrix pass (2 flops per nonzero), measured on
the 2-core machine: LAPACK's dpotrf single-threaded (the CLI's setting, ``copter_cli.entry``) 10-23 GFLOP/s at
order 500-3,000, a pass of the ALM's kernels ~0.7 GFLOP/s (TE ring: 17 us for ~6k nonzeros)."""


def factor_passes(m2: int, nnz: int) -> int:
    """The matrix passes a dense Cholesky factorisation of order ``m2`` is charged on a matrix of ``nnz``
    nonzeros: ceil(m2^3 / 3 * DENSE_FLOP_SHARE / (2 nnz))."""
    return int(math.ceil(m2 ** 3 / 3.0 * DENSE_FLOP_SHARE / (2.0 * max(nnz, 1))))


UPDATE_SHARE = 0.3
"""Share of the assignment rows that may change between two Newton steps for S to be updated
(:func:`schur_update`) rather than assembled afresh."""
REBUILD_AFTER = 32
"""Updates in a row after which S is assembled afresh all the same, so that the round-off of adding and
subtracting blocks never accumulates over a long run (a new tau, a failed factorisation do it too)."""


class SchurSystem:
    """The Newton systems of one ALM run solved by block elimination (module docstring).

    Built once per run from the scaled matrix (:func:`assignment_rows`, or :func:`assignment_rows_given` from
    a carried choice); :meth:`solve` brings S to the
    current active set, factors it and returns the exact direction: from order :data:`SINGLE_MIN_ORDER` on by a
    single-precision factor refined in double to :data:`REFINE_TOL` (:func:`refined_single_solve`), else, or when
    that refuses, by the double factor (:func:`factor_upper`, LAPACK). S is
    updated from the previous step's (:func:`schur_update`: only the assignment rows whose active columns or
    V11_ii changed, at the same tau) unless more than :data:`UPDATE_SHARE` of them changed, tau changed, the
    last factorisation failed, or :data:`REBUILD_AFTER` updates were made in a row; then it is assembled
    afresh (:func:`schur_assemble`). TE Kdl warm rounds (a part's 9-11 Newton steps, the monolithic round's
    6): the assembly was 52-66% of the round's Newton time.

    Attributes:
        m2: the number of coupling rows (the order of S). factor: the matrix passes a factorisation is
            charged (:func:`factor_passes`: m2^3 / 3 flops at :data:`DENSE_FLOP_SHARE` of a pass's flop).
            passes: what the last :meth:`solve` was charged (``solver.lp.alm_newton``'s work unit): the
            right-hand side and the back substitution, one pass each, the assembly's multiply-adds over nnz
            (TE Kdl: each active path's links squared, each demand's paths' links squared), and ``factor``.
    """

    def __init__(self, cp, ci, cv, m: int, coupling: np.ndarray | None = None):
        (self.row_of_col, self.coef_of_col, self.pos, self.coupling, self.rp,
         self.rc) = choose_assignment_rows(cp, ci, cv, m, coupling)
        self.m2 = k = int(self.coupling.shape[0])
        self.nnz = max(int(cp[-1]), 1)
        self.factor = factor_passes(k, self.nnz)
        self.passes = 0
        self.S = None  # (m2, m2) work arrays: allocated by the first solve (the caller may decline a large m2)
        #: changed assignment rows above which a Newton step assembles S afresh instead of updating it (an
        #: update recomputes a changed row's block twice, old and new)
        self.update_rows = int(UPDATE_SHARE * max(int(m) - k, 0))

    def solve(self, cp, ci, cv, col_active, tau: float, diag, prec, g, d) -> bool:
        """d = V^-1 g (m,) for V = tau A_J A_J' + diag(diag) (``prec``: V's diagonal). False (d unchanged)
        when S is not numerically positive definite: the caller falls back to PCG."""
        if self.S is None:
            k, m = self.m2, self.pos.shape[0]
            self.S, self.C = np.empty((k, k)), np.empty((k, k))
            self.u, self.touched = np.zeros(k), np.empty(k, dtype=np.int64)
            self.t, self.d2 = np.empty(k), np.empty(k)
            self.mark = np.full(k, -1, dtype=np.int64)
            kb = block_bound(cp, ci, self.pos, self.rp, self.rc)
            self.blk = np.empty((kb, kb))
            self.flag = np.zeros(m, dtype=np.uint8)
            self.built_active, self.built_prec = np.empty(col_active.shape[0], dtype=np.uint8), np.empty(m)
            self.built_tau = None  # C holds nothing yet
            self.updates = 0
            # S is solved by refined_single_solve from SINGLE_MIN_ORDER on (never at order 0: nothing to factor, and
            # scipy.linalg's import is what the threshold spares small models); S32 is then S rounded to single
            # precision, else (0, 0) and not written
            self.single = 0 < k and k >= SINGLE_MIN_ORDER
            self.S32 = np.zeros((k, k) if self.single else (0, 0), dtype=np.float32)
            self.refused_tau = None  # the proximal step at which refined_single_solve last refused
        ops = -1
        update = self.built_tau == tau and self.updates < REBUILD_AFTER
        self.built_tau = None  # C changes below: until built_* describe it again, the next solve assembles afresh
        if update:
            ops = schur_update(cp, ci, cv, col_active, self.built_active, tau, prec, self.built_prec,
                               self.row_of_col, self.coef_of_col, self.pos, self.rp, self.rc, self.u, self.touched,
                               self.mark, self.blk, self.flag, self.update_rows, self.C)
        if ops < 0:
            ops = schur_assemble(cp, ci, cv, col_active, tau, prec, self.row_of_col, self.coef_of_col, self.pos,
                                 self.coupling, self.rp, self.rc, self.u, self.touched, self.mark, self.blk, self.C)
            self.updates = 0
        else:
            self.updates += 1
        np.copyto(self.built_active, col_active, casting="unsafe")
        np.copyto(self.built_prec, prec)
        self.built_tau = tau
        schur_finish(self.C, diag, self.coupling, self.S, self.S32)
        self.passes = 2 + int(math.ceil(ops / self.nnz)) + self.factor
        schur_rhs(cp, ci, cv, col_active, tau, prec, self.row_of_col, self.coef_of_col, self.coupling, self.pos,
                  g, self.t)
        # the single factor from SINGLE_MIN_ORDER on, except at the tau of its last refusal: the next Newton steps'
        # S are conditioned alike, and a refusal costs its factorisation on top of the double one (netlib lotfi,
        # forced: 58 refusals in 236 Newton steps -> 4, the same point)
        single = self.single and tau != self.refused_tau
        if single and not refined_single_solve(self.S, self.S32, self.t, self.d2):
            self.refused_tau, single = tau, False
        if self.m2 and not single:
            U = factor_upper(self.S)  # below SINGLE_MIN_ORDER, or the single-precision factor did not do
            if U is None:
                self.built_tau = None  # the next solve assembles S afresh
                return False
            upper_cholesky_solve(U, self.t, self.d2)
            if not np.isfinite(self.d2).all():
                self.built_tau = None
                return False
        schur_back(cp, ci, cv, col_active, tau, prec, self.row_of_col, self.coef_of_col, self.coupling, self.pos,
                   g, self.d2, d)
        return True


_LAST: dict = {}
_LOCK = threading.Lock()


def forget() -> None:
    """Drop the kept :class:`SchurSystem` (what a new process starts without)."""
    with _LOCK:
        _LAST.clear()


def schur_system(cp, ci, cv, m: int, coupling: np.ndarray | None = None) -> SchurSystem:
    """The :class:`SchurSystem` of the CSC arrays (cp, ci, cv) with m rows, kept for the last matrix seen (keyed
    by the arrays' identity, as ``solver.lp.alm_scaling`` keeps its factors: a round whose delta leaves the matrix
    alone shares the scaled arrays, so a long-lived process, the worker or a part worker, chooses the assignment
    rows once, not every round). Its work arrays are reused; one ALM run uses it at a time.

    ``coupling`` ((m2,) int64 or None): the coupling rows a previous process chose for this matrix (carried in
    the state with its scaling, ``solver.lp.alm_scaling.coupling_rows_of``): one pass rebuilds the arrays
    (:func:`assignment_rows_given`) instead of the greedy; a choice that does not fit is ignored."""
    with _LOCK:
        hit = _LAST.get("last")
        if hit is not None and hit[0] == m and hit[1][0] is cp and hit[1][1] is ci and hit[1][2] is cv:
            return hit[2]
    out = SchurSystem(cp, ci, cv, m, coupling)
    with _LOCK:
        _LAST["last"] = (m, (cp, ci, cv), out)
    return out
