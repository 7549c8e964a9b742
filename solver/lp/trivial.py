"""Checks and reductions done before PDHG iterates (no iterations needed to decide them).

- an empty box (lower > upper) on a column or a row: PRIMAL_INFEASIBLE, naming it;
- an empty row (no coefficients) is feasible iff row_lower <= 0 <= row_upper; it is removed (dual 0);
- an empty column is solved analytically: at its lower bound when its (minimisation) cost is > 0, at
  its upper bound when < 0, at the bound-projection of 0 when the cost is 0; when that bound is
  infinite the LP is unbounded if the rest is feasible (the caller decides, see ``solver.lp.pdhg``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solver.lp.kernels import kernel_array, row_counts

EMPTY_ROW_TOL = 1e-9  # absolute slack allowed on an empty row's bounds (0 must lie in [lower, upper])


@dataclass(eq=False)
class Reduction:
    """What the trivial pass found.

    Attributes:
        infeasible_message: a sentence naming the culprit when the model is trivially infeasible, else "".
        keep_rows: (m',) indices of rows PDHG works on; keep_cols: (n',) indices of columns.
        x_fixed: (n,) values of removed (empty) columns (other entries unused).
        unbounded_col: index of an empty column whose optimal bound is infinite, or -1.
    """

    infeasible_message: str
    keep_rows: np.ndarray
    keep_cols: np.ndarray
    x_fixed: np.ndarray
    unbounded_col: int


def reduce_trivial(c_min: np.ndarray, col_lower, col_upper, row_lower, row_upper, a_indptr, a_indices,
                   col_names, row_names) -> Reduction:
    """Find trivial infeasibility and the empty rows/columns of a minimisation LP.

    Args:
        c_min: (n,) costs of the minimisation form (sense already applied).
        col_lower, col_upper: (n,); row_lower, row_upper: (m,); a_indptr (n+1,), a_indices (nnz,): CSC.
        col_names, row_names: names used in messages.
    Returns:
        Reduction.
    """
    n, m = c_min.shape[0], row_lower.shape[0]
    msg = ""
    # each test is a cheap .any() first: the common model has no culprit, and flatnonzero costs more
    if (col_lower > col_upper).any():
        j = int(np.flatnonzero(col_lower > col_upper)[0])
        msg = f"variable {col_names[j]!r} has lower bound {col_lower[j]:g} > upper bound {col_upper[j]:g}"
    if not msg and (row_lower > row_upper).any():
        i = int(np.flatnonzero(row_lower > row_upper)[0])
        msg = f"constraint {row_names[i]!r} has lower bound {row_lower[i]:g} > upper bound {row_upper[i]:g}"
    # a Problem from the Python API may hold int64 or read-only indices: the one signature prepare compiles
    row_nnz = row_counts(kernel_array(a_indices, np.int32), m) if m else np.zeros(0, dtype=np.int64)
    col_nnz = np.diff(a_indptr)
    empty_rows = row_nnz == 0
    any_empty_row = bool(empty_rows.any())
    if not msg and any_empty_row:
        bad = np.flatnonzero(empty_rows & ((row_lower > EMPTY_ROW_TOL) | (row_upper < -EMPTY_ROW_TOL)))
        if bad.size:
            i = int(bad[0])
            msg = (f"constraint {row_names[i]!r} has no coefficients but bounds [{row_lower[i]:g}, "
                   f"{row_upper[i]:g}] exclude 0")
    empty_cols = col_nnz == 0
    x_fixed = np.zeros(n)
    unbounded = -1
    any_empty_col = bool(empty_cols.any())
    if any_empty_col:
        cj = c_min[empty_cols]
        lo, hi = col_lower[empty_cols], col_upper[empty_cols]
        v = np.where(cj > 0, lo, np.where(cj < 0, hi, np.minimum(np.maximum(0.0, lo), hi)))
        x_fixed[empty_cols] = v
        inf = np.flatnonzero(~np.isfinite(v))
        if inf.size:
            unbounded = int(np.flatnonzero(empty_cols)[inf[0]])
            x_fixed[unbounded] = np.where(np.isfinite(lo[inf[0]]), lo[inf[0]],
                                          np.where(np.isfinite(hi[inf[0]]), hi[inf[0]], 0.0))
            # the other unbounded empty columns also sit at a finite value (0 or their finite bound)
            idx = np.flatnonzero(empty_cols)[inf]
            x_fixed[idx] = np.where(np.isfinite(col_lower[idx]), col_lower[idx],
                                    np.where(np.isfinite(col_upper[idx]), col_upper[idx], 0.0))
    return Reduction(infeasible_message=msg,
                     keep_rows=np.flatnonzero(~empty_rows) if any_empty_row else np.arange(m),
                     keep_cols=np.flatnonzero(~empty_cols) if any_empty_col else np.arange(n),
                     x_fixed=x_fixed, unbounded_col=unbounded)


def drop_empty(problem, kr: np.ndarray, kc: np.ndarray) -> tuple:
    """CSC arrays (indptr, indices, data) of A restricted to rows ``kr`` and columns ``kc``, where every
    dropped row and column is EMPTY (``solver.lp.trivial``): no nonzero is lost, so only the column
    pointers shrink and row indices are renumbered (monotone map: order within columns is kept)."""
    m, n = problem.n_rows, problem.n_cols
    cp, ci, cv = problem.a_indptr, problem.a_indices, problem.a_data
    if kc.size < n:
        cp = np.concatenate((cp[:1], cp[kc + 1]))
    if kr.size < m:
        new_row = np.zeros(m, dtype=np.int32)
        new_row[kr] = np.arange(kr.size, dtype=np.int32)
        ci = new_row[ci]
    return cp, ci, cv
