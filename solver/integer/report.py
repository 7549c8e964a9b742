"""The SolveResult of a MILP round: point measures, the gap, the next round's state (``solve_milp``'s last step)."""

from __future__ import annotations

import math
import time

import numpy as np

from solver.integer.check import check_point
from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.state import SolverState
from solver.model.status import Status


def milp_result(problem: Problem, status: Status, x, y, bound: float, iterations: int, seconds: dict,
                t_start: float, lp_state: SolverState | None, warm_start: SolverState | None, report: dict,
                message: str, feasible: bool = False) -> SolveResult:
    """Assemble the round's SolveResult.

    Args:
        problem: the MILP (n columns, m rows).
        status: the round's status.
        x: (n,) the reported point; y: (m,) the relaxation's duals.
        bound: the valid bound (``dual_objective``; nan when none).
        iterations: PDHG iterations of all relaxation stages.
        seconds: the step timings (seconds); ``total``, ``solve`` and ``integerize`` are filled in here.
        t_start: ``time.perf_counter()`` at the start of the round.
        lp_state: the relaxation's last iterate (the next round's warm start) or None.
        warm_start: this round's warm start (its ``integer_x`` is kept when no point was found).
        report: the ``mip`` report (``gap_rel``, ``lp_dual_residual_rel`` are read from it).
        message: the result's message.
        feasible: ``x`` is the integer point found (then ``point_feasible`` is the exact re-check's verdict).
    """
    x = np.asarray(x, dtype=np.float64)
    chk = check_point(problem, x)
    act = problem.row_activity(x)
    rl, ru = problem.row_lower, problem.row_upper
    viol = np.maximum(np.maximum(np.where(np.isfinite(rl), rl - act, 0.0), np.where(np.isfinite(ru), act - ru, 0.0)),
                      0.0)
    b = np.concatenate([rl[np.isfinite(rl)], ru[np.isfinite(ru)]])
    seconds["total"] = time.perf_counter() - t_start
    seconds.setdefault("solve", seconds["total"])
    seconds["integerize"] = max(0.0, seconds["total"] - seconds.get("relaxation", 0.0))
    state = None
    if lp_state is not None:
        state = SolverState(x=lp_state.x, y=lp_state.y, step_size=lp_state.step_size,
                            primal_weight=lp_state.primal_weight, iterations=lp_state.iterations,
                            integer_x=x.copy() if feasible else (warm_start.integer_x if warm_start else None),
                            engine=getattr(lp_state, "engine", None))
    obj = problem.objective(x)
    yv = np.asarray(y, dtype=np.float64)
    return SolveResult(
        status=status, x=x, y=yv, reduced_cost=problem.cost - problem.rmatvec(yv), row_activity=act,
        objective=obj, dual_objective=float(bound),
        primal_residual_rel=float(np.linalg.norm(viol) / (1.0 + np.linalg.norm(b))) if viol.size else 0.0,
        dual_residual_rel=float(report.get("lp_dual_residual_rel", math.nan)),
        gap_rel=float(report.get("gap_rel", math.inf)), iterations=int(iterations),
        seconds=seconds, point_feasible=bool(feasible and chk["ok"]), state=state,
        warm_started=warm_start is not None, message=message,
        max_row_violation=float(viol.max()) if viol.size else 0.0, mip=report)
