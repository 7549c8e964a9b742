"""What a partitioned round does with a merged point that is not good enough (:mod:`solver.partition.round`,
module docstring, step 6): the price re-split test (:func:`wants_price_split`, the ascent continued first by
:func:`ascend_on`), the improvement tiers of the parts holding most of the gap (:func:`improve_parts`: RENS, then
:func:`_resolve_parts`) and the test for a whole solve after them (:func:`far_after_parts`)."""

from __future__ import annotations

import math
import time
from dataclasses import asdict, replace
from typing import TYPE_CHECKING

import numpy as np

from solver.integer.gap import abs_gap_of, gap_allowance
from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.settings import Settings
from solver.model.status import Status
from solver.partition import merge as pmerge
from solver.partition.deadline import Deadline, ascent_seconds
from solver.partition.executor import map_parts, run_parts
from solver.partition.fallback import LP_FAR_GAP
from solver.partition.improve import WholeBound, choose_parts, gap_by_part, improve_part
from solver.partition.merge import Merged
from solver.partition.phases import Phases
from solver.partition.split import Part

if TYPE_CHECKING:
    from solver.partition.background import AscentThread
    from solver.partition.config import PartitionConfig
    from solver.partition.round import RoundSetup

RENS_MIN_SECONDS = 1.0  #: RENS's budget is the slowest part's solve time, but at least this (0.5 s measured: Sia
#: 10,240 K=4 on K cores 1.6-2.2 s instead of 2.1-2.5 s, but up to 0.38% worse than mono instead of 0.24%)


def wants_price_split(settings: Settings, mg: Merged, wb: WholeBound | None, r: RoundSetup, dl: Deadline,
                      after_rens: bool = False) -> bool:
    """A MILP merge whose feasible point is more than FAR_GAP x ``mip_gap_tol`` from the whole model's bound
    (its duals known; ``after_rens``: still above ``mip_gap_tol`` after the parts' RENS, which cannot move capacity
    between them), with shared rows and time left for the parts: its shares are re-split by the parts'
    demands at the bound's duals (:func:`solver.partition.price_split.price_shares`) and the parts solved
    again, warm; the better of the two merged points is the round's (``fallback.better_point``)."""
    gap = mg.rep.get("gap_rel")
    factor = 1.0 if after_rens else pmerge.FAR_GAP
    return (wb is not None and r.ns > 0 and mg.y_bound is not None and mg.result.point_feasible
            and gap is not None and gap > factor * settings.mip_gap_tol and dl.parts_left() > 0)


def ascend_on(wb: WholeBound, mg: Merged, settings: Settings, dl: Deadline) -> Merged:
    """``mg`` with its dual ascent continued (the same run) for the rest of the round's budget
    (``integer_dual_ascent_steps`` less the evaluations it made; a far merge stops after ``solver.integer.ascent.FIRST_STEPS``):
    its bound, duals and ascent state moved to where the run stopped."""
    asc = mg.rep.get("dual_ascent") or {}
    left = int(settings.integer_dual_ascent_steps) - pmerge.ran(mg)
    if left <= 0 or mg.ascent_state is None:
        return mg
    bound, y, info = wb.ascend(None, float(mg.result.objective), float(settings.mip_gap_tol), left,
                               seconds=ascent_seconds(dl), resume=mg.ascent_state)
    if not np.isfinite(bound):
        return replace(mg, ascent_state=info["state"])
    asc = {**asc, "evaluations": int(asc.get("evaluations", 0)) + int(info["steps"]),
           "seconds": round(float(asc.get("seconds", 0.0)) + float(info["seconds"]), 6), "bound": float(bound)}
    return replace(mg, ascent_state=info["state"], y_bound=np.asarray(y, dtype=np.float64),
                   rep={**mg.rep, "bound": float(bound), "dual_ascent": asc})


def above_target(problem: Problem, settings: Settings, rep: dict, result: SolveResult) -> bool:
    """A MILP round's merged point, feasible, above ``mip_gap_tol`` from the whole model's bound: a small MILP's
    (:func:`solver.partition.small.small_milp`) is compared with a whole solve at once, without the parts' RENS,
    price re-split and re-solve passes."""
    return (problem.is_mip and result.status == Status.FEASIBLE and result.point_feasible
            and unproven_or_above(rep.get("gap_rel"), settings.mip_gap_tol))


def far_after_parts(problem: Problem, settings: Settings, rep: dict, result: SolveResult) -> bool:
    """A MILP round's merged point, feasible, still more than FAR_GAP x ``mip_gap_tol`` from the whole model's
    bound after the parts' improvement: the round is compared with a whole solve
    (:func:`solver.partition.fallback.compare_whole`) when the parts' time is not spent."""
    return (problem.is_mip and result.status == Status.FEASIBLE and result.point_feasible
            and unproven_or_above(rep.get("gap_rel"), pmerge.FAR_GAP * settings.mip_gap_tol))


def lp_without_bound(problem: Problem, rep: dict, result: SolveResult) -> bool:
    """An LP round's merged point, feasible, with no proven bound (the report's ``gap_rel`` null: a free column
    makes the parts' Lagrangian bound -inf): it ended FEASIBLE, exit 0, with nothing to judge it by, 3.4% below the
    optimum on hunt 38's 8-client LP with one free column; it is compared with a whole solve
    (:func:`solver.partition.fallback.compare_small_lp`, reason ``no_bound``), as a MILP merge without a bound is."""
    return (not problem.is_mip and result.status == Status.FEASIBLE and result.point_feasible
            and rep.get("gap_rel") is None)


def lp_far(problem: Problem, rep: dict, result: SolveResult) -> bool:
    """An LP round's merged point, feasible, more than :data:`LP_FAR_GAP` from its bound (the report's ``gap_rel``):
    the parts' shares confine it (a part starved after its clients were replaced), so it is compared with a whole
    solve (:func:`solver.partition.fallback.compare_small_lp`, reason ``far``), whose point, when kept, gives the
    next round's shares whatever ``--share-update-every`` says: fixed shares would keep the round far. The round
    asks this only when ``whole_below_nnz`` is not 0 (0: no whole solve but a failed part's)."""
    gap = rep.get("gap_rel")
    return (not problem.is_mip and result.status == Status.FEASIBLE and result.point_feasible
            and gap is not None and gap > LP_FAR_GAP)


def wants_improvement(settings: Settings, rep: dict, result: SolveResult) -> bool:
    """A merged MILP point that is feasible but above the round's gap target, with RENS allowed."""
    return (result.status == Status.FEASIBLE and unproven_or_above(rep.get("gap_rel"), settings.mip_gap_tol)
            and settings.integer_submip_seconds > 0)


def unproven_or_above(gap: float | None, limit: float) -> bool:
    """A merged MILP point's gap (the report's ``gap_rel``) above ``limit``, or no gap at all: no bound was
    proven (a free integer column with a reduced cost that is not exactly 0 makes the whole model's bound
    -inf). Such a merge counted as within every target, so it got no improvement step and no whole solve:
    helper-156's assignment MILP with free overflow columns, K = 2, stayed 2.3% from HiGHS's optimum round
    after round, where the whole solve's point is 0.07% from it."""
    return gap is None or gap > limit


def improve_parts(problem: Problem, settings: Settings, config: PartitionConfig, wb: WholeBound, mg: Merged,
                  r: RoundSetup, parts: list[Part], results: list, part_rep: list[dict], eff: np.ndarray,
                  part_seconds: float, tier: str = "rens", ph: Phases | None = None,
                  background: AscentThread | None = None) -> tuple[dict, float, float]:
    """Improve the parts holding most of the merged point's gap (:mod:`solver.partition.improve`), in parallel
    on the executor. ``tier`` ``"rens"``: one RENS step each, within min(``integer_submip_seconds``, the
    slowest part's seconds (>= RENS_MIN_SECONDS), the round's time left); a better part point replaces the part's point
    (and its state's ``integer_x``). ``"resolve"`` (when RENS left the gap above the target: a cold round's
    first LP point is too far for its neighbourhood): the part's full integerization with the round's own
    settings (more relaxation stages, its own dual ascent and RENS), warm from its state, within the round's
    time left; a better feasible result replaces the part's.

    Returns:
        (the report's ``improvement`` section, the slowest RENS's seconds, seconds spent here outside the
        workers). Raises PartWorkerError when a worker dies twice.
    """
    t = time.perf_counter()
    k = config.k
    result, y_bound = mg.result, mg.y_bound
    rep = {"gap_before": result.gap_rel if result.gap_rel == result.gap_rel else None, "parts": [], "improved": []}
    if y_bound is None:
        return rep, 0.0, time.perf_counter() - t
    t_g = time.perf_counter()
    contrib = gap_by_part(wb, y_bound, result.x, r.col_part, k, r.rows_sh, eff, global_part=mg.global_part)
    (ph or Phases()).add("gap_by_part", time.perf_counter() - t_g)
    total = float(np.nansum(np.clip(contrib, 0.0, None)))
    rep["gap_share"] = [round(float(c) / total, 4) if total > 0 and np.isfinite(c) else None for c in contrib]
    chosen = [p for p in choose_parts(contrib, gap_allowance(float(result.objective), settings.mip_gap_tol,
                                                             abs_gap_of(problem.cost)))
              if results[p] is not None and results[p].state is not None and results[p].x is not None]
    left = r.clock.parts_left()
    budget = min(float(settings.integer_submip_seconds), max(RENS_MIN_SECONDS, float(part_seconds)), left)
    if tier == "resolve":
        budget = left
    rep.update(parts=chosen, seconds_budget=round(budget, 6) if math.isfinite(budget) else None)
    if not chosen or not budget > 0:
        return rep, 0.0, time.perf_counter() - t
    if tier == "resolve":
        return _resolve_parts(problem, settings, config, chosen, budget, parts, results, part_rep, rep, t, r.clock)
    tasks = [(i, parts[p].problem, results[p].state.x, results[p].state.y, results[p].x, settings, budget)
             for i, p in enumerate(chosen)]
    setup = time.perf_counter() - t
    if background is not None:
        background.start()  # the whole model's dual ascent goes on in this process while the workers run RENS
    try:
        outs = map_parts(improve_part, tasks, config.executor, config.workers, config.ray_address)
    finally:
        if background is not None:
            background.stop()
    t = time.perf_counter()
    for p, o in zip(chosen, outs, strict=True):
        pr = part_rep[p]
        pr["rens_seconds"] = round(float(o["seconds"]), 6)
        pr["rens_status"] = o["highs_status"]
        pr["max_rss_mb"] = round(max(float(pr.get("max_rss_mb") or 0.0), float(o["max_rss_mb"])), 1)
        if o["x"] is not None:
            res = results[p]
            st = replace(res.state, integer_x=o["x"].copy())
            results[p] = replace(res, x=o["x"], objective=o["objective_after"], state=st)
            pr["objective"] = float(o["objective_after"])
            rep["improved"].append(p)
    return rep, max(float(o["seconds"]) for o in outs), setup + time.perf_counter() - t


def _resolve_parts(problem: Problem, settings: Settings, config: PartitionConfig, chosen: list[int], budget: float,
                   parts: list[Part], results: list, part_rep: list[dict], rep: dict, t: float,
                   dl: Deadline):
    """The ``"resolve"`` tier of :func:`improve_parts`: each chosen part's full solve (``solver.api.solve_problem``
    with the round's settings, one thread, ``budget`` seconds; with a timed ``dl``: until the parts' deadline,
    counted from the command's start) warm from its state, kept when its point is feasible and better."""
    full = Settings(**{**asdict(settings), "threads": 1, "time_limit_seconds": budget})
    start = None
    if dl.timed:
        full, start = dl.part_settings(full), dl.command_start
    setup = time.perf_counter() - t
    outs = run_parts([(parts[p].problem, full, results[p].state) for p in chosen], config.executor, config.workers,
                     config.ray_address, start)
    t = time.perf_counter()
    sense = problem.sense
    for p, o in zip(chosen, outs, strict=True):
        new, pr = o["result"], part_rep[p]
        pr["resolve_seconds"] = round(float(o["seconds"]), 6)
        pr["max_rss_mb"] = round(max(float(pr.get("max_rss_mb") or 0.0), float(o["max_rss_mb"])), 1)
        pr["iterations"] = int(pr["iterations"]) + int(new.iterations)
        if (new.point_feasible and new.x is not None and np.isfinite(new.objective)
                and sense * (new.objective - results[p].objective) < 0):
            results[p] = new
            pr["objective"] = float(new.objective)
            rep["improved"].append(p)
    return rep, max(float(o["seconds"]) for o in outs), setup + time.perf_counter() - t
