"""The LP core's public solve entry: picks the engine (``solver.lp.engine_choice``: restarted PDHG or the
proximal ALM) and, for PDHG, HiGHS presolve (``solver.lp.presolve``) vs a direct run (``solver.lp.pdhg``).

It is the only module that knows both engines; ``pdhg`` never imports ``presolve`` (``presolve`` runs
``pdhg`` on the reduced LP, on the original LP when presolve cannot help, and for the polish), and the ALM
hands a run it cannot finish to the same PDHG path (``presolve.solve_pdhg``).
"""

from __future__ import annotations

import time
from dataclasses import replace

from solver.lp import presolve
from solver.lp.engine_choice import Choice, choose_engine, next_record, solve_passes
from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.settings import Settings
from solver.model.status import Status

_ALM_DONE = (Status.OPTIMAL, Status.PRIMAL_INFEASIBLE, Status.DUAL_INFEASIBLE)  #: ALM outcomes that stand


def solve(problem: Problem, settings: Settings | None = None, warm_start=None) -> SolveResult:
    """Solve the LP (relaxation, integrality ignored) of ``problem`` with the engine
    :func:`solver.lp.engine_choice.choose_engine` picks (``settings.engine``, default ``"auto"``): PDHG, through
    HiGHS presolve/postsolve when :func:`solver.lp.presolve.presolve_applies` says so (by default: cold solves
    of LPs with rows and columns that are not trivially infeasible), else directly
    (:func:`solver.lp.pdhg.solve`); or the proximal ALM (:func:`solver.lp.alm.solve_alm`) within its work budget,
    a run that exceeds it, stalls or diverges being finished by PDHG, warm from the same start, with the time
    left.

    Args:
        problem: the model (n columns, m rows) in HiGHS form.
        settings: solver settings (defaults when None); ``settings.presolve`` is ``"auto"``, ``"on"`` or
            ``"off"``; ``settings.engine`` is ``"auto"``, ``"pdhg"`` or ``"alm"``.
        warm_start: None (cold), a SolverState, or (x (n,), y (m,), state | None) in original units and
            this problem's index order (see :func:`solver.lp.pdhg.solve`). A SolverState's ``engine`` record
            (the previous round's engine and outcome) steers the ``"auto"`` choice.
    Returns:
        SolveResult in original units and the problem's sense (see the paths for its ``seconds``; an ALM run
        finished by PDHG has ``alm_*`` entries too); ``result.engine`` / ``result.engine_reason`` say which
        engine produced the point and why; ``result.state.engine`` is the record for the next round.
    Raises:
        UsageError: ``settings.presolve`` or ``settings.warm_primal_weight`` is not a known value.
        ValidationError: ``problem`` breaks its invariants.
    """
    t0 = time.perf_counter()
    s = settings or Settings()
    choice = choose_engine(problem, s, warm_start)
    cold = None  # an OPTIMAL cold PDHG solve: the next ALM budget's base
    if choice.engine == "alm":
        res, lost, alm_passes = _run_alm(problem, s, warm_start, choice, t0)
        passes = solve_passes(res.iterations if lost else 0, alm_passes)
    else:
        res, lost = presolve.solve_pdhg(problem, s, warm_start if choice.use_warm else None), False
        passes = solve_passes(res.iterations)
        if not (choice.use_warm and warm_start is not None) and res.status == Status.OPTIMAL:
            cold = res
        if not choice.use_warm:
            res.warm_started = False
    res.engine = "pdhg" if lost else choice.engine
    res.engine_reason = choice.reason + (f"; {_lost_sentence(res)}" if lost else "")
    if res.state is not None:
        rec = next_record(replace(choice, engine=res.engine, reason=res.engine_reason),
                          res.status == Status.OPTIMAL, lost, cold, passes)
        res.state.engine = rec.to_dict()
    return res


def _run_alm(problem: Problem, s: Settings, warm_start, choice: Choice, t0: float):
    """The ALM within ``choice.alm_passes`` matrix passes (and the round's limits); a run that ends otherwise
    than OPTIMAL / infeasible / unbounded, at the round's own iteration limit or its time limit, is lost:
    PDHG finishes the round WARM from the round's own start point (the point the ALM was chosen for: its KKT
    error was well below a cold start's) with the time left. Measured on TE Kdl (bench/bench_kdl.py, every
    demand +-10%): PDHG warm from that point took 0.31x a cold solve, where the earlier cold hand-over made
    the round 1.62x. Returns (result, lost, the ALM's matrix passes); no cold solve runs here, so the record's
    base is kept."""
    from solver.lp.alm import ALMParameters, solve_alm

    res = solve_alm(problem, s, warm_start, ALMParameters(handover=False, work_limit=choice.alm_passes))
    alm_passes = float((res.state.engine or {}).get("passes", 0.0)) if res.state is not None else 0.0
    if res.status in _ALM_DONE or res.status in (Status.ITERATION_LIMIT, Status.TIME_LIMIT):
        return res, False, alm_passes  # the round's own limits: nothing left for PDHG either
    why = res.message.split(" (")[0].removeprefix("ALM stopped: ")
    left = s.time_limit_seconds - (time.perf_counter() - t0)
    out = presolve.solve_pdhg(problem, replace(s, time_limit_seconds=max(left, 0.0)), warm_start)
    out.message = (f"ALM handed over to PDHG (warm) after {res.iterations} outer steps ({alm_passes:.0f} matrix "
                   f"passes) because {why}: {out.message}")
    out.seconds = {**{f"alm_{k}": v for k, v in res.seconds.items()}, **out.seconds,
                   "total": time.perf_counter() - t0}
    out.seconds["solve"] = out.seconds["total"]
    return out, True, alm_passes


def _lost_sentence(res: SolveResult) -> str:
    """The reason's tail after an ALM loss (seconds the ALM spent)."""
    return (f"the ALM gave up after {res.seconds.get('alm_total', 0.0):.3g} s and PDHG finished warm from the "
            "round's start point")
