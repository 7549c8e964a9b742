"""The previous round's integer point as a candidate incumbent of the next round.

Continual optimisation: consecutive rounds differ a little, so the previous round's point is often still
feasible, and as good as anything the integerization finds in a short time limit (p0201, an empty delta
with 1.5 s: the round threw the 7615 point away and ended FEASIBLE 7735, or with no point at all).

- :func:`map_previous_point` carries the previous point onto the new round's columns by name (the round
  loop's ``ApplyInfo.col_map``): a surviving column keeps its value; an added column takes 0 when 0 is
  within its bounds; a surviving value outside its new bounds, or an added column whose bounds exclude 0,
  has no value (NaN: ``rounding.run_rounding`` reads NaN as "unknown" for its tie-breaks, and
  :func:`previous_point` then leaves the point out rather than invent a value).
- :func:`previous_point` checks it EXACTLY on the new model, with the rule every reported MILP point meets
  (``check.check_point``: bounds and integrality exact, rows to 1e-9 relative to max(1, |bound|)); with
  continuous columns, the previous integers are also completed by ``resolve.fix_and_resolve`` (the best
  continuous values for the new costs), and the better of the two is the candidate.
"""

from __future__ import annotations

import math
import time

import numpy as np

from solver.integer.check import check_point
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.state import SolverState


def map_previous_point(previous: np.ndarray | None, col_map: np.ndarray, problem: Problem) -> np.ndarray | None:
    """The previous round's point on the new round's columns (module docstring).

    Args:
        previous: (n_old,) the previous round's point (``SolverState.integer_x``), or None.
        col_map: (n,) int, the old position of each new column, -1 for an added one (``ApplyInfo.col_map``).
        problem: the new round's problem (n columns).
    Returns:
        (n,) float64 with NaN where no value follows (see the module docstring), or None when ``previous``
        is None or ``col_map`` points outside it.
    """
    if previous is None:
        return None
    prev = np.asarray(previous, dtype=np.float64)
    col_map = np.asarray(col_map)
    if col_map.shape != (problem.n_cols,) or (col_map.size and col_map.max(initial=-1) >= prev.size):
        return None
    lo, up = problem.col_lower, problem.col_upper
    kept = col_map >= 0
    x = np.where(kept, prev[np.maximum(col_map, 0)] if prev.size else 0.0, 0.0)
    with np.errstate(invalid="ignore"):
        inside = (x >= lo) & (x <= up)
    return np.where(inside, x, np.nan)


def previous_point(problem: Problem, warm_start: SolverState | None, settings: Settings,
                   resolve_seconds: float) -> tuple[np.ndarray | None, dict]:
    """Check the warm start's ``integer_x`` exactly on ``problem``; return it (completed) when feasible.

    Args:
        problem: the MILP (n columns, m rows).
        warm_start: the mapped previous state; its ``integer_x`` ((n,), NaN = no value) is the candidate,
            its ``x``/``y`` warm-start the continuous re-solve.
        settings: solver settings (the re-solve's LP core reads them).
        resolve_seconds: wall budget (seconds) of the continuous re-solve's PDHG part.
    Returns:
        (x or None, info): ``x`` (n,) passes ``check_point`` exactly; info = {"step": "previous",
        "feasible", "objective" (nan when None), "resolved" (the continuous part was re-solved and won),
        "reason" (why None; "" otherwise), "seconds"}.
    """
    t0 = time.perf_counter()
    info = {"step": "previous", "feasible": False, "objective": math.nan, "resolved": False, "reason": ""}

    def done(x, reason=""):
        info["reason"] = reason
        if x is not None:
            info["feasible"], info["objective"] = True, float(problem.objective(x))
        info["seconds"] = time.perf_counter() - t0
        return x, info

    ix = None if warm_start is None else warm_start.integer_x
    if ix is None or np.shape(ix) != (problem.n_cols,):
        return done(None, "no previous point")
    x = np.asarray(ix, dtype=np.float64).copy()
    it = problem.integrality
    xi = x[it]
    if not np.all(np.isfinite(xi)):
        return done(None, f"{int(np.count_nonzero(~np.isfinite(xi)))} integer columns have no previous value "
                          "(outside their new bounds, or added with 0 outside their bounds)")
    if not np.all(xi == np.round(xi)):
        return done(None, "not integral")
    chk = check_point(problem, x)
    x_as_is = x if chk["ok"] else None
    if it.all():
        if x_as_is is None:
            why = ("outside the bounds" if not chk["bounds_ok"]
                   else f"violates a row by {chk['max_row_violation_rel']:.3g} (relative)")
            return done(None, why)
        return done(x_as_is)
    from solver.integer.resolve import fix_and_resolve

    cont = ~it
    x[cont] = np.where(np.isfinite(x[cont]), x[cont], np.clip(0.0, problem.col_lower[cont], problem.col_upper[cont]))
    lp_x = warm_start.x if warm_start.x.shape == (problem.n_cols,) else None
    lp_y = warm_start.y if warm_start.y.shape == (problem.n_rows,) else None
    x_res, rinfo = fix_and_resolve(problem, x, settings, lp_x, lp_y, resolve_seconds=resolve_seconds)
    if x_res is not None and (x_as_is is None or problem.sense * (problem.objective(x_res)
                                                                  - problem.objective(x_as_is)) < 0):
        info["resolved"] = True
        return done(x_res)
    if x_as_is is None:
        return done(None, rinfo.get("reason", "") or "the continuous part has no feasible completion")
    return done(x_as_is)
