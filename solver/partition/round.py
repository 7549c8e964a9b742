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
   residual is within ``k * tol`` (each part meets ``tol`` on its own rows), else NUMERICAL_ERROR; a MILP
   round is FEASIBLE (OPTIMAL within ``mip_gap_tol`` of the bound) when the merged point is integral and
   violates no row or bound by more than 1e-6 relative (``solver.baselines.result.point_quality``), else
   NUMERICAL_ERROR; a part that fails makes the round fail with that part's status. A MILP's bound is the
   whole model's choice-row Lagrangian after dual ascent from the merged duals; when the merged point's gap
   to it is above ``mip_gap_tol``, the parts holding most of the gap get one RENS step each, in parallel,
   and the point is merged and judged again (:mod:`solver.partition.improve`). The ascent is one run across
   the round's merges (``solver.integer.ascent.AscentState``): before RENS it stops after
   :data:`FIRST_ASCENT_STEPS` evaluations; near the target, where it would run its whole budget first, it
   goes on in a thread of this process while the workers run RENS (:class:`_AscentThread`; the ``inline``
   executor runs it before RENS); the merge after RENS continues it. Before RENS, a merged point more than
   :data:`FAR_GAP` x ``mip_gap_tol`` from that bound has its capacity rows re-split by the parts' demands at the
   bound's duals (:mod:`solver.partition.price_split`; the ascent first runs its whole budget) and the parts
   solved again, warm; the better merge is kept. A point still that far after RENS is compared with a whole
   solve (:func:`solver.partition.fallback.compare_whole`), the better point kept; so is a small LP's
   (:func:`solver.partition.fallback.compare_small_lp`, ``whole_below_nnz``), whose next shares then come from
   the whole point (:func:`_whole_shares`);
   the round's ``engine`` is the LP engine of the part with the most iterations, every part's is in the
   report and the message;
7. update the shares for the next round from the parts' duals (``passes > 1`` repeats 4-7 within the round).

The report's ``seconds.phases`` breaks this process's own time down by phase (:mod:`solver.partition.phases`);
the phases marked ``_in_thread`` ran while the parts ran and are not on the round's critical path.
``pool_start`` is the wait for new part workers (a process pool started by this round: the forkserver's start
with the solver and its kernels, :mod:`solver.partition.forkserver_warm`, and the workers' fork), apart from
``slowest_part``, the parts' own solve seconds; ``on_k_cores`` (setup + slowest part + merge) leaves it out.

With ``passes > 1`` the parts are re-solved within the round, warm from the pass before, after each share
update. A worker that dies twice ends the round NUMERICAL_ERROR (nothing stored; the caller records it as
a failed round and CURRENT stays).
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, fields, replace
from types import SimpleNamespace

import numpy as np

from solver import clock
from solver.model.errors import UsageError
from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status
from solver.partition import shares as sh
from solver.partition.bound import best_bound, shared_dual_candidates
from solver.partition.clients import GLOBAL, group_clients, require_clients
from solver.partition.executor import PartWorkerError, check_executor, map_parts, run_parts, take_pool_start
from solver.partition.fallback import (
    better_point,
    compare_small_lp,
    compare_whole,
    failed_parts,
    solve_whole,
    solve_without_clients,
)
from solver.partition.improve import WholeBound, cheap_part_settings, choose_parts, gap_by_part, improve_part
from solver.partition.layout import initial_assignment, route
from solver.partition.limits import MAX_PASSES  # noqa: F401 - here too: the round's limit
from solver.partition.phases import Phases
from solver.partition.price_split import part_activity, price_shares, ration
from solver.partition.small import SMALL_LP_NNZ, small_lp
from solver.partition.split import (
    Part,
    build_part_problems,
    column_parts,
    combine_points,
    pop_shares,
    shared_rows,
)
from solver.partition.store import PartitionData, PartState

_SEVERITY = [Status.PRIMAL_INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED, Status.DUAL_INFEASIBLE,
             Status.NUMERICAL_ERROR, Status.NO_INTEGER_SOLUTION, Status.TIME_LIMIT, Status.ITERATION_LIMIT,
             Status.FEASIBLE, Status.OPTIMAL]
MILP_FEASIBLE_REL_TOL = 1e-6  #: max relative row/bound violation of a merged integer point
FIRST_ASCENT_STEPS = 10  #: dual ascent evaluations of the merge before RENS when the point is far from the bound
FAR_GAP = 2.0  #: ... far = its gap above this x mip_gap_tol (nearer: the whole ascent budget decides)
RENS_MIN_SECONDS = 1.0  #: RENS's budget is the slowest part's solve time, but at least this (0.5 s measured: Sia
#: 10,240 K=4 on K cores 1.6-2.2 s instead of 2.1-2.5 s, but up to 0.38% worse than mono instead of 0.24%)
ASCENT_CHUNK = 4  #: evaluations between two looks at the stop flag of the ascent that runs during RENS
MERGE_RESERVE_FRACTION = 0.1  #: of ``--time-limit`` kept from the parts for the merge, its re-check and the save
MERGE_RESERVE_MAX = 1.0  #: ... but at most this many seconds
PRICE_SPLITS = 1  #: price re-splits of a far merge per round (:func:`_wants_price_split`); 2 or 3 left the Sia demo's
#: K = 16 and 51 merges 0.6-1.7% from the bound over 4 rounds instead of 1.2-2.4% (the whole solve decided either way)
ASCENT_MIN_SECONDS = 0.01  #: the merge's ascent budget at least (a spent one): its start value is still evaluated,
#: so the round keeps a proven bound and gap


@dataclass
class PartitionConfig:
    """How a state's rounds are partitioned (stored in config.json under ``"partition"``).

    Attributes:
        k: number of parts (1 = monolithic rounds, the partition code is not used).
        client_regex, shared_rows_regex: client grouping overrides (:mod:`solver.partition.clients`).
        executor: ``process`` (default), ``ray`` or ``inline`` (:mod:`solver.partition.executor`).
        ray_address: Ray cluster to join (None: ``$RAY_ADDRESS``, else a local cluster).
        seed: seed of the initial random client split.
        passes: share updates + re-solves within one round (1 .. :data:`MAX_PASSES`; a spent ``--time-limit``
            makes the pass that spent it the round's last).
        workers: local worker processes (None: min(k, CPU count)).
        probe: a fresh split (round 0, or a cold start) first solves every part with the whole of each
            shared row and splits capacity rows in proportion to those demands (:func:`_probe`).
        update_every: move the shares after every round (1), every n-th round, or never (0: the probe's
            shares stay, like POP's fixed ones). A share move changes the bounds of the parts' shared rows,
            which costs their next warm solve nearly as many iterations as a cold one (TE); fixed shares
            leave the parts only the delta's changes. None (the default): :func:`default_update_every`.
        whole_below_nnz: an LP round whose whole model has at most this many nonzeros is also solved whole after
            the merge and the better point kept, the next round's shares taken from it when it is the whole
            solve's (:func:`solver.partition.fallback.compare_small_lp`; 0: never).
    """

    k: int = 1
    client_regex: str | None = None
    shared_rows_regex: str | None = None
    executor: str = "process"
    ray_address: str | None = None
    seed: int = 0
    passes: int = 1
    workers: int | None = None
    probe: bool = True
    update_every: int | None = None
    whole_below_nnz: int = SMALL_LP_NNZ

    def check(self) -> None:
        """Raise UsageError for k < 1, passes outside 1 .. :data:`MAX_PASSES`, an unknown executor or ``ray``
        without Ray."""
        if self.k < 1:
            raise UsageError(f"--partitions must be at least 1, got {self.k}")
        if not 1 <= self.passes <= MAX_PASSES:
            raise UsageError(f"--partition-passes must be between 1 and {MAX_PASSES}, got {self.passes}")
        if self.update_every is not None and self.update_every < 0:
            raise UsageError(f"--share-update-every must be >= 0, got {self.update_every}")
        if self.whole_below_nnz < 0:
            raise UsageError(f"--whole-below-nnz must be >= 0, got {self.whole_below_nnz}")
        check_executor(self.executor)

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict | None) -> PartitionConfig:
        known = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in (d or {}).items() if k in known})


def default_update_every(problem: Problem, whole_below_nnz: int = SMALL_LP_NNZ) -> int:
    """The share update cadence when none is given: never (0, the probe's shares stay) for an LP above
    ``whole_below_nnz`` nonzeros, after every round (1) otherwise (a MILP; an LP solved whole each round, whose
    next shares then come from the whole optimum).

    Why: on the large TE LPs the price step moved the shares away from the probe's split. TE Kdl K = 4
    (``bench/bench_partitions.py te --topology Kdl --rounds 1 --ks 4``, every demand +-10% in round 1): 0.79%
    below the monolithic round 1 with a share update after round 0 (session 11), 0.038% with fixed shares
    (session 12; own Lagrangian gap 4.19% -> 1.23%); TE Cogentco K = 4 rounds 1-4: 0.22-0.34% with updates,
    0.38-0.42% fixed (both within 0.5%, fixed in 0.4x the time on 4 cores). The MILP rounds (Sia) were
    measured with updates.
    """
    return 1 if problem.is_mip or small_lp(problem, whole_below_nnz) else 0


@dataclass(eq=False)
class RoundOutcome:
    """What :func:`solve_round` returns: the whole-model result, the data for the next round, the report's
    ``partitions`` section."""

    result: SolveResult
    data: PartitionData | None
    report: dict


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
                       iterations=st.iterations, integer_x=ix, engine=getattr(st, "engine", None))


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
                whole_warm: SolverState | None = None) -> RoundOutcome:
    """Solve one round of ``problem`` partitioned into ``config.k`` parts (module docstring).

    Args:
        problem: the whole model of the round (n columns, m rows), after the delta.
        settings: solver settings (each part gets them with ``threads = 1``).
        config: the state's partition configuration.
        prev: the previous round's PartitionData (None: round 0 or a cold start: a fresh split).
        info: the delta's ``ApplyInfo`` (col_map/row_map to the previous round), None for round 0.
        old_shape: (n, m) of the previous round's problem (defaults to ``info``'s).
        whole_warm: the previous round's whole-model state mapped onto ``problem``: the warm start of a small LP's
            whole solve (``config.whole_below_nnz``; None: cold).
    Returns:
        RoundOutcome: the whole-model SolveResult (x (n,), y (m,), status, objective, bound as
        ``dual_objective``, ``gap_rel`` to it), the PartitionData for the next round (None when a worker
        died), and the report section ``partitions`` (per part seconds, iterations, status, warm_started,
        max_rss_mb, sizes; setup/slowest part/merge seconds and their sum ``on_k_cores``; shares; bound).
    A later round whose delta dropped every client solves what is left of the model (its global columns and
    rows, if any) whole, every part EMPTY (:func:`solver.partition.fallback.solve_without_clients`); the parts
    take clients again as a later delta adds them.

    Raises:
        UsageError: round 0 (no ``prev``, no ``info``) with no clients read from the variable names (say how
            with ``--client-regex``) or more parts than clients; a bad regex / executor.
    """
    t0 = time.perf_counter()
    k = config.k
    ph = Phases()
    take_pool_start()  # a pool an earlier caller started is not this round's
    dl = _Deadline.of(settings)
    r = _setup(problem, config, prev, info, old_shape, ph, dl)
    part_settings = dl.part_settings(cheap_part_settings(settings) if problem.is_mip
                                     else Settings(**{**asdict(settings), "threads": 1}))
    warms: list[SolverState | None] | None = None
    setup = time.perf_counter() - t0
    passes_report = []
    if not r.warm and config.probe and r.ns:
        try:
            # the probe gets half of the parts' time left, the pass after it the rest
            probe_settings = dl.part_settings(part_settings, min(dl.parts_limit,
                                                                 dl.since_start() + 0.5 * max(dl.parts_left(), 0.0)))
            r.shares, warms, probe_s = _probe(problem, r.grouping, r.col_part, k, r.present, r.rows_sh, r.spos,
                                              r.shares, probe_settings, config, dl.command_start)
        except PartWorkerError as err:
            return _worker_died(problem, config, err, t0, setup)
        passes_report.append({"pass": "probe", "slowest_part_seconds": probe_s, "share_moved": None})
    wb_build, kept, wb, merge, n_price = None, None, None, 0.0, 0
    last_pass = config.passes - 1  # passes after it: the price re-split (:func:`_wants_price_split`)
    pass_ = -1
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
            wb_build = _WholeBoundBuild(problem, background=config.executor != "inline")
        try:
            outs = run_parts([(parts[p].problem, part_settings, warms[p]) for p in solve_idx], config.executor,
                             config.workers, config.ray_address, dl.command_start)
        except PartWorkerError as err:
            return _worker_died(problem, config, err, t0, setup)
        t2 = time.perf_counter()
        results, part_rep = _part_results(parts, r.assignment, k, solve_idx, outs,
                                          settings.mip_gap_tol if problem.is_mip else None, from_previous=r.warm)
        if pass_ < last_pass and dl.parts_left() <= 0:  # the parts' time is spent: no further pass
            last_pass = pass_
            if problem.is_mip and wb_build is None:
                wb_build = _WholeBoundBuild(problem, background=False)
        with ph.time("share_update"):
            duals = _part_duals(parts, [None if x is None else x.y for x in results], r.spos, k, r.ns)
            act = _part_duals(parts, [None if x is None else x.row_activity for x in results], r.spos, k, r.ns)
            gain = sh.gains(problem, r.rows_sh, duals)
            new_shares, new_steps, new_last = sh.update(r.shares, gain, r.present, r.steps, r.last,
                                                        sh.usage(problem, r.rows_sh, act))
        every = config.update_every
        if every is None:
            every = default_update_every(problem, config.whole_below_nnz)
        if pass_ >= last_pass and (every == 0 or (r.updates + 1) % every):
            new_shares, new_steps, new_last = r.shares, r.steps, r.last  # kept for the next round
        moved = float(np.abs(new_shares - r.shares).sum() / max(r.ns, 1) / 2.0)
        passes_report.append({"pass": pass_ if pass_ <= last_pass else "price",
                              "slowest_part_seconds": max((o["seconds"] for o in outs), default=0.0),
                              "share_moved": moved})
        if pass_ < last_pass:
            r.shares, r.steps, r.last, r.updates = new_shares, new_steps, new_last, r.updates + 1
            warms = [x.state if x is not None else None for x in results]
            setup += time.perf_counter() - t2
            continue
        failed = failed_parts(part_rep) if kept is None else {}  # a price pass's failure keeps the pass before
        if failed:  # a part infeasible under its shares proves nothing about the model: solve it whole, unmerged
            result, fallback = solve_whole(problem, settings, failed)
            return _outcome(config, r, parts, results, part_rep, eff, (new_shares, new_steps, new_last), moved,
                            passes_report, setup, 0.0, t0, ph, result, {"fallback": fallback})
        if wb is None and wb_build is not None:
            with ph.time("whole_bound_wait"):
                wb = wb_build.result()
            if wb_build.thread is not None:  # overlapped with the parts: not on the critical path
                ph.add("whole_bound_build_in_thread", wb.seconds)
        mg = _merge(problem, settings, config, r, parts, results, part_rep, solve_idx, eff, duals, wb,
                    prior=None if kept is None else kept.mg,
                    first_steps=FIRST_ASCENT_STEPS if settings.integer_submip_seconds > 0 else None,
                    near_goes_on=config.executor == "inline",
                    defer_kkt=wb is not None and settings.integer_submip_seconds > 0, ph=ph)
        this = _Pass(mg, parts, results, part_rep, solve_idx, eff, duals, new_shares, new_steps, new_last, moved)
        if kept is not None:  # a price pass: the better of its merge and the best one before it is kept
            t3 = time.perf_counter()
            if better_point(problem, kept.mg.result, mg.result):  # the re-split did worse: the pass before it stays
                this = kept
                mg = this.mg = _merge(problem, settings, config, r, kept.parts, kept.results, kept.part_rep,
                                      kept.solve_idx, kept.eff, kept.duals, wb, prior=mg, duals_changed=False,
                                      defer_kkt=mg.kkt_deferred, ph=ph)
                n_price = PRICE_SPLITS  # no better prices follow from the same bound
            passes_report[-1]["kept"] = this is not kept
            ph.add("price_split_compare", time.perf_counter() - t3)
        if n_price < PRICE_SPLITS and _wants_price_split(settings, mg, wb, r, dl):
            with ph.time("dual_ascent"):
                on = _ascend_on(wb, mg, settings, r.clock)  # prices need the bound's duals near its optimum
            with ph.time("price_split"):
                price = price_shares(wb, on.y_bound, r.col_part, r.rows_sh, r.present, r.shares)
            if price is not None:  # re-split the capacity rows by the demands at the bound's duals
                this.mg = on  # its bound and gap are the next merge's (it continues this ascent)
                kept, r.shares, n_price = this, price, n_price + 1
                warms = [x.state if x is not None else None for x in results]
                merge += time.perf_counter() - t2
                continue
        (parts, results, part_rep, solve_idx, eff, duals, new_shares, new_steps, new_last,
         moved) = this.parts, this.results, this.part_rep, this.solve_idx, this.eff, this.duals, this.new_shares, \
            this.new_steps, this.new_last, this.moved
        result, outcome_rep = mg.result, mg.rep
        merge += time.perf_counter() - t2
        improvement: dict = {}
        for tier in ("rens", "resolve") if wb is not None else ():
            if not _wants_improvement(settings, outcome_rep, result):
                break
            gbp = ph.seconds.get("gap_by_part", 0.0)
            bg = _AscentThread(wb, mg, settings) if tier == "rens" and mg.near_cut else None
            try:
                imp_rep, imp_s, t_merge = _improve(problem, settings, config, wb, mg, r, parts, results, part_rep,
                                                   eff, passes_report[-1]["slowest_part_seconds"], tier, ph, bg)
            except PartWorkerError as err:
                return _worker_died(problem, config, err, t0, setup)
            passes_report.append({"pass": f"improve-{tier}", "slowest_part_seconds": imp_s, "share_moved": None})
            ph.add("improve_dispatch", t_merge - (ph.seconds.get("gap_by_part", 0.0) - gbp))
            if bg is not None and bg.evaluations:
                ph.add("dual_ascent_in_thread", bg.seconds)
                imp_rep["ascent_during_rens"] = {"evaluations": bg.evaluations, "seconds": round(bg.seconds, 6),
                                                 "bound": bg.bound}
                mg = bg.merged()  # the same ascent run, further on
            cut = (tier == "rens" and mg.ascent_state is not None and not mg.ascent_state.done
                   and int((mg.rep.get("dual_ascent") or {}).get("evaluations", 0)) + (bg.evaluations if bg else 0)
                   < int(settings.integer_dual_ascent_steps))  # the ascent stopped before its budget
            if imp_rep["improved"] or (bg is not None and bg.evaluations) or cut:
                t3 = time.perf_counter()
                # RENS changed points only: the duals (so the bound's candidates) are the last merge's, and the
                # ascent goes on where it stopped (before RENS, or in the thread during it)
                mg = _merge(problem, settings, config, r, parts, results, part_rep, solve_idx, eff, duals, wb,
                            prior=mg, duals_changed=tier != "rens", ph=ph)
                result, outcome_rep = mg.result, mg.rep
                t_merge += time.perf_counter() - t3
            merge += t_merge
            imp_rep["gap_after"] = outcome_rep.get("gap_rel")
            if tier == "rens":
                improvement = imp_rep
            else:
                improvement["resolve"] = imp_rep
        if mg.kkt_deferred:  # no merge after RENS: the round's result is this one
            t4 = time.perf_counter()
            mg = _complete_kkt(problem, mg)
            result = mg.result
            merge += time.perf_counter() - t4
            ph.add("recheck", time.perf_counter() - t4)
        if improvement:
            outcome_rep["improvement"] = improvement
        iters = max((int(pr["iterations"]) for pr in part_rep), default=0)
        if iters != result.iterations:  # a part's resolve adds its iterations (README: the busiest part's count)
            result = replace(result, iterations=iters)
        if small_lp(problem, config.whole_below_nnz) and dl.parts_left() > 0:  # solved whole it costs about as much
            t5 = time.perf_counter()
            result, outcome_rep["fallback"] = compare_small_lp(problem, settings, result, config.whole_below_nnz,
                                                                whole_warm)
            if (outcome_rep["fallback"]["kept"] == "whole" and r.ns
                    and not (every == 0 or (r.updates + 1) % every)):  # shares move this round
                new_shares = _whole_shares(problem, r, result.x)
                moved = float(np.abs(new_shares - r.shares).sum() / max(r.ns, 1) / 2.0)
                outcome_rep["fallback"]["shares_from"] = "whole"
                passes_report[-1]["share_moved"] = moved
            merge += time.perf_counter() - t5
        if _far_after_parts(problem, settings, outcome_rep, result) and dl.parts_left() > 0:
            # what the shares confine the parts to, only the whole model reaches
            result, outcome_rep["fallback"] = compare_whole(problem, settings, result, outcome_rep["gap_rel"])
        return _outcome(config, r, parts, results, part_rep, eff, (new_shares, new_steps, new_last), moved,
                        passes_report, setup, merge, t0, ph, result, outcome_rep)


def _outcome(config: PartitionConfig, r: _Setup, parts: list[Part], results: list, part_rep: list[dict],
             eff: np.ndarray, next_shares: tuple, moved: float, passes_report: list[dict], setup: float, merge: float,
             t0: float, ph: Phases, result: SolveResult, outcome_rep: dict) -> RoundOutcome:
    """The round's RoundOutcome: ``result``, the PartitionData for the next round (the parts' states and
    ``next_shares`` = (shares, steps, last), each (k, ns)) and the report's ``partitions`` section."""
    new_shares, new_steps, new_last = next_shares
    data = PartitionData(
        assignment=r.assignment,
        parts=[PartState(cols=parts[p].cols, rows=parts[p].rows,
                         state=None if results[p] is None else results[p].state) for p in range(config.k)],
        shared_rows=r.rows_sh, shares=new_shares, updates=r.updates + 1, steps=new_steps, last=new_last)
    pool_start = take_pool_start()  # the part workers' start (not their parts' seconds): new pools only
    if pool_start > 0:
        ph.add("pool_start", pool_start)
    seconds = {"setup": setup, "merge": merge, "wall": time.perf_counter() - t0, "phases": ph.report(),
               "slowest_part": sum(x["slowest_part_seconds"] for x in passes_report)}  # probe + every pass
    rep = _round_report(config, r, part_rep, eff, new_steps, moved, passes_report, seconds, outcome_rep)
    return RoundOutcome(result=result, data=data, report=rep)


@dataclass(eq=False)
class _Pass:
    """One pass's parts, results and merge, kept while the price re-split's pass runs (:func:`_wants_price_split`)."""

    mg: _Merged
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


def _whole_shares(problem: Problem, r: _Setup, x: np.ndarray) -> np.ndarray:
    """(k, ns) the next round's shares from the whole model's point ``x`` (n,): each capacity row split in proportion
    to the parts' activity on it (:func:`solver.partition.price_split.ration`; what the point leaves spread evenly),
    the other shared rows keeping theirs. Shares of the monolithic optimum put TE ring 24's merges 0.01% / 0.4% /
    2.4% from it at K = 4 / 16 / 64, against 5.7% / 25% / 42% with the probe's."""
    act = part_activity(problem, x, r.col_part, r.rows_sh, r.present.shape[0])
    return ration(problem, r.rows_sh, np.where(r.present, act, np.nan), r.present, r.shares)


def _wants_price_split(settings: Settings, mg: _Merged, wb: WholeBound | None, r: _Setup, dl: _Deadline) -> bool:
    """A MILP merge whose feasible point is more than FAR_GAP x ``mip_gap_tol`` from the whole model's bound
    (its duals known), with shared rows and time left for the parts: its shares are re-split by the parts'
    demands at the bound's duals (:func:`solver.partition.price_split.price_shares`) and the parts solved
    again, warm; the better of the two merged points is the round's (``fallback.better_point``)."""
    gap = mg.rep.get("gap_rel")
    return (wb is not None and r.ns > 0 and mg.y_bound is not None and mg.result.point_feasible
            and gap is not None and gap > FAR_GAP * settings.mip_gap_tol and dl.parts_left() > 0)


def _ascend_on(wb: WholeBound, mg: _Merged, settings: Settings, dl: _Deadline) -> _Merged:
    """``mg`` with its dual ascent continued (the same run) for the rest of the round's budget
    (``integer_dual_ascent_steps`` less the evaluations it made; a far merge stops after FIRST_ASCENT_STEPS):
    its bound, duals and ascent state moved to where the run stopped."""
    asc = mg.rep.get("dual_ascent") or {}
    left = int(settings.integer_dual_ascent_steps) - int(asc.get("evaluations", 0))
    if left <= 0 or mg.ascent_state is None:
        return mg
    bound, y, info = wb.ascend(None, float(mg.result.objective), float(settings.mip_gap_tol), left,
                               seconds=_ascent_seconds(dl), resume=mg.ascent_state)
    if not np.isfinite(bound):
        return replace(mg, ascent_state=info["state"])
    asc = {**asc, "evaluations": int(asc.get("evaluations", 0)) + int(info["steps"]),
           "seconds": round(float(asc.get("seconds", 0.0)) + float(info["seconds"]), 6), "bound": float(bound)}
    return replace(mg, ascent_state=info["state"], y_bound=np.asarray(y, dtype=np.float64),
                   rep={**mg.rep, "bound": float(bound), "dual_ascent": asc})


def _far_after_parts(problem: Problem, settings: Settings, rep: dict, result: SolveResult) -> bool:
    """A MILP round's merged point, feasible, still more than FAR_GAP x ``mip_gap_tol`` from the whole model's
    bound after the parts' improvement: the round is compared with a whole solve
    (:func:`solver.partition.fallback.compare_whole`) when the parts' time is not spent."""
    gap = rep.get("gap_rel")
    return (problem.is_mip and result.status == Status.FEASIBLE and result.point_feasible and gap is not None
            and gap > FAR_GAP * settings.mip_gap_tol)


class _AscentThread:
    """The merge's dual ascent continued in a thread of this process while the workers run RENS (this process only
    waits for them then): the same run (``resume``), in chunks of :data:`ASCENT_CHUNK` evaluations, until it proves
    the merged point's gap, uses the rest of the round's budget (``integer_dual_ascent_steps``) or :meth:`stop`.
    The merge after RENS continues from where it stopped (:meth:`merged`)."""

    def __init__(self, wb: WholeBound, mg: _Merged, settings: Settings):
        import threading

        self.wb, self.mg = wb, mg
        used = int((mg.rep.get("dual_ascent") or {}).get("evaluations", 0))
        self.budget = max(0, int(settings.integer_dual_ascent_steps) - used)
        self.tol = float(settings.mip_gap_tol)
        self.state, self.y, self.bound = mg.ascent_state, mg.y_bound, mg.rep.get("bound")
        self.evaluations, self.seconds, self.error = 0, 0.0, None
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, name="copter-dual-ascent", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def _run(self) -> None:
        t = time.perf_counter()
        try:
            objective = float(self.mg.result.objective)
            while not self._stop.is_set() and self.evaluations < self.budget and not self.state.done:
                n = min(ASCENT_CHUNK, self.budget - self.evaluations)
                bound, y, info = self.wb.ascend(None, objective, self.tol, n, resume=self.state)
                self.state, self.evaluations = info["state"], self.evaluations + int(info["steps"])
                if np.isfinite(bound):
                    self.bound, self.y = float(bound), np.asarray(y, dtype=np.float64)
                if int(info["steps"]) < n:  # proven (or no step can improve)
                    break
        except BaseException as err:  # re-raised in the caller's thread by stop()
            self.error = err
        self.seconds = time.perf_counter() - t

    def stop(self) -> None:
        """Stop after the current chunk and wait for it; re-raise what the ascent raised."""
        self._stop.set()
        if self.thread.ident is not None:
            self.thread.join()
        if self.error is not None:
            raise self.error

    def merged(self) -> _Merged:
        """The merge before RENS with its ascent state, bound and duals moved to where this run stopped."""
        return replace(self.mg, ascent_state=self.state, y_bound=self.y, rep={**self.mg.rep, "bound": self.bound})


class _WholeBoundBuild:
    """The whole model's :class:`WholeBound` (O(nnz): structure + CSR), built in a thread of this process while
    the parts run in their workers (this process only waits for them then), else at :meth:`result`."""

    def __init__(self, problem: Problem, background: bool):
        import threading

        self.problem, self.value, self.error, self.thread = problem, None, None, None
        if background:
            self.thread = threading.Thread(target=self._build, name="copter-whole-bound", daemon=True)
            self.thread.start()

    def _build(self) -> None:
        try:
            self.value = WholeBound(self.problem)
        except BaseException as err:  # re-raised in the caller's thread by result()
            self.error = err

    def result(self) -> WholeBound:
        """The WholeBound (waits for the thread; builds it here without one). Raises what the build raised."""
        if self.thread is not None:
            self.thread.join()
        elif self.value is None and self.error is None:
            self._build()
        if self.error is not None:
            raise self.error
        return self.value


@dataclass
class _Setup:
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
    clock: _Deadline  #: the round's time budget (:func:`solve_round`'s)


@dataclass
class _Deadline:
    """A partitioned round's time budget on the ``time.monotonic()`` clock: ``settings.time_limit_seconds``
    (``limit``, inf: none) counts from ``start``, the command's start when the CLI registered one
    (:mod:`solver.clock`), else the round's. The parts (and their RENS / re-solves) must end by ``parts_end``,
    which leaves :func:`merge_reserve` seconds before ``end`` for the merge, its re-check and the save."""

    limit: float
    start: float
    wall_start: float  #: ``start`` as ``time.time()`` seconds (what the workers get: they may be on another machine)
    parts_limit: float  #: the parts' time limit, counted from ``start``

    @classmethod
    def of(cls, settings: Settings) -> _Deadline:
        limit = float(settings.time_limit_seconds)
        start = clock.command_start()
        now = time.monotonic()
        start = now if start is None else start
        parts_limit = limit - merge_reserve(limit) if math.isfinite(limit) else limit
        return cls(limit=limit, start=start, wall_start=time.time() - (now - start), parts_limit=parts_limit)

    @property
    def timed(self) -> bool:
        return math.isfinite(self.limit)

    @property
    def command_start(self) -> float | None:
        """What :func:`solver.partition.executor.run_parts` gets: the wall-clock start, None without a limit."""
        return self.wall_start if self.timed else None

    def since_start(self) -> float:
        return time.monotonic() - self.start

    def parts_left(self) -> float:
        """Seconds left for the parts (inf without a limit; <= 0 when spent)."""
        return self.parts_limit - self.since_start()

    def merge_left(self) -> float:
        """Seconds the merge's dual ascent may take: until half the reserve after the parts' end."""
        return (0.5 * (self.parts_limit + self.limit) - self.since_start()) if self.timed else math.inf

    def part_settings(self, settings: Settings, limit: float | None = None) -> Settings:
        """``settings`` with the parts' limit (or ``limit``), counted from ``start`` (``run_parts``'s
        ``command_start``)."""
        if not self.timed:
            return settings
        return replace(settings, time_limit_seconds=self.parts_limit if limit is None else limit)

    def note(self) -> str:
        """The sentence a round the limit stopped ends with, naming the user's limit, as a monolithic round's."""
        return clock.time_limit_reached(self.limit, self.since_start())


def _ascent_seconds(clock: _Deadline) -> float:
    """The merge's dual-ascent budget (seconds): what is left of the merge's reserve, at least
    :data:`ASCENT_MIN_SECONDS` (a spent budget still evaluates the start); inf without a limit."""
    return max(clock.merge_left(), ASCENT_MIN_SECONDS)


def merge_reserve(limit: float) -> float:
    """Seconds of a ``limit``-second round kept from the parts for the merge, the re-check and the save:
    :data:`MERGE_RESERVE_FRACTION` of it, at most :data:`MERGE_RESERVE_MAX`."""
    return min(MERGE_RESERVE_MAX, MERGE_RESERVE_FRACTION * max(limit, 0.0))


def _setup(problem: Problem, config: PartitionConfig, prev: PartitionData | None, info,
           old_shape: tuple[int, int] | None, ph: Phases | None = None, dl: _Deadline | None = None) -> _Setup:
    """Group the clients, route them to parts (or split afresh), carry the shares over by row map. ``dl``: the
    round's time budget (default: none, ``Settings()``'s)."""
    k = config.k
    ph = ph or Phases()
    t = time.perf_counter()
    grouping = group_clients(problem, client_regex=config.client_regex, shared_rows_regex=config.shared_rows_regex)
    ph.add("clients", time.perf_counter() - t)
    t = time.perf_counter()
    if prev is None and info is None:  # round 0 (init): a split without clients is a naming mistake
        require_clients(grouping, config.client_regex)
    if prev is None and info is None and k > grouping.n_clients:  # round 0: k - n parts would be EMPTY forever
        raise UsageError(f"--partitions {k} is more than the {grouping.n_clients} clients of the base problem; "
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
    present = sh.presence(problem, col_part, rows_sh, k)
    default = pop_shares(problem, grouping, col_part, k, "auto")
    col_map = None if info is None else info.col_map
    row_map = None if info is None else info.row_map
    if old_shape is None:
        old_shape = (info.old_n_cols, info.old_n_rows) if info is not None else (problem.n_cols, problem.n_rows)
    steps, last = np.full((k, ns), sh.D0), np.zeros((k, ns))
    if warm:
        rmap = row_map if row_map is not None else np.arange(problem.n_rows)
        default = sh.carry(prev.shared_rows, prev.shares, rmap, old_shape[1], rows_sh, default)
        steps = sh.carry(prev.shared_rows, prev.steps, rmap, old_shape[1], rows_sh, steps)
        last = sh.carry(prev.shared_rows, prev.last, rmap, old_shape[1], rows_sh, last)
    ph.add("route_and_shares", time.perf_counter() - t)
    return _Setup(grouping=grouping, assignment=assignment, warm=warm, n_new=n_new, n_dropped=n_dropped,
                  col_part=col_part, rows_sh=rows_sh, ns=ns, spos=spos, present=present,
                  shares=sh.normalise(default, present), steps=steps, last=last,
                  updates=prev.updates if warm else 0, col_map=col_map, row_map=row_map, old_shape=old_shape,
                  clock=dl if dl is not None else _Deadline.of(Settings()))


def _finite(v) -> bool:
    return v is not None and math.isfinite(float(v))


def _part_engine(res: SolveResult) -> str:
    """The LP engine a part's solve ran (``pdhg``/``alm``; a MILP part: its relaxation's), "" when none."""
    return res.engine or str((res.mip or {}).get("lp_engine") or "")


def _part_results(parts: list[Part], assignment, k: int, solve_idx: list[int], outs: list[dict],
                  mip_gap_tol: float | None = None, from_previous: bool = True):
    """(results (k,), part reports (k,)): each solved part's SolveResult and report row (with its LP
    ``engine``); EMPTY for the rest. A MILP part solved to its first integer point reports OPTIMAL only when
    its own gap is within the round's ``mip_gap_tol``, else FEASIBLE (its own target was looser).
    ``warm_started`` means warm from the previous round's iterate, as for a monolithic round: with
    ``from_previous`` False (round 0, a new split) it is False even though a part started from the probe's or
    an earlier pass's point within this round."""
    results: list[SolveResult | None] = [None] * k
    part_rep: list[dict] = [{"part": p, "status": "EMPTY", "seconds": 0.0, "iterations": 0, "warm_started": False,
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
                           engine=_part_engine(res), engine_reason=res.engine_reason or None,
                           own_gap_rel=float(res.gap_rel) if _finite(res.gap_rel) else None,
                           iterations=int(res.iterations),
                           warm_started=bool(from_previous and res.warm_started),
                           objective=float(res.objective), max_rss_mb=round(float(out["max_rss_mb"]), 1))
    return results, part_rep


def _round_report(config: PartitionConfig, r: _Setup, part_rep: list[dict], eff: np.ndarray, new_steps: np.ndarray,
                  moved: float, passes_report: list[dict], seconds: dict, outcome_rep: dict) -> dict:
    """The report's ``partitions`` section (see :func:`solve_round`); seconds in wall seconds."""
    k, ns, present = config.k, r.ns, r.present
    active = present.sum(axis=0) > 1
    setup, slowest, merge = seconds["setup"], seconds["slowest_part"], seconds["merge"]
    return {
        "k": k, "executor": config.executor, "passes": config.passes, "parts": part_rep,
        "clients_added": r.n_new, "clients_dropped": r.n_dropped, "warm": bool(r.warm),
        "seconds": {"setup": round(setup, 6), "slowest_part": round(slowest, 6), "merge": round(merge, 6),
                    "on_k_cores": round(setup + slowest + merge, 6), "wall": round(seconds["wall"], 6),
                    "phases": seconds.get("phases", {})},
        "shares": {"n_shared_rows": int(ns), "n_contested": int(active.sum()),
                   "mean_per_part": [round(float(v), 6) for v in (eff.mean(axis=1) if ns else np.zeros(k))],
                   "min_contested": round(float(eff[present & active[None, :]].min()), 6) if active.any() else None,
                   "moved_next": round(moved, 6),
                   "mean_step": round(float(new_steps[present].mean()), 6) if present.any() else None,
                   "updates": r.updates + 1, "passes": passes_report},
        **outcome_rep,
    }


def _probe(problem: Problem, grouping, col_part: np.ndarray, k: int, present: np.ndarray, rows_sh: np.ndarray,
           spos: np.ndarray, shares: np.ndarray, part_settings: Settings, config,
           command_start: float | None = None) -> tuple:
    """A fresh split's first shares by proportional rationing: every part is solved once with the WHOLE of
    each shared row it touches (its demand for the row), then a capacity row is split in proportion to the
    parts' demands (what is left when the demands fit is spread evenly). Returns (shares, the probe's
    states as warm starts, its slowest part's seconds). Rows that are not capacity rows keep ``shares``."""
    whole = np.where(present, 1.0, 0.0)
    parts = build_part_problems(problem, grouping, col_part, k, whole, name="part")
    solve_idx = [p for p in range(k) if bool((~grouping.global_cols[parts[p].cols]).any())]
    outs = run_parts([(parts[p].problem, part_settings, None) for p in solve_idx], config.executor,
                     config.workers, config.ray_address, command_start)
    results: list = [None] * k
    for p, out in zip(solve_idx, outs, strict=True):
        results[p] = out["result"]
    act = _part_duals(parts, [None if r is None or not r.status.is_success else r.row_activity for r in results],
                      spos, k, rows_sh.size)
    warms = [None if r is None else r.state for r in results]
    return ration(problem, rows_sh, act, present, shares), warms, max((o["seconds"] for o in outs), default=0.0)


def _wants_improvement(settings: Settings, rep: dict, result: SolveResult) -> bool:
    """A merged MILP point that is feasible but above the round's gap target, with RENS allowed."""
    gap = rep.get("gap_rel")
    return (result.status == Status.FEASIBLE and gap is not None and gap > settings.mip_gap_tol
            and settings.integer_submip_seconds > 0)


def _improve(problem: Problem, settings: Settings, config: PartitionConfig, wb: WholeBound, mg: _Merged,
             r: _Setup, parts: list[Part], results: list, part_rep: list[dict], eff: np.ndarray,
             part_seconds: float, tier: str = "rens", ph: Phases | None = None,
             background: _AscentThread | None = None) -> tuple[dict, float, float]:
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
    bound = float(result.dual_objective)
    total = float(np.nansum(np.clip(contrib, 0.0, None)))
    rep["gap_share"] = [round(float(c) / total, 4) if total > 0 and np.isfinite(c) else None for c in contrib]
    chosen = [p for p in choose_parts(contrib, settings.mip_gap_tol * max(1.0, abs(bound)))
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
                   dl: _Deadline):
    """The ``"resolve"`` tier of :func:`_improve`: each chosen part's full solve (``solver.api.solve_problem``
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


def _worker_died(problem: Problem, config: PartitionConfig, err: PartWorkerError, t0: float,
                 setup: float) -> RoundOutcome:
    n, m = problem.n_cols, problem.n_rows
    msg = (f"partitioned round failed: {err} (executor {config.executor}); nothing was merged or stored")
    wall = time.perf_counter() - t0
    result = SolveResult(status=Status.NUMERICAL_ERROR, x=np.zeros(n), y=np.zeros(m), reduced_cost=np.zeros(n),
                         row_activity=np.zeros(m), objective=math.nan, dual_objective=math.nan,
                         primal_residual_rel=math.nan, dual_residual_rel=math.nan, gap_rel=math.nan, iterations=0,
                         seconds={"solve": wall, "total": wall}, message=msg)
    rep = {"k": config.k, "executor": config.executor, "worker_failed": True, "failed_part": err.part,
           "seconds": {"setup": round(setup, 6), "wall": round(wall, 6)}}
    return RoundOutcome(result=result, data=None, report=rep)


@dataclass(eq=False)
class _Merged:
    """What :func:`_merge` returns: the whole-model result, the report's bound/gap fields, the (m,) duals of the
    bound (None without one), the dual ascent's :class:`solver.integer.ascent.AscentState` (a later merge of the
    same round continues it), and the part whose values the global columns took (-1: none)."""

    result: SolveResult
    rep: dict
    y_bound: np.ndarray | None
    ascent_state: object
    global_part: int
    near_cut: bool = False  #: the ascent stopped after its first steps near the target (``near_goes_on`` False)
    kkt_deferred: bool = False  #: MILP: the LP residuals, reduced costs and activities are still to compute


def _complete_kkt(problem: Problem, mg: _Merged) -> _Merged:
    """A MILP merge made with ``defer_kkt``: its result's whole-model reduced costs (n,), row activities (m,) and
    relative primal/dual residuals (``solver.lp.original_kkt``), which its status does not depend on."""
    from solver.lp.original_kkt import original_kkt_ref as original_kkt  # numpy twin: no signature to compile

    if not mg.kkt_deferred:
        return mg
    kkt, _, _, red, ax = original_kkt(problem, mg.result.x, mg.result.y)
    res = replace(mg.result, reduced_cost=red, row_activity=ax, primal_residual_rel=float(kkt.primal_residual_rel),
                  dual_residual_rel=float(kkt.dual_residual_rel))
    return replace(mg, result=res, kkt_deferred=False)


def _merge(problem: Problem, settings: Settings, config: PartitionConfig, r: _Setup, parts: list[Part],
           results: list, part_rep: list, solve_idx: list[int], eff: np.ndarray, duals: np.ndarray,
           wb: WholeBound | None = None, prior: _Merged | None = None, duals_changed: bool = True,
           first_steps: int | None = None, near_goes_on: bool = True, defer_kkt: bool = False,
           ph: Phases | None = None) -> _Merged:
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
    (the ascent then goes on in a thread during RENS, :class:`_AscentThread`). ``defer_kkt`` (a MILP merge
    that RENS may replace): the whole model's LP residuals, reduced costs and activities, which a MILP's status
    does not use, are left to :func:`_complete_kkt` (the feasibility re-check is done here either way)."""
    from solver.baselines.result import point_quality
    from solver.lp.original_kkt import original_kkt_ref as original_kkt  # numpy twin: no signature to compile

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
        tol, steps = float(settings.mip_gap_tol), int(settings.integer_dual_ascent_steps)
        first = steps if first_steps is None else min(steps, first_steps)
        bound, y2, info_a = wb.ascend(y_from, objective, tol, first, seconds=_ascent_seconds(r.clock),
                                      resume=resume)
        evals, secs, a_state = int(info_a["steps"]), float(info_a["seconds"]), info_a["state"]
        far = np.isfinite(bound) and sense * (objective - bound) / max(1.0, abs(bound)) > FAR_GAP * tol
        near_cut = bool(first < steps and np.isfinite(bound) and not far and evals >= first and not a_state.done)
        if near_cut and near_goes_on:  # near the target: go on
            bound, y2, info_b = wb.ascend(None, objective, tol, steps - first, seconds=_ascent_seconds(r.clock),
                                          resume=a_state)  # the same run
            evals, secs, a_state = evals + int(info_b["steps"]), secs + float(info_b["seconds"]), info_b["state"]
            near_cut = False
        ascent = {"evaluations": evals, "seconds": round(secs, 6), "start": cand,
                  "start_bound": float(info_a["start_bound"]), "bound": float(bound)}
        bound = float(bound) if np.isfinite(bound) else None
        cand = "choice_lagrangian_ascent"
        y_bound = np.asarray(y2, dtype=np.float64) if bound is not None else None
        ph.add("dual_ascent", time.perf_counter() - t_ph)
    else:
        bound, cand, ysh = (best_bound(problem, y, rows_sh, duals, eff) if solved
                            else (None, "", np.zeros(rows_sh.size)))
        y[rows_sh] = ysh
        y_bound = y.copy() if bound is not None else None
        ph.add("bound_start", time.perf_counter() - t_ph)
    t_ph = time.perf_counter()
    defer_kkt = bool(defer_kkt and problem.is_mip)
    if defer_kkt:
        kkt = SimpleNamespace(primal_residual_rel=math.nan, dual_residual_rel=math.nan, gap_rel=math.nan)
        red, ax = np.full(problem.n_cols, np.nan), np.full(problem.n_rows, np.nan)
    else:
        kkt, _, _, red, ax = original_kkt(problem, x, y)
    q = point_quality(problem, x)
    gap = None
    if bound is not None and np.isfinite(objective):
        gap = sense * (objective - bound) / max(1.0, abs(bound))
    integral = True
    if problem.is_mip:
        ints = problem.integrality != 0
        integral = bool(np.all(np.abs(x[ints] - np.round(x[ints])) <= 1e-9))
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
        msg = (f"{k} parts merged; integer point re-checked on the whole model: "
               + ("feasible" if feasible else "VIOLATES it"))
    else:
        kkt_ok = max(kkt.primal_residual_rel, kkt.dual_residual_rel, kkt.gap_rel) <= settings.tol
        feasible = kkt.primal_residual_rel <= k * settings.tol
        status = Status.OPTIMAL if kkt_ok else (Status.FEASIBLE if feasible else Status.NUMERICAL_ERROR)
        msg = (f"{k} parts merged; whole-model relative KKT primal {kkt.primal_residual_rel:.2e}, dual "
               f"{kkt.dual_residual_rel:.2e}, gap {kkt.gap_rel:.2e}")
    if gap is not None:
        msg += f"; gap to the Lagrangian bound {gap:.3%}"
    iters = max((results[p].iterations for p in solved), default=0)
    engines = {p: _part_engine(results[p]) for p in solved}
    if any(engines.values()):
        msg += "; parts' engines: " + ", ".join(f"{p} {e or 'none'}" for p, e in engines.items())
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
           "bound_candidate": cand or None, "gap_rel": None if gap is None else float(gap),
           "max_row_violation_rel": float(q.max_row_violation_rel), "merged_feasible": bool(feasible),
           **({"dual_ascent": ascent} if ascent is not None else {})}
    ph.add("recheck", time.perf_counter() - t_ph)
    return _Merged(result=result, rep=rep, y_bound=y_bound, ascent_state=a_state, global_part=int(chosen),
                   near_cut=near_cut, kkt_deferred=defer_kkt)
