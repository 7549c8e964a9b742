"""Shares of the shared capacity rows from demands: each part's use of a row, rationed where the parts ask for more
than the row holds.

Two sources of demands:

- the probe (``solver.partition.round._probe``): every part solved once with the WHOLE of each shared row; its
  use of a row is what it would take at price 0;
- prices (:func:`price_shares`, a partitioned MILP round whose merged point is far from the whole model's
  bound): the minimiser of the whole model's choice-row Lagrangian at the merge's best duals
  (``solver.partition.improve.WholeBound``), i.e. what each client takes when every capacity row costs its
  dual (price-directive decomposition, Dantzig & Wolfe 1961; the Lagrangian's minimiser is the market's
  demand at those prices, Everett 1963).

Demands at price 0 say little when the parts compete for the same rows: on the Sia demo (128 GPUs, 51 jobs) every
part alone takes all 16 H100 GPUs, so with K = 51 parts the probe gives each part 16/51 of every GPU type,
0.31 GPU, which no job can use (configurations of 1, 2, 4, 8 GPUs, allocations rounded to whole GPUs): the
merged round was 42.0 against the monolithic 156.3 (proven gap 73%). At the duals of the Lagrangian bound the
demands of the parts nearly fit the capacity (only the clients indifferent at those prices overlap), and the
same round is within 3.6% (K = 51) of the monolithic one before RENS.
"""

from __future__ import annotations

import numpy as np

from solver.model.problem import Problem
from solver.partition import shares as sh


def part_activity(problem: Problem, x: np.ndarray, col_part: np.ndarray, rows: np.ndarray, k: int) -> np.ndarray:
    """(k, rows.size) activity ``sum_j a_ij x_j`` of each part's own (non-global) columns on the given rows.

    Args:
        problem: the whole model (n columns); x: (n,) a point; col_part: (n,) part of every column, -1 global;
        rows: (ns,) row indices; k: number of parts. One pass over the nonzeros (np.bincount).
    """
    pos = np.full(problem.n_rows, -1, dtype=np.int64)
    pos[rows] = np.arange(rows.size, dtype=np.int64)
    nnz_col = np.repeat(np.arange(problem.n_cols, dtype=np.int64), np.diff(problem.a_indptr))
    r = pos[problem.a_indices]
    cp = col_part[nnz_col]
    sel = (r >= 0) & (cp >= 0)
    flat = np.bincount(cp[sel] * rows.size + r[sel], weights=problem.a_data[sel] * x[nnz_col[sel]],
                       minlength=k * rows.size)
    return flat.reshape(k, rows.size)


def ration(problem: Problem, rows: np.ndarray, activity: np.ndarray, present: np.ndarray,
           shares: np.ndarray) -> np.ndarray:
    """(k, ns) shares of the capacity rows in proportion to the parts' demands ``activity`` (k, ns) (NaN: none
    known), what is left when the demands fit spread evenly over the parts that touch the row; rows that are not
    capacity rows (``solver.partition.shares.usage``) keep ``shares``. Normalised (``shares.normalise``)."""
    known = ~np.isnan(sh.usage(problem, rows, np.zeros((1, rows.size))))[0]  # capacity rows
    u = np.clip(np.nan_to_num(sh.usage(problem, rows, activity), nan=0.0), 0.0, None) * present
    tot = u.sum(axis=0)
    n_present = np.maximum(present.sum(axis=0), 1)
    fit = np.where(tot > 1.0, u / np.where(tot > 0, tot, 1.0), u + present * ((1.0 - tot) / n_present))
    return sh.normalise(np.where(known[None, :], fit, shares), present)


def price_shares(wb, y: np.ndarray, col_part: np.ndarray, rows: np.ndarray, present: np.ndarray,
                 shares: np.ndarray) -> np.ndarray | None:
    """(k, ns) shares from the parts' demands at the duals ``y`` (module docstring), or None when the Lagrangian
    has no minimiser there (an infinite bound).

    Args:
        wb: the whole model's ``solver.partition.improve.WholeBound``.
        y: (m,) row duals (HiGHS convention, the problem's sense), e.g. the merge's ascent's best.
        col_part: (n,) part of every column (-1 global); rows: (ns,) the shared rows; present: (k, ns) parts
        touching each row; shares: (k, ns) the current shares (kept on rows that are not capacity rows).
    """
    _, x, _ = wb.lag.evaluate(y)
    if x is None:
        return None
    act = part_activity(wb.problem, x, col_part, rows, present.shape[0])
    return ration(wb.problem, rows, np.where(present, act, np.nan), present, shares)
