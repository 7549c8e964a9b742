"""HiGHS cold: the reference baseline (a fresh ``highspy.Highs`` per solve).

The HiGHS facts (cumulative ``time_limit`` per instance, the MIP wall deadline through the interrupt
callback, the process-global thread scheduler) are handled by the one bridge, :mod:`solver.highs_bridge`
(REFERENCES.md section 5). HiGHS's PDLP needs ``kkt_tolerance`` (``pdlp_optimality_tolerance`` alone leaves
the feasibility tolerances at 1e-7); it overshoots ``time_limit`` and has no warm start.
"""

from __future__ import annotations

import math
import time

from solver.baselines.result import BaselineResult, make_result
from solver.highs_bridge import (
    Highs,
    configure_threads,
    mip_info,
    new_highs,
    pass_model,
    read_point,
    run,
    run_info,
    status_of,
    status_text,
    to_highs_lp,
)
from solver.model.errors import UsageError
from solver.model.problem import Problem
from solver.model.status import Status

SOLVERS = ("choose", "simplex", "ipm", "pdlp", "mip")

def check_solver(solver: str) -> str:
    """Return ``solver`` if it is one of :data:`SOLVERS`.

    Raises:
        UsageError: for any other name.
    """
    if solver not in SOLVERS:
        raise UsageError(f"unknown HiGHS solver {solver!r}; choose one of {', '.join(SOLVERS)}")
    return solver


def apply_solver_options(h: Highs, solver: str, *, is_mip: bool, kkt_tolerance: float) -> str:
    """Set the ``solver`` option of ``h``; returns the solver name actually used.

    A problem with integers is always solved by HiGHS's MIP solver (``solver`` then only matters
    for ``mip``/``choose``, which are the same); ``mip`` on an LP means HiGHS's own choice.
    ``pdlp`` also sets ``kkt_tolerance`` (relative KKT tolerance, copter's default 1e-4).
    """
    check_solver(solver)
    if is_mip:
        h.setOptionValue("solver", "choose")
        return "mip"
    if solver in ("choose", "mip"):
        h.setOptionValue("solver", "choose")
        return "choose"
    h.setOptionValue("solver", solver)
    if solver == "pdlp":
        h.setOptionValue("kkt_tolerance", float(kkt_tolerance))
    return solver


def run_highs(h: Highs, *, is_mip: bool, time_limit_seconds: float = math.inf) -> tuple[bool, float]:
    """Run ``h`` under a per-call time budget (seconds); returns (run ok, wall seconds of ``run()``).
    The bridge's :func:`solver.highs_bridge.run` (kept under this name for the baselines' callers)."""
    return run(h, is_mip=is_mip, time_limit_seconds=time_limit_seconds)


def refused(name: str, problem: Problem, seconds: float, reason: str, extra: dict) -> BaselineResult:
    """The result of a model HiGHS refused (:func:`solver.highs_bridge.pass_model`): NUMERICAL_ERROR without a
    point, HiGHS's reason in the message, ``highs_status`` "Refused" (running it would only say "Empty")."""
    return make_result(name, problem, Status.NUMERICAL_ERROR, None, seconds,
                       message=f"HiGHS refused the model: {reason}", extra={**extra, "highs_status": "Refused"})


def collect(h: Highs, problem: Problem, name: str, seconds: float, *, ran: bool, is_mip: bool,
            solver_used: str, extra: dict | None = None) -> BaselineResult:
    """Turn the state of a Highs instance after ``run()`` into a :class:`BaselineResult` on ``problem``.

    The point is taken when HiGHS says it has one (for a MIP: an incumbent); objective and violations
    are recomputed on ``problem`` (which must have the instance's column order). The status is the
    bridge's mapping (:func:`solver.highs_bridge.status_of`).
    """
    extra = dict(extra or {})
    extra.setdefault("solver", solver_used)
    if not ran:
        return make_result(name, problem, Status.NUMERICAL_ERROR, None, seconds,
                           message="HiGHS run() returned an error", extra=extra)
    x = read_point(h, problem.n_cols, is_mip=is_mip)
    status, limit = status_of(h, is_mip=is_mip, has_point=x is not None)
    text = status_text(h)
    iters = run_info(h)
    extra["highs_status"] = text
    extra["simplex_iterations"] = iters["simplex"]
    if is_mip:
        mi = mip_info(h)
        extra["mip_gap"] = mi["mip_gap"] if x is not None else math.nan
        extra["mip_dual_bound"] = mi["mip_dual_bound"]
    ran_with = solver_used
    if solver_used == "choose":  # say which algorithm HiGHS picked (by its iteration counters)
        picked = "ipm" if iters["ipm"] > 0 else "pdlp" if iters["pdlp"] > 0 else "simplex"
        extra["solver_picked"] = picked
        ran_with = f"choose -> {picked}"
    message = f"HiGHS {ran_with}: {text}"
    if limit is not None:
        message += f" ({limit} limit hit)"
    return make_result(name, problem, status, x, seconds, hit_limit=limit is not None, message=message,
                       extra=extra)


def solve_highs(problem: Problem, *, solver: str = "choose", time_limit_seconds: float = math.inf,
                threads: int | None = None, kkt_tolerance: float = 1e-4, relax: bool = False,
                name: str = "highs", hard_limit: bool | None = None,
                grace_seconds: float = 10.0, mip_rel_gap: float | None = None) -> BaselineResult:
    """Solve ``problem`` cold with HiGHS (fresh instance, no presolve or other options changed).

    Args:
        problem: LP or MILP (n columns, m rows).
        solver: ``choose`` | ``simplex`` | ``ipm`` | ``pdlp`` | ``mip`` (a MILP always uses HiGHS MIP).
        time_limit_seconds: budget in seconds (inf = none); a MILP is also stopped at the wall deadline.
        threads: HiGHS thread count, or None for HiGHS's default.
        kkt_tolerance: PDLP's relative KKT tolerance.
        relax: solve the LP relaxation of a MILP.
        name: the result's name.
        mip_rel_gap: HiGHS's ``mip_rel_gap`` (None = HiGHS's default 1e-4): a MILP stops once its incumbent
            is proven within this relative gap, e.g. copter's ``mip_gap_tol`` for a like-for-like race.
        hard_limit: run in a child process killed at ``time_limit_seconds + grace_seconds``
            (:mod:`solver.baselines.guard`); default: for a MILP with a finite limit, since HiGHS's MIP
            presolve can run far past its time limit. A killed solve returns TIME_LIMIT without a point.
    Returns:
        BaselineResult with x of shape (n,) when HiGHS returned a point; ``seconds`` is the wall time of
        model hand-over plus ``run()``; ``extra`` holds ``run_seconds`` and HiGHS's own status text.
    Raises:
        UsageError: for an unknown ``solver``.
    """
    check_solver(solver)
    is_mip = problem.is_mip and not relax
    if hard_limit is None:
        hard_limit = is_mip and math.isfinite(time_limit_seconds)
    if hard_limit:
        return _solve_in_child(problem, solver=solver, time_limit_seconds=time_limit_seconds, threads=threads,
                               kkt_tolerance=kkt_tolerance, relax=relax, name=name, grace_seconds=grace_seconds,
                               mip_rel_gap=mip_rel_gap)
    start = time.perf_counter()
    h = new_highs()
    configure_threads(h, threads)
    used = apply_solver_options(h, solver, is_mip=is_mip, kkt_tolerance=kkt_tolerance)
    if is_mip and mip_rel_gap is not None:
        h.setOptionValue("mip_rel_gap", float(mip_rel_gap))
    reason = pass_model(h, to_highs_lp(problem, with_names=False, relax=relax), problem)
    if reason is not None:
        return refused(name, problem, time.perf_counter() - start, reason, {"solver": used})
    ran, run_seconds = run_highs(h, is_mip=is_mip, time_limit_seconds=time_limit_seconds)
    seconds = time.perf_counter() - start
    return collect(h, problem, name, seconds, ran=ran, is_mip=is_mip, solver_used=used,
                   extra={"run_seconds": run_seconds})


def _solve_in_child(problem: Problem, *, grace_seconds: float, **kw) -> BaselineResult:
    """:func:`solve_highs` in a child process with a hard wall deadline (see ``hard_limit``)."""
    from solver.baselines.guard import run_with_deadline

    limit = kw["time_limit_seconds"]
    kw["hard_limit"] = False
    outcome, value, seconds = run_with_deadline(solve_highs, (problem,), kw, wall_seconds=limit + grace_seconds)
    if outcome == "ok":  # value.seconds: the child's own wall time (model hand-over + run)
        value.extra["hard_limit"] = True
        value.extra["result_transfer_seconds"] = max(0.0, seconds - value.seconds)
        return value
    if outcome == "killed":
        return make_result(kw["name"], problem, Status.TIME_LIMIT, None, seconds, hit_limit=True,
                           message=f"HiGHS killed at the wall deadline ({limit:g} s + {grace_seconds:g} s grace): "
                                   "it did not stop at its own time limit",
                           extra={"hard_limit": True, "solver": "mip" if problem.is_mip else kw["solver"]})
    return make_result(kw["name"], problem, Status.NUMERICAL_ERROR, None, seconds,
                       message=f"HiGHS child process failed: {value}", extra={"hard_limit": True})
