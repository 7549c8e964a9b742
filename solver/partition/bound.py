"""A safe Lagrangian bound on the whole model's LP optimum from any row duals (the parts' merged duals).

For any y (minimisation form), weak duality gives

    L(y) = sum_i (rl_i y_i^+ + ru_i y_i^-) + sum_j min(r_j l_j, r_j u_j),   r = c - A'y,

a lower bound on the LP optimum (hence on a MILP's), once y is projected onto the signs the row bounds
allow (y_i > 0 needs a finite rl_i, y_i < 0 a finite ru_i). A column with r_j < 0 and u_j = inf would make it
-inf; there the *implied* upper bound is used (Neumaier & Shcherbina, "Safe bounds in linear and
mixed-integer linear programming", Math. Programming 99, 2004, use finite boxes the same way): a row whose
coefficients are all >= 0 on columns with lower bounds >= 0 bounds each of its columns by
``l_j + (ru_i - sum_k a_ik l_k) / a_ij``. Columns still unbounded on the needed side make the bound -inf
(reported as None).

The parts' duals agree on every row but the shared ones; for those, a few candidates (the smallest, the
largest and the share-weighted mean of the parts' duals) are evaluated and the best bound kept. The candidates
share one pass over the matrix (A'y over the other rows is computed once); the passes are numba
kernels (``solver.partition.bound_kernels``, numpy twins in ``bound_ref``).

The merged duals mix parts: each demand-like row's dual comes from the part that holds it, the shared rows'
from a candidate, and many columns then have reduced costs of the wrong sign times large upper bounds (TE Kdl,
K = 4: the merged point 0.05% from the optimum, the bound 1.25% below it). :func:`assignment_step` then
maximises L exactly over the duals of the *assignment rows* (pairwise disjoint column supports, e.g. TE
demand rows, Sia job rows; ``solver.lp.alm_schur.assignment_rows``), the other duals fixed: L separates over
those rows, and each row's concave piecewise-linear term is maximised by a sweep over its sorted breakpoints
(``bound_kernels.assignment_duals``; by LP duality its maximum is the row's continuous knapsack
min{r0'x : rl_i <= a_i x <= ru_i, lo <= x <= up}). The value reported is the safe evaluation of the new duals,
never the sweep's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from solver.lp.kernels import kernel_array
from solver.model.problem import Problem
from solver.partition import bound_kernels as K
from solver.partition.ranges import ranges, run_ranges


def implied_upper(problem: Problem) -> np.ndarray:
    """(n,) column upper bounds tightened by the rows that imply one (module docstring; one numba kernel,
    ``solver.partition.bound_kernels.implied_upper``)."""
    return K.implied_upper(problem.a_indptr, problem.a_indices, problem.a_data, problem.col_lower,
                           problem.col_upper, problem.row_upper, problem.n_rows)


def min_form_duals(problem: Problem, y: np.ndarray) -> np.ndarray:
    """(m,) duals ``y`` (problem's sense, HiGHS convention, NaN read as 0) in minimisation form, projected on the
    signs the row bounds allow (a new array; one kernel pass, ``bound_kernels.min_form``)."""
    y, f = kernel_array(np.asarray(y), np.float64), np.float64  # one kernel signature (solver.prepare compiles it)
    return K.min_form(y, float(problem.sense), kernel_array(problem.row_lower, f), kernel_array(problem.row_upper, f),
                      np.empty_like(y))


class LagrangianBound:
    """Evaluates L(y) (module docstring) for candidate duals that differ only on the shared rows.

    Args:
        problem: the whole model (n columns, m rows).
        y_base: (m,) duals in the problem's sense, HiGHS convention; the shared rows' entries are ignored.
        shared: (ns,) int64 indices of the shared rows.
        up: (n,) :func:`implied_upper` of ``problem`` when the caller has it (computed here otherwise).
        r_base: (n,) minimisation-form reduced costs ``sense * c - A' y_base`` (projected, shared rows' duals 0)
            when the caller has them: the pass over the matrix that computes them is skipped. Else they are
            computed at first need (:attr:`r_base`), by :meth:`evaluate_many` in its own pass.
    """

    def __init__(self, problem: Problem, y_base: np.ndarray, shared: np.ndarray, up: np.ndarray | None = None,
                 r_base: np.ndarray | None = None):
        self.problem = problem
        self.shared = shared
        self.y_base = self.min_form(y_base)
        self.y_base[shared] = 0.0
        self._r_base = r_base
        self.is_sh = np.zeros(problem.n_rows, dtype=np.uint8)
        self.is_sh[shared] = 1
        self.up = implied_upper(problem) if up is None else up
        self.row_part_base = self._row_term(self.y_base)

    @property
    def r_base(self) -> np.ndarray:
        """(n,) ``sense * c - A' y_base`` (minimisation form), computed once (one pass over the matrix)."""
        if self._r_base is None:
            p = self.problem
            r_base = np.empty(p.n_cols)
            K.reduced_costs(p.a_indptr, p.a_indices, p.a_data, float(p.sense) * p.cost, self.y_base, r_base)
            self._r_base = r_base
        return self._r_base

    def min_form(self, y: np.ndarray) -> np.ndarray:
        """:func:`min_form_duals` of this bound's problem."""
        return min_form_duals(self.problem, y)

    def _row_term(self, y: np.ndarray) -> float:
        p = self.problem
        f = np.float64
        return float(K.row_term(kernel_array(y, f), kernel_array(p.row_lower, f), kernel_array(p.row_upper, f)))

    def evaluate(self, y_shared: np.ndarray) -> float:
        """L(y) in the problem's sense for the (ns,) shared-row duals ``y_shared`` (problem's sense);
        -inf (min) / +inf (max) when a column is unbounded on the side its reduced cost needs."""
        p = self.problem
        full = self._shared_full(y_shared)
        col, unbounded = K.column_term(p.a_indptr, p.a_indices, p.a_data, self.is_sh, full, self.r_base,
                                       p.col_lower, self.up)
        return self._total(full, col, unbounded)

    def evaluate_disjoint(self, y_shared: np.ndarray, row_of_col: np.ndarray, coef: np.ndarray) -> float:
        """:meth:`evaluate` (the same float) when the shared rows have pairwise disjoint supports, in O(n) instead
        of a pass over the matrix (``bound_kernels.column_term_disjoint``): column j's only shared entry is
        ``coef[j]`` on row ``row_of_col[j]`` (-1: none), as ``solver.lp.alm_schur.assignment_rows`` gives them
        (with another entry on a shared row the result is not L)."""
        p = self.problem
        full = self._shared_full(y_shared)
        col, unbounded = K.column_term_disjoint(row_of_col, coef, full, self.r_base, p.col_lower, self.up)
        return self._total(full, col, unbounded)

    def _shared_full(self, y_shared: np.ndarray) -> np.ndarray:
        """(m,) minimisation-form duals: the (ns,) ``y_shared`` (problem's sense, NaN read as 0) on the shared rows,
        projected on the signs their bounds allow; 0 elsewhere."""
        full = np.zeros(self.problem.n_rows)
        full[self.shared] = np.asarray(y_shared, dtype=np.float64)
        return min_form_duals(self.problem, full)

    def _total(self, full: np.ndarray, col: float, unbounded: bool) -> float:
        """L(y) in the problem's sense from the shared rows' (m,) ``full`` duals and the columns' term."""
        p = self.problem
        sense = float(p.sense)
        if unbounded:
            return -sense * np.inf
        bound_min = self.row_part_base + self._row_term(full) + col + sense * p.offset
        return sense * bound_min

    def evaluate_many(self, candidates: list[np.ndarray], reduced: np.ndarray | None = None) -> list[float]:
        """``[self.evaluate(c) for c in candidates]`` (the same floats) in one pass over the matrix
        (``solver.partition.bound_kernels.column_terms``) instead of one per candidate; with ``reduced`` (n, k)
        also candidate c's minimisation-form reduced costs (``sense * c - A' y``, y projected) in its column c.
        A model of more than ``ranges.RANGE_SIZE`` columns makes the pass in column ranges side by side
        (:func:`_terms_in_ranges`): the same reduced costs, its sums added range by range (equal to ``evaluate``'s
        to rounding)."""
        p = self.problem
        sense = float(p.sense)
        k = len(candidates)
        if k == 0:
            return []
        cols = np.zeros((p.n_rows, k))
        row_terms = []
        for c, y_shared in enumerate(candidates):
            full = self._shared_full(y_shared)
            cols[:, c] = full
            row_terms.append(self._row_term(full))
        r_out = np.empty((0, k)) if reduced is None else reduced
        if self._r_base is None:  # the base reduced costs in the same pass (bound_kernels.base_and_column_terms)
            r_base = np.empty(p.n_cols)
            totals, unbounded = _terms_in_ranges(p, sense * p.cost, self.y_base, True, r_base, self.is_sh, cols,
                                                 self.up, r_out)
            self._r_base = r_base
        else:
            totals, unbounded = _terms_in_ranges(p, self._r_base, self._r_base, False, np.empty(0), self.is_sh, cols,
                                                 self.up, r_out)
        out = []
        for c in range(k):
            if unbounded[c]:
                out.append(-sense * np.inf)
            else:
                bound_min = self.row_part_base + row_terms[c] + float(totals[c]) + sense * p.offset
                out.append(sense * bound_min)
        return out


def _terms_in_ranges(p: Problem, base: np.ndarray, y_base: np.ndarray, fill_base: bool, r_base_out: np.ndarray,
                     is_sh: np.ndarray, cols: np.ndarray, up: np.ndarray, r_out: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``bound_kernels.base_and_column_terms`` (``fill_base``) or ``column_terms`` over the model's column ranges
    (:mod:`solver.partition.ranges`), in threads when there are several: (totals (k,) added range by range in order,
    unbounded (k,) bool, either range's). One range is the single pass, bitwise."""
    outs = run_ranges(lambda a, b: K.terms_range(p.a_indptr, p.a_indices, p.a_data, base, y_base, fill_base,
                                                 r_base_out, is_sh, cols, p.col_lower, up, r_out, a, b),
                      ranges(p.n_cols))
    totals, unbounded = outs[0][0].copy(), outs[0][1].copy()
    for t, u in outs[1:]:
        totals += t
        unbounded |= u
    return totals, unbounded


def shared_dual_candidates(part_duals: np.ndarray, shares: np.ndarray) -> dict[str, np.ndarray]:
    """Candidate (ns,) shared-row duals from the parts' (k, ns) duals (NaN where a part does not hold the row)
    and (k, ns) shares: ``min``, ``max`` and ``share_mean`` over the parts that hold each row (0 where none)."""
    d = np.asarray(part_duals, dtype=np.float64)
    held = ~np.isnan(d)
    any_held = held.any(axis=0)
    w = np.where(held, shares, 0.0)
    wsum = w.sum(axis=0)
    return {
        "min": np.where(any_held, np.nanmin(np.where(held, d, np.inf), axis=0), 0.0),
        "max": np.where(any_held, np.nanmax(np.where(held, d, -np.inf), axis=0), 0.0),
        "share_mean": np.where(wsum > 0, (w * np.nan_to_num(d)).sum(axis=0) / np.where(wsum > 0, wsum, 1.0), 0.0),
    }


class BestBound(NamedTuple):
    """What :func:`best_bound` found."""

    bound: float | None  #: the best L(y) (problem's sense), None when every candidate is unbounded
    name: str  #: its candidate's name
    y_shared: np.ndarray  #: (ns,) its shared duals (problem's sense)
    #: (n,) its minimisation-form reduced costs ``sense * c - A' y`` (y projected on the signs the row bounds
    #: allow) with ``keep_reduced``, else None
    reduced_cost: np.ndarray | None


def best_bound(problem: Problem, y_base: np.ndarray, shared: np.ndarray, part_duals: np.ndarray,
               shares: np.ndarray, up: np.ndarray | None = None, keep_reduced: bool = False) -> BestBound:
    """The best of L(y) over candidate shared-row duals built from the parts' (k, ns) duals (NaN where a
    part does not hold the row): min, max and the share-weighted mean over the parts that hold it. ``up``: the
    model's (n,) :func:`implied_upper` when the caller has it (a partitioned LP round computes it during its
    parts' solves, ``solver.partition.background.ImpliedUpperBuild``). ``keep_reduced``: also the best
    candidate's reduced costs, from the same pass (:func:`assignment_step` starts from them: one pass fewer).
    """
    lb = LagrangianBound(problem, y_base, shared, up)
    cands = shared_dual_candidates(part_duals, shares)
    sense = float(problem.sense)
    best, best_name, best_y, best_c = None, "", cands["share_mean"], -1
    reduced = np.empty((problem.n_cols, len(cands))) if keep_reduced else None
    values = lb.evaluate_many(list(cands.values()), reduced)  # one pass over the matrix for all the candidates
    for c, ((name, ys), v) in enumerate(zip(cands.items(), values, strict=True)):
        if np.isfinite(v) and (best is None or sense * v > sense * best):
            best, best_name, best_y, best_c = float(v), name, ys, c
    kept = reduced[:, best_c].copy() if reduced is not None and best_c >= 0 else None
    return BestBound(best, best_name, best_y, kept)


@dataclass(frozen=True)
class AssignmentRows:
    """Rows with pairwise disjoint column supports (:func:`assignment_rows_of`).

    Attributes:
        rows: (ka,) int64 the rows, increasing.
        rp: (m+1,) int64, rc: (n1,) int32: the columns of each of them, CSR-style (other rows' ranges empty).
        coef: (n,) float64 a_ij of column j in its assignment row (0 for a column in none).
        row_of_col: (n,) int64 that row, -1 for a column in none.
    """

    rows: np.ndarray
    rp: np.ndarray
    rc: np.ndarray
    coef: np.ndarray
    row_of_col: np.ndarray


#: a model with this many columns or more gets no assignment step (``alm_schur.assignment_rows`` holds column
#: indices as int32): its merge keeps the candidates' bound instead of failing the round
MAX_ASSIGNMENT_COLS = 2**31 - 1


def assignment_rows_of(problem: Problem, coupling: np.ndarray | None = None) -> AssignmentRows | None:
    """The greedy assignment rows of ``problem`` (``solver.lp.alm_schur.assignment_rows``: rows taken by increasing
    count when none of their columns is taken; one numba kernel over the matrix, 0.24-0.47 s on TE Kdl's 31M
    nonzeros, without the GIL), or None for a model of :data:`MAX_ASSIGNMENT_COLS` columns or more. Depends on
    the model only: a partitioned LP round computes it during its parts' solves
    (``solver.partition.background.ImpliedUpperBuild``).

    ``coupling`` ((m2,) int64 or None): the other rows as the previous round chose them for the same matrix
    (:func:`coupling_rows`, carried in ``PartitionData.coupling_rows``): the arrays are rebuilt from them in one
    checked pass (``alm_schur.assignment_rows_given``, the greedy's arrays for the greedy's set); a set that does
    not fit this matrix is ignored."""
    if problem.n_cols >= MAX_ASSIGNMENT_COLS:
        return None
    from solver.lp.alm_schur import choose_assignment_rows

    row_of_col, coef, pos, _, rp, rc = choose_assignment_rows(problem.a_indptr, problem.a_indices, problem.a_data,
                                                              problem.n_rows, coupling)
    return AssignmentRows(rows=np.flatnonzero(pos < 0).astype(np.int64), rp=rp, rc=rc, coef=coef,
                          row_of_col=row_of_col)


def coupling_rows(arows: AssignmentRows, m: int) -> np.ndarray:
    """(m2,) int64: the rows of an (m,)-row model that are not ``arows``' assignment rows, increasing (what
    :func:`assignment_rows_of` takes back as ``coupling``)."""
    keep = np.ones(m, dtype=bool)
    keep[arows.rows] = False
    return np.flatnonzero(keep).astype(np.int64)


def assignment_step(problem: Problem, y: np.ndarray, arows: AssignmentRows, up: np.ndarray | None = None,
                    r_full: np.ndarray | None = None) -> tuple[float | None, np.ndarray, int]:
    """Replace the assignment rows' duals in ``y`` by their exact maximisers of L (module docstring), the other
    rows' duals fixed, and evaluate L at the result with a :class:`LagrangianBound` whose shared rows are the
    assignment rows (one pass over the matrix: the reduced costs r0 without them, which the maximisers need too;
    then :meth:`LagrangianBound.evaluate_disjoint`, the same float as ``evaluate`` in O(n)).

    Args:
        problem: the whole model (n columns, m rows).
        y: (m,) duals in the problem's sense, HiGHS convention (NaN read as 0; projected on the signs the row
            bounds allow).
        arows: :func:`assignment_rows_of` of ``problem``.
        up: (n,) :func:`implied_upper` of ``problem`` when the caller has it (computed here otherwise).
        r_full: (n,) the minimisation-form reduced costs at ``y`` itself (``BestBound.reduced_cost``) when the
            caller has them: those without the assignment rows are then ``r_full + a_ij y_i`` over each column's one
            assignment entry, O(n), instead of a pass over the matrix (TE Kdl: 0.09-0.11 s).

    Returns:
        (L at the new duals in the problem's sense, None when it is -inf (min) / +inf (max); the new (m,) duals
        in the problem's sense; the number of rows whose maximiser was found: the others keep their dual).
    """
    sense = float(problem.sense)
    y_min = min_form_duals(problem, y)
    r_base = None
    if r_full is not None:  # add back each column's assignment entry: c - A'y over all rows but the assignment rows
        r_base = K.without_assignment_entries(r_full, arows.row_of_col, arows.coef, y_min, np.empty_like(r_full))
    lb = LagrangianBound(problem, y, arows.rows, up, r_base)  # its r_base: c - A'y over all rows but the assignment rows
    # each row's maximiser alone (disjoint rows): the rows in ranges side by side, written into one copy of y
    y_new, r0 = y_min.copy(), lb.r_base
    solved = sum(run_ranges(lambda a, b: K.assignment_duals_range(arows.rp, arows.rc, arows.coef, arows.rows, a, b, r0,
                                                                  problem.col_lower, lb.up, problem.row_lower,
                                                                  problem.row_upper, y_new),
                            ranges(arows.rows.shape[0])))
    y_new = sense * y_new
    value = lb.evaluate_disjoint(y_new[arows.rows], arows.row_of_col, arows.coef)
    return (float(value) if np.isfinite(value) else None), y_new, int(solved)
