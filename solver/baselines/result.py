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


def point_quality(problem: Problem, x: np.ndarray | None, activity: np.ndarray | None = None) -> PointQuality:
    """Objective and violations of the (n,) point ``x`` on ``problem``, recomputed from the data.

    Returns all-nan measures when ``x`` is None. One sparse mat-vec plus one pass over the rows and one over the
    columns (``solver.lp.kernels.violation_max``); no mat-vec when the caller has the (m,) row activities
    ``activity`` = A x of this very x (``problem.row_activity(x)``, e.g. the KKT measure's,
    ``solver.partition.merge``: TE Kdl's 31M nonzeros are one pass a round).

    Raises:
        ValueError: when ``x`` does not have shape (n,).
    """
    nan = float("nan")
    if x is None:
        return PointQuality(nan, nan, nan, nan, nan)
    x = np.asarray(x, dtype=np.float64)
    if x.shape != (problem.n_cols,):
        raise ValueError(f"point has shape {x.shape}, expected ({problem.n_cols},)")
    from solver.lp.kernels import kernel_array, violation_max  # numba, loaded once the first point is judged

    f = np.float64
    act = problem.row_activity(x) if activity is None else activity
    row_viol, row_rel = violation_max(kernel_array(act, f), kernel_array(problem.row_lower, f),
                                      kernel_array(problem.row_upper, f))
    bound_viol, _ = violation_max(kernel_array(x, f), kernel_array(problem.col_lower, f),
                                  kernel_array(problem.col_upper, f))
    iv = 0.0
    if problem.is_mip:
        xi = x[problem.integrality]
        iv = float(np.max(np.abs(xi - np.round(xi)))) if xi.size else 0.0
    return PointQuality(
        objective=problem.objective(x),
        max_row_violation=float(row_viol),
        max_row_violation_rel=float(row_rel),
        max_bound_violation=float(bound_viol),
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
