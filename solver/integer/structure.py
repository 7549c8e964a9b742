"""Structure detection for integerization: choice rows, capacity rows, variable upper bounds, integers.

All detection works on one CSR copy of :class:`~solver.model.problem.Problem`'s matrix (the counting-sort kernel
``solver.lp.scaling.csc_to_csr``, the same arrays as scipy's conversion; no scipy on the round path, issue #15):
the per-row facts in one numba pass (``structure_kernels.row_stats``, numpy twin ``structure_ref``), the rest
vectorised over rows; there is no Python loop over rows, columns or nonzeros.

Definitions (A row i with bounds [rl, ru]; "binary" = integer column whose bounds rounded inward lie in
[0, 1]):

- **choice row**: every nonzero is on a binary column, all coefficients equal a common factor ``a`` and,
  divided by ``a`` (sides swapped when ``a < 0``), the row reads ``sum x <= 1`` (kind ``LE1``: scaled lower
  bound <= 0) or ``sum x = 1`` (kind ``EQ1``: scaled lower bound in (0, 1]); the scaled upper bound lies in
  [1, 2), i.e. at most one member can be 1. Sia's "one configuration per job" rows are ``LE1``.
- **capacity (knapsack) row**: not a choice row, holds at least one integer column, all coefficients of
  one sign ``s``, the bound on that side finite and the other side not binding (no bound, or below the
  row's minimum activity over the column bounds). Sia's GPU-type rows and load balancing's memory rows.
- **variable upper bound (VUB)**: a two-nonzero row ``a_r * r - b_x * x <= 0`` (possibly negated,
  ``>= 0``) with ``a_r, b_x > 0``, ``x`` binary and ``r >= 0``: ``x = 0`` forces ``r = 0`` and ``x = 1``
  allows ``r <= b_x / a_r``. Load balancing's ``r[i,j] <= x[i,j]``.
- **general integer**: an integer column that is not binary.

Follows the row classification of MIP presolve/heuristic literature (e.g. the constraint types of
Achterberg's SCIP thesis, 2007, ch. 10 "primal heuristics") restricted to what the rounding uses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solver.integer.structure_kernels import row_stats
from solver.lp.scaling import csc_to_csr
from solver.model.problem import Problem

LE1 = 0  #: choice row kind: sum of binaries <= 1
EQ1 = 1  #: choice row kind: sum of binaries == 1


@dataclass(eq=False)
class Structure:
    """What :func:`detect_structure` found. n columns, m rows.

    Attributes:
        lower, upper: (n,) float64 column bounds with integer bounds rounded inward (ceil/floor).
        binary: (n,) bool, integer columns with 0 <= lower <= upper <= 1.
        general: (n,) bool, integer columns that are not binary.
        choice_rows: (k,) int64 row indices of choice rows; ``choice_kind`` (k,) int8 LE1/EQ1.
        in_choice: (n,) bool, column belongs to at least one choice row.
        capacity_rows: (q,) int64 row indices of capacity rows.
        vub_rows, vub_parent, vub_child: (v,) int64 rows and their binary ``x`` / bounded ``r`` columns.
        vub_ratio: (v,) float64 ``b_x / a_r``: ``r <= vub_ratio * x``.
        csr_indptr, csr_indices, csr_data: CSR copy of A ((m+1,), (nnz,), (nnz,)).
        integer_infeasible_bounds: (n,) bool, integer columns with ceil(lower) > floor(upper).
    """

    lower: np.ndarray
    upper: np.ndarray
    binary: np.ndarray
    general: np.ndarray
    choice_rows: np.ndarray
    choice_kind: np.ndarray
    in_choice: np.ndarray
    capacity_rows: np.ndarray
    vub_rows: np.ndarray
    vub_parent: np.ndarray
    vub_child: np.ndarray
    vub_ratio: np.ndarray
    csr_indptr: np.ndarray
    csr_indices: np.ndarray
    csr_data: np.ndarray
    integer_infeasible_bounds: np.ndarray

    def summary(self) -> dict:
        """Counts for the MILP report."""
        return {"binary": int(self.binary.sum()), "general_integer": int(self.general.sum()),
                "choice_rows": int(self.choice_rows.size),
                "choice_rows_eq1": int((self.choice_kind == EQ1).sum()),
                "capacity_rows": int(self.capacity_rows.size), "vub_rows": int(self.vub_rows.size)}


def integer_bounds(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """(n,) lower/upper bounds with integer columns' bounds rounded inward (ceil lower, floor upper).

    Rounding is exact (no tolerance): a bound of 2.0000001 on an integer column becomes 3 as lower bound.
    """
    lo = problem.col_lower.copy()
    up = problem.col_upper.copy()
    it = problem.integrality
    lo[it] = np.ceil(lo[it])
    up[it] = np.floor(up[it])
    return lo, up


def row_reduce(ufunc, data: np.ndarray, indptr: np.ndarray, empty: float) -> np.ndarray:
    """Per-row reduction of CSR ``data`` (ufunc.reduceat), ``empty`` for rows without nonzeros."""
    m = indptr.shape[0] - 1
    out = np.full(m, empty, dtype=np.float64)
    nnz_row = np.diff(indptr)
    has = nnz_row > 0
    if data.size and has.any():
        out[has] = ufunc.reduceat(data, indptr[:-1][has])
    return out


def detect_structure(problem: Problem) -> Structure:
    """Classify rows and columns of ``problem`` for the integerization heuristics (see module doc).

    Args:
        problem: canonical Problem (CSC); n columns, m rows.
    Returns:
        A :class:`Structure`; cost O(nnz) plus one CSC->CSR conversion.
    """
    n, m = problem.n_cols, problem.n_rows
    lo, up = integer_bounds(problem)
    it = problem.integrality
    binary = it & (lo >= 0) & (up <= 1) & (lo <= up)
    general = it & ~binary
    rptr, rcol, rval = csc_to_csr(*problem._csc(), m)
    rcol = rcol.astype(np.int64)  # canonical CSC -> CSR, columns sorted within rows (no duplicates)
    nnz_row = np.diff(rptr)
    rl, ru = problem.row_lower, problem.row_upper

    # ---- choice rows
    nonbin, amin, amax, nint, minact, maxact = row_stats(rptr, rcol, rval, binary, it, lo, up)
    common = (nnz_row >= 2) & (nonbin == 0) & (amin == amax)
    a = np.where(common, amin, 1.0)
    with np.errstate(invalid="ignore"):
        slo = np.where(a > 0, rl / a, ru / a)
        shi = np.where(a > 0, ru / a, rl / a)
    choice = common & (shi >= 1) & (shi < 2) & (slo <= 1)
    choice_rows = np.flatnonzero(choice).astype(np.int64)
    choice_kind = np.where(slo[choice_rows] > 0, EQ1, LE1).astype(np.int8)
    in_choice = np.zeros(n, dtype=bool)
    if choice_rows.size:
        in_choice[rcol[np.repeat(choice, nnz_row)]] = True

    # ---- capacity rows: one coefficient sign, bound on that side finite, other side not binding
    pos = (amin > 0) & (nnz_row > 0)
    neg = (amax < 0) & (nnz_row > 0)
    cap = (~choice) & (nint > 0) & (
        (pos & np.isfinite(ru) & (rl <= minact)) | (neg & np.isfinite(rl) & (ru >= maxact)))
    capacity_rows = np.flatnonzero(cap).astype(np.int64)

    # ---- variable upper bounds: 2 nonzeros, a_r * r - b_x * x <= 0 (or the negated >= 0 form)
    two = np.flatnonzero(nnz_row == 2)
    s = np.where(np.isneginf(rl[two]) & (ru[two] == 0), 1.0,
                 np.where(np.isposinf(ru[two]) & (rl[two] == 0), -1.0, 0.0))
    p0, p1 = rptr[two], rptr[two] + 1
    c0, c1 = rcol[p0], rcol[p1]
    v0, v1 = rval[p0] * s, rval[p1] * s
    # parent = the binary column with the negative (normalized) coefficient, child = the other
    par_is0 = binary[c0] & (v0 < 0) & (v1 > 0)
    par_is1 = binary[c1] & (v1 < 0) & (v0 > 0) & ~par_is0
    ok = (s != 0) & (par_is0 | par_is1)
    parent = np.where(par_is0, c0, c1)
    child = np.where(par_is0, c1, c0)
    vp = np.where(par_is0, v0, v1)
    vc = np.where(par_is0, v1, v0)
    ok &= lo[child] >= 0
    vub_rows = two[ok]
    vub_parent = parent[ok].astype(np.int64)
    vub_child = child[ok].astype(np.int64)
    vub_ratio = (-vp[ok] / vc[ok]).astype(np.float64)

    return Structure(lower=lo, upper=up, binary=binary, general=general, choice_rows=choice_rows,
                     choice_kind=choice_kind, in_choice=in_choice, capacity_rows=capacity_rows,
                     vub_rows=vub_rows, vub_parent=vub_parent, vub_child=vub_child, vub_ratio=vub_ratio,
                     csr_indptr=rptr, csr_indices=rcol, csr_data=rval,
                     integer_infeasible_bounds=it & (lo > up))
