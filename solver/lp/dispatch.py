"""The LP core's public solve entry: decides HiGHS presolve (``solver.lp.presolve``) vs a direct PDHG run
(``solver.lp.pdhg``) for a cold or warm-started LP solve.

It is the only module that knows both paths, so ``pdhg`` never imports ``presolve`` (``presolve`` runs
``pdhg`` on the reduced LP, on the original LP when presolve cannot help, and for the polish).
"""

from __future__ import annotations

from solver.lp import pdhg, presolve
from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.settings import Settings


def solve(problem: Problem, settings: Settings | None = None, warm_start=None) -> SolveResult:
    """Solve the LP (relaxation, integrality ignored) of ``problem``: through HiGHS presolve/postsolve
    when :func:`solver.lp.presolve.presolve_applies` says so (by default: cold solves of LPs with rows
    and columns that are not trivially infeasible), else by PDHG directly (:func:`solver.lp.pdhg.solve`).

    Args:
        problem: the model (n columns, m rows) in HiGHS form.
        settings: solver settings (defaults when None); ``settings.presolve`` is ``"auto"``, ``"on"`` or
            ``"off"``.
        warm_start: None (cold), a SolverState, or (x (n,), y (m,), state | None) in original units and
            this problem's index order (see :func:`solver.lp.pdhg.solve`).
    Returns:
        SolveResult in original units and the problem's sense (see the two paths for its ``seconds``).
    Raises:
        UsageError: ``settings.presolve`` or ``settings.warm_primal_weight`` is not a known value.
        ValidationError: ``problem`` breaks its invariants.
    """
    s = settings or Settings()
    if presolve.presolve_applies(problem, s, warm_start):
        return presolve.solve_with_presolve(problem, s, warm_start)
    return pdhg.solve(problem, s, warm_start)
