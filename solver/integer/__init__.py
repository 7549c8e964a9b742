"""MILP rounds without branch-and-cut: LP relaxation + integerization heuristics + a proven gap bound.

Pipeline of :func:`solve_milp` (docs/DESIGN.md "Integerization"; the integer "shims" of the COpter authors' code,
REFERENCES.md section 1, generalised by structure detection):

1. structure detection (``structure.py``): choice rows, capacity rows, variable upper bounds, general
   integers; integer bounds rounded inward;
2. the LP relaxation by the LP core ``solver.lp.pdhg.solve``, warm-started (``relaxation.py``), in
   stages: each stage ends at its tolerance (``settings.relaxation_tol`` then /10 ... down to ``tol``)
   or, with ``settings.relaxation_round_iterations`` > 0, after a doubling iteration budget; every stage
   is rounded (steps 3-4) and the next stage continues warm from the stage's iterate only while the
   best point is not within ``mip_gap_tol`` of the tightest stage bound (``report["relaxation_stages"]``);
3. ``round`` / ``repair`` / ``fill`` on the integer columns (``rounding.py`` over numba kernels
   ``kernels.py``, numpy twins in ``kernels_ref.py``); with VUB links, sparser VUB thresholds are
   tried first (``rounding.vub_thresholds``: a parent rounds up only when its child's LP value is
   above 0.1, 0.01, ... of its bound), the next one only when step 4 finds the sparser choice infeasible;
4. ``fix_and_resolve``: integers fixed, continuous part re-solved warm by the LP core and finished
   exactly by HiGHS simplex on the small remaining LP (``resolve.py``); the point is re-checked exactly;
   then, per stage, when no point was found or its gap is above ``settings.integer_submip_gap``,
   ``rens`` (``submip.py``, Berthold 2014) has HiGHS solve the sub-MIP of the stage's LP point's roundings
   (integral LP values fixed, fractional ones kept to floor/ceil) within ``settings.integer_submip_seconds``
   (an improvement: at most as long as the relaxation took so far, >= 1 s; at most ``RENS_MAX_PER_ROUND``
   per round): it rounds jointly where independent rounding cannot (LB 1024x128: ~3,000 free binaries of
   131,072, a point in ~4 s) and an early, inexact relaxation already spans near-optimal points (Sia 10,240
   after 256 PDHG iterations: 0.28% from the bound); if no point exists after the last stage, a relax-and-fix
   ``dive`` (``dive.py``) fixes the sure integers, re-solves the LP relaxation warm with the LP core and rounds again (at most
   ``settings.integer_dive_max`` times); once a point exists, ``fill`` runs again with the exact
   (simplex-vertex) continuous values pinned, which frees integers an interior LP point still used
   (step ``"fill"`` with ``"after": "fix_and_resolve"``);
5. ``fallback`` (``settings.integer_fallback == "highs"``): HiGHS MIP for at most
   ``settings.integer_fallback_seconds`` (wall), seeded with the rounded integer assignment, when steps
   3-4 found no feasible point;
6. the bound: the Lagrangian dual bound of the relaxation's dual point, valid even when the relaxation
   was not solved exactly (``bound.py``), with the choice rows kept in the inner problem when there are
   any (the tighter of the two); ``gap_rel = sense * (integer_objective - lp_bound) /
   max(1, |integer_objective|)`` (inf when no finite bound follows); status OPTIMAL when ``gap_rel <= settings.mip_gap_tol``, else FEASIBLE;
   NO_INTEGER_SOLUTION when no point was found (a point is only ever reported when it satisfies bounds
   and integrality exactly and every row to 1e-9 relative to max(1, |bound|)).

Report (``result.mip``): integer_objective, lp_bound, gap_rel, fractional_before (integer columns whose LP
value is more than 1e-6 from an integer), steps (one dict per step run: ``step`` in round | repair | fill |
fix_and_resolve | rens | dive | fallback, ``changed`` columns, ``seconds``, step details), fallback_used, source
(heuristic | fallback | none), structure counts, lp_engine, lp_status, lp_objective (of the last
relaxation stage), relaxation_stages (one dict per stage: tol, iteration_budget, lp_status, iterations,
seconds, lp_bound, integer_objective, gap_rel, fractional_before; step dicts carry ``stage`` and
``vub_min`` when there are several).
``result.state``: the relaxation's LP iterate (x, y, step size, primal weight) for the next round's warm
start, plus ``integer_x`` = the integer allocation (previous-round tie-breaking).
"""

from __future__ import annotations

import math
import time
from dataclasses import replace as dc_replace

import numpy as np

from solver.integer.ascent import coupling_dual_ascent
from solver.integer.bound import ChoiceLagrangian, lagrangian_bound
from solver.integer.check import check_point
from solver.integer.relaxation import relaxation_tolerances, solve_relaxation
from solver.integer.resolve import fix_and_resolve
from solver.integer.rounding import run_rounding
from solver.integer.structure import detect_structure
from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status

__all__ = ["solve_milp"]

INTEGRALITY_TOL = 1e-6  #: an LP value farther than this from an integer counts as fractional
RENS_MAX_PER_ROUND = 3  #: RENS sub-MIPs per round at most (one per relaxation stage)


def _fallback_mode(settings: Settings) -> str:
    mode = str(getattr(settings, "integer_fallback", "highs")).lower()
    if mode not in ("highs", "none"):
        from solver.model.errors import UsageError

        raise UsageError(f"integer_fallback must be 'highs' or 'none', got {mode!r}")
    return mode


def solve_milp(problem: Problem, settings: Settings, warm_start: SolverState | None) -> SolveResult:
    """Solve the MILP ``problem`` by LP relaxation + integerization (no branch-and-cut).

    Args:
        problem: a Problem with integer columns (n columns, m rows).
        settings: solver settings; uses the LP core's fields and ``integer_fallback`` ("highs" | "none"),
            ``integer_fallback_seconds`` (seconds), ``mip_gap_tol``.
        warm_start: the previous round's state mapped onto this problem (its x/y warm-start the LP
            relaxation; its ``integer_x`` breaks rounding ties), or None.
    Returns:
        SolveResult: ``x`` the integer point (or the rounded point when none was found, with
        ``point_feasible=False``), ``objective`` its objective (problem's sense, offset included),
        ``dual_objective``/``mip["lp_bound"]`` the valid bound, ``mip`` the report (module doc),
        ``state`` the LP iterate plus ``integer_x``.
    Raises:
        UsageError: unknown ``settings.integer_fallback``.
        Errors of the LP core for invalid input.
    """
    t_start = time.perf_counter()
    fallback_mode = _fallback_mode(settings)
    submip_seconds = _submip_seconds(settings)
    _ascent_steps(settings)  # a bad value fails before any work, not at the first stage that needs it
    n, m = problem.n_cols, problem.n_rows
    seconds: dict = {}
    steps: list = []

    t0 = time.perf_counter()
    st = detect_structure(problem)
    seconds["structure"] = time.perf_counter() - t0
    report: dict = {"integer_objective": math.nan, "lp_bound": math.nan, "gap_rel": math.inf,
                    "fractional_before": 0, "steps": steps, "fallback_used": False, "source": "none",
                    "structure": st.summary()}

    if st.integer_infeasible_bounds.any():
        j = int(np.flatnonzero(st.integer_infeasible_bounds)[0])
        return _result(problem, Status.PRIMAL_INFEASIBLE, np.clip(np.zeros(n), problem.col_lower, problem.col_upper),
                       np.zeros(m), math.nan, 0, seconds, t_start, None, warm_start, report,
                       f"integer column {problem.col_names[j]!r} has no integer in its bounds")

    # ---- LP relaxation and rounding, in stages (tolerance ladder x doubling iteration budgets)
    prev = None
    if warm_start is not None and warm_start.integer_x is not None and warm_start.integer_x.shape == (n,):
        prev = np.asarray(warm_start.integer_x, dtype=np.float64)
    it = problem.integrality
    stages: list = []
    report["relaxation_stages"] = stages
    seconds["relaxation"] = seconds["bound"] = seconds["rounding"] = seconds["fix_and_resolve"] = 0.0
    x_best = None
    source = "none"
    lp_bound = -math.inf * problem.sense
    iterations = 0
    state_in = warm_start
    rens_runs = 0
    lag = None  # the choice-row Lagrangian (built once per round, at the first stage)
    ascent = None  # (bound, duals) of the best dual ascent so far (the next stage's ascent may start there)
    tols = relaxation_tolerances(settings)
    every = _round_every(settings)
    staged = len(tols) > 1 or every > 0
    ti, k, budget = 0, 0, every
    while True:
        tol_k = tols[ti]
        t_stage = t0 = time.perf_counter()
        stage_settings = dc_replace(settings, tol=tol_k, time_limit_seconds=_remaining(settings, t_start))
        cap = max(1, min(budget, int(settings.iteration_limit) - iterations)) if every else None
        if every:
            stage_settings = dc_replace(stage_settings, iteration_limit=cap)
        lp, engine = solve_relaxation(problem, stage_settings, state_in, st.lower, st.upper)
        seconds["relaxation"] += time.perf_counter() - t0
        iterations += int(lp.iterations)
        report["lp_engine"] = engine
        report["lp_status"] = lp.status.name
        report["lp_objective"] = float(lp.objective)
        report["lp_dual_residual_rel"] = float(lp.dual_residual_rel)
        x_lp = np.asarray(lp.x, dtype=np.float64)
        y_lp = np.asarray(lp.y, dtype=np.float64)
        lp_state = lp.state if lp.state is not None else SolverState(x=x_lp.copy(), y=y_lp.copy())
        if lp.status in (Status.PRIMAL_INFEASIBLE, Status.DUAL_INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED):
            status = lp.status if lp.status == Status.PRIMAL_INFEASIBLE else Status.INFEASIBLE_OR_UNBOUNDED
            return _result(problem, status, x_lp, y_lp, math.nan, iterations, seconds, t_start, lp_state,
                           warm_start, report, f"LP relaxation: {lp.status.name}; no integer point exists"
                           if status == Status.PRIMAL_INFEASIBLE else
                           "LP relaxation is unbounded or infeasible: the MILP has no optimum")
        t0 = time.perf_counter()
        bound_k = lagrangian_bound(problem, y_lp, st.lower, st.upper)
        if lag is None:  # (also the reduced costs of RENS's last neighbourhood, the core)
            lag = ChoiceLagrangian(problem, st.lower, st.upper, st.choice_rows, st.choice_kind,
                                   st.csr_indptr, st.csr_indices)
        if st.choice_rows.size:  # choice rows kept in the inner problem: never weaker, often tighter
            bound_c = lag.evaluate(y_lp)[0]
            if not np.isfinite(bound_k) or (np.isfinite(bound_c) and problem.sense * (bound_c - bound_k) > 0):
                bound_k = bound_c
        if lp.status == Status.OPTIMAL and engine == "highs" and not np.isfinite(bound_k):
            bound_k = float(lp.dual_objective)  # exact simplex duals; only reached in development mode
        if np.isfinite(bound_k) and (not np.isfinite(lp_bound) or problem.sense * (bound_k - lp_bound) > 0):
            lp_bound = bound_k  # every stage's bound is valid: keep the tightest
        seconds["bound"] += time.perf_counter() - t0
        report["lp_bound"] = float(lp_bound)
        xi_lp = x_lp[it]
        report["fractional_before"] = int(np.count_nonzero(np.abs(xi_lp - np.round(xi_lp)) > INTEGRALITY_TOL))

        # ---- round / repair / fill, then fix the integers and re-solve the continuous part
        x_k, out = _round_and_resolve(problem, st, x_lp, y_lp, prev, settings, t_start, seconds, steps,
                                      {"stage": k} if staged else {})
        if x_k is not None and (x_best is None or problem.sense * (problem.objective(x_k)
                                                                    - problem.objective(x_best)) < 0):
            x_best, source = x_k, "heuristic"
        gap_k = _gap(problem.sense, problem.objective(x_best), lp_bound) if x_best is not None else math.inf
        # ---- dual ascent on the coupling rows: the bound that PDHG's duals give after a few hundred iterations
        # can be 2% loose while the rounded point is already within 0.3% (Sia 10,240, warm rounds)
        if x_best is not None and gap_k > settings.mip_gap_tol:
            lp_bound, ascent = _dual_ascent(problem, lag, y_lp, bound_k, ascent, x_best, lp_bound, settings,
                                            t_start, time.perf_counter() - t_stage, seconds, steps,
                                            {"stage": k} if staged else {})
            report["lp_bound"] = float(lp_bound)
            gap_k = _gap(problem.sense, problem.objective(x_best), lp_bound)
        # ---- RENS on this stage's LP point: HiGHS on the sub-MIP of its roundings, when rounding found no
        # point (joint rounding: LB's heavy shards) or one whose gap is above integer_submip_gap (Sia 10,240
        # after 256 iterations: 2.4% -> 0.28% in 1.4 s; LB 256x32: 24 -> 18 moves)
        # In staged runs a point above mip_gap_tol also qualifies: the alternative is another relaxation stage,
        # which costs more (Sia 10,240 round 7: the dual ascent put the gap at 0.87%, under the 1% rule, and
        # four more stages ran to 2,048 iterations, 16 s, to reach 0.5%)
        rens_gap = settings.integer_submip_gap
        if staged and math.isfinite(rens_gap):
            rens_gap = min(rens_gap, settings.mip_gap_tol)
        rens_here = (submip_seconds > 0 and rens_runs < RENS_MAX_PER_ROUND and _remaining(settings, t_start) > 0
                     and (x_best is None or gap_k > rens_gap))
        if rens_here:
            rens_runs += 1
            found = x_best is not None
            rens_budget = (min(submip_seconds, _remaining(settings, t_start), max(1.0, seconds["relaxation"]))
                           if found else min(submip_seconds, _remaining(settings, t_start)
                                             * (0.5 if fallback_mode == "highs" else 1.0)))
            x_r = _rens_step(problem, x_lp, y_lp, x_best if found else out.x, settings, t_start, seconds, steps,
                             rens_budget, reason=(None if not found else "gap above integer_submip_gap"
                                                  if gap_k > settings.integer_submip_gap else
                                                  "gap above mip_gap_tol (staged)"),
                             tag={"stage": k} if staged else {}, lag=lag,
                             y_rank=ascent[1] if ascent is not None else y_lp)
            if x_r is not None and (x_best is None or problem.sense * (problem.objective(x_r)
                                                                       - problem.objective(x_best)) < 0):
                x_best, source = x_r, "heuristic"
                gap_k = _gap(problem.sense, problem.objective(x_best), lp_bound)
                if gap_k > settings.mip_gap_tol:  # a better point is a closer Polyak target: ascend again
                    lp_bound, ascent = _dual_ascent(problem, lag, y_lp, bound_k, ascent, x_best, lp_bound,
                                                    settings, t_start, time.perf_counter() - t_stage, seconds,
                                                    steps, {"stage": k} if staged else {})
                    report["lp_bound"] = float(lp_bound)
                    gap_k = _gap(problem.sense, problem.objective(x_best), lp_bound)
        stages.append({"tol": float(tol_k), "iteration_budget": cap,
                       "lp_status": lp.status.name, "iterations": int(lp.iterations),
                       "seconds": time.perf_counter() - t_stage, "lp_bound": float(bound_k),
                       "integer_objective": float(problem.objective(x_k)) if x_k is not None else math.nan,
                       "rens": bool(rens_here), "gap_rel": float(gap_k),
                       "fractional_before": report["fractional_before"]})
        if gap_k <= settings.mip_gap_tol or _remaining(settings, t_start) <= 0:
            break
        if lp.status == Status.OPTIMAL:  # this stage's tolerance is met: tighten, or stop at settings.tol
            if ti == len(tols) - 1:
                break
            ti += 1
        elif not (every and lp.status == Status.ITERATION_LIMIT and iterations < settings.iteration_limit):
            break  # time limit, numerical trouble, or the caller's own iteration limit
        k += 1
        budget *= 2
        state_in = SolverState(x=lp_state.x, y=lp_state.y, step_size=lp_state.step_size,
                               primal_weight=lp_state.primal_weight, iterations=lp_state.iterations,
                               integer_x=prev)

    # ---- dive: fix the sure integers, re-solve the LP warm, round again
    if x_best is None and settings.integer_dive_max > 0 and _remaining(settings, t_start) > 0:
        from solver.integer.dive import dive

        t0 = time.perf_counter()
        # with the HiGHS fallback on, the dive may use half of the time left: the rest stays for the fallback
        # (LB 1024x128: a dive that used all of a 120 s limit left the round with no point at all)
        dive_seconds = _remaining(settings, t_start) * (0.5 if fallback_mode == "highs" else 1.0)
        x_best, dinfo = dive(problem, st, x_lp, y_lp, out.x,
                             dc_replace(settings, time_limit_seconds=dive_seconds), prev, lp_state,
                             max_dives=int(settings.integer_dive_max),
                             resolve_seconds=_resolve_budget(settings, t_start, seconds))
        steps.append({"step": "dive", "changed": int(np.count_nonzero(x_best[it] != out.x[it]))
                      if x_best is not None else 0, "seconds": time.perf_counter() - t0, **dinfo})
        seconds["dive"] = time.perf_counter() - t0
        if x_best is not None:
            source = "heuristic"

    # ---- fill again with the exact continuous values pinned (a vertex frees integers the LP point used)
    if x_best is not None and not it.all():
        from solver.integer.rounding import fill_pinned

        t0 = time.perf_counter()
        x_fill, k = fill_pinned(problem, st, x_best, prev)
        if k:
            x_new, _ = fix_and_resolve(problem, x_fill, settings, x_best, y_lp,
                                       resolve_seconds=_resolve_budget(settings, t_start, seconds))
            if x_new is not None and problem.sense * (problem.objective(x_new) - problem.objective(x_best)) < 0:
                x_best = x_new
            else:
                k = 0
        steps.append({"step": "fill", "changed": int(k), "seconds": time.perf_counter() - t0,
                      "after": "fix_and_resolve"})

    # ---- fallback
    if x_best is None and fallback_mode == "highs" and _remaining(settings, t_start) > 0:
        from solver.integer.fallback import highs_mip

        t0 = time.perf_counter()
        seed = np.where(it, out.x, np.nan)
        xf, finfo = highs_mip(problem, min(float(settings.integer_fallback_seconds),
                                           _remaining(settings, t_start)), seed)
        if xf is not None:
            xf, rinfo = fix_and_resolve(problem, xf, settings, x_lp, y_lp,
                                        resolve_seconds=_resolve_budget(settings, t_start, seconds))
            if xf is None:
                finfo["reason"] = rinfo.get("reason", "")
        steps.append({"step": "fallback", "changed": int(np.count_nonzero(xf[it] != out.x[it])) if xf is not None
                      else 0, "seconds": time.perf_counter() - t0, **finfo})
        seconds["fallback"] = time.perf_counter() - t0
        report["fallback_used"] = True
        report["fallback_highs_status"] = finfo["highs_status"]
        if xf is not None:
            x_best, source = xf, "fallback"
        elif finfo["highs_status"] in ("Primal infeasible or unbounded", "Unbounded"):
            # the relaxation never certified it (a diverged iterate ran to the iteration limit); HiGHS did
            report["source"] = "none"
            report["integer_objective"] = math.nan
            return _result(problem, Status.INFEASIBLE_OR_UNBOUNDED, out.x, y_lp, lp_bound, iterations, seconds,
                           t_start, lp_state, warm_start, report,
                           f"the HiGHS MIP fallback found the MILP {finfo['highs_status'].lower()}")
        elif finfo["highs_status"] == "Infeasible":
            # branch-and-cut proved it: the MILP has no integer point at all (exit 4, not 5)
            report["source"] = "none"
            report["integer_objective"] = math.nan
            return _result(problem, Status.PRIMAL_INFEASIBLE, out.x, y_lp, lp_bound, iterations, seconds,
                           t_start, lp_state, warm_start, report,
                           "the HiGHS MIP fallback proved that no integer-feasible point exists")
        lp_bound = _tighter_bound(problem, lp_bound, finfo, report)

    # ---- optional improvement: a heuristic point whose gap is above integer_fallback_gap goes to HiGHS
    if (x_best is not None and fallback_mode == "highs" and _remaining(settings, t_start) > 0
            and _gap(problem.sense, problem.objective(x_best), lp_bound) > settings.integer_fallback_gap):
        from solver.integer.fallback import highs_mip

        t0 = time.perf_counter()
        xf, finfo = highs_mip(problem, min(float(settings.integer_fallback_seconds),
                                           _remaining(settings, t_start)), np.where(it, x_best, np.nan))
        if xf is not None:
            xf, _ = fix_and_resolve(problem, xf, settings, x_lp, y_lp,
                                    resolve_seconds=_resolve_budget(settings, t_start, seconds))
        better = xf is not None and problem.sense * (problem.objective(xf) - problem.objective(x_best)) < 0
        steps.append({"step": "fallback", "reason": "gap above integer_fallback_gap",
                      "changed": int(np.count_nonzero(xf[it] != x_best[it])) if better else 0,
                      "seconds": time.perf_counter() - t0, **finfo})
        seconds["fallback"] = seconds.get("fallback", 0.0) + time.perf_counter() - t0
        report["fallback_used"] = True
        report["fallback_highs_status"] = finfo["highs_status"]
        lp_bound = _tighter_bound(problem, lp_bound, finfo, report)
        if better:
            x_best, source = xf, "fallback"

    report["source"] = source
    if x_best is None:
        report["integer_objective"] = math.nan
        return _result(problem, Status.NO_INTEGER_SOLUTION, out.x, y_lp, lp_bound, iterations, seconds, t_start,
                       lp_state, warm_start, report, "no integer-feasible point found"
                       + ("" if fallback_mode == "highs" else " (fallback disabled)"))
    obj = problem.objective(x_best)
    gap = _gap(problem.sense, obj, lp_bound)
    report["integer_objective"] = obj
    report["gap_rel"] = gap
    status = Status.OPTIMAL if gap <= settings.mip_gap_tol else Status.FEASIBLE
    if source == "fallback" and report.get("fallback_highs_status") == "Optimal":
        status = Status.OPTIMAL  # HiGHS closed the gap within its own mip_rel_gap
    msg = (f"integer point from the {source}; objective {obj:.10g}, LP bound {lp_bound:.10g}, gap {gap:.3g}")
    return _result(problem, status, x_best, y_lp, lp_bound, iterations, seconds, t_start, lp_state, warm_start,
                   report, msg, feasible=True)


def _tighter_bound(problem: Problem, lp_bound: float, finfo: dict, report: dict) -> float:
    """HiGHS's branch-and-cut dual bound when it is finite and tighter than ``lp_bound`` (both are valid)."""
    mip_bound = float(finfo.get("mip_dual_bound", math.nan))
    if np.isfinite(mip_bound) and (not np.isfinite(lp_bound) or problem.sense * (mip_bound - lp_bound) > 0):
        report["lp_bound"] = mip_bound
        report["bound_source"] = "highs_mip"
        return mip_bound
    return lp_bound


def _round_and_resolve(problem, st, x_lp, y_lp, prev, settings, t_start, seconds, steps, tag):
    """Round ``x_lp`` (round / repair / fill) and complete the integers exactly (fix_and_resolve), for each
    VUB threshold of ``vub_thresholds`` (sparsest first) until a point is found.

    Returns:
        (x, out): the exact point ((n,) or None) and the last RoundingOutcome (seed of dive/fallback).
    """
    from solver.integer.rounding import vub_thresholds

    x_k, out = None, None
    ths = vub_thresholds(st)
    for th in ths:
        t0 = time.perf_counter()
        out = run_rounding(problem, st, x_lp, prev, vub_min=th, free_vub_up=len(ths) > 1)
        seconds["rounding"] += time.perf_counter() - t0
        extra = {**tag, **({"vub_min": th} if len(ths) > 1 else {})}
        for d in out.steps:
            d.update(extra)
        steps.extend(out.steps)
        t0 = time.perf_counter()
        resolve_info = {}
        last = th == ths[-1]
        # a sparser threshold is a cheap probe: one candidate and a fifth of the PDHG budget (an infeasible
        # fixed LP otherwise burns the whole budget before HiGHS says so; LB 1024x128: about a minute each)
        budget = _resolve_budget(settings, t_start, seconds) * (1.0 if last else 0.2)
        if out.rows_violated == 0:
            for cand in ((out.x, out.x_before_fill) if last else (out.x,)):
                x_k, resolve_info = fix_and_resolve(problem, cand, settings, x_lp, y_lp,
                                                    resolve_seconds=max(0.5, budget))
                if x_k is not None:
                    break
                if np.array_equal(out.x, out.x_before_fill):
                    break
        steps.append({"step": "fix_and_resolve", "changed": int(resolve_info.get("changed", 0)),
                      "seconds": time.perf_counter() - t0, **extra,
                      **{k2: v for k2, v in resolve_info.items() if k2 in ("lp_columns", "lp_rows", "highs_status",
                                                                           "pdhg_iterations", "reason")}})
        seconds["fix_and_resolve"] += time.perf_counter() - t0
        if x_k is not None:
            break
    return x_k, out


def _dual_ascent(problem, lag, y_lp, stage_bound, ascent, x_best, lp_bound, settings, t_start, stage_seconds,
                 seconds, steps, tag):
    """Run ``coupling_dual_ascent`` when the round has a choice-row Lagrangian and steps are allowed.

    Starts from the duals of ``ascent`` = (bound, (m,) duals), the best earlier ascent, when its bound is
    tighter than ``stage_bound``, the bound of the stage's LP duals ``y_lp`` (m,), else from ``y_lp``;
    budget ``integer_dual_ascent_steps`` evaluations and at most the stage's time so far (>= 0.1 s).
    Returns (the tighter of ``lp_bound`` and the ascent's bound, the best ``ascent`` so far); appends a
    ``"dual_ascent"`` step.
    """
    n_steps = _ascent_steps(settings)
    if lag is None or lag.rows_k.size == 0 or n_steps <= 0 or _remaining(settings, t_start) <= 0:
        return lp_bound, ascent
    t0 = time.perf_counter()
    s = problem.sense
    y0 = y_lp
    if ascent is not None and (not np.isfinite(stage_bound) or s * (ascent[0] - stage_bound) > 0):  # tighter
        y0 = ascent[1]
    budget = min(_remaining(settings, t_start), max(0.1, stage_seconds))
    bound, y_best, info = coupling_dual_ascent(lag, y0, problem.objective(x_best), float(settings.mip_gap_tol),
                                               max_steps=n_steps, seconds=budget)
    before = lp_bound
    if np.isfinite(bound) and (not np.isfinite(lp_bound) or s * (bound - lp_bound) > 0):  # tighter
        lp_bound = bound
    if np.isfinite(bound) and (ascent is None or s * (bound - ascent[0]) > 0):
        ascent = (bound, y_best)
    steps.append({"step": "dual_ascent", **tag, "changed": 0, "evaluations": info["steps"],
                  "bound_before": float(before), "bound_after": float(lp_bound),
                  "seconds": time.perf_counter() - t0})
    seconds["bound"] += time.perf_counter() - t0
    return lp_bound, ascent


def _rens_step(problem, x_lp, y_lp, x_ref, settings, t_start, seconds, steps, budget, reason=None, tag=None,
               lag=None, y_rank=None):
    """Run RENS (``submip.py``) for at most ``budget`` seconds and complete its point exactly.

    With the round's choice-row Lagrangian ``lag`` and duals ``y_rank`` (m,), the Lagrangian core
    (``submip.core_bounds``) is the last neighbourhood, tried when HiGHS proves RENS's infeasible.

    Returns the exact point ((n,)) or None; appends a ``"rens"`` step (``changed`` = integer columns that
    differ from ``x_ref``) and adds the time to ``seconds["rens"]``.
    """
    from solver.integer.submip import rens

    t0 = time.perf_counter()
    core = None
    if lag is not None and y_rank is not None:  # built only if RENS's own neighbourhoods fail
        from solver.integer.submip import core_bounds

        def core():
            return core_bounds(problem, x_lp, lag, y_rank)
    # HiGHS stops the sub-MIP at half of the round's gap target (never below its own default, 1e-4): its
    # bound is on the sub-MIP only, and proving that optimal does not move the round's gap
    xr, rinfo = rens(problem, x_lp, budget, mip_rel_gap=max(1e-4, 0.5 * float(settings.mip_gap_tol)), core=core)
    if xr is not None:
        xr, finfo = fix_and_resolve(problem, xr, settings, x_lp, y_lp,
                                    resolve_seconds=_resolve_budget(settings, t_start, seconds))
        if xr is None:
            rinfo["reason"] = finfo.get("reason", "")
    it = problem.integrality
    steps.append({"step": "rens", **(tag or {}), **({"reason": reason} if reason else {}),
                  "changed": int(np.count_nonzero(xr[it] != x_ref[it])) if xr is not None else 0,
                  "seconds": time.perf_counter() - t0, **rinfo})
    seconds["rens"] = seconds.get("rens", 0.0) + time.perf_counter() - t0
    return xr


def _submip_seconds(settings: Settings) -> float:
    """``settings.integer_submip_seconds`` as a float >= 0 (0 = RENS off).

    Raises:
        UsageError: a negative or NaN value.
    """
    v = float(getattr(settings, "integer_submip_seconds", 0.0) or 0.0)
    if math.isnan(v) or v < 0:
        from solver.model.errors import UsageError

        raise UsageError(f"integer_submip_seconds must be >= 0 seconds, got {v!r}")
    return v


def _ascent_steps(settings: Settings) -> int:
    """``settings.integer_dual_ascent_steps`` as an int >= 0 (0 = no dual ascent); UsageError otherwise."""
    return _nonnegative_int(settings, "integer_dual_ascent_steps")


def _round_every(settings: Settings) -> int:
    """``settings.relaxation_round_iterations`` as an int >= 0 (0 = stages end only at their tolerance);
    UsageError otherwise."""
    return _nonnegative_int(settings, "relaxation_round_iterations")


def _nonnegative_int(settings: Settings, field: str) -> int:
    """Settings field ``field`` as an int >= 0 (None/0 = 0).

    Raises:
        UsageError: a negative, fractional or boolean value (naming ``field``).
    """
    v = getattr(settings, field, 0) or 0
    if isinstance(v, bool) or not float(v).is_integer() or v < 0:
        from solver.model.errors import UsageError

        raise UsageError(f"{field} must be a non-negative integer, got {v!r}")
    return int(v)


def _remaining(settings: Settings, t_start: float) -> float:
    """Seconds left of ``settings.time_limit_seconds`` for the whole MILP round (inf when unlimited)."""
    return float(settings.time_limit_seconds) - (time.perf_counter() - t_start)


def _resolve_budget(settings: Settings, t_start: float, seconds: dict) -> float:
    """Time for one fix-and-resolve LP: as long as the relaxation took, within what is left (>= 0.5 s)."""
    return max(0.5, min(seconds["relaxation"], _remaining(settings, t_start)))


def _gap(sense: int, obj: float, bound: float) -> float:
    """sense * (obj - bound) / max(1, |obj|), clipped at 0; inf when the bound is not finite."""
    if not np.isfinite(bound):
        return math.inf
    return max(0.0, sense * (obj - bound)) / max(1.0, abs(obj))


def _result(problem, status, x, y, bound, iterations, seconds, t_start, lp_state, warm_start, report, message,
            feasible=False) -> SolveResult:
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
                            integer_x=x.copy() if feasible else (warm_start.integer_x if warm_start else None))
    obj = problem.objective(x)
    yv = np.asarray(y, dtype=np.float64)
    return SolveResult(
        status=status, x=x, y=yv, reduced_cost=problem.cost - problem.matrix().T @ yv, row_activity=act,
        objective=obj, dual_objective=float(bound),
        primal_residual_rel=float(np.linalg.norm(viol) / (1.0 + np.linalg.norm(b))) if viol.size else 0.0,
        dual_residual_rel=float(report.get("lp_dual_residual_rel", math.nan)), gap_rel=float(report.get("gap_rel", math.inf)), iterations=int(iterations),
        seconds=seconds, point_feasible=bool(feasible and chk["ok"]), state=state,
        warm_started=warm_start is not None, message=message,
        max_row_violation=float(viol.max()) if viol.size else 0.0, mip=report)
