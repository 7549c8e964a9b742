"""What a point's dual residual can hide: the objective a column could still gain by moving to its bound.

PDHG's check (``solver.lp.termination``, cuPDLPx / PDLP) takes the reduced costs from the prox step, so a
column strictly inside its box keeps all of c_j - (A'y)_j as dual residual, and that residual is measured
against 1 + ||c||_2, the whole cost vector. One cost far above the others makes a column's whole reduced
cost vanish in that norm: ``max x + 5e20 y`` (x <= 5e20, y <= 1) met every measure at x = 0, objective 5e20,
after 0 iterations (dual residual 1 / 5e20 = 2e-21), where the optimum is 1e21 (x at its bound).

The reach of (x, y) is sum_j |r_j| * dist_j over the columns whose reduced cost r = c - A'y (minimisation
form) is significant for the column itself, |r_j| > tol * (1 + |c_j| + |(A'y)_j|) (the ``1 +`` of the other
relative measures), and whose bound in the improving direction (upper when r_j < 0, lower when r_j > 0) is
finite: dist_j = that bound's distance from x_j. With y fixed, moving those columns to their bounds would
change the objective by the reach, so a point is optimal within ``tol`` only if reach / (1 + 2 |p|) <= tol
(p = c'x + c0, the gap's denominator with the dual objective at p). A reduced cost at rounding level against
the column's own data (a coefficient of 1e29 times a dual of 1e-29) is not significant, so bounds of 1e29 do
not turn noise into reach; a column at its bound has distance 0.

A point the reach refutes reports its KKT measures with the reach counted (:func:`refuted_kkt`): the dual
objective lowered by it and the gap recomputed, so a NUMERICAL_ERROR never carries PDHG's near-zero gap next to
a message saying the objective could still move by half its value.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from solver.lp import kernels
from solver.lp.termination import KKT, relative_gap
from solver.model.problem import Problem


@dataclass
class Reach:
    """reach (objective units, >= 0), rel = reach / (1 + 2|p|), and the column contributing most (-1: none)
    with its reduced cost (problem's sense) and distance to the bound it points at (``row`` >= 0: the row whose
    bound stops that column first, :func:`far_row_reach`; -1: the column's own bound)."""

    reach: float
    rel: float
    column: int
    reduced_cost: float
    distance: float
    row: int = -1


def column_reach(problem: Problem, x: np.ndarray, y: np.ndarray, tol: float) -> Reach:
    """The reach of (x (n,), y (m,), original units, problem's sense; module docstring). O(nnz): one A'y."""
    sense = float(problem.sense)
    aty = np.empty(problem.n_cols)
    kernels.spmv_csc_t(problem.a_indptr, problem.a_indices, problem.a_data, np.asarray(y, dtype=np.float64), aty)
    c = sense * problem.cost
    a = sense * aty
    r = c - a
    return _reach(problem, x, r, np.abs(r) > tol * (1.0 + np.abs(c) + np.abs(a)))


def exact_reach(problem: Problem, x: np.ndarray, reduced_cost: np.ndarray) -> Reach:
    """:func:`column_reach` at tol 0 (every nonzero reduced cost through its finite bound) from the reduced costs
    ``original_kkt`` returns (c - A'y (n,), problem's sense) at its clipped x (n,): no pass over the nonzeros."""
    r = float(problem.sense) * reduced_cost
    return _reach(problem, x, r, r != 0.0)


def _reach(problem: Problem, x: np.ndarray, r: np.ndarray, significant: np.ndarray) -> Reach:
    """The reach of x (n,) with reduced costs r (n,, minimisation form) counted where ``significant`` (n,)."""
    sense = float(problem.sense)
    dist = np.where(r < 0.0, problem.col_upper - x, x - problem.col_lower)
    finite = np.isfinite(dist)  # an open side (inf distance, perhaps with r = 0) gains nothing: no 0 * inf
    gain = np.where(significant & finite, np.abs(r) * np.maximum(np.where(finite, dist, 0.0), 0.0), 0.0)
    total = float(gain.sum())
    p = float(sense * problem.cost @ x)  # the objective constant left out, as the gap's (termination.relative_gap)
    j = int(np.argmax(gain)) if total > 0.0 else -1
    return Reach(reach=total, rel=total / (1.0 + 2.0 * abs(p)), column=j,
                 reduced_cost=float(sense * r[j]) if j >= 0 else 0.0, distance=float(dist[j]) if j >= 0 else 0.0)


def far_row_reach(problem: Problem, x: np.ndarray, reduced_cost: np.ndarray, ax: np.ndarray) -> Reach:
    """What the dual residual could hide behind row bounds of magnitude >= 1e15 (``scaling.FAR_ROW_BOUND``,
    'no bound' sentinels that ||b|| and the measures leave out), for the point ``original_kkt`` measured (its clipped
    x (n,), reduced costs c - A'y (n,, problem's sense) and A x (m,)) at tol 0: the sum of |r_j| over the columns whose reduced cost r = c - A'y (minimisation form) points
    at an infinite bound of their own (a finite one is :func:`column_reach`'s), times the longest way a far row
    leaves a column to move, max_i |b_i - a_i'x| / max_j |a_ij| over the far bounds b_i.

    An upper estimate, as :func:`column_reach` is through column bounds: the direction that improves the
    objective may need several columns, which no single column's ratio test finds. ``min -x + 0.99999 w``,
    ``x - w <= 0``, ``w <= 9.99e19`` as a row met every measure at x = w = 0.026 (r = -1.2e-5 on x, +1.8e-6 on w:
    dual residual 5e-6) where the optimum is -9.99e14 along x = w. So an LP with a far row bound and any
    residual on an open side is asked about, as one with far column bounds is. Returns reach 0 without reading
    the nonzeros when the LP has no far row bound; else the total, the column with the largest such |r_j| and
    the far row. O(n + m) (O(nnz) once per matrix for the rows' largest coefficients)."""
    from solver.lp.scaling import FAR_ROW_BOUND
    from solver.lp.termination import row_absmax

    lo, hi = problem.row_lower, problem.row_upper
    far_lo = np.isfinite(lo) & (np.abs(lo) >= FAR_ROW_BOUND)
    far_hi = np.isfinite(hi) & (np.abs(hi) >= FAR_ROW_BOUND)
    none = Reach(reach=0.0, rel=0.0, column=-1, reduced_cost=0.0, distance=0.0)
    if not (far_lo.any() or far_hi.any()):
        return none
    sense = float(problem.sense)
    r = sense * reduced_cost
    open_r = np.where(((r < 0.0) & np.isinf(problem.col_upper)) | ((r > 0.0) & np.isinf(problem.col_lower)),
                      np.abs(r), 0.0)
    total_r = float(open_r.sum())
    if not total_r > 0.0:
        return none
    amax = row_absmax(problem.a_indices, problem.a_data, problem.n_rows)
    with np.errstate(invalid="ignore", divide="ignore"):
        way = np.maximum(np.where(far_hi, np.abs(hi - ax), 0.0), np.where(far_lo, np.abs(lo - ax), 0.0)) / amax
    way = np.where((amax > 0.0) & np.isfinite(way), way, 0.0)
    i = int(np.argmax(way))
    if not way[i] > 0.0:
        return none
    j = int(np.argmax(open_r))
    total = total_r * float(way[i])
    p = float(sense * problem.cost @ x)  # the objective constant left out, as the gap's (termination.relative_gap)
    return Reach(reach=total, rel=total / (1.0 + 2.0 * abs(p)), column=j, reduced_cost=float(sense * r[j]),
                 distance=float(way[i]), row=i)


def refuted_kkt(kkt: KKT, rc: Reach) -> KKT:
    """``kkt`` (minimisation form) of a point whose reach ``rc`` refuted it: the dual objective lowered by the
    reach (the value y's reduced costs give with the significant columns at the bounds they point at, the
    objective the check says is still within reach) and gap_rel = |p - d| / (1 + |p - c0| + |d - c0|) recomputed from it
    (``solver.lp.termination``'s formula); the residuals stay (the dual residual is norm-wise by definition).
    ``max x + 5e20 y``: gap 7e-16 -> 0.33 (p = 5e20, d = 1e21 in the problem's sense)."""
    p, d = kkt.primal_objective, kkt.dual_objective - rc.reach
    return replace(kkt, dual_objective=d, gap_rel=max(kkt.gap_rel, relative_gap(p, d, kkt.objective_constant)))
