"""The LP core's public solve entry: picks the engine (``solver.lp.engine_choice``: restarted PDHG or the
proximal ALM) and, for PDHG, HiGHS presolve (``solver.lp.presolve``) vs a direct run (``solver.lp.pdhg``).

It is the only module that knows both engines; ``pdhg`` never imports ``presolve`` (``presolve`` runs
``pdhg`` on the reduced LP, on the original LP when presolve cannot help, and for the polish), and the ALM
hands a run it cannot finish to the same PDHG path (``presolve.solve_pdhg``).
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

import numpy as np

from solver.lp import presolve
from solver.lp.bound_gap import judged
from solver.lp.engine_choice import (
    WARM_OVER,
    Choice,
    choose_engine,
    kkt_measures,
    next_record,
    solve_passes,
    warm_cap,
)
from solver.lp.model_scale import (
    model_scale,
    scaled_problem,
    scaled_warm_start,
    unscaled_progress,
    unscaled_result,
)
from solver.lp.original_kkt import measured_result, original_kkt
from solver.lp.pdhg import (
    SCALING_FAILED,
    WARM_PRIMAL_WEIGHTS,
    current_progress_callback,
    parse_warm_start,
    progress_callback,
)
from solver.lp.trivial import reduce_trivial
from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status

_ALM_DONE = (Status.OPTIMAL, Status.PRIMAL_INFEASIBLE, Status.DUAL_INFEASIBLE)  #: ALM outcomes that stand
_DEFAULT_ITERATION_LIMIT = Settings().iteration_limit  #: below it, the limit is the user's (``bound_gap.judged``)


def solve(problem: Problem, settings: Settings | None = None, warm_start=None) -> SolveResult:
    """Solve the LP (relaxation, integrality ignored) of ``problem`` with the engine
    :func:`solver.lp.engine_choice.choose_engine` picks (``settings.engine``, default ``"auto"``): PDHG, through
    HiGHS presolve/postsolve when :func:`solver.lp.presolve.presolve_applies` says so (by default: cold solves
    of LPs with rows and columns that are not trivially infeasible), else directly
    (:func:`solver.lp.pdhg.solve`); or the proximal ALM (:func:`solver.lp.alm.solve_alm`) within its work budget,
    a run that exceeds it, stalls or diverges being finished by PDHG, warm from the same start, with the time
    left. An ``"auto"`` PDHG warm round that runs past ``WARM_OVER`` x the stream's last cold solve's passes
    is solved cold with the time left (:func:`_cold_after_warm`). A warm point that already meets ``settings.tol`` (relative KKT in original units,
    :func:`solver.lp.original_kkt.original_kkt`) is returned as it is, whatever the engine setting
    (:func:`_kept_warm_point`): a round with no material change keeps its allocation bitwise. Every path's
    OPTIMAL (and a NUMERICAL_ERROR that misses only the gap) then meets one judge,
    :func:`solver.lp.bound_gap.judged`: HiGHS is asked once when the point's reduced costs, counted through its
    finite bounds, could still move the objective, and its point replaces one it refutes. A model whose
    costs or row bounds have a norm below 1 is solved in its own units (:mod:`solver.lp.model_scale`: divided
    by a power of two, the point mapped back exactly), so that the "1 +" of the relative measures does not
    turn them absolute; every other model runs as it is.

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
    sc = model_scale(problem)
    if sc.identity:
        return _solve_model(problem, settings, warm_start)
    with progress_callback(unscaled_progress(current_progress_callback(), sc)):
        res = _solve_model(scaled_problem(problem, sc), settings, scaled_warm_start(warm_start, sc))
    return unscaled_result(res, sc)


def _solve_model(problem: Problem, settings: Settings | None, warm_start) -> SolveResult:
    """:func:`solve` on a model in its own units (what :mod:`solver.lp.model_scale` hands over)."""
    t0 = time.perf_counter()
    s = settings or Settings()
    choice = choose_engine(problem, s, warm_start)
    cold = None  # an OPTIMAL cold PDHG solve: the next ALM budget's base
    warm_lost = False  # a PDHG warm run hit its cap and the round was solved cold
    kept, measured = _kept_warm_point(problem, s, warm_start, choice, t0)
    alm_scale = math.nan  # the stream's next warm ALM first-step scale, when a warm ALM run sets it
    if kept is not None:
        res, lost, passes = kept, False, 0.0
    elif choice.engine == "alm":
        res, lost, alm_passes, whence, cold, measured = _run_alm(problem, s, warm_start, choice, t0)
        passes = solve_passes(res.iterations if lost and res.engine != "alm" else 0, alm_passes)  # PDHG's, if it ran
        alm_scale = _next_alm_scale(res, s.tol) if not lost else math.nan
    else:
        cap = warm_cap(choice, s) if warm_start is not None else None
        res = presolve.solve_pdhg(problem, s if cap is None else replace(s, iteration_limit=cap),
                                  warm_start if choice.use_warm else None)
        lost = False
        passes = solve_passes(res.iterations)
        if cap is not None and res.status == Status.ITERATION_LIMIT:
            res, cold_res = _cold_after_warm(problem, s, res, choice, t0)
            warm_lost = True
            passes = solve_passes(res.iterations)
            cold = cold_res if cold_res.status == Status.OPTIMAL else None
        elif not (choice.use_warm and warm_start is not None) and res.status == Status.OPTIMAL:
            cold = res
        if not choice.use_warm:
            res.warm_started = False
    whose = "the warm start's" if kept is not None else "the ALM's" if choice.engine == "alm" and not lost else "PDHG's"
    res, replaced = judged(problem, s.tol, res, whose, t0, s.time_limit_seconds, measured,
                           limit_asks=s.iteration_limit >= _DEFAULT_ITERATION_LIMIT)  # not a limit the user set
    ran = "pdhg" if lost else choice.engine
    settled = res.engine == presolve.PRESOLVE_ENGINE  # HiGHS presolve decided the LP: the engine chosen never iterated
    res.engine = res.engine or ran
    res.engine_reason = choice.reason + (f"; {_lost_sentence(res, whence)}" if lost else "")
    if settled:
        res.engine_reason += (f"; HiGHS presolve settled the LP ({res.status.name}) before {ran} ran, so no engine "
                              "iterated")
    if warm_lost:
        res.engine_reason += (f"; PDHG warm ran past {WARM_OVER:g} x the last cold solve's passes and the round was "
                              "solved cold")
    if kept is not None and replaced:
        res.engine_reason += (f"; the warm point met tol {s.tol:g}, but not through its far bounds: HiGHS's point "
                              "returned, no engine ran")
    elif kept is not None and not math.isfinite(choice.warm_kkt):  # a pinned engine: the choice did not measure
        res.engine_reason += f"; the warm point already meets tol {s.tol:g}: returned unchanged, no engine ran"
    elif kept is None and choice.warm_kkt <= s.tol:  # rule 2's point was not returned (_kept_warm_point)
        res.engine_reason += ("; yet PDHG ran: presolve 'on' drops warm starts, or the trivial reductions found the "
                              "LP infeasible or unbounded")
    if res.state is not None:
        rec = next_record(replace(choice, engine=ran, reason=res.engine_reason),
                          res.status == Status.OPTIMAL, lost, cold, passes, warm_lost, alm_scale)
        res.state.engine = rec.to_dict()
    return res


def _kept_warm_point(problem: Problem, s: Settings, warm_start, choice: Choice, t0: float):
    """The warm point itself as an OPTIMAL result (iterations 0) when it meets ``s.tol`` on the original LP,
    with its ``original_kkt`` measure (for :func:`solver.lp.bound_gap.judged`), else (None, None): an engine runs.

    Why not an engine's first check: PDHG measures and returns T(z), one PDHG step from the warm point, and
    the ALM hands back the point through its scaled space; both move it. afiro after a cost change and an
    EMPTY delta went from X02 = 25.5112 to 25.4904 (objective -467.29203 to -467.27756, 10 changed variables)
    in a round that reported 0 iterations. The measure is the one every engine's OPTIMAL rests on in original
    units (x clipped to the column bounds, y projected onto the signs its row bounds allow); an entry the
    projection leaves equal in value keeps the warm start's bits (a -0.0 stays -0.0). An LP the trivial
    reductions (``solver.lp.trivial``) find infeasible or unbounded is left to the engines, which name the
    culprit; so are warm starts under ``presolve="on"`` (it drops them). The state keeps the warm start's step
    size and carries the primal weight a PDHG run from it starts with (``settings.warm_primal_weight``: the
    state's under ``"reuse"``, else the cold 1.0).

    Args:
        problem: the LP, n columns, m rows; warm_start: as :func:`solve` takes it; choice: the engine choice
            (an ``"auto"`` choice carries the warm point's worst measure: above tol, nothing is measured again).
    Returns:
        (SolveResult with x (n,), y (m,) in original units and the problem's sense, original_kkt's output for that
        point), or (None, None).
    """
    if warm_start is None or not choice.use_warm or choice.warm_kkt > s.tol:  # nan (not measured: a pinned
        return None, None  # engine) measures below; a cold solve has no point to keep (and skips presolve_applies)
    if s.warm_primal_weight not in WARM_PRIMAL_WEIGHTS or presolve.presolve_applies(problem, s, warm_start):
        return None, None  # the engine raises the UsageError; presolve="on" drops warm starts, as documented
    parsed, _ = parse_warm_start(warm_start, problem.n_cols, problem.n_rows)
    if parsed is None:
        return None, None
    x_in, y_in, st = parsed
    measured = original_kkt(problem, x_in, y_in, s.tol)
    if not measured[0].converged(s.tol):
        return None, None
    sense = int(problem.sense)
    red = reduce_trivial(sense * problem.cost, problem.col_lower, problem.col_upper, problem.row_lower,
                         problem.row_upper, problem.a_indptr, problem.a_indices, problem.col_names,
                         problem.row_names)
    if red.infeasible_message or red.unbounded_col >= 0:
        return None, None
    kkt, x, y, rc, ax = measured
    x = np.where(x == x_in, x_in, x)
    y = np.where(y == y_in, y_in, y)
    w = float(st.primal_weight) if st is not None and s.warm_primal_weight == "reuse" else math.nan
    w = min(max(w, s.primal_weight_min), s.primal_weight_max) if math.isfinite(w) and w > 0 else 1.0
    state = SolverState(x=x.copy(), y=y.copy(), iterations=0, primal_weight=w,
                        step_size=float(st.step_size) if st is not None else math.nan)
    t = time.perf_counter() - t0
    return measured_result(problem, (kkt, x, y, rc, ax), Status.OPTIMAL,
                           f"the warm start already meets tol {s.tol:g}: returned unchanged", s.tol, 0,
                           {"iterate": 0.0, "solve": t, "total": t}, state, warm_started=True), (kkt, x, y, rc, ax)


def _run_alm(problem: Problem, s: Settings, warm_start, choice: Choice, t0: float):
    """The ALM within ``choice.alm_passes`` matrix passes (and the round's limits); a run that ends otherwise
    than OPTIMAL / infeasible / unbounded, at the round's own iteration limit or its time limit, is lost:
    PDHG finishes the round with the time left, warm from the ALM's point or the round's start point, or cold
    (:func:`_hand_over_start` says which and why). Returns (result, lost, the ALM's matrix passes, the hand-over's
    words for the reason ("" when none), the OPTIMAL cold solve of a cold hand-over or None: the record's next
    base, and ``original_kkt``'s output for the result's point when the ALM's own result is returned, else None)."""
    from solver.lp.alm import ALMParameters, solve_alm_measured, stream_warm_scale

    # the stream's first-step scale (solver.lp.alm.next_warm_scale), within its bounds whatever the state holds
    scale = stream_warm_scale(choice.previous.alm_warm_scale if choice.previous is not None else math.nan)
    res, measured = solve_alm_measured(problem, s, warm_start, ALMParameters(
        handover=False, work_limit=choice.alm_passes, warm_scale=scale),
        start_kkt=choice.warm_point_kkt if choice.use_warm else None)
    alm_passes = _alm_passes(res)
    if res.status in _ALM_DONE or res.status in (Status.ITERATION_LIMIT, Status.TIME_LIMIT):
        return res, False, alm_passes, "", None, measured  # the round's own limits: nothing left for PDHG either
    why = res.message.split(" (")[0].removeprefix("ALM stopped: ")
    left = s.time_limit_seconds - (time.perf_counter() - t0)
    start, whence = _hand_over_start(problem, s, warm_start, res, choice)
    out = presolve.solve_pdhg(problem, replace(s, time_limit_seconds=max(left, 0.0)), start)
    cold = replace(out) if start is None and out.status == Status.OPTIMAL else None  # the record's next base
    if start is None:
        out.warm_started = False
    if why.startswith(SCALING_FAILED) and out.message.startswith(SCALING_FAILED):
        # both engines' equilibration failed on the same coefficients: one sentence naming their range
        out.message = out.message.replace(
            f"{SCALING_FAILED}:", f"{SCALING_FAILED} in both LP engines (the ALM, then PDHG):", 1).replace(
            "more than PDHG's equilibration", "more than their equilibration", 1)
    else:
        out.message = (f"ALM handed over to PDHG ({whence}) after {res.iterations} outer steps "
                       f"({alm_passes:.0f} matrix passes) because {why}: {out.message}")
    if out.engine == presolve.PRESOLVE_ENGINE:
        # HiGHS presolve settled the LP before PDHG iterated: the ALM's steps are the round's only iterations, and
        # the round's engine, iterations and warm start are the ALM's (a failed round read "engine presolve,
        # iterations 0, not warm" after 19 warm ALM steps: helper-200)
        out.engine, out.iterations, out.warm_started = "alm", res.iterations, res.warm_started
    out.seconds = {**{f"alm_{k}": v for k, v in res.seconds.items()}, **out.seconds,
                   "total": time.perf_counter() - t0}
    out.seconds["solve"] = out.seconds["total"]
    return out, True, alm_passes, whence, cold, None


def _next_alm_scale(res: SolveResult, tol: float) -> float:
    """The stream's next warm ALM ``warm_scale`` after the ALM run ``res`` (``solver.lp.alm.next_warm_scale``
    from its state's ``first_kkt`` and ``warm_scale``); nan when the run was not warm or did not end OPTIMAL."""
    from solver.lp.alm import next_warm_scale

    rec = (res.state.engine or {}) if res.state is not None else {}
    if res.status != Status.OPTIMAL or "warm_scale" not in rec:
        return math.nan
    return next_warm_scale(float(rec["warm_scale"]), float(rec.get("first_kkt", math.nan)), tol, int(res.iterations))


def _alm_passes(res: SolveResult) -> float:
    """Matrix passes an ALM run made (its state's engine record; 0 when it has none)."""
    return float((res.state.engine or {}).get("passes", 0.0)) if res.state is not None else 0.0


def _hand_over_start(problem: Problem, s: Settings, warm_start, alm: SolveResult, choice: Choice):
    """The start of the PDHG run that finishes a lost ALM round, by the ALM's last point's worst relative KKT
    measure (original units, :func:`solver.lp.engine_choice.kkt_measures`) against the round's start point's:

    - below it: the ALM's point (x (n,), y (m,), with the start's state: primal weight, step size);
    - above it after at least one whole outer step (``alm.iterations >= 2``: the budget cut the second one or a
      later one): None, a cold solve (presolve as ``s.presolve`` says): the proximal steps moved away from this
      start, a warm start worse than a cold one (issue #17 point 2);
    - otherwise (a first Newton solve cut by the budget, a stall, non-finite iterates): the start itself;
    - a cold round (no start): None, PDHG's cold solve (the message said "warm from the round's start point").

    Returns (warm start or None, a few words for the message and the reason).

    Measured on TE UsCarrier (pop_UsCarrier.graphml, 25,184 x 36,242, every demand +-10%, tol 1e-4; the ALM's
    passes against a presolved cold solve's): the starts are at 4.8e-4; where the ALM's budget (0.5 x the cold
    passes) ran out, its point stood at 0.22-0.38 of that on 7 of 8 rounds, and PDHG warm took 64-129 iterations
    from it on 3 of them where it took 837-1,606 from the start; on the other 4, 2,503-3,400 from it and
    1,670-4,681 from the start (cold: 1,734-2,055). One start moved the ALM away (1.3e-3 after 3 outer steps), and
    PDHG warm from it took 5,706 iterations against a cold solve's 1,927. Kept from before for a cut first step:
    TE Kdl's loss used its budget in one Newton solve and PDHG warm from the start took 0.31x a cold solve (a cold
    hand-over made the round 1.62x).
    """
    if warm_start is None:
        return None, "cold, the round had no start point"
    parsed, _ = parse_warm_start(warm_start, problem.n_cols, problem.n_rows)
    if parsed is None or alm.x is None or alm.y is None:
        return warm_start, "warm from the round's start point"
    x0, y0, st = parsed
    m_start = choice.warm_measures or kkt_measures(problem, x0, y0, s.tol)
    m_alm = tuple(v if math.isfinite(v) else math.inf
                  for v in (alm.primal_residual_rel, alm.dual_residual_rel, alm.gap_rel))
    finite = bool(np.all(np.isfinite(alm.x)) and np.all(np.isfinite(alm.y)))
    e_a, e_s = max(m_alm), max(m_start)
    if finite and e_a < e_s:
        return (alm.x, alm.y, st), f"warm from the ALM's point (KKT {e_a:.1e} against the start's {e_s:.1e})"
    if finite and alm.iterations >= 2 and math.isfinite(e_a):
        return None, (f"cold: the ALM's point after {alm.iterations} outer steps is further off than the start "
                      f"(KKT {e_a:.1e} against {e_s:.1e}), a warm start worse than a cold one")
    return warm_start, "warm from the round's start point"


def _cold_after_warm(problem: Problem, s: Settings, warm: SolveResult, choice: Choice, t0: float):
    """The round solved cold (PDHG, presolve as ``s.presolve`` says) after its PDHG warm run stopped at
    :func:`solver.lp.engine_choice.warm_cap`, with the time and iterations left. Returns (the round's result:
    the cold point, ``iterations`` = warm + cold iterations, ``seconds`` with the warm run's as ``warm_*``, a
    message naming both; the cold solve's own result, the record's next cold base)."""
    left = s.time_limit_seconds - (time.perf_counter() - t0)
    its_left = max(s.iteration_limit - warm.iterations, 1)
    cold = presolve.solve_pdhg(problem, replace(s, time_limit_seconds=max(left, 0.0), iteration_limit=its_left), None)
    base = choice.previous.cold_passes if choice.previous is not None else math.nan
    out = replace(cold, iterations=warm.iterations + cold.iterations, warm_started=False,
                  message=(f"PDHG warm stopped after {warm.iterations} iterations, past {WARM_OVER:g} x the last cold "
                           f"solve's {base:.0f} matrix passes: solved cold: {cold.message}"),
                  seconds={**{f"warm_{k}": v for k, v in warm.seconds.items()}, **cold.seconds,
                           "total": time.perf_counter() - t0})
    out.seconds["solve"] = out.seconds["total"]
    return out, cold


def _lost_sentence(res: SolveResult, whence: str) -> str:
    """The reason's tail after an ALM loss (seconds the ALM spent, the point PDHG finished from; or that HiGHS
    presolve, on PDHG's path, settled the LP before PDHG iterated: :func:`_run_alm` then left the ALM the engine)."""
    gave_up = f"the ALM gave up after {res.seconds.get('alm_total', 0.0):.3g} s"
    if res.engine == "alm":
        return (f"{gave_up} and handed the round to PDHG {whence}; HiGHS presolve settled the LP "
                f"({res.status.name}) before PDHG iterated")
    return f"{gave_up} and PDHG finished the round {whence}"
