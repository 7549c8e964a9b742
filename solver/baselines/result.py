"""What every baseline returns, and the feasibility measures all baselines (and copter) are judged by.

The measures are recomputed from the raw problem data and the returned point, never taken from a
solver's own report, so copter, HiGHS and POP are compared on the same ruler.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solver.model.problem import Problem
from solver.model.status import Status


@dataclass(eq=False)
class BaselineResult:
    """The outcome of one baseline solve of one problem.

    Attributes:
        name: baseline name (``highs``, ``highs-warm``, ``pop-4``, ...).
        status: termination status (for a MILP stopped by a limit with an incumbent: FEASIBLE).
        objective: ``cost @ x + offset`` of the returned point in the problem's sense (nan without a point).
        x: (n,) float64 point in the problem's column order, or None when the solver returned none.
        seconds: wall seconds of the whole baseline (model hand-over + solve; POP: wall time incl. setup).
        max_row_violation: max over rows of the absolute violation of ``row_lower <= A x <= row_upper``.
        max_row_violation_rel: the same, each row divided by ``max(1, |violated bound|)``.
        max_bound_violation: max absolute violation of the column bounds.
        integrality_violation: max ``|x_j - round(x_j)|`` over integer columns (0 for an LP).
        hit_limit: True when a time limit stopped the solve.
        message: one human sentence (solver used, limit hit, ...).
        extra: further figures (e.g. POP's ``max_part_seconds``, HiGHS's ``run_seconds``, iterations).
    """

    name: str
    status: Status
    objective: float
    x: np.ndarray | None
    seconds: float
    max_row_violation: float = float("nan")
    max_row_violation_rel: float = float("nan")
    max_bound_violation: float = float("nan")
    integrality_violation: float = float("nan")
    hit_limit: bool = False
    message: str = ""
    extra: dict = field(default_factory=dict)

    def summary(self) -> dict:
        """JSON-ready dict of every scalar field (no ``x``); status as its name."""
        d = {"name": self.name, "status": self.status.name, "objective": self.objective,
             "seconds": self.seconds, "max_row_violation": self.max_row_violation,
             "max_row_violation_rel": self.max_row_violation_rel,
             "max_bound_violation": self.max_bound_violation,
             "integrality_violation": self.integrality_violation, "hit_limit": self.hit_limit,
             "message": self.message}
        d.update(self.extra)
        return d


@dataclass
class PointQuality:
    """Feasibility measures of a point (see :class:`BaselineResult` for the definitions)."""

    objective: float
    max_row_violation: float
    max_row_violation_rel: float
    max_bound_violation: float
    integrality_violation: float


def _violation(v: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Absolute violation of ``lo <= v <= hi`` per entry, and the magnitude of the violated bound."""
    below = np.where(np.isfinite(lo), lo - v, -np.inf)
    above = np.where(np.isfinite(hi), v - hi, -np.inf)
    viol = np.maximum(np.maximum(below, above), 0.0)
    bound = np.where(below >= above, np.abs(lo), np.abs(hi))
    bound[~np.isfinite(bound)] = 0.0
    return viol, bound


def point_quality(problem: Problem, x: np.ndarray | None, activity: np.ndarray | None = None) -> PointQuality:
    """Objective and violations of the (n,) point ``x`` on ``problem``, recomputed from the data.

    Returns all-nan measures when ``x`` is None. One sparse mat-vec plus O(m + n) numpy work; none when the
    caller has the (m,) row activities ``activity`` = A x of this very x (``problem.row_activity(x)``, e.g. the
    KKT measure's, ``solver.partition.merge``: TE Kdl's 31M nonzeros are one pass a round).

    Raises:
        ValueError: when ``x`` does not have shape (n,).
    """
    nan = float("nan")
    if x is None:
        return PointQuality(nan, nan, nan, nan, nan)
    x = np.asarray(x, dtype=np.float64)
    if x.shape != (problem.n_cols,):
        raise ValueError(f"point has shape {x.shape}, expected ({problem.n_cols},)")
    act = problem.row_activity(x) if activity is None else activity
    rv, rb = _violation(act, problem.row_lower, problem.row_upper)
    bv, _ = _violation(x, problem.col_lower, problem.col_upper)
    iv = 0.0
    if problem.is_mip:
        xi = x[problem.integrality]
        iv = float(np.max(np.abs(xi - np.round(xi)))) if xi.size else 0.0
    return PointQuality(
        objective=problem.objective(x),
        max_row_violation=float(rv.max()) if rv.size else 0.0,
        max_row_violation_rel=float((rv / np.maximum(1.0, rb)).max()) if rv.size else 0.0,
        max_bound_violation=float(bv.max()) if bv.size else 0.0,
        integrality_violation=iv,
    )


def make_result(name: str, problem: Problem, status: Status, x: np.ndarray | None, seconds: float, *,
                hit_limit: bool = False, message: str = "", extra: dict | None = None) -> BaselineResult:
    """Build a :class:`BaselineResult`, computing objective and violations of ``x`` on ``problem``."""
    q = point_quality(problem, x)
    return BaselineResult(name=name, status=status, objective=q.objective, x=x, seconds=float(seconds),
                          max_row_violation=q.max_row_violation,
                          max_row_violation_rel=q.max_row_violation_rel,
                          max_bound_violation=q.max_bound_violation,
                          integrality_violation=q.integrality_violation, hit_limit=hit_limit,
                          message=message, extra=dict(extra or {}))
