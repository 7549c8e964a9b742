"""One entry point that solves any copter problem: the LP core for LPs, LP relaxation + integerization
for MILPs. Used by ``copter solve``, ``copter init/step`` and the benchmarks."""

from __future__ import annotations

import numpy as np

from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status


def solve_problem(problem: Problem, settings: Settings | None = None,
                  warm_start: SolverState | None = None) -> SolveResult:
    """Solve ``problem`` (LP or MILP), warm-started from ``warm_start`` when given.

    Args:
        problem: the model; its integrality decides LP vs MILP.
        settings: solver settings (defaults when None).
        warm_start: the previous round's state already mapped onto this problem's index space
            (``solver.differential.map_state``), or None for a cold start.
    Returns:
        SolveResult; for a MILP ``result.mip`` holds the integerization report.

    ``settings.time_limit_seconds`` counts from the command's start when the CLI registered one
    (:mod:`solver.clock`: the seconds already spent are taken off), else from this call.

    A PRIMAL_INFEASIBLE result names a conflicting set of rows and bounds: ``result.iis`` (HiGHS's IIS,
    :func:`solver.highs_bridge.find_iis`, within ``settings.iis_seconds``) and a sentence in its message.
    """
    import time

    from solver.clock import budgeted

    given = settings or Settings()
    # the engines (and the kernels they load from numba's cache, ~0.5 s in a fresh process) are imported
    # before the budget is taken: each engine counts its limit from its own start, so time spent loading
    # after that would overrun the command's --time-limit
    if problem.is_mip:
        from solver.integer import solve_milp as engine
    else:
        from solver.lp.dispatch import solve as engine
    t0 = time.perf_counter()
    settings = budgeted(given)
    # Overflow/invalid values in intermediate numpy expressions (a huge bound divided by a tiny scaling
    # factor, a diverging ray) are expected and handled: the solver checks its iterates and measures
    # with isfinite and reports NUMERICAL_ERROR itself, so numpy's RuntimeWarnings (with source lines)
    # would only clutter a cron job's stderr.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        result = engine(problem, settings, warm_start)
    if settings is not given and result.message:  # budgeted: name the user's whole limit, not what was left
        from solver.clock import elapsed, name_user_limit

        result.message = name_user_limit(result.message, given.time_limit_seconds, elapsed())
    if not result.engine and result.state is not None and result.state.engine:  # a MILP: its relaxation's
        result.engine = result.state.engine.get("engine", "")
        result.engine_reason = result.state.engine.get("reason", "")
    if result.status == Status.PRIMAL_INFEASIBLE and settings.iis_seconds > 0 and result.iis is None:
        _name_conflict(problem, result, settings, time.perf_counter() - t0)
    return result


def _name_conflict(problem: Problem, result: SolveResult, settings: Settings, elapsed: float) -> None:
    """Attach HiGHS's IIS of an infeasible ``problem`` to ``result`` (``result.iis``, a sentence appended to
    its message, ``seconds["iis"]``). Budget: ``settings.iis_seconds``, within what is left of the time
    limit but at least 1 s (a spent budget still names the conflict)."""
    import math

    from solver.highs_bridge import describe_iis, find_iis

    left = settings.time_limit_seconds - elapsed
    budget = min(settings.iis_seconds, max(left, 1.0)) if math.isfinite(left) else settings.iis_seconds
    iis = find_iis(problem, budget)
    result.iis = iis
    said = describe_iis(iis, problem.is_mip, budget="--iis-seconds" if budget >= settings.iis_seconds else
                        "what --time-limit left")
    result.message = "; ".join(m for m in (result.message, said) if m)
    result.seconds = {**(result.seconds or {}), "iis": iis["seconds"]}
