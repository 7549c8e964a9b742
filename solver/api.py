"""One entry point that solves any copter problem: the LP core for LPs, LP relaxation + integerization
for MILPs. Used by ``copter solve``, ``copter init/step`` and the benchmarks."""

from __future__ import annotations

import numpy as np

from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.settings import Settings
from solver.model.state import SolverState


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
    """
    from solver.clock import budgeted

    settings = budgeted(settings or Settings())
    # Overflow/invalid values in intermediate numpy expressions (a huge bound divided by a tiny scaling
    # factor, a diverging ray) are expected and handled: the solver checks its iterates and measures
    # with isfinite and reports NUMERICAL_ERROR itself, so numpy's RuntimeWarnings (with source lines)
    # would only clutter a cron job's stderr.
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        if problem.is_mip:
            from solver.integer import solve_milp

            return solve_milp(problem, settings, warm_start)
        from solver.lp.dispatch import solve

        return solve(problem, settings, warm_start)
