"""One partitioned round: split the whole model by client, solve the parts in parallel warm-started from
their own previous iterates, merge their points into one solution on the whole model and check it there.

Flow (``copter init/step`` on a state made with ``--partitions K``; ``solver.rounds.loop`` calls
:func:`solve_round`):

1. group the round's columns by client and find the shared rows (:mod:`solver.partition.clients`);
2. carry the client -> part assignment over by client name (:mod:`solver.partition.layout`: a delta's rows
   reach the part owning their client; new clients go to the least-loaded part, dropped ones disappear);
3. carry each shared row's shares over (already moved toward the highest shadow prices at the end of the
   previous round, :mod:`solver.partition.shares`), giving no share to parts that do not touch the row;
4. build the parts (:mod:`solver.partition.split`), map each part's previous iterate onto its new index
   space (columns and rows by whole-problem position through the delta's maps), solve the parts on the
   executor (:mod:`solver.partition.executor`), each with ``solver.api.solve_problem`` (a MILP part goes
   through the same integerization as a monolithic round, but stops at its first integer point:
   ``solver.partition.improve.cheap_part_settings``);
5. merge: client columns from their part, global columns from one part (``combine_points``), row duals from
   the owning part, shared-row duals chosen for the best safe Lagrangian bound (:mod:`solver.partition.bound`);
6. re-check the merged point on the whole model: an LP round is OPTIMAL when the whole model's relative KKT
   error (primal, dual, gap; ``solver.lp.original_kkt``) is within ``tol``, FEASIBLE when its primal
   residual is within ``k * tol`` (each part meets 1.5 x ``tol`` on its own rows,
   ``solver.partition.part_settings``), else NUMERICAL_ERROR; a MILP
   round is FEASIBLE (OPTIMAL within ``mip_gap_tol`` of the bound) when the merged point is integral and
   violates no row or bound by more than 1e-6 relative (``solver.baselines.result.point_quality``), else
   NUMERICAL_ERROR; a part that fails makes the round fail with that part's status. A MILP's bound is the
   whole model's choice-row Lagrangian after dual ascent from the merged duals; when the merged point's gap
   to it is above ``mip_gap_tol``, the parts holding most of the gap get one RENS step each, in parallel,
   and the point is merged and judged again (:mod:`solver.partition.improve`). The ascent is one run across
   the round's merges (``solver.integer.ascent.AscentState``): before RENS it stops after
   :data:`solver.integer.ascent.FIRST_STEPS` evaluations; near the target, where it would run its whole budget first, it
   goes on in a thread of this process while the workers run RENS
   (:class:`solver.partition.background.AscentThread`; the ``inline`` executor runs it before RENS); the merge
   after RENS continues it; all the round's merges share the one budget ``integer_dual_ascent_steps``. A merged
   point still above ``mip_gap_tol`` after RENS (which cannot move capacity between the parts; without RENS,
   ``integer_submip_seconds`` 0: more than :data:`solver.partition.merge.FAR_GAP` x ``mip_gap_tol`` from that
   bound) has its capacity rows re-split by the parts' demands at the
   bound's duals (:mod:`solver.partition.price_split`; the ascent first runs the rest of its budget) and the
   parts solved again, warm; the better merge is kept, and a price pass's merge gets its own RENS step. A point
   still more than ``FAR_GAP`` x ``mip_gap_tol`` from the bound after all that is compared with a whole solve
   (:func:`solver.partition.fallback.compare_whole`), the better point kept; so is a small LP's
   (:func:`solver.partition.fallback.compare_small_lp`, ``whole_below_nnz``), whose next shares then come from
   the whole point (:func:`_whole_shares`);
   the round's ``engine`` is the LP engine of the part with the most iterations, every part's is in the
   report and the message;
7. update the shares for the next round from the parts' duals (``passes > 1`` repeats 4-7 within the round).

The report's ``seconds.phases`` breaks this process's own time down by phase (:mod:`solver.partition.phases`);
the phases marked ``_in_thread`` ran while the parts ran and are not on the round's critical path.
``pool_start`` is the wait for new part workers (a process pool started by this round: the forkserver's start
with the solver and its kernels, :mod:`solver.partition.forkserver_warm`, and the workers' fork), apart from
``slowest_part``, the parts' own solve seconds; ``on_k_cores`` leaves it out. ``ship`` is this process packing
the parts into shared memory for their workers (:mod:`solver.partition.shipping`; a worker maps them without a
copy, its share is in its part's seconds); ``on_k_cores`` = setup + ship + slowest part + merge (POP's measure,
setup + slowest part + merge, plus the shipping that runs in this process, one part after another).

This module holds the round's flow (:func:`solve_round`), its setup and its report; the configuration is in
:mod:`solver.partition.config`, the time budget in :mod:`solver.partition.deadline`, the merge and its re-check
in :mod:`solver.partition.merge`, the work done in threads while the workers run in
:mod:`solver.partition.background`, and what follows a merge that is not good enough (price re-split test,
RENS / re-solve of the parts, whole-solve test) in :mod:`solver.partition.after_merge`.

With ``passes > 1`` the parts are re-solved within the round, warm from the pass before, after each share
update. A worker that dies twice ends the round NUMERICAL_ERROR (nothing stored; the caller records it as
a failed round and CURRENT stays).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from formats.faults import fault_point
from solver.integer.ascent import FIRST_STEPS
from solver.model.errors import UsageError
from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status
from solver.partition import shares as sh
from solver.partition.after_merge import (
    above_target,
    ascend_on,
    far_after_parts,
    improve_parts,
    lp_far,
    lp_without_bound,
    wants_improvement,
    wants_price_split,
)
from solver.partition.background import AscentThread, ImpliedUpperBuild, WholeBoundBuild
from solver.partition.bound import coupling_rows
from solver.partition.clients import PARTITION_OPTIONS, carry_grouping, group_clients, require_clients
from solver.partition.config import PartitionConfig, default_update_every
from solver.partition.deadline import Deadline
from solver.partition.dropped import (
    RECLAIM_HALVINGS,
    RECLAIM_PASSES,
    added_use,
    dropped_use,
    reclaimed_shares,
)
from solver.partition.executor import (
    PartWorkerError,
    run_parts,
    take_pool_start,
    take_retries,
    take_ship_seconds,
    workers_ready,
)
from solver.partition.fallback import (
    better_point,
    compare_small_lp,
    compare_whole,
    failed_parts,
    solve_whole,
    solve_without_clients,
    violates_whole,
    whole_after_violation,
)
from solver.partition.improve import cheap_part_settings
from solver.partition.layout import initial_assignment, route
from solver.partition.limits import MAX_PASSES  # noqa: F401 - here too: the round's limit
from solver.partition.merge import Merged, complete_kkt, merge_parts, part_engine, ran
from solver.partition.part_settings import lp_part_settings
from solver.partition.pass_work import PassWork
from solver.partition.phases import Phases
from solver.partition.price_split import part_activity, price_shares, ration
from solver.partition.small import small_lp, small_milp
from solver.partition.split import (
    Part,
    build_part_problems,
    column_parts,
    combine_points,
    pop_shares,
    shared_rows,
)
from solver.partition.store import PartitionData, PartState

PRICE_SPLITS = 1  #: price re-splits of a far merge per round (:func:`wants_price_split`); 2 or 3 left the Sia demo's
#: K = 16 and 51 merges 0.6-1.7% from the bound over 4 rounds instead of 1.2-2.4% (the whole solve decided either way)
PRICE_PASS_FACTOR = 4.0  #: a price pass's parts stop after this many times the slowest part of the passes before ...
PRICE_PASS_MIN_SECONDS = 2.0  #: ... or this many seconds, the larger: the re-split is a try, and its shares can leave a
#: part (nearly) infeasible, which the engines take long to prove (LB 64 x 8, K = 2, a user's trial: 19-31 s in the
#: price pass after 0.2-0.4 s in the first, its merge not kept, the round ending on the whole solve)


@dataclass(eq=False)
class RoundOutcome:
    """What :func:`solve_round` returns: the whole-model result, the data for the next round, the report's
    ``partitions`` section."""

    result: SolveResult
    data: PartitionData | None
    report: dict


def pass_name(entry: dict) -> int | str:
    """The name of one ``shares.passes`` entry of a round report: its number for a share pass (``kind`` "pass"),
    else its ``kind`` ("probe", "price", "improve-rens", ...). The entries keep ``pass`` an integer or null and the
    name in ``kind``, so a column of them has one type (pyarrow refused a report whose ``pass`` was "probe" then 0)."""
    return entry["pass"] if entry.get("kind") == "pass" else entry["kind"]


def _map_part_state(prev: PartState, part: Part, col_map: np.ndarray | None, row_map: np.ndarray | None,
                    old_n: int, old_m: int) -> SolverState | None:
    """The part's previous iterate on its new index space: columns/rows matched by whole-problem position
    (through the delta's maps when given), new entries 0, x projected onto the new bounds."""
    st = prev.state
    if st is None or prev.cols is None or st.x.shape != prev.cols.shape or st.y.shape != prev.rows.shape:
        return None
    inv_c = np.full(old_n, -1, dtype=np.int64)
    inv_c[prev.cols] = np.arange(prev.cols.size, dtype=np.int64)
    inv_r = np.full(old_m, -1, dtype=np.int64)
    inv_r[prev.rows] = np.arange(prev.rows.size, dtype=np.int64)
    oc = part.cols if col_map is None else col_map[part.cols]
    orow = part.rows if row_map is None else row_map[part.rows]
    pc = np.where((oc >= 0) & (oc < old_n), inv_c[np.clip(oc, 0, max(old_n - 1, 0))] if old_n else -1, -1)
    pr = np.where((orow >= 0) & (orow < old_m), inv_r[np.clip(orow, 0, max(old_m - 1, 0))] if old_m else -1, -1)
    sub = part.problem

    def mx(v):
        out = np.where(pc >= 0, v[np.maximum(pc, 0)] if v.size else 0.0, 0.0)
        return np.minimum(np.maximum(out, sub.col_lower), sub.col_upper).astype(np.float64)

    y = np.where(pr >= 0, st.y[np.maximum(pr, 0)] if st.y.size else 0.0, 0.0).astype(np.float64)
    ix = mx(st.integer_x) if st.integer_x is not None and st.integer_x.shape == st.x.shape else None
    return SolverState(x=mx(st.x), y=y, step_size=st.step_size, primal_weight=st.primal_weight,
                       iterations=st.iterations, integer_x=ix, engine=getattr(st, "engine", None),
                       scaling=getattr(st, "scaling", None))  # the worker checks its matrix checksum


def _integral_bounds(parts: list[Part]) -> None:
    """MILP: snap shared rows' scaled bounds within 1e-9 of an integer to it (s * b rounding)."""
    for part in parts:
        p = part.problem
        for arr in (p.row_lower, p.row_upper):
            fin = np.isfinite(arr)
            r = np.round(np.where(fin, arr, 0.0))
            near = fin & (np.abs(np.where(fin, arr, 0.0) - r) <= 1e-9 * np.maximum(1.0, np.abs(r)))
            arr[near] = r[near]


def _part_duals(parts: list[Part], ys: list, spos: np.ndarray, k: int, ns: int) -> np.ndarray:
    """(k, ns) a per-row vector (duals, activities) of the shared rows in each part, NaN where a part does
    not hold the row (or has no vector)."""
    d = np.full((k, ns), np.nan)
    for p, (part, y) in enumerate(zip(parts, ys, strict=True)):
        if y is None:
            continue
        s = spos[part.rows]
        m = s >= 0
        d[p, s[m]] = y[m]
    return d


def solve_round(problem: Problem, settings: Settings, config: PartitionConfig, prev: PartitionData | None = None,
                info=None, old_shape: tuple[int, int] | None = None,
                whole_warm: SolverState | Callable[[], SolverState | None] | None = None,
                old_problem: Problem | None = None) -> RoundOutcome:
    """Solve one round of ``problem`` partitioned into ``config.k`` parts (module docstring).

    Args:
        problem: the whole model of the round (n columns, m rows), after the delta.
        settings: solver settings (each part gets them with ``threads = 1``).
        config: the state's partition configuration.
        prev: the previous round's PartitionData (None: round 0 or a cold start: a fresh split).
        info: the delta's ``ApplyInfo`` (col_map/row_map to the previous round), None for round 0.
        old_shape: (n, m) of the previous round's problem (defaults to ``info``'s).
        whole_warm: the previous round's whole-model state mapped onto ``problem``, or a function returning it (a
            larger LP's, mapped only when a whole solve runs: no bound, or a merge far from it): the warm start of an
            LP's whole solve (``config.whole_below_nnz``; None: cold).
        old_problem: the previous round's whole model (None: unknown): after a delta that dropped clients, what
            they took of each shared row (:func:`solver.partition.dropped.dropped_use`).
    Returns:
        RoundOutcome: the whole-model SolveResult (x (n,), y (m,), status, objective, bound as
        ``dual_objective``, ``gap_rel`` to it), the PartitionData for the next round (None when a worker
        died), and the report section ``partitions`` (per part seconds, iterations, status, warm_started,
        max_rss_mb, sizes; setup/ship/slowest part/merge seconds and their sum ``on_k_cores``; shares; bound).
    A later round whose delta dropped every client solves what is left of the model (its global columns and
    rows, if any) whole, every part EMPTY (:func:`solver.partition.fallback.solve_without_clients`); the parts
    take clients again as a later delta adds them.

    Raises:
        UsageError: round 0 (no ``prev``, no ``info``) with no clients read from the variable names (say how
            with ``--client-regex``) or more parts than clients; a bad regex / executor.
    """
    t0 = time.perf_counter()
    executor_reason = None
    if config.round_executor(problem) != config.executor:  # a small model: its parts cost less than the workers
        executor_reason = (f"small model: {int(problem.nnz):,} nonzeros <= inline_below_nnz "
                           f"{config.inline_below_nnz:,} (starting the part workers costs more than its parts; "
                           f"--executor process starts them)")
        config = replace(config, executor="inline")
    k = config.k
    ph = Phases()
    take_pool_start()  # a pool an earlier caller started is not this round's
    take_ship_seconds()  # nor an earlier caller's packing
    take_retries()  # nor an earlier caller's dead workers
    dl = Deadline.of(settings)
    r = _setup(problem, config, prev, info, old_shape, ph, dl)
    r.executor_reason = executor_reason
    small_mip = small_milp(problem, config.whole_below_nnz)  # a merge above target: the whole solve at once
    # ... and so does a MILP's whose last round kept its whole solve's point after a merge above target: LB 256 x 32
    # (40,960 nonzeros), K = 2, spent 35 s of a 46 s round on RENS, a price pass and the parts' re-solves before
    # its whole solve (4.2 s) won as in the round before (monolithic rounds 1.1-4.2 s; a user's trial, session 36)
    whole_last = (bool(problem.is_mip) and not small_mip and prev is not None and prev.whole_kept
                  and config.whole_below_nnz > 0)
    whole_at_once = small_mip or whole_last  # no RENS, price or re-solve pass: a merge above target goes whole
    part_settings = dl.part_settings(cheap_part_settings(settings) if problem.is_mip else lp_part_settings(settings))
    warms: list[SolverState | None] | None = None
    setup = time.perf_counter() - t0
    passes_report = []
    # a spent parts' budget skips the probe (POP's shares stay): its parts would each stop at their first check, so
    # its demands would be the start point's, after one engine set-up per part past the deadline
    if not r.warm and config.probe and r.ns and not (dl.timed and dl.parts_left() <= 0):
        try:
            # the probe gets half of the parts' time left, the pass after it the rest
            probe_settings = dl.part_settings(part_settings, min(dl.parts_limit,
                                                                 dl.since_start() + 0.5 * max(dl.parts_left(), 0.0)))
            ex = _executor(config, dl, k)
            r.shares, warms, probe_s = _probe(problem, r.grouping, r.col_part, k, r.present, r.rows_sh, r.spos,
                                              r.shares, probe_settings, config, dl.command_start, ex)
        except PartWorkerError as err:
            return _worker_died(problem, config, err, t0, setup)
        passes_report.append({"pass": None, "kind": "probe", "slowest_part_seconds": probe_s, "share_moved": None,
                              **_ran_on(config, ex)})
    wb_build, kept, wb, merge, n_price = None, None, None, 0.0, 0
    rens_first: dict | None = None  # the RENS step of the pass before a price re-split (its report)
    last_pass = config.passes - 1  # passes after it: the price re-split (:func:`wants_price_split`)
    # a round after a delta that dropped (or added) clients gives the capacity stranded in a part back (one more pass)
    reclaim = RECLAIM_PASSES if r.warm and (r.n_dropped > 0 or r.n_new > 0) and not problem.is_mip else 0
    before_reclaim = None  # the pass before a reclaim pass: kept when the reclaim pass's merge is worse
    halvings = RECLAIM_HALVINGS  # a reclaim pass that merged worse is tried once more with half its move
    best_pass = None  # an LP round with passes: its best pass so far (:func:`_better_pass`), kept over a worse last one
    pass_ = -1
    prev_obj = math.nan  # the merged objective of the pass before (an LP round with passes)
    work = None if problem.is_mip else PassWork(k)  # an LP round's parts' iterations over its passes (pass_work)
    while True:
        pass_ += 1
        t1 = time.perf_counter()
        with ph.time("build_parts"):
            eff = sh.integral_allocations(problem, r.rows_sh, r.shares)
            parts = build_part_problems(problem, r.grouping, r.col_part, k, eff, name="part")
            if problem.is_mip:
                _integral_bounds(parts)
        if warms is None:
            with ph.time("map_warm"):
                warms = [_map_part_state(prev.parts[p], parts[p], r.col_map, r.row_map, *r.old_shape)
                         if r.warm and p < len(prev.parts) else None for p in range(k)]
        solve_idx = [p for p in range(k) if bool((~r.grouping.global_cols[parts[p].cols]).any())]
        setup += time.perf_counter() - t1
        if not solve_idx:  # every client dropped: every part EMPTY, the rest of the model (global) solved whole
            results, part_rep = _part_results(parts, r.assignment, k, [], [])
            result, fallback = solve_without_clients(problem, settings)
            return _outcome(config, r, parts, results, part_rep, eff, (r.shares, r.steps, r.last), 0.0,
                            passes_report, setup, 0.0, t0, ph, result, {"fallback": fallback})
        if problem.is_mip and wb_build is None and pass_ >= last_pass:
            wb_build = WholeBoundBuild(problem, background=config.executor != "inline")
        ex = _executor(config, dl, len(solve_idx))
        if not problem.is_mip and r.implied is None and ex != "inline":
            # the merge's Lagrangian bound needs the model's implied upper bounds: computed while the parts run
            r.implied = ImpliedUpperBuild(problem, r.coupling)
        pass_settings, pass_start = part_settings, dl.command_start
        if kept is not None:  # the price re-split's pass: capped (PRICE_PASS_FACTOR), the pass before is kept
            pass_settings, pass_start = _price_pass_settings(part_settings, dl, passes_report)
        try:
            outs = run_parts([(parts[p].problem, pass_settings, warms[p]) for p in solve_idx], ex,
                             config.workers, config.ray_address, pass_start,
                             on_submitted=None if r.implied is None else r.implied.start)
        except PartWorkerError as err:
            return _worker_died(problem, config, err, t0, setup)
        t2 = time.perf_counter()
        fault_point("sigint_after_parts")  # tests: an interrupt outside a region, the pool kept and idle
        results, part_rep = _part_results(parts, r.assignment, k, solve_idx, outs,
                                          settings.mip_gap_tol if problem.is_mip else None, from_previous=r.warm)
        if work is not None:
            work.add(results)
        if pass_ < last_pass and dl.parts_left() <= 0:  # the parts' time is spent: no further pass
            last_pass = pass_
            if problem.is_mip and wb_build is None:
                wb_build = WholeBoundBuild(problem, background=False)
        # an LP round with passes compares its passes' merges: the best is kept, and a pass that improved on the one
        # before by at most STALL tells the update that the slack transfer has stalled (shares module docstring)
        compare = not problem.is_mip and config.passes > 1 and before_reclaim is None and not failed_parts(part_rep)
        obj = _merged_objective(problem, r, parts, results, solve_idx) if compare else math.nan
        stalled = bool(math.isfinite(obj) and math.isfinite(prev_obj)
                       and problem.sense * (prev_obj - obj) <= sh.STALL * max(1.0, abs(obj)))
        prev_obj = obj
        with ph.time("share_update"):
            duals = _part_duals(parts, [None if x is None else x.y for x in results], r.spos, k, r.ns)
            act = _part_duals(parts, [None if x is None else x.row_activity for x in results], r.spos, k, r.ns)
            gain = sh.gains(problem, r.rows_sh, duals)
            new_shares, new_steps, new_last = sh.update(r.shares, gain, r.present, r.steps, r.last,
                                                        sh.usage(problem, r.rows_sh, act), stalled=stalled)
        every = config.update_every
        if every is None:
            every = default_update_every(problem, config.whole_below_nnz)
        if pass_ >= last_pass and not _shares_update(r, every):
            new_shares, new_steps, new_last = r.shares, r.steps, r.last  # kept for the next round
        moved = float(np.abs(new_shares - r.shares).sum() / max(r.ns, 1) / 2.0)
        passes_report.append({"pass": pass_, "kind": "pass" if pass_ <= last_pass else "price",
                              "slowest_part_seconds": max((o["seconds"] for o in outs), default=0.0),
                              "share_moved": moved, **_ran_on(config, ex)})
        if compare:
            passes_report[-1].update({"merged_objective": obj, "stalled": stalled})
            # the parts' problems are not kept (on TE ASN2k a pass's parts hold ~30M nonzeros): a kept pass rebuilds
            # them from its shares, the same problems (build_part_problems is deterministic)
            this_pass = (None, results, part_rep, solve_idx, eff, duals, None, None, None, None, r.shares, r.steps,
                         r.last, pass_, obj)
            if pass_ < last_pass:
                best_pass = _better_pass(problem, best_pass, this_pass)
            elif best_pass is not None and _better_pass(problem, best_pass, this_pass) is best_pass:
                # the better pass before: its point, and its own shares for the next round (its update led here)
                (_, results, part_rep, solve_idx, eff, duals, _, _, _, _, r.shares, r.steps,
                 r.last) = best_pass[:13]
                with ph.time("build_parts"):
                    parts = build_part_problems(problem, r.grouping, r.col_part, k, eff, name="part")
                # what a reclaim pass (below) reads off this pass: the kept pass's prices and use
                act = _part_duals(parts, [None if x is None else x.row_activity for x in results], r.spos, k, r.ns)
                gain = sh.gains(problem, r.rows_sh, duals)
                new_shares, new_steps, new_last, moved = r.shares, r.steps, r.last, 0.0
                passes_report[-1]["kept_pass"] = best_pass[13]
        if reclaim and pass_ >= last_pass:
            reclaim -= 1
            back = (None if failed_parts(part_rep) or dl.parts_left() <= 0
                    else reclaimed_shares(problem, r.rows_sh, r.shares, r.present, gain, act,
                                          _freed(problem, r, prev, old_problem), _added(problem, r)))
            if back is not None:  # stranded capacity (solver.partition.dropped): one more pass, this one's shares
                passes_report[-1]["reclaimed"] = round(float(np.abs(back - r.shares).sum() / max(r.ns, 1) / 2.0), 6)
                before_reclaim = (parts, results, part_rep, solve_idx, eff, duals, new_shares, new_steps, new_last,
                                  moved, r.shares, _merged_objective(problem, r, parts, results, solve_idx))
                r.shares = back
                warms = [x.state if x is not None else None for x in results]
                last_pass = pass_ + 1
                setup += time.perf_counter() - t2
                continue
        if before_reclaim is not None and pass_ == last_pass:  # the reclaim pass: the pass before it if that was better
            obj = _merged_objective(problem, r, parts, results, solve_idx) if not failed_parts(part_rep) else math.nan
            first = before_reclaim[-1]
            kept_reclaim = math.isfinite(obj) and (not math.isfinite(first) or problem.sense * (obj - first) <= 0)
            passes_report[-1]["kept"] = bool(kept_reclaim)
            if not kept_reclaim:
                tried = r.shares
                (parts, results, part_rep, solve_idx, eff, duals, new_shares, new_steps, new_last, moved,
                 r.shares) = before_reclaim[:-1]
                if halvings and dl.parts_left() > 0:  # half the move, once: a price says which way, not how far
                    halvings -= 1
                    passes_report[-1]["halved_next"] = True
                    r.shares = sh.normalise((r.shares + tried) / 2.0, r.present)
                    warms = [x.state if x is not None else None for x in results]
                    last_pass = pass_ + 1
                    setup += time.perf_counter() - t2
                    continue  # compared with the same pass before
            before_reclaim = None
        if pass_ < last_pass:
            r.shares, r.steps, r.last, r.updates = new_shares, new_steps, new_last, r.updates + 1
            warms = [x.state if x is not None else None for x in results]
            setup += time.perf_counter() - t2
            continue
        failed = failed_parts(part_rep) if kept is None else {}  # a price pass's failure keeps the pass before
        if failed:  # a part infeasible under its shares proves nothing about the model: solve it whole, unmerged
            result, fallback = solve_whole(problem, settings, failed)
            outcome_rep = {"fallback": fallback}
            if result.status in (Status.OPTIMAL, Status.FEASIBLE) and r.ns and _shares_update(r, every):
                # the shares that left the parts infeasible are not the next round's: the whole point's are (LB
                # 64 x 8, K = 4: every round's parts 1-3 PRIMAL_INFEASIBLE under shares moved by their own duals)
                new_shares, moved = _shares_from_whole(problem, r, result, outcome_rep, passes_report)
            # nor is a failed part's iterate its next warm start: its dual, driven along the infeasibility ray,
            # took the next round's relaxation stages 128, 896, 47,499, then 1,000,000 iterations (LB 64 x 8)
            results = [None if p in failed else res for p, res in enumerate(results)]
            return _outcome(config, r, parts, results, part_rep, eff, (new_shares, new_steps, new_last), moved,
                            passes_report, setup, 0.0, t0, ph, result, outcome_rep)
        if wb is None and wb_build is not None:
            with ph.time("whole_bound_wait"):
                wb = wb_build.result()
            if wb_build.in_thread:  # overlapped with the parts: not on the critical path
                ph.add("whole_bound_build_in_thread", wb.seconds)
        if work is not None and work.passes > 1:  # the kept pass's parts with what every pass ran (docs/usage.md "Partitioned rounds")
            results = work.apply(results)
            for p in solve_idx:
                res = results[p]
                part_rep[p] = {**part_rep[p], "iterations": int(res.iterations), "engine": part_engine(res),
                               "engine_reason": res.engine_reason or None}
        mg = merge_parts(problem, settings, config, r, parts, results, part_rep, solve_idx, eff, duals, wb,
                         prior=None if kept is None else kept.mg,
                         first_steps=FIRST_STEPS if settings.integer_submip_seconds > 0 else None,
                         near_goes_on=config.executor == "inline",
                         defer_kkt=wb is not None and settings.integer_submip_seconds > 0, ph=ph)
        this = _Pass(mg, parts, results, part_rep, solve_idx, eff, duals, new_shares, new_steps, new_last, moved)
        if kept is not None:  # a price pass: the better of its merge and the best one before it is kept
            t3 = time.perf_counter()
            if better_point(problem, kept.mg.result, mg.result):  # the re-split did worse: the pass before it stays
                this = kept
                mg = this.mg = merge_parts(problem, settings, config, r, kept.parts, kept.results, kept.part_rep,
                                           kept.solve_idx, kept.eff, kept.duals, wb, prior=mg, duals_changed=False,
                                           defer_kkt=mg.kkt_deferred, ph=ph)
                n_price = PRICE_SPLITS  # no better prices follow from the same bound
            passes_report[-1]["kept"] = this is not kept
            ph.add("price_split_compare", time.perf_counter() - t3)
        # a far merge gets RENS first (it closed Sia 25,600's 1.1-1.6% to 0.25-0.42% where the price pass before it
        # cost a pass and gained 0-0.3%); the price re-split follows when the merge after RENS is still above target
        rens_can = wb is not None and settings.integer_submip_seconds > 0
        if n_price < PRICE_SPLITS and not rens_can and not whole_at_once and wants_price_split(settings, mg, wb, r, dl):
            if _price_resplit(wb, this, settings, r, ph):
                kept, n_price, warms = this, n_price + 1, [x.state if x is not None else None for x in this.results]
                merge += time.perf_counter() - t2
                continue
        (parts, results, part_rep, solve_idx, eff, duals, new_shares, new_steps, new_last,
         moved) = this.parts, this.results, this.part_rep, this.solve_idx, this.eff, this.duals, this.new_shares, \
            this.new_steps, this.new_last, this.moved
        result, outcome_rep = mg.result, mg.rep
        merge += time.perf_counter() - t2
        improvement: dict = {}
        resplit = False
        for tier in ("rens", "resolve") if wb is not None and not whole_at_once else ():
            if not wants_improvement(settings, outcome_rep, result):
                break
            if tier == "rens" and this.rens_done:  # the pass before the price pass, with its RENS step, was kept
                continue
            gbp = ph.seconds.get("gap_by_part", 0.0)
            bg = AscentThread(wb, mg, settings) if tier == "rens" and mg.near_cut else None
            try:
                imp_rep, imp_s, t_merge = improve_parts(problem, settings, config, wb, mg, r, parts, results,
                                                        part_rep, eff, passes_report[-1]["slowest_part_seconds"], tier,
                                                        ph, bg)
            except PartWorkerError as err:
                return _worker_died(problem, config, err, t0, setup)
            passes_report.append({"pass": None, "kind": f"improve-{tier}", "slowest_part_seconds": imp_s,
                                  "share_moved": None})
            ph.add("improve_dispatch", t_merge - (ph.seconds.get("gap_by_part", 0.0) - gbp))
            if bg is not None and bg.evaluations:
                ph.add("dual_ascent_in_thread", bg.seconds)
                imp_rep["ascent_during_rens"] = {"evaluations": bg.evaluations, "seconds": round(bg.seconds, 6),
                                                 "bound": bg.bound}
                mg = bg.merged()  # the same ascent run, further on
            cut = (tier == "rens" and mg.ascent_state is not None and not mg.ascent_state.done
                   and ran(mg) < int(settings.integer_dual_ascent_steps))  # the ascent stopped before its budget
            if imp_rep["improved"] or (bg is not None and bg.evaluations) or cut:
                t3 = time.perf_counter()
                # RENS changed points only: the duals (so the bound's candidates) are the last merge's, and the
                # ascent goes on where it stopped (before RENS, or in the thread during it)
                mg = merge_parts(problem, settings, config, r, parts, results, part_rep, solve_idx, eff, duals, wb,
                                 prior=mg, duals_changed=tier != "rens", ph=ph)
                result, outcome_rep = mg.result, mg.rep
                t_merge += time.perf_counter() - t3
            merge += t_merge
            imp_rep["gap_after"] = outcome_rep.get("gap_rel")
            if tier == "rens":
                improvement = imp_rep
                this.rens_done, this.mg = True, mg
                if n_price < PRICE_SPLITS and wants_price_split(settings, mg, wb, r, dl, after_rens=True):
                    t3 = time.perf_counter()
                    resplit = _price_resplit(wb, this, settings, r, ph)
                    merge += time.perf_counter() - t3
                    if resplit:
                        break
            else:
                improvement["resolve"] = imp_rep
        if resplit:
            kept, n_price, rens_first = this, n_price + 1, improvement
            warms = [x.state if x is not None else None for x in results]
            continue
        if rens_first is not None:  # the RENS step before the price pass: the round's own when its pass was kept
            improvement = {**rens_first, **improvement} if this.rens_done else {**improvement, "before_price": rens_first}
        if mg.kkt_deferred:  # no merge after RENS: the round's result is this one
            t4 = time.perf_counter()
            mg = complete_kkt(problem, mg)
            result = mg.result
            merge += time.perf_counter() - t4
            ph.add("recheck", time.perf_counter() - t4)
        if improvement:
            outcome_rep["improvement"] = improvement
        iters = max((int(pr["iterations"]) for pr in part_rep), default=0)
        if iters != result.iterations:  # a part's resolve adds its iterations (docs/usage.md: the busiest part's count)
            result = replace(result, iterations=iters)
        reason = _whole_lp_reason(problem, config, outcome_rep, result) if dl.parts_left() > 0 else None
        if reason is not None:  # the LP also solved whole, the better point kept
            t5 = time.perf_counter()
            warm = whole_warm() if callable(whole_warm) else whole_warm  # a larger LP's: mapped only now
            result, outcome_rep["fallback"] = compare_small_lp(problem, settings, result, config.whole_below_nnz,
                                                                warm, reason=reason, gap=outcome_rep["gap_rel"])
            # a far merge's shares confine it: the whole point's shares, whatever the update cadence
            if outcome_rep["fallback"]["kept"] == "whole" and r.ns and (reason == "far" or _shares_update(r, every)):
                new_shares, moved = _shares_from_whole(problem, r, result, outcome_rep, passes_report)
            merge += time.perf_counter() - t5
        if violates_whole(problem, result, part_rep) and dl.parts_left() > 0:  # the merge failed the re-check
            result, outcome_rep["fallback"] = whole_after_violation(problem, settings, result, outcome_rep)
        if (whole_at_once and "fallback" not in outcome_rep and above_target(problem, settings, outcome_rep, result)
                and dl.parts_left() > 0):
            # a small MILP above its target: the whole solve costs less than the parts' RENS, price and re-solve
            # passes (solver.partition.small.SMALL_MILP_NNZ)
            result, outcome_rep["fallback"] = compare_whole(problem, settings, result, outcome_rep["gap_rel"],
                                                            reason="whole_last" if whole_last else "small")
            if outcome_rep["fallback"]["kept"] == "whole" and r.ns and _shares_update(r, every):
                # as a small LP's: the parts' shares of the whole point (the merge's, on LB 128 x 16, left both
                # parts of the next round PRIMAL_INFEASIBLE on the servers' load rows, and the round solved whole)
                new_shares, moved = _shares_from_whole(problem, r, result, outcome_rep, passes_report)
        elif far_after_parts(problem, settings, outcome_rep, result) and dl.parts_left() > 0:
            # what the shares confine the parts to, only the whole model reaches
            result, outcome_rep["fallback"] = compare_whole(problem, settings, result, outcome_rep["gap_rel"])
        return _outcome(config, r, parts, results, part_rep, eff, (new_shares, new_steps, new_last), moved,
                        passes_report, setup, merge, t0, ph, result, outcome_rep)


def _outcome(config: PartitionConfig, r: RoundSetup, parts: list[Part], results: list, part_rep: list[dict],
             eff: np.ndarray, next_shares: tuple, moved: float, passes_report: list[dict], setup: float, merge: float,
             t0: float, ph: Phases, result: SolveResult, outcome_rep: dict) -> RoundOutcome:
    """The round's RoundOutcome: ``result``, the PartitionData for the next round (the parts' states and
    ``next_shares`` = (shares, steps, last), each (k, ns)) and the report's ``partitions`` section."""
    new_shares, new_steps, new_last = next_shares
    data = PartitionData(
        assignment=r.assignment,
        parts=[PartState(cols=parts[p].cols, rows=parts[p].rows,
                         state=None if results[p] is None else results[p].state) for p in range(config.k)],
        shared_rows=r.rows_sh, shares=new_shares, updates=r.updates + 1, steps=new_steps, last=new_last,
        col_client=r.grouping.col_client, whole_kept=_whole_kept(outcome_rep, r.is_mip),
        coupling_rows=r.coupling if r.arows is None else coupling_rows(r.arows, r.spos.shape[0]),
        row_client=r.grouping.row_client, row_client_regex=config.shared_rows_regex, presence=r.present)
    pool_start = take_pool_start()  # the part workers' start (not their parts' seconds): new pools only
    if pool_start > 0:
        ph.add("pool_start", pool_start)
    ship = take_ship_seconds()  # this process packing the parts for their workers (every pass)
    if ship > 0:
        ph.add("ship", ship)
    seconds = {"setup": setup, "ship": ship, "merge": merge, "wall": time.perf_counter() - t0, "phases": ph.report(),
               "slowest_part": sum(x["slowest_part_seconds"] for x in passes_report)}  # probe + every pass
    rep = _round_report(config, r, part_rep, eff, new_steps, moved, passes_report, seconds, _merged_aside(outcome_rep))
    rep["worker_retries"] = take_retries()  # workers that died and whose parts ran again (round warnings too)
    return RoundOutcome(result=result, data=data, report=rep)


def _whole_kept(outcome_rep: dict, is_mip: bool) -> bool:
    """The round (a MILP's: ``is_mip``) kept its whole solve's point after a merge above target (``fallback.reason``
    "gap", "small" or "whole_last", ``kept`` "whole"): :attr:`solver.partition.store.PartitionData.whole_kept`. An
    LP round's small-model fallback (reason "small" too) does not count."""
    fb = outcome_rep.get("fallback") or {}
    return is_mip and fb.get("kept") == "whole" and fb.get("reason") in ("gap", "small", "whole_last")


MERGED_FIELDS = ("bound", "bound_kind", "bound_candidate", "gap_rel", "past_bound_rel", "max_row_violation_rel")
"""The report's ``partitions`` fields about the merged point."""


def _merged_aside(outcome_rep: dict) -> dict:
    """The report's ``partitions`` fields of :data:`MERGED_FIELDS` describe the round's point: when it is a whole
    solve's (``fallback.kept`` "whole"; a fallback without ``kept``, after failed parts or with no client, has
    no merged point at all) they are null, and the merged point's, when there was one, are ``fallback.merged_bound``,
    ``merged_bound_kind``, ``merged_bound_candidate``, ``merged_gap_rel``, ``merged_past_bound_rel`` and
    ``merged_max_row_violation_rel``
    (helper-163: an OPTIMAL TE ring 24 round whose whole point was kept reported ``partitions.gap_rel`` 8.6%, the
    discarded merged point's)."""
    fallback = outcome_rep.get("fallback")
    if not fallback or fallback.get("kept", "whole") != "whole":
        return outcome_rep
    out = {**outcome_rep, **{f: None for f in MERGED_FIELDS}}
    if any(f in outcome_rep for f in MERGED_FIELDS):  # a merge was made (then dropped)
        out["fallback"] = {**{"merged_" + f: outcome_rep.get(f) for f in MERGED_FIELDS}, **fallback}
    return out


@dataclass(eq=False)
class _Pass:
    """One pass's parts, results and merge, kept while the price re-split's pass runs (:func:`wants_price_split`)."""

    mg: Merged
    parts: list
    results: list
    part_rep: list
    solve_idx: list
    eff: np.ndarray
    duals: np.ndarray
    new_shares: np.ndarray
    new_steps: np.ndarray
    new_last: np.ndarray
    moved: float
    rens_done: bool = False  #: its point had its RENS step (a price pass it beat gets none again)


def _price_pass_settings(part_settings: Settings, dl: Deadline, passes_report: list[dict]) -> tuple[Settings, float]:
    """(the price pass's part settings, the wall-clock start their time limit counts from: the command's): the
    parts stop :data:`PRICE_PASS_FACTOR` x the slowest part of the passes before (at least
    :data:`PRICE_PASS_MIN_SECONDS`) from now, or at the round's own parts' limit when that comes first."""
    before = max((x["slowest_part_seconds"] for x in passes_report), default=0.0)
    limit = dl.since_start() + max(PRICE_PASS_MIN_SECONDS, PRICE_PASS_FACTOR * before)
    if dl.timed:
        limit = min(limit, dl.parts_limit)
    return replace(part_settings, time_limit_seconds=limit), dl.wall_start


def _price_resplit(wb, this: _Pass, settings: Settings, r: RoundSetup, ph: Phases) -> bool:
    """Re-split the capacity rows of ``r.shares`` by the parts' demands at the whole bound's duals
    (:func:`solver.partition.price_split.price_shares`), the ascent of ``this.mg`` first continued for the rest of
    the round's budget (prices need the bound's duals near its optimum; ``this.mg`` becomes that merge, whose bound
    and ascent the price pass's merge continues). False when there is nothing to re-split (shares unchanged)."""
    with ph.time("dual_ascent"):
        on = ascend_on(wb, this.mg, settings, r.clock)
    with ph.time("price_split"):
        price = price_shares(wb, on.y_bound, r.col_part, r.rows_sh, r.present, r.shares)
    if price is None:
        return False
    this.mg, r.shares = on, price
    return True


def _freed(problem: Problem, r: RoundSetup, prev: PartitionData | None, old: Problem | None) -> np.ndarray | None:
    """(k, ns) what the clients a delta dropped took of each shared row in their part in the previous round
    (:func:`solver.partition.dropped.dropped_use`), None when the previous model or the delta's maps are unknown."""
    if old is None or prev is None or r.col_map is None:
        return None
    rmap = r.row_map if r.row_map is not None else np.arange(problem.n_rows)
    return dropped_use(old, prev, r.col_map, rmap[r.rows_sh], r.grouping.client_names, r.present.shape[0])


def _added(problem: Problem, r: RoundSetup) -> np.ndarray | None:
    """(k, ns) the most the clients a delta added could take of each shared row in their part
    (:func:`solver.partition.dropped.added_use`), None when no client was added or the delta's maps are unknown."""
    if r.n_new <= 0 or r.col_map is None:
        return None
    return added_use(problem, r.rows_sh, r.col_map, r.col_part, r.present.shape[0])


def _better_pass(problem: Problem, best: tuple | None, this: tuple) -> tuple:
    """The pass with the better merged objective (the last item of each tuple; NaN never better, a tie keeps
    ``this``, the later pass). The share update's slack transfer cannot lose (its donors do not use what they
    give), but the parts' tolerances and a price step on a shared row that is not a capacity row can."""
    if best is None or not math.isfinite(best[-1]):
        return this
    if not math.isfinite(this[-1]):
        return best
    return this if problem.sense * (this[-1] - best[-1]) <= 0 else best


def _merged_objective(problem: Problem, r: RoundSetup, parts: list[Part], results: list, solve_idx: list) -> float:
    """The whole model's objective at the parts' merged point (:func:`solver.partition.split.combine_points`); NaN
    when a part has no finite point."""
    pts = [results[p].x if results[p] is not None else None for p in solve_idx]
    if any(x is None or not np.isfinite(x).all() for x in pts):
        return math.nan
    x, _ = combine_points(problem, [parts[p] for p in solve_idx], pts, r.grouping.global_cols)
    return float(problem.objective(x))


def _whole_lp_reason(problem: Problem, config: PartitionConfig, rep: dict, result: SolveResult) -> str | None:
    """Why an LP round's merge is also solved whole (``solver.partition.fallback.compare_small_lp``'s ``reason``), or
    None: ``"small"`` (at most ``whole_below_nnz`` nonzeros: solved whole it costs about as much), ``"no_bound"``
    (nothing proves how far the merge is: :func:`solver.partition.after_merge.lp_without_bound`) or ``"far"`` (more
    than ``LP_FAR_GAP`` from its bound: :func:`solver.partition.after_merge.lp_far`; not with ``whole_below_nnz`` 0,
    which turns off every whole solve but a failed part's). The last two only without an earlier fallback."""
    if small_lp(problem, config.whole_below_nnz):
        return "small"
    if "fallback" in rep:
        return None
    if lp_without_bound(problem, rep, result):
        return "no_bound"
    if config.whole_below_nnz > 0 and lp_far(problem, rep, result):
        return "far"
    return None


def _shares_update(r: RoundSetup, every: int) -> bool:
    """Whether this round's shares move for the next round: every ``every``-th round (``--share-update-every``;
    0: never), counted by the state's stored updates."""
    return every != 0 and (r.updates + 1) % every == 0


def _shares_from_whole(problem: Problem, r: RoundSetup, result: SolveResult, outcome_rep: dict,
                       passes_report: list[dict]) -> tuple[np.ndarray, float]:
    """(the next round's shares from the kept whole solve's point (:func:`_whole_shares`), the share moved), said
    in the report (``fallback.shares_from`` "whole", the last pass's ``share_moved``)."""
    new_shares = _whole_shares(problem, r, result.x)
    moved = float(np.abs(new_shares - r.shares).sum() / max(r.ns, 1) / 2.0)
    outcome_rep["fallback"]["shares_from"] = "whole"
    passes_report[-1]["share_moved"] = moved
    return new_shares, moved


def _whole_shares(problem: Problem, r: RoundSetup, x: np.ndarray) -> np.ndarray:
    """(k, ns) the next round's shares from the whole model's point ``x`` (n,): each capacity row split in proportion
    to the parts' activity on it (:func:`solver.partition.price_split.ration`; what the point leaves spread evenly),
    the other shared rows keeping theirs. Shares of the monolithic optimum put TE ring 24's merges 0.01% / 0.4% /
    2.4% from it at K = 4 / 16 / 64, against 5.7% / 25% / 42% with the probe's."""
    act = part_activity(problem, x, r.col_part, r.rows_sh, r.present.shape[0])
    return ration(problem, r.rows_sh, np.where(r.present, act, np.nan), r.present, r.shares)


@dataclass
class RoundSetup:
    """What a round knows before its first pass: the clients, their parts, the shared rows and the shares."""

    grouping: object
    assignment: object
    warm: bool
    n_new: int
    n_dropped: int
    col_part: np.ndarray
    rows_sh: np.ndarray
    ns: int
    spos: np.ndarray
    present: np.ndarray
    shares: np.ndarray
    steps: np.ndarray
    last: np.ndarray
    updates: int
    col_map: np.ndarray | None
    row_map: np.ndarray | None
    old_shape: tuple[int, int]
    clock: Deadline  #: the round's time budget (:func:`solve_round`'s)
    is_mip: bool = False  #: the round's model has integer columns
    executor_reason: str | None = None  #: why the parts run in this process though the state's executor is process
    #: an LP round's implied column upper bounds (``background.ImpliedUpperBuild``), started with the parts of its
    #: first pass that run in workers; None: the merge computes them itself
    implied: object | None = None
    #: (m2,) the whole model's coupling rows the previous round chose for this same matrix (``PartitionData``), or None
    coupling: np.ndarray | None = None
    #: the assignment rows this round's merge used (``bound.AssignmentRows``), for the next round; None: none
    arows: object | None = None


def _setup(problem: Problem, config: PartitionConfig, prev: PartitionData | None, info,
           old_shape: tuple[int, int] | None, ph: Phases | None = None, dl: Deadline | None = None) -> RoundSetup:
    """Group the clients, route them to parts (or split afresh), carry the shares over by row map. ``dl``: the
    round's time budget (default: none, ``Settings()``'s)."""
    k = config.k
    ph = ph or Phases()
    t = time.perf_counter()
    col_map = None if info is None else info.col_map
    row_map = None if info is None else info.row_map
    if old_shape is None:
        old_shape = (info.old_n_cols, info.old_n_rows) if info is not None else (problem.n_cols, problem.n_rows)
    # the delta left the matrix as it was: what only the matrix and the clients decide may be the previous round's
    same_matrix = (prev is not None and info is not None and not info.matrix_changed
                   and old_shape == (problem.n_cols, problem.n_rows))
    grouping = _grouping(problem, config, prev, info, same_matrix)
    ph.add("clients", time.perf_counter() - t)
    t = time.perf_counter()
    if prev is None and info is None:  # round 0 (init): a split without clients is a naming mistake
        require_clients(grouping, config.client_regex, problem.col_names)
    if prev is None and info is None and k > grouping.n_clients:  # round 0: k - n parts would be EMPTY forever
        n = grouping.n_clients
        raise UsageError(f"--partitions {k} is more than the {n} client{'' if n == 1 else 's'} of the base problem; "
                         f"choose at most {grouping.n_clients}")
    warm = prev is not None and prev.assignment.k == k
    n_new = n_dropped = 0
    if warm:
        assignment, n_new, n_dropped = route(prev.assignment, grouping)
    else:
        assignment = initial_assignment(grouping, k, config.seed)
    col_part = column_parts(grouping, assignment.client_part)
    rows_sh = shared_rows(grouping)
    ns = rows_sh.size
    spos = np.full(problem.n_rows, -1, dtype=np.int64)
    spos[rows_sh] = np.arange(ns, dtype=np.int64)
    present = _presence(problem, col_part, rows_sh, k, prev, grouping, assignment, same_matrix)
    default = pop_shares(problem, grouping, col_part, k, "auto")
    steps, last = np.full((k, ns), sh.D0), np.zeros((k, ns))
    if warm:
        rmap = row_map if row_map is not None else np.arange(problem.n_rows)
        default = sh.carry(prev.shared_rows, prev.shares, rmap, old_shape[1], rows_sh, default)
        steps = sh.carry(prev.shared_rows, prev.steps, rmap, old_shape[1], rows_sh, steps)
        last = sh.carry(prev.shared_rows, prev.last, rmap, old_shape[1], rows_sh, last)
    ph.add("route_and_shares", time.perf_counter() - t)
    # the whole model's assignment rows, chosen by the previous round for this same matrix (the merge's bound)
    return RoundSetup(grouping=grouping, assignment=assignment, warm=warm, n_new=n_new, n_dropped=n_dropped,
                      col_part=col_part, rows_sh=rows_sh, ns=ns, spos=spos, present=present,
                      shares=sh.normalise(default, present), steps=steps, last=last,
                      updates=prev.updates if warm else 0, col_map=col_map, row_map=row_map, old_shape=old_shape,
                      clock=dl if dl is not None else Deadline.of(Settings()), is_mip=bool(problem.is_mip),
                      coupling=prev.coupling_rows if same_matrix else None)


def _grouping(problem: Problem, config: PartitionConfig, prev: PartitionData | None, info,
              same_matrix: bool = False):
    """The round's ClientGrouping: carried from the previous round's (its stored ``col_client`` through the delta's
    column map: only the added columns' names are read, :func:`solver.partition.clients.carry_grouping`) when the
    state has one for the same K, else grouped from every name. ``same_matrix`` (the delta left the matrix alone):
    the previous round's stored ``row_client`` is offered to the carry, which takes it when the columns' clients
    are the same too, unless it was classified with another ``shared_rows_regex`` than the state's now (the
    ``partition`` keys of ``config.json`` are read every round)."""
    col_map = None if info is None else getattr(info, "col_map", None)
    if (prev is not None and prev.col_client is not None and col_map is not None
            and prev.assignment.k == config.k and prev.col_client.shape == (int(getattr(info, "old_n_cols", -1)),)):
        try:
            return carry_grouping(problem, prev.col_client, prev.assignment.client_names, col_map,
                                  client_regex=config.client_regex, shared_rows_regex=config.shared_rows_regex,
                                  options=PARTITION_OPTIONS,
                                  prev_row_client=prev.row_client if same_matrix and (
                                      prev.row_client_regex == config.shared_rows_regex) else None)
        except ValueError:
            pass  # a stored grouping that does not fit: group every name
    return group_clients(problem, client_regex=config.client_regex, shared_rows_regex=config.shared_rows_regex,
                         options=PARTITION_OPTIONS)


def _presence(problem: Problem, col_part: np.ndarray, rows_sh: np.ndarray, k: int, prev: PartitionData | None,
              grouping, assignment, same_matrix: bool) -> np.ndarray:
    """(k, ns) bool, part p has a nonzero of shared row ``rows_sh[i]`` on its own columns: the previous round's
    (``PartitionData.presence``) when the delta left the matrix alone and the columns' clients, their parts and the
    shared rows are the previous round's (presence depends on nothing else), else
    :func:`solver.partition.shares.presence`'s pass over the matrix."""
    if (same_matrix and prev is not None and prev.presence is not None and prev.col_client is not None
            and prev.presence.shape == (k, rows_sh.size) and np.array_equal(grouping.col_client, prev.col_client)
            and np.array_equal(rows_sh, prev.shared_rows)
            and np.array_equal(assignment.client_part, prev.assignment.client_part)):
        return prev.presence
    return sh.presence(problem, col_part, rows_sh, k)


def _finite(v) -> bool:
    return v is not None and math.isfinite(float(v))




def _part_results(parts: list[Part], assignment, k: int, solve_idx: list[int], outs: list[dict],
                  mip_gap_tol: float | None = None, from_previous: bool = True):
    """(results (k,), part reports (k,)): each solved part's SolveResult and report row (with its LP
    ``engine``); EMPTY for the rest. A MILP part solved to its first integer point reports OPTIMAL only when
    its own gap is within the round's ``mip_gap_tol``, else FEASIBLE (its own target was looser).
    ``warm_started`` means warm from the previous round's iterate, as for a monolithic round: with
    ``from_previous`` False (round 0, a new split) it is False even though a part started from the probe's or
    an earlier pass's point within this round."""
    results: list[SolveResult | None] = [None] * k
    part_rep: list[dict] = [{"part": p, "status": "EMPTY", "seconds": 0.0, "cpu_seconds": 0.0, "message": None,
                             "iterations": 0, "warm_started": False,
                             "n_cols": int(parts[p].cols.size), "n_rows": int(parts[p].rows.size),
                             "nnz": int(parts[p].problem.nnz), "max_rss_mb": None,
                             "clients": int((assignment.client_part == p).sum())} for p in range(k)]
    for p, out in zip(solve_idx, outs, strict=True):
        res = out["result"]
        results[p] = res
        status = res.status
        if mip_gap_tol is not None and status == Status.OPTIMAL and not res.gap_rel <= mip_gap_tol:
            status = Status.FEASIBLE
        part_rep[p].update(status=status.name, seconds=round(float(out["seconds"]), 6),
                           cpu_seconds=round(float(out["cpu_seconds"]), 6) if "cpu_seconds" in out else None,
                           engine=part_engine(res), engine_reason=res.engine_reason or None,
                           message=res.message or None,
                           own_gap_rel=float(res.gap_rel) if _finite(res.gap_rel) else None,
                           iterations=int(res.iterations),
                           warm_started=bool(from_previous and res.warm_started),
                           objective=float(res.objective), max_rss_mb=round(float(out["max_rss_mb"]), 1))
    return results, part_rep


def _round_report(config: PartitionConfig, r: RoundSetup, part_rep: list[dict], eff: np.ndarray, new_steps: np.ndarray,
                  moved: float, passes_report: list[dict], seconds: dict, outcome_rep: dict) -> dict:
    """The report's ``partitions`` section (see :func:`solve_round`); seconds in wall seconds."""
    k, ns, present = config.k, r.ns, r.present
    active = present.sum(axis=0) > 1
    setup, ship, slowest, merge = seconds["setup"], seconds.get("ship", 0.0), seconds["slowest_part"], seconds["merge"]
    return {
        "k": k, "executor": config.executor, **({"executor_reason": r.executor_reason} if r.executor_reason else {}),
        "passes": config.passes, "parts": part_rep,
        "clients_added": r.n_new, "clients_dropped": r.n_dropped, "warm": bool(r.warm),
        "seconds": {"setup": round(setup, 6), "ship": round(ship, 6), "slowest_part": round(slowest, 6),
                    "merge": round(merge, 6), "on_k_cores": round(setup + ship + slowest + merge, 6),
                    "wall": round(seconds["wall"], 6),
                    "phases": seconds.get("phases", {})},
        "shares": {"n_shared_rows": int(ns), "n_contested": int(active.sum()),
                   "mean_per_part": [round(float(v), 6) for v in (eff.mean(axis=1) if ns else np.zeros(k))],
                   "min_contested": round(float(eff[present & active[None, :]].min()), 6) if active.any() else None,
                   "moved_next": round(moved, 6),
                   "mean_step": round(float(new_steps[present].mean()), 6) if present.any() else None,
                   "updates": r.updates + 1, "passes": passes_report},
        **outcome_rep,
    }


def _executor(config: PartitionConfig, dl: Deadline, n_tasks: int) -> str:
    """The executor a pass of ``n_tasks`` parts runs on: the configured one, or ``inline`` when its workers are still
    to start and the parts' time left would not cover that (:meth:`Deadline.executor_for`)."""
    return dl.executor_for(config.executor, workers_ready(config.executor, n_tasks, config.workers))


def _ran_on(config: PartitionConfig, executor: str) -> dict:
    """A pass report's ``executor`` entry, only when the pass did not run on the configured executor."""
    return {} if executor == config.executor else {"executor": executor}


def _probe(problem: Problem, grouping, col_part: np.ndarray, k: int, present: np.ndarray, rows_sh: np.ndarray,
           spos: np.ndarray, shares: np.ndarray, part_settings: Settings, config,
           command_start: float | None = None, executor: str | None = None) -> tuple:
    """A fresh split's first shares by proportional rationing: every part is solved once with the WHOLE of
    each shared row it touches (its demand for the row), then a capacity row is split in proportion to the
    parts' demands (what is left when the demands fit is spread evenly). Returns (shares, the probe's
    states as warm starts, its slowest part's seconds). Rows that are not capacity rows keep ``shares``.
    ``executor``: where the parts run (default ``config.executor``; :func:`_executor`)."""
    whole = np.where(present, 1.0, 0.0)
    parts = build_part_problems(problem, grouping, col_part, k, whole, name="part")
    solve_idx = [p for p in range(k) if bool((~grouping.global_cols[parts[p].cols]).any())]
    outs = run_parts([(parts[p].problem, part_settings, None) for p in solve_idx], executor or config.executor,
                     config.workers, config.ray_address, command_start)
    results: list = [None] * k
    for p, out in zip(solve_idx, outs, strict=True):
        results[p] = out["result"]
    act = _part_duals(parts, [None if r is None or not r.status.is_success else r.row_activity for r in results],
                      spos, k, rows_sh.size)
    warms = [None if r is None else r.state for r in results]
    return ration(problem, rows_sh, act, present, shares), warms, max((o["seconds"] for o in outs), default=0.0)




def _worker_died(problem: Problem, config: PartitionConfig, err: PartWorkerError, t0: float,
                 setup: float) -> RoundOutcome:
    n, m = problem.n_cols, problem.n_rows
    # whether the round is stored is the round loop's to say (not without --accept-failed; with it, stored as
    # failed): "nothing was merged or stored" contradicted "stored as current (--accept-failed)" (helper-164)
    msg = (f"partitioned round failed: {err} (executor {config.executor}); the parts' points were not merged")
    wall = time.perf_counter() - t0
    result = SolveResult(status=Status.NUMERICAL_ERROR, x=np.zeros(n), y=np.zeros(m), reduced_cost=np.zeros(n),
                         row_activity=np.zeros(m), objective=math.nan, dual_objective=math.nan,
                         primal_residual_rel=math.nan, dual_residual_rel=math.nan, gap_rel=math.nan, iterations=0,
                         seconds={"solve": wall, "total": wall}, message=msg)
    rep = {"k": config.k, "executor": config.executor, "worker_failed": True, "failed_part": err.part,
           # the deaths the round survived before the one that ended it (helper-207: the first was not recorded)
           "worker_retries": take_retries(),
           "seconds": {"setup": round(setup, 6), "wall": round(wall, 6)}}
    return RoundOutcome(result=result, data=None, report=rep)

