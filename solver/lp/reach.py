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
from solver.lp.termination import KKT
from solver.model.problem import Problem


@dataclass
class Reach:
    """reach (objective units, >= 0), rel = reach / (1 + 2|p|), and the column contributing most (-1: none)
    with its reduced cost (problem's sense) and distance to the bound it points at."""

    reach: float
    rel: float
    column: int
    reduced_cost: float
    distance: float


def column_reach(problem: Problem, x: np.ndarray, y: np.ndarray, tol: float) -> Reach:
    """The reach of (x (n,), y (m,), original units, problem's sense; module docstring). O(nnz): one A'y."""
    sense = float(problem.sense)
    aty = np.empty(problem.n_cols)
    kernels.spmv_csc_t(problem.a_indptr, problem.a_indices, problem.a_data, np.asarray(y, dtype=np.float64), aty)
    c = sense * problem.cost
    a = sense * aty
    r = c - a
    significant = np.abs(r) > tol * (1.0 + np.abs(c) + np.abs(a))
    dist = np.where(r < 0.0, problem.col_upper - x, x - problem.col_lower)
    finite = np.isfinite(dist)  # an open side (inf distance, perhaps with r = 0) gains nothing: no 0 * inf
    gain = np.where(significant & finite, np.abs(r) * np.maximum(np.where(finite, dist, 0.0), 0.0), 0.0)
    total = float(gain.sum())
    p = float(c @ x) + sense * problem.offset
    j = int(np.argmax(gain)) if total > 0.0 else -1
    return Reach(reach=total, rel=total / (1.0 + 2.0 * abs(p)), column=j,
                 reduced_cost=float(sense * r[j]) if j >= 0 else 0.0, distance=float(dist[j]) if j >= 0 else 0.0)


def refuted_kkt(kkt: KKT, rc: Reach) -> KKT:
    """``kkt`` (minimisation form) of a point whose reach ``rc`` refuted it: the dual objective lowered by the
    reach (the value y's reduced costs give with the significant columns at the bounds they point at, the
    objective the check says is still within reach) and gap_rel = |p - d| / (1 + |p| + |d|) recomputed from it
    (``solver.lp.termination``'s formula); the residuals stay (the dual residual is norm-wise by definition).
    ``max x + 5e20 y``: gap 7e-16 -> 0.33 (p = 5e20, d = 1e21 in the problem's sense)."""
    p, d = kkt.primal_objective, kkt.dual_objective - rc.reach
    return replace(kkt, dual_objective=d, gap_rel=max(kkt.gap_rel, abs(p - d) / (1.0 + abs(p) + abs(d))))
