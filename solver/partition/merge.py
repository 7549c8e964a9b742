"""The merge of a partitioned round: the parts' points and duals into one whole-model point (:func:`merge_parts`,
returning a :class:`Merged`), its bound (Lagrangian of the merged duals, for a MILP after dual ascent on the
whole model's choice rows) and its re-check on the whole model, which sets the round's status; a MILP merge may
leave its KKT residuals to :func:`complete_kkt`. Used by :mod:`solver.partition.round` (module docstring, step 6)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np

from solver.integer.gap import abs_gap_of, lattice_bound, objective_step, signed_gap
from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status
from solver.partition.bound import (
    AssignmentRows,
    assignment_rows_of,
    assignment_step,
    best_bound,
    implied_upper,
    shared_dual_candidates,
)
from solver.partition.clients import GLOBAL
from solver.partition.deadline import ascent_seconds
from solver.partition.phases import Phases
from solver.partition.ranges import kkt_spans, run_ranges
from solver.partition.split import Part, combine_points

if TYPE_CHECKING:
    from solver.partition.config import PartitionConfig
    from solver.partition.improve import WholeBound
    from solver.partition.round import RoundSetup

_SEVERITY = [Status.PRIMAL_INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED, Status.DUAL_INFEASIBLE,
             Status.NUMERICAL_ERROR, Status.NO_INTEGER_SOLUTION, Status.TIME_LIMIT, Status.ITERATION_LIMIT,
             Status.FEASIBLE, Status.OPTIMAL]
MILP_FEASIBLE_REL_TOL = 1e-6  #: max relative row/bound violation of a merged integer point
FAR_GAP = 2.0  #: a merged point is far from the bound when its gap is above this x mip_gap_tol (nearer: the whole
#: ascent budget decides; :data:`solver.integer.ascent.FIRST_STEPS`)


def gap_sentence(gap: float, feasible: bool = True) -> str:
    """The round message's words for the merged point's signed relative gap to the Lagrangian bound
    (``solver.integer.gap.signed_gap``): ``gap to the Lagrangian bound 0.053%``. An LP point feasible within
    the row tolerance can pass the bound a little (-4e-6 on a TE round): that is no negative gap (it read
    "-0.000%"), it says 0 and by how much. A point that failed the whole model's re-check (``feasible`` False) is
    past the bound because it violates a row: said so, not "within its row tolerance" beside the row 120 times
    over it (hunt 38)."""
    if gap >= 0:
        return f"gap to the Lagrangian bound {gap:.3%}"
    if not feasible:
        return (f"the point is {-gap:.1e} past the Lagrangian bound, relative, because it violates the whole "
                "model (no gap to report)")
    return f"gap to the Lagrangian bound 0 (the point is {-gap:.1e} past it, relative, within its row tolerance)"


def gap_fields(gap: float | None) -> dict:
    """The report's ``gap_rel`` and ``past_bound_rel`` of a merged point's signed relative gap to the bound (None:
    no bound): a point past the bound (within its row tolerance, or violating the model) has ``gap_rel`` 0 and
    ``past_bound_rel`` how far, not a negative gap (hunt 38: -1.2e-5 in JSON and history); both null without one."""
    if gap is None:
        return {"gap_rel": None, "past_bound_rel": None}
    return {"gap_rel": max(float(gap), 0.0), "past_bound_rel": max(-float(gap), 0.0)}


def part_engine(res: SolveResult) -> str:
    """The LP engine a part's solve ran (``pdhg``/``alm``; a MILP part: its relaxation's), "" when none."""
    return res.engine or str((res.mip or {}).get("lp_engine") or "")



@dataclass(eq=False)
class Merged:
    """What :func:`merge_parts` returns: the whole-model result, the report's bound/gap fields, the (m,) duals of the
    bound (None without one), the dual ascent's :class:`solver.integer.ascent.AscentState` (a later merge of the
    same round continues it), and the part whose values the global columns took (-1: none)."""

    result: SolveResult
    rep: dict
    y_bound: np.ndarray | None
    ascent_state: object
    global_part: int
    near_cut: bool = False  #: the ascent stopped after its first steps near the target (``near_goes_on`` False)
    kkt_deferred: bool = False  #: MILP: the LP residuals, reduced costs and activities are still to compute


def ran(mg: Merged | None) -> int:
    """Evaluations the round's dual ascent made up to ``mg`` (every merge and continuation of the round before it;
    0 without one): the round's budget ``integer_dual_ascent_steps`` counts them all."""
    st = None if mg is None else mg.ascent_state
    return int(getattr(st, "evaluations", 0) or 0)


def whole_kkt(problem: Problem, x: np.ndarray, y: np.ndarray, tol: float = 0.0):
    """``solver.lp.original_kkt.original_kkt`` of the merged point (x (n,), y (m,)) on the whole model, its column
    pass split into :func:`solver.partition.ranges.kkt_spans` run side by side in threads: the merge runs when the
    cores that ran the parts are idle (its kernels are the monolithic rounds', compiled by prepare). Returns
    what ``original_kkt`` returns."""
    from solver.lp.original_kkt import original_kkt

    return original_kkt(problem, x, y, tol, spans=kkt_spans(problem.n_cols, problem.n_rows), run=run_ranges)


def complete_kkt(problem: Problem, mg: Merged) -> Merged:
    """A MILP merge made with ``defer_kkt``: its result's whole-model reduced costs (n,), row activities (m,) and
    relative primal/dual residuals (``solver.lp.original_kkt``), which its status does not depend on."""
    if not mg.kkt_deferred:
        return mg
    kkt, _, _, red, ax = whole_kkt(problem, mg.result.x, mg.result.y)
    res = replace(mg.result, reduced_cost=red, row_activity=ax, primal_residual_rel=float(kkt.primal_residual_rel),
                  dual_residual_rel=float(kkt.dual_residual_rel))
    return replace(mg, result=res, kkt_deferred=False)


def _assignment_exact(problem: Problem, y: np.ndarray, bound: float | None, cand: str, y_bound: np.ndarray | None,
                      arows: AssignmentRows | None, up: np.ndarray | None, ph: Phases,
                      r_full: np.ndarray | None = None, r=None) -> tuple[float | None, str, np.ndarray | None, bool]:
    """An LP merge's bound after the exact step on the assignment rows' duals from ``y`` (the merged duals with
    the best candidate's shared duals; :func:`solver.partition.bound.assignment_step`): (the better of ``bound``
    and the step's safe value, its candidate's name, ``cand`` + ``+assignment_exact`` when the step won, its (m,)
    duals, the step won). ``arows`` None: computed here (phase ``assignment_rows``; a round on workers has them from its
    thread). ``r_full``: the candidates' pass's reduced costs at ``y`` (``BestBound.reduced_cost``; the step then makes
    no pass of its own). The step's own seconds are the phase ``bound_assignment``. ``r`` (the round's RoundSetup, or
    None): its carried coupling rows are used to compute ``arows``, and the rows used are kept in ``r.arows`` for
    the next round (``PartitionData.coupling_rows``)."""
    if arows is None:
        with ph.time("assignment_rows"):
            arows = assignment_rows_of(problem, None if r is None else r.coupling)
        if arows is None:  # too many columns for the assignment rows' kernel: the candidates' bound stands
            return bound, cand, y_bound, False
    if r is not None:
        r.arows = arows
    with ph.time("bound_assignment"):
        value, y_new, _ = assignment_step(problem, y, arows, up, r_full)
    sense = float(problem.sense)
    if value is not None and (bound is None or sense * value > sense * bound):
        return value, f"{cand or 'merged'}+assignment_exact", y_new, True
    return bound, cand, y_bound, False


def merge_parts(problem: Problem, settings: Settings, config: PartitionConfig, r: RoundSetup, parts: list[Part],
                results: list, part_rep: list, solve_idx: list[int], eff: np.ndarray, duals: np.ndarray,
                wb: WholeBound | None = None, prior: Merged | None = None, duals_changed: bool = True,
                first_steps: int | None = None, near_goes_on: bool = True, defer_kkt: bool = False,
                ph: Phases | None = None) -> Merged:
    """Merge the parts' results into the whole-model SolveResult and the report's bound/gap fields.

    The bound is the best safe Lagrangian bound of the merged duals (:func:`solver.partition.bound.best_bound`);
    for a MILP with ``wb`` also the whole model's choice-row Lagrangian maximised by dual ascent from those
    duals within ``settings.integer_dual_ascent_steps`` evaluations (:mod:`solver.partition.improve`). A
    later merge of the same round (``prior``: the merge before RENS) continues that ascent where it stopped
    (its level, its best duals; no evaluation repeated); when ``duals_changed`` is False (RENS changed the
    parts' points only) the candidates are not evaluated again (the prior ascent started from the best of
    them and never returns a worse value), else the prior ascent goes on when its best beats them all. With
    ``first_steps`` (the merge before RENS may run) the ascent stops after that many evaluations when the
    point is still more than FAR_GAP x ``mip_gap_tol`` from the bound (RENS will run; the merge after it goes
    on from there); nearer, it continues the same run for its whole budget, unless ``near_goes_on`` is False
    (the ascent then goes on in a thread during RENS, :class:`solver.partition.background.AscentThread`).
    ``defer_kkt`` (a MILP merge that RENS may replace): the whole model's LP residuals, reduced costs and
    activities, which a MILP's status does not use, are left to :func:`complete_kkt` (the feasibility re-check
    is done here either way)."""
    # whole_kkt: the numba passes the monolithic rounds measure with, over column ranges (prepare compiles their
    # signatures, tests/test_prepare.py); the numpy twin imported scipy in a step process and made nnz-sized temporaries
    from solver.baselines.result import point_quality
    from solver.lp.original_kkt import row_sentence
    from solver.lp.termination import row_tolerance

    grouping, rows_sh = r.grouping, r.rows_sh
    k = len(parts)
    ph = ph or Phases()
    t_ph = time.perf_counter()
    solved = [p for p in solve_idx if results[p] is not None]
    statuses = [results[p].status for p in solved]
    worst = min(statuses, key=_SEVERITY.index) if statuses else Status.OPTIMAL
    have_points = all(results[p].x is not None and np.isfinite(results[p].x).all() for p in solved)
    if have_points and solved:
        x, chosen_local = combine_points(problem, [parts[p] for p in solved], [results[p].x for p in solved],
                                         grouping.global_cols)
        chosen = solved[chosen_local] if chosen_local >= 0 else (solved[0] if solved else -1)
    else:
        x, chosen = np.zeros(problem.n_cols), -1
    y = np.zeros(problem.n_rows)
    rc = grouping.row_client
    client_part = r.assignment.client_part
    for p in solved:
        part, res = parts[p], results[p]
        owner = rc[part.rows]
        mine = (owner >= 0) & (client_part[np.maximum(owner, 0)] == p)
        if p == chosen:
            mine |= owner == GLOBAL
        y[part.rows[mine]] = res.y[mine]
    objective = problem.objective(x)
    sense = float(problem.sense)
    closure = abs_gap_of(problem.cost)  # the MIP gap's absolute closure in this model's units
    ascent, a_state, near_cut = None, None, False
    ph.add("merge_points", time.perf_counter() - t_ph)
    t_ph = time.perf_counter()
    if wb is not None and solved and have_points and np.isfinite(objective):
        # MILP: the whole model's choice-row Lagrangian (never weaker than the LP one at the same duals) at
        # each candidate of the shared rows' duals (unless known from the prior merge), then dual ascent
        resume = prior.ascent_state if prior is not None and prior.y_bound is not None else None
        if resume is not None and not duals_changed:
            cand, y_from = "previous_ascent", None
            y[rows_sh] = prior.result.y[rows_sh]
        else:
            starts = {}
            for name, ys in shared_dual_candidates(duals, eff).items():
                starts[name] = y.copy()
                starts[name][rows_sh] = ys
            vals = {name: wb.lag.evaluate(v)[0] for name, v in starts.items()}
            if resume is not None:
                vals["previous_ascent"] = prior.rep["bound"]
            cand = max(vals, key=lambda nm: sense * vals[nm] if np.isfinite(vals[nm]) else -np.inf)
            if cand == "previous_ascent":
                y[rows_sh] = prior.result.y[rows_sh]
                y_from = None
            else:
                y[rows_sh] = starts[cand][rows_sh]
                y_from, resume = starts[cand], None
        ph.add("bound_start", time.perf_counter() - t_ph)
        t_ph = time.perf_counter()
        # one budget for the round: the evaluations of the merges before this one count (the price pass's merge and
        # the re-merge of the pass it did not beat ran 10 + 40 more evaluations on Sia 25,600 that moved the bound
        # by 3e-9 relative)
        tol, used = float(settings.mip_gap_tol), ran(prior)
        steps = max(int(settings.integer_dual_ascent_steps) - used, 0 if resume is not None else 1)
        first = steps if first_steps is None else min(steps, first_steps)
        bound, y2, info_a = wb.ascend(y_from, objective, tol, first, seconds=ascent_seconds(r.clock),
                                      resume=resume)
        evals, secs, a_state = int(info_a["steps"]), float(info_a["seconds"]), info_a["state"]
        if resume is None and used:  # a fresh run from better candidates: the round's count goes on
            a_state = replace(a_state, evaluations=a_state.evaluations + used)
        far = np.isfinite(bound) and signed_gap(sense, objective, bound, closure) > FAR_GAP * tol
        near_cut = bool(first < steps and np.isfinite(bound) and not far and evals >= first and not a_state.done)
        if near_cut and near_goes_on:  # near the target: go on
            bound, y2, info_b = wb.ascend(None, objective, tol, steps - first, seconds=ascent_seconds(r.clock),
                                          resume=a_state)  # the same run
            evals, secs, a_state = evals + int(info_b["steps"]), secs + float(info_b["seconds"]), info_b["state"]
            near_cut = False
        ascent = {"evaluations": evals, "run_evaluations": int(a_state.evaluations), "seconds": round(secs, 6),
                  "start": cand, "start_bound": float(info_a["start_bound"]), "bound": float(bound)}
        bound = float(bound) if np.isfinite(bound) else None
        cand = "choice_lagrangian_ascent"
        y_bound = np.asarray(y2, dtype=np.float64) if bound is not None else None
        ph.add("dual_ascent", time.perf_counter() - t_ph)
    else:
        # a part that failed fails the round, whose gap is then not reported: past the deadline its bound is not
        # worth its time either (0.1-0.4 s on TE Cogentco, K = 2)
        late = worst not in (Status.OPTIMAL, Status.FEASIBLE) and r.clock.timed and r.clock.left() <= 0
        up, arows = None, None
        if solved and not late and r.implied is not None:  # computed in a thread during the parts' solves
            t_up = time.perf_counter()
            up, arows = r.implied.take(ph)[:2]
            t_ph += time.perf_counter() - t_up  # the wait is its own phase, not the bound's
        elif solved and not late:  # once for both the candidates and the assignment step
            up = implied_upper(problem)
        bound, cand, ysh, r_full = (best_bound(problem, y, rows_sh, duals, eff, up, keep_reduced=True)
                                    if solved and not late else (None, "", np.zeros(rows_sh.size), None))
        y[rows_sh] = ysh
        y_bound = y.copy() if bound is not None else None
        ph.add("bound_start", time.perf_counter() - t_ph)
        if solved and not late:
            bound, cand, y_bound, won = _assignment_exact(problem, y, bound, cand, y_bound, arows, up, ph, r_full, r)
            if won:
                # the round's duals too: with each assignment row's dual its exact best given the others, the
                # merged duals are dual feasible where the parts' left reduced costs of the wrong sign (TE Kdl K = 4
                # round 5: whole-model relative dual residual 1.19e-2 -> 5e-17; its dual objective is the bound)
                y = y_bound.copy()
    t_ph = time.perf_counter()
    defer_kkt = bool(defer_kkt and problem.is_mip)
    if defer_kkt:
        kkt = SimpleNamespace(primal_residual_rel=math.nan, dual_residual_rel=math.nan, gap_rel=math.nan)
        red, ax = np.full(problem.n_cols, np.nan), np.full(problem.n_rows, np.nan)
    else:
        # an LP round's status rests on this measure, at its tol (termination.near_bound); a MILP's is information,
        # measured as complete_kkt measures a deferred one
        kkt, x_kkt, _, red, ax = whole_kkt(problem, x, y, 0.0 if problem.is_mip else settings.tol)
    # the KKT measure's A x is of x clipped to its bounds: this x's own when the clip changed nothing
    q = point_quality(problem, x, None if defer_kkt or not np.array_equal(x_kkt, x) else ax)
    gap = None
    if bound is not None and problem.is_mip:  # an integral objective's bound rounds up to its lattice
        bound = lattice_bound(sense, bound, float(problem.offset), objective_step(problem.cost, problem.integrality))
    if bound is not None and np.isfinite(objective):
        gap = signed_gap(sense, objective, bound, closure)
    integral = True
    if problem.is_mip:
        ints = problem.integrality != 0
        integral = bool(np.all(np.abs(x[ints] - np.round(x[ints])) <= 1e-9))
    # the parts without a client (EMPTY, not solved) are not in the merge: "3 parts merged" with one solved misled
    n_empty = k - len(solve_idx)
    merged_parts = f"{len(solve_idx)} of {k} parts merged ({n_empty} EMPTY)" if n_empty else f"{k} parts merged"
    if worst not in (Status.OPTIMAL, Status.FEASIBLE) or not have_points:
        status = worst if worst not in (Status.OPTIMAL, Status.FEASIBLE) else Status.NUMERICAL_ERROR
        feasible = False
        msg = f"partitioned round: a part ended {worst.name}"
        if worst == Status.TIME_LIMIT and r.clock.timed:
            msg += f": {r.clock.note()}"
        gap = None  # no merged point to measure: a gap here read "-100.000%" (#19 review)
    elif problem.is_mip:
        feasible = integral and max(q.max_row_violation_rel, q.max_bound_violation) <= MILP_FEASIBLE_REL_TOL
        ok_gap = gap is not None and gap <= settings.mip_gap_tol
        status = (Status.OPTIMAL if ok_gap else Status.FEASIBLE) if feasible else Status.NUMERICAL_ERROR
        msg = (f"{merged_parts}; integer point re-checked on the whole model: "
               + ("feasible" if feasible else "VIOLATES it"))
    else:
        # the monolithic LP OPTIMAL's test (``KKT.converged``): norm-wise and every row within the per-row tolerance,
        # so a shared row the parts' shares overshoot together is not hidden by a large ||b||
        tol = float(settings.tol)
        kkt_ok = kkt.converged(tol)
        feasible = (kkt.primal_residual_rel <= k * tol
                    and kkt.row_violation_rel <= k * row_tolerance(tol))
        status = Status.OPTIMAL if kkt_ok else (Status.FEASIBLE if feasible else Status.NUMERICAL_ERROR)
        msg = (f"{merged_parts}; whole-model relative KKT primal {kkt.primal_residual_rel:.2e}, dual "
               f"{kkt.dual_residual_rel:.2e}, gap {kkt.gap_rel:.2e}")
        if kkt.row_violation_rel > row_tolerance(tol):
            msg += "; " + row_sentence(problem, (kkt, x, y, red, ax), tol)
    if gap is not None:
        msg += "; " + gap_sentence(gap, feasible)
    iters = max((results[p].iterations for p in solved), default=0)
    engines = {p: part_engine(results[p]) for p in solved}
    if any(engines.values()):
        msg += "; engines: " + ", ".join(f"part {p} {e or 'none'}" for p, e in engines.items())
    # the round's engine is the one of the part with the most iterations: the log's ``iterations`` is its count
    top = max(solved, key=lambda p: results[p].iterations, default=None)
    engine = engines.get(top, "") if top is not None else ""
    kinds = sorted({e for e in engines.values() if e})
    engine_reason = (f"partitioned round: the part with the most iterations (part {top}) ran {engine}; parts ran "
                     + ", ".join(kinds)) if engine else ""
    integ = max((float((results[p].seconds or {}).get("integerize", 0.0)) for p in solved), default=0.0)
    state = SolverState(x=x.copy(), y=y.copy(), iterations=int(iters),
                        integer_x=x.copy() if problem.is_mip else None)
    mip = None
    if problem.is_mip:
        mip = {"source": "partitioned", "lp_bound": float(bound) if bound is not None else math.nan,
               "gap_rel": float(gap) if gap is not None else math.nan, "integral": integral}
    secs = {"solve": 0.0, "total": 0.0}
    if problem.is_mip:
        secs["integerize"] = integ
    result = SolveResult(
        status=status, x=x, y=y, reduced_cost=red, row_activity=ax, objective=objective,
        dual_objective=float(bound) if bound is not None else math.nan,
        primal_residual_rel=float(kkt.primal_residual_rel), dual_residual_rel=float(kkt.dual_residual_rel),
        gap_rel=float(abs(gap)) if gap is not None else math.nan, iterations=int(iters), seconds=secs,
        point_feasible=bool(feasible), state=state,
        warm_started=any(part_rep[p]["warm_started"] for p in solved), message=msg, engine=engine,
        engine_reason=engine_reason,
        max_row_violation=float(q.max_row_violation), mip=mip)
    rep = {"bound": None if bound is None else float(bound), "bound_kind": "lagrangian" if bound is not None else None,
           "bound_candidate": cand or None, **gap_fields(gap),
           "max_row_violation_rel": float(q.max_row_violation_rel), "merged_feasible": bool(feasible),
           **({"dual_ascent": ascent} if ascent is not None else {})}
    ph.add("recheck", time.perf_counter() - t_ph)
    return Merged(result=result, rep=rep, y_bound=y_bound, ascent_state=a_state, global_part=int(chosen),
                  near_cut=near_cut, kkt_deferred=defer_kkt)
