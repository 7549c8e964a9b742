"""The LP relaxation that integerization starts from.

The relaxation keeps every row, drops integrality and rounds integer bounds inward (valid for every
integer point and a tighter LP). It is solved by the LP core ``solver.lp.dispatch.solve`` warm-started from the
previous round's LP iterate. Only while the LP core is not importable (development of the package) does
it fall back to HiGHS's dual simplex; the MILP report names the engine used (``lp_engine``).
"""

from __future__ import annotations

import time

import numpy as np

from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.settings import Settings
from solver.model.state import SolverState

RELAXATION_TOL_FACTOR = 10.0  #: ratio between the tolerances of consecutive relaxation stages


def relaxation_tolerances(settings: Settings) -> list[float]:
    """The relaxation's stage tolerances: ``relaxation_tol``, /10, ... (each > ``tol``), then ``tol``.

    ``relaxation_tol`` None, not finite, or not looser than ``tol`` gives the single stage ``[tol]``.

    Raises:
        UsageError: ``relaxation_tol`` is not a positive number.
    """
    tol = float(settings.tol)
    r = getattr(settings, "relaxation_tol", None)
    if r is None:
        return [tol]
    r = float(r)
    if r == float("inf"):
        return [tol]
    if not r > 0:
        from solver.model.errors import UsageError

        raise UsageError(f"relaxation_tol must be a positive number, got {r!r}")
    out = []
    while r > tol * (1.0 + 1e-9) and len(out) < 20:
        out.append(r)
        r /= RELAXATION_TOL_FACTOR
    return [*out, tol]


def relaxed_problem(problem: Problem, lower: np.ndarray, upper: np.ndarray) -> Problem:
    """``problem`` without integrality and with bounds ``lower``/``upper`` ((n,) arrays, shared)."""
    return problem.replace(integrality=np.zeros(problem.n_cols, dtype=bool), col_lower=lower, col_upper=upper)


def solve_relaxation(problem: Problem, settings: Settings, warm_start: SolverState | None,
                     lower: np.ndarray, upper: np.ndarray) -> tuple[SolveResult, str]:
    """Solve the LP relaxation; returns (result, engine name ``"pdhg"``, ``"alm"`` or ``"highs"``).

    Raises:
        Whatever the LP core raises for bad input (typed errors from solver/model/errors.py).
    """
    relaxed = relaxed_problem(problem, lower, upper)
    try:
        from solver.lp.dispatch import solve as lp_solve
    except ImportError:
        return solve_relaxation_highs(relaxed), "highs"
    res = lp_solve(relaxed, settings, warm_start)
    return res, res.engine or "pdhg"


def solve_relaxation_highs(lp: Problem, time_limit_seconds: float | None = None,
                           threads: int | None = None) -> SolveResult:
    """Solve the LP ``lp`` with HiGHS (dual simplex, cold) into a SolveResult (duals in HiGHS's convention);
    ``threads``: HiGHS's thread count (None: its default), the HiGHS MIP's that follows, so that HiGHS's
    process-global scheduler is built once (``highs_bridge.configure_threads``)."""
    from solver.highs_bridge import (
        interruptible,
        new_highs,
        objective_value,
        read_duals,
        read_point,
        run_info,
        status_of,
        status_text,
        to_highs_lp,
    )

    t0 = time.perf_counter()
    h = new_highs(threads, time_limit_seconds=time_limit_seconds)
    h.passModel(to_highs_lp(lp, with_names=False, relax=True))
    with interruptible(h):
        h.run()
    ms = status_text(h)
    n, m = lp.n_cols, lp.n_rows
    x = read_point(h, n, is_mip=False)
    status = status_of(h, is_mip=False, has_point=x is not None)[0]
    y = read_duals(h, m)
    x = np.zeros(n) if x is None else x
    y = np.zeros(m) if y is None else y
    act = lp.row_activity(x)
    secs = time.perf_counter() - t0
    obj = lp.objective(x)
    return SolveResult(status=status, x=x, y=y,
                       reduced_cost=lp.cost - lp.rmatvec(y), row_activity=act, objective=obj,
                       dual_objective=objective_value(h), primal_residual_rel=0.0,
                       dual_residual_rel=0.0, gap_rel=0.0, iterations=run_info(h)["simplex"],
                       seconds={"solve": secs, "total": secs}, point_feasible=ms == "Optimal",
                       state=SolverState(x=x.copy(), y=y.copy()), message=f"HiGHS simplex: {ms}")
