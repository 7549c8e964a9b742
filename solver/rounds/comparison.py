"""``copter compare`` as a library function: baselines on the current round next to copter's own result.

Loads the current round of a state directory (``formats.checkpoint``), evaluates copter's own saved point
on the same ruler as the baselines (``solver.baselines.result.point_quality``), runs each named baseline
from :mod:`solver.baselines.registry` and derives the relative objective difference to the best and the
time ratio baseline / copter.

Row fields (the same for copter and every baseline; the bench scripts' rows use the same names):

- ``status``, ``objective`` (null unless the status is OPTIMAL or FEASIBLE: an infeasible, limited or
  failed row has no objective to compare), ``objective_diff_rel`` = sense * (objective - best) /
  |best| (:func:`solver.integer.gap.objective_diff_rel`: relative at every scale, HiGHS's gap rule with the
  best as p; a best within ``feasibility_tol`` x sum_j |c_j| (1 + |x_j|) (x: the best point) of 0, the most a tolerance-sized move
  of its point can change its objective, has no scale: 0 when the row is within that distance (or 1e-6) of
  it, else +-1), the best taken over the OPTIMAL/FEASIBLE
  rows without ``violates_tol`` (0 = best, > 0 = worse; null for non-OPTIMAL/FEASIBLE rows, which never
  count toward the best);
- ``max_violation_rel``, ``primal_residual_rel``, ``violates_tol`` (and copter's ``dual_residual_rel``,
  ``duality_gap_rel``): see the feasibility contract below;
- ``seconds``: wall seconds of the method's work on this round's problem on this machine: copter's
  apply + solve + integerize phases (its report; load and save are I/O no baseline does), HiGHS's model
  hand-over + solve, POP's whole call (split, worker processes, parts, combine); ``time_ratio`` =
  seconds / copter's seconds;
- copter only: ``solve_seconds`` (solve + integerize) and ``round_seconds`` (the round's total with I/O);
- POP only: ``setup_seconds`` (split + sub-problems + combine), ``max_part_seconds`` (slowest part),
  ``sum_part_seconds``, and ``pop_seconds`` = setup_seconds + max_part_seconds, POP's own measure (the time
  with one core per part), with ``pop_time_ratio`` = pop_seconds / copter's seconds; ``executor``, where
  its parts ran (``process``, ``ray`` or ``inline``: :mod:`solver.partition.executor`, the executor of
  partitioned rounds; default the state's ``--executor`` when it is partitioned, else ``process``). A part
  worker that dies twice fails the command (``PartWorkerError``, exit code 5) before anything is logged.

Feasibility is judged by the contract each kind of point was solved under, at one stated tolerance
``feasibility_tol`` (top level of the result; default: the state's solve tolerance ``tol`` from config.json,
1e-4 unless ``init --tol`` chose another); ``feasibility_ruler`` (top level) names the measure:

- LP (``primal_residual_rel``): the relative primal residual of the LP engine's OPTIMAL criterion,
  ||A x - proj_[row_lower, row_upper](A x)||_2 / (1 + ||b||_2) with b the finite row bounds, computed by
  :func:`solver.lp.original_kkt.original_kkt` (the engine's own function, in original units) on every
  method's point alike; ``violates_tol`` = primal_residual_rel > feasibility_tol, or a row missed by more
  than the per-row tolerance of an LP OPTIMAL (``solver.lp.termination.row_tolerance``: 100 x
  feasibility_tol, at most its square root, 1e-2 at the default) relative to max(1, |bound|) (``max_violation_rel``'s row part), or a
  column bound missed by more than feasibility_tol relative to max(1, |bound|) (the engine's points lie
  within their bounds exactly), or a nan in the point. The norm-wise test alone (PDLP/cuPDLPx, arXiv
  2106.04756, 2507.14051) let a point 9% over one demand row (TE B4 round 7) count as feasible and rank
  above HiGHS's exact optimum by its objective.
  copter's row also carries ``dual_residual_rel`` and ``duality_gap_rel`` of its saved (x, y) (the other
  two OPTIMAL criteria, PDLP's for a given point: reduced costs c - A'y projected onto the signs the bounds
  allow, so they may differ a little from the report's, which recovers them from the iterate; null for the
  baselines, which hand back no duals, and for MILP rounds).
- MILP (``max_violation_rel``): integer points are exact, so the ruler is row-wise: ``violates_tol`` =
  max_violation_rel > feasibility_tol, or an integer column more than feasibility_tol from an integer.

Every row also reports ``max_violation_rel`` (for an LP, its row part is held to the per-row tolerance):
the largest violation of a row (``row_lower <= A x <= row_upper``) or of a column bound, each divided by
max(1, |violated bound|), recomputed from the round's exact model. A row with ``violates_tol`` keeps its objective and diff (which
may then be negative: it is "better" only by violating rows) but never counts toward the best.

An LP row within its contract is ranked by feasibility first at :data:`COMMON_TOL` (``common_feasibility_tol``
at the top level; ``feasible_at_common_tol``, ``worst_row``, ``worst_row_violation_rel`` per row): one that is
not, whose objective beats the best row that is by no more than its violations buy (``violation_buys``, priced by
copter's duals, plus copter's duality gap: ``lead_allowance``), gets ``ranked_below_feasible`` (with
``lead_over_feasible`` and ``feasible_best``) and does not count toward the best (user trial 18: forplan's
OPTIMAL point, row 'LTSY R' off by 3.0e-3, led HiGHS's exact optimum by 0.294 where the violation buys 0.292).

The ``highs-warm`` baseline keeps its simplex basis by name in ``STATE/baselines/highs-warm/``
(:mod:`solver.rounds.basis_store`). To time round r hot-started from round r-1 it uses the stored basis
of round r-1; when there is none but generation r-1 is still kept, that round is first solved cold
(untimed) to produce it.
"""

from __future__ import annotations

import math
import os

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from formats.checkpoint import StateStore
from solver.baselines import registry
from solver.baselines.highs import check_solver
from solver.baselines.result import point_quality
from solver.integer.gap import integrality_slack, objective_diff_rel, objective_rounding, objective_scale
from solver.lp.original_kkt import original_kkt
from solver.lp.termination import row_tolerance
from solver.model.errors import NotApplicableError, PartWorkerError, StateError, UsageError
from solver.model.problem import Problem
from solver.rounds.basis_store import StateBases
from solver.rounds.config import state_dir_or_default

SUCCESS = ("OPTIMAL", "FEASIBLE")
MAX_HIGHS_THREADS = 1024  #: ``--threads`` at most (HiGHS's option is a 32-bit int; 2**31 was refused and ignored)


def copter_point(gen, problem: Problem) -> np.ndarray | None:
    """copter's saved (n,) point of this round (solution.parquet), aligned to ``problem`` by name; None
    when the file is unreadable or misses one of the problem's columns."""
    rel = gen.report.get("solution_path")
    path = (gen.path.parent / rel) if rel else (gen.path / "solution.parquet")
    return _column_by_name(path, "value", problem.col_names)


def _column_by_name(path, column: str, names) -> np.ndarray | None:
    """Column ``column`` of the Parquet file ``path`` (with a ``name`` column) in the order of ``names``;
    None when the file is unreadable or misses a name."""
    try:
        t = pq.read_table(path, columns=["name", column])
    except (OSError, pa.ArrowException):
        return None
    pos = pc.index_in(pa.array(names, type=pa.string()), value_set=t.column("name"))
    if pos.null_count:
        return None
    return t.column(column).to_numpy()[pos.to_numpy()]


def _violation_rel(v: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> float:
    """max over entries of the violation of ``lo <= v <= hi`` divided by max(1, |violated bound|); 0 when
    empty, nan when ``v`` holds a nan."""
    if v.size == 0:
        return 0.0
    with np.errstate(invalid="ignore"):
        below = np.where(np.isfinite(lo), (lo - v) / np.maximum(1.0, np.abs(lo)), 0.0)
        above = np.where(np.isfinite(hi), (v - hi) / np.maximum(1.0, np.abs(hi)), 0.0)
    worst = np.maximum(np.maximum(below, above), 0.0)
    return math.nan if np.isnan(worst).any() else float(worst.max())


def feasibility_ruler(problem: Problem) -> str:
    """The measure ``violates_tol`` compares with feasibility_tol: ``primal_residual_rel`` for an LP (the
    engine's norm-wise OPTIMAL criterion), ``max_violation_rel`` for a MILP (integer points are exact)."""
    return "max_violation_rel" if problem.is_mip else "primal_residual_rel"


COMMON_TOL = 1e-6
"""The common feasibility tolerance compare ranks LP points by first: a row's violation relative to max(1, |b_i|,
max_j |a_ij|) (``solver.lp.termination.row_violation_rel``) at most HiGHS's primal feasibility tolerance (1e-7,
absolute on its scaled model) with a factor 10 of room for the unscaling. HiGHS's exact points meet it (forplan:
2e-12); copter's OPTIMAL LP points need only meet the per-row tolerance (100 x tol, at most sqrt(tol); forplan: 3.0e-3)."""


def violation_buys(problem: Problem, x: np.ndarray, prices: np.ndarray | None) -> float | None:
    """What a point's row violations can buy in objective units: sum_i |y_i| x viol_i, with viol_i (m,) the
    absolute violation of ``row_lower <= A x <= row_upper`` and y (m,) row duals of the LP (copter's). By weak
    duality a point that relaxes row i by viol_i can beat a feasible optimum by at most that (plus the duals'
    own gap). None without ``prices``; nan when ``x`` holds a nan."""
    if prices is None:
        return None
    ax = problem.row_activity(np.asarray(x, dtype=np.float64))
    with np.errstate(invalid="ignore"):
        viol = np.maximum(np.maximum(problem.row_lower - ax, ax - problem.row_upper), 0.0)
    return float(np.abs(prices) @ viol) if viol.size else 0.0


def feasibility(problem: Problem, x: np.ndarray | None, tol: float, y: np.ndarray | None = None,
                prices: np.ndarray | None = None) -> dict:
    """The feasibility measures and flag of a compare row (see the module docstring: the contract).

    Args:
        problem: the round's exact model (m rows, n columns).
        x: (n,) point in the problem's column order, or None (no point).
        tol: ``feasibility_tol`` (relative; see :func:`feasibility_ruler` for the measure it bounds).
        y: (m,) row duals of ``x`` in the problem's sense (HiGHS convention), or None. With them an LP row also
            gets ``dual_residual_rel`` and ``duality_gap_rel`` (information, not part of the flag).
        prices: (m,) row duals that price ``x``'s row violations (``violation_buys``; copter's for every row).
    Returns:
        ``{"max_violation_rel", "primal_residual_rel", "dual_residual_rel", "duality_gap_rel": float or None
        (nan / None without a point), "violates_tol": bool, or None without a point, "worst_row": the name of
        the row furthest off relative to max(1, |b_i|, max_j |a_ij|) (None when none is off),
        "worst_row_violation_rel": that measure, "feasible_at_common_tol": it is at most ``COMMON_TOL`` (LP;
        None for a MILP, whose points are exact, or without a point), "violation_buys": see
        :func:`violation_buys` (LP with prices, else None)}``; a point holding nan violates. One pass over A
        (``solver.lp.original_kkt``) plus two sparse mat-vecs and O(m + n) numpy work.
    """
    nan = math.nan
    if x is None:
        return {"max_violation_rel": nan, "primal_residual_rel": nan, "dual_residual_rel": None,
                "duality_gap_rel": None, "violates_tol": None, "worst_row": None, "worst_row_violation_rel": None,
                "feasible_at_common_tol": None, "violation_buys": None}
    x = np.asarray(x, dtype=np.float64)
    rows = _violation_rel(problem.row_activity(x), problem.row_lower, problem.row_upper)
    bounds = _violation_rel(x, problem.col_lower, problem.col_upper)
    worst = max(rows, bounds)
    with_y = y is not None and not problem.is_mip
    kkt = original_kkt(problem, x, y if with_y else np.zeros(problem.n_rows), tol)[0]
    # original_kkt reads a nan entry as 0 (its candidate point): a nan point is caught by ``worst``
    primal = nan if math.isnan(worst) else kkt.primal_residual_rel
    if problem.is_mip:
        xi = x[problem.integrality]
        off = float(np.max(np.abs(xi - np.round(xi)))) if xi.size else 0.0
        violates = not (worst <= tol and off <= tol)  # nan violates
    else:  # norm-wise, and each row within the per-row tolerance an LP OPTIMAL promises (row_tolerance)
        violates = not (primal <= tol and bounds <= tol and kkt.row_violation_rel <= row_tolerance(tol))
    row_rel = math.inf if math.isnan(worst) else kkt.row_violation_rel
    lp = not problem.is_mip
    return {"max_violation_rel": worst, "primal_residual_rel": primal,
            "dual_residual_rel": kkt.dual_residual_rel if with_y and not math.isnan(worst) else None,
            "duality_gap_rel": kkt.gap_rel if with_y and not math.isnan(worst) else None, "violates_tol": violates,
            "worst_row": problem.row_names[kkt.worst_row] if kkt.worst_row >= 0 else None,
            "worst_row_violation_rel": row_rel,
            "feasible_at_common_tol": (row_rel <= COMMON_TOL and bounds <= COMMON_TOL) if lp else None,
            "violation_buys": violation_buys(problem, x, prices) if lp else None,
            "_gap_abs": abs(kkt.primal_objective - kkt.dual_objective) if with_y and not math.isnan(worst) else None}


def copter_duals(gen, problem: Problem) -> np.ndarray | None:
    """copter's saved (m,) row duals of this round (duals.parquet), aligned to ``problem`` by name; None when
    the file is unreadable or misses one of the problem's rows."""
    rel = gen.report.get("duals_path")
    path = (gen.path.parent / rel) if rel else (gen.path / "duals.parquet")
    return _column_by_name(path, "dual", problem.row_names)


def _rounding(problem: Problem, x) -> float:
    """How far a point's objective is from its exact integral value by float64 rounding of c'x
    (:func:`objective_rounding`) and, on a MILP, by its integer columns' distance to integers
    (:func:`solver.integer.gap.integrality_slack`): objectives closer than the two points' figures tie."""
    out = objective_rounding(problem.cost, x, problem.offset)
    return out + integrality_slack(problem.cost, x, problem.integrality) if problem.is_mip else out


def copter_row(gen, problem: Problem, tol: float = 1e-4) -> dict:
    """copter's own figures for this round: status from its report; objective, violations and (LP) the relative
    KKT measures recomputed from its saved point and duals (``tol``: see :func:`feasibility`)."""
    rep = gen.report
    x = copter_point(gen, problem)
    y = None if problem.is_mip else copter_duals(gen, problem)
    q = point_quality(problem, x)
    secs = rep.get("seconds") or {}
    solve_s = float(secs.get("solve", math.nan)) + float(secs.get("integerize", 0.0) or 0.0)
    # the objective of the saved point, recomputed like every baseline's (the report's when there is no point)
    obj = q.objective if x is not None and np.isfinite(q.objective) else rep.get("objective")
    return {"name": "copter", "status": rep.get("status"), "objective": obj,
            "_scale": objective_scale(problem.cost, x),
            "_rounding": _rounding(problem, x),
            "seconds": float(secs.get("apply", 0.0) or 0.0) + solve_s, "solve_seconds": solve_s,
            "round_seconds": secs.get("total"), "max_row_violation": q.max_row_violation,
            "max_row_violation_rel": q.max_row_violation_rel, "max_bound_violation": q.max_bound_violation,
            "integrality_violation": q.integrality_violation, "hit_limit": rep.get("status") == "TIME_LIMIT",
            "warm_started": rep.get("warm_started"), "iterations": rep.get("iterations"),
            "message": rep.get("message", ""), **feasibility(problem, x, tol, y, prices=y)}


def _check_options(baselines: list[str], ks: list[int], highs_solver: str, time_limit_seconds: float,
                   threads: int | None, pop_workers: int | None, given: set[str],
                   pop_executor: str | None = None, ray_address: str | None = None) -> list[str]:
    """Validate the options; return the registry names to run in order (``pop`` expanded per k). ``given``: the
    parameters passed with a value other than their default (a mistyped baseline is named first, then one of
    them that no baseline reads, or a ``ray_address`` beside ``pop_executor`` process/inline or ``pop_workers``
    0, or not of a Ray address's form: :mod:`solver.rounds.compare_options`, the command line's check too).

    Raises:
        UsageError: see :func:`solver.rounds.compare`.
    """
    if not baselines:
        raise UsageError(f"unknown baseline (none); choose from {', '.join(registry.names())}")
    for b in dict.fromkeys(baselines):
        if b != "pop":
            registry.get(b)
    from solver.rounds.compare_options import refuse_ignored

    refuse_ignored(given, baselines, pop_executor, pop_workers, ray_address)
    check_solver(highs_solver)
    if not (time_limit_seconds > 0):  # also refuses nan
        raise UsageError(f"--time-limit must be positive seconds, got {time_limit_seconds}")
    if threads is not None and not 1 <= threads <= MAX_HIGHS_THREADS:  # HiGHS refused 2**31 and ran on its default
        raise UsageError(f"--threads must be between 1 and {MAX_HIGHS_THREADS}, got {threads}")
    if pop_workers is not None and pop_workers < 0:
        raise UsageError(f"--pop-workers must be >= 0 (0: parts in this process), got {pop_workers}")
    if any(k < 1 for k in ks):
        raise UsageError(f"--k must be at least 1, got {min(ks)}")
    return registry.expand(baselines, ks)


def run_compare(state_dir, baselines: list[str], *, ks: list[int] | None = None, highs_solver: str = "choose",
                time_limit_seconds: float = math.inf, threads: int | None = None, seed: int | None = None,
                pop_client_regex: str | None = None, pop_shared_rows_regex: str | None = None,
                pop_workers: int | None = None, pop_scaling: str = "auto", feasibility_tol: float | None = None,
                pop_executor: str | None = None, ray_address: str | None = None, progress=None) -> dict:
    """Run ``baselines`` on the current round of ``state_dir``; see :func:`solver.rounds.compare`."""
    from solver.rounds.compare_options import given_parameters

    given = given_parameters(ks=ks, highs_solver=highs_solver, threads=threads, seed=seed,
                             pop_client_regex=pop_client_regex, pop_shared_rows_regex=pop_shared_rows_regex,
                             pop_workers=pop_workers, pop_scaling=pop_scaling, pop_executor=pop_executor,
                             ray_address=ray_address)
    defaulted = f"pop-{DEFAULT_POP_K}" if not ks and "pop" in baselines and f"pop-{DEFAULT_POP_K}" not in baselines \
        else None  # POP's K nobody asked for: beyond the model's columns it is a NOT_APPLICABLE row, not exit 2
    ks = list(dict.fromkeys(ks or [DEFAULT_POP_K]))
    names = _check_options(baselines, ks, highs_solver, time_limit_seconds, threads, pop_workers, given,
                           pop_executor, ray_address)
    if seed is not None and seed < 0:  # numpy's generator refuses it deep inside POP (was exit 1)
        raise UsageError(f"--seed must be >= 0, got {seed}")
    if feasibility_tol is not None and not (0 < feasibility_tol < math.inf):
        raise UsageError(f"--feasibility-tol must be positive and finite, got {feasibility_tol}")
    store = StateStore(state_dir_or_default(state_dir))
    gen = store.load(with_state=False, read=("solution.parquet", "duals.parquet"))  # copter_point, copter_duals
    problem = gen.problem
    too_many = None
    if defaulted and 0 < problem.n_cols < DEFAULT_POP_K:  # helper-230: chip (2 columns) refused every baseline
        too_many = (f"POP-{DEFAULT_POP_K} (the default --k) needs a part per column at most: round {gen.round}'s "
                    f"model has {problem.n_cols} column{'' if problem.n_cols == 1 else 's'}; give --k "
                    f"{problem.n_cols} or fewer")
    pop_ks = [int(name[4:]) for name in names if name.startswith("pop-") and not (too_many and name == defaulted)]
    if pop_ks and problem.n_cols > 0 and max(pop_ks) > problem.n_cols:
        # a part per column at most: a larger k only allocates per-part arrays (--k 1e8 on 32 columns: 18 GB,
        # killed; 1e20: OverflowError, exit 1); a model without columns makes the POP rows NOT_APPLICABLE
        big = max(pop_ks)
        said = f"--k {big}" if big in ks and any(b == "pop" for b in baselines) else f"--baseline pop-{big}"
        raise UsageError(f"{said} is more than the {problem.n_cols} columns of round {gen.round}'s "
                         f"model; choose at most {problem.n_cols}")
    if gen.report.get("status") is None:
        raise StateError(f"round {gen.round} has no solved report to compare against", file=str(store.root))
    tol = feasibility_tol if feasibility_tol is not None else _state_tol(store)
    stored = store.config().get("partition") or {}  # a partitioned state's grouping is POP's default too
    pop_client_regex = stored.get("client_regex") if pop_client_regex is None else pop_client_regex
    pop_shared_rows_regex = stored.get("shared_rows_regex") if pop_shared_rows_regex is None else pop_shared_rows_regex
    executor, address = pop_executor_of(store, names, pop_executor, ray_address, pop_workers)
    copter = copter_row(gen, problem, tol)
    prices = None if problem.is_mip else copter_duals(gen, problem)  # what a baseline's row violations buy
    ctx = registry.BaselineContext(round=gen.round, time_limit_seconds=time_limit_seconds,
                                   highs_solver=highs_solver, threads=threads, seed=seed,
                                   pop_client_regex=pop_client_regex, pop_shared_rows_regex=pop_shared_rows_regex,
                                   pop_scaling=pop_scaling, pop_workers=pop_workers, pop_executor=executor,
                                   ray_address=address, bases=StateBases(store, gen))
    out = []
    for name in names:
        if progress:
            progress(name)
        try:
            if too_many and name == defaulted:
                raise NotApplicableError(too_many)
            res = registry.get(name).run(problem, ctx)
        except NotApplicableError as err:  # e.g. POP without client names: a marked row, the others still run
            out.append(not_applicable_row(name, str(err)))
            continue
        except PartWorkerError as err:  # no row, no log entry: the state is left as it was
            raise PartWorkerError(f"baseline {name} failed: {err} (executor {executor}); nothing was added to "
                                  "the round log", err.part) from err
        out.append({**res.summary(), **feasibility(problem, res.x, tol, prices=prices),
                    "_scale": objective_scale(problem.cost, res.x),
                    "_rounding": _rounding(problem, res.x)})
    _derive(copter, out, problem.sense, tol)
    result = {"round": gen.round, "n_cols": problem.n_cols, "n_rows": problem.n_rows, "nnz": problem.nnz,
              "feasibility_tol": tol, "feasibility_ruler": feasibility_ruler(problem),
              "common_feasibility_tol": None if problem.is_mip else COMMON_TOL, "copter": copter,
              "baselines": out}
    if gen.warning:  # CURRENT was unusable: the newest complete generation was compared instead
        result["warnings"] = [gen.warning]
    if ctx.bases.warnings:  # highs-warm's basis could not be kept (a read-only state)
        result.setdefault("warnings", []).extend(ctx.bases.warnings)
    if missing := store.config_missing():  # its tolerance and grouping were the defaults
        result.setdefault("warnings", []).append(missing)
    _log(store, gen, result)
    return result


def pop_executor_of(store: StateStore, names: list[str], executor: str | None, ray_address: str | None,
                    workers: int | None) -> tuple[str, str | None]:
    """(executor, Ray address) of POP's parts: ``executor`` when given, else the state's partition executor
    when it is partitioned (config.json ``partition`` with k > 1, its ``ray_address`` too), else
    ``process``; ``workers == 0`` means ``inline``.

    Raises:
        UsageError: an unknown executor, or ``ray`` without Ray installed (checked when ``executor`` is
            given or a POP row will run), naming the ``ray`` extra; ``workers == 0`` with another
            executor than ``inline``; ``ray_address`` given while no ``executor`` is and the state's executor
            (``process`` for a monolithic state) is not ``ray``, naming it
            (:func:`solver.rounds.compare_options.ray_address_off_ray`; a given executor is that module's
            check, made before the state is read); a ``$RAY_ADDRESS`` not of a Ray address's form when POP's
            parts will join it (``ray``, no address given or stored, Ray not yet initialised here).
        StateError: a POP row will run and the state's ``partition.executor`` or ``partition.ray_address`` is
            damaged (:func:`solver.rounds.partitioned.check_stored_for_pop`: exit 3 naming config.json and the
            key; the address was blamed on ``--ray-address`` when POP's row started, after the rows before it).
    """
    from solver.partition.executor import (
        check_executor,
        check_stored_executor,
        ray_address_target,
        workers_ready,
    )
    from solver.rounds.compare_options import ray_address_off_ray

    part = store.config().get("partition")
    stored = part if isinstance(part, dict) and isinstance(part.get("k"), int) and part["k"] > 1 else {}
    pop = any(n.startswith("pop-") for n in names)
    if pop:  # the values read below: a damaged one names config.json, before any row runs
        from solver.rounds.partitioned import check_stored_for_pop

        check_stored_for_pop(stored, store.root / "config.json")
    if workers == 0:
        if executor not in (None, "inline"):
            raise UsageError(f"--pop-workers 0 runs POP's parts in this process: it contradicts --executor {executor}")
        executor = "inline"
    chosen = executor or stored.get("executor") or "process"
    if executor is None and pop:
        check_stored_executor(chosen, store.root / "config.json")  # the state's: its error names the state
    elif executor is not None:
        check_executor(chosen)
    if ray_address is not None and executor is None and chosen in ("process", "inline"):
        source = (f"the executor {store.root} stored (partition.executor {chosen!r}, chosen or defaulted at copter init)"
                  if stored else f"process, the default for {store.root}, a monolithic state")
        raise UsageError(ray_address_off_ray(source))
    address = ray_address or stored.get("ray_address")
    if pop and chosen == "ray" and not address and not workers_ready("ray", 1):
        ray_address_target(os.environ.get("RAY_ADDRESS"))  # what Ray will join: its form before any row runs
    return chosen, address


NOT_APPLICABLE = "NOT_APPLICABLE"
DEFAULT_POP_K = 4  #: POP's number of parts when ``--k`` is not given
"""Status of a compare row whose baseline does not apply to the model (no objective, no seconds)."""


def not_applicable_row(name: str, message: str) -> dict:
    """The compare row of baseline ``name`` that does not apply to this model: status ``NOT_APPLICABLE``,
    objective/seconds None and ``message`` saying why (e.g. how to pass --pop-client-regex)."""
    return {"name": name, "status": NOT_APPLICABLE, "objective": None, "seconds": None, "hit_limit": False,
            "message": message, **feasibility(None, None, math.nan)}


def _state_tol(store: StateStore) -> float:
    """The solve tolerance ``init`` stored in config.json (``Settings().tol`` when absent or unusable)."""
    from solver.model.settings import Settings

    tol = (store.config().get("settings") or {}).get("tol")
    return float(tol) if isinstance(tol, int | float) and 0 < tol < math.inf else Settings().tol


def _log(store: StateStore, gen, result: dict) -> None:
    """Append the rows to the round log's compare table (``solver.rounds.log.log_compare``) under the writer
    lock; when another writer holds it, the lock cannot be taken (a read-only state: EnvironmentFaultError) or
    the write fails, the result only gets a warning (the comparison itself stands)."""
    from solver.model.errors import EnvironmentFaultError, StateBusyError, StateError
    from solver.rounds.log import log_compare

    try:
        with store.lock():
            log_compare(store, result, gen.manifest.get("id"))
    except (StateBusyError, EnvironmentFaultError, OSError, ValueError, StateError) as err:  # ValueError: pyarrow's
        # a read-only state (EROFS, EACCES: the lock file cannot even be created) is compared as a busy one
        result.setdefault("warnings", []).append(f"compare results not added to the round log: {err}")
    if store.recovered:  # the lock undid a killed step's commit (formats.checkpoint.StateStore.recover_commit)
        result.setdefault("warnings", []).extend(store.recovery_warnings())


def _ratio(seconds, base) -> float:
    if seconds is None or not base or not np.isfinite(base) or base <= 0:
        return math.nan
    return float(seconds) / base


def _derive(copter: dict, rows: list[dict], sense: int, tol: float = 0.0) -> None:
    """Blank the objective of every row that is not OPTIMAL/FEASIBLE (None: an infeasible or limited row's
    point is no allocation to compare) and add ``objective_diff_rel`` (sense * (objective - best) / |best|, a
    best within ``tol`` x the smaller ``_scale`` (``objective_scale``) of its point and the row's of 0 counting as 0 (every row carries
    ``_scale`` and loses it here), :func:`solver.integer.gap.objective_diff_rel`; the best over the OPTIMAL/FEASIBLE rows whose ``violates_tol`` is not True; >= 0 except
    for a violating row; None for the other rows), ``time_ratio`` (seconds / copter's seconds) and, for POP
    rows, ``pop_time_ratio`` (pop_seconds / copter's seconds). Two objectives within float64's rounding of c'x at
    their two points (each row's internal ``_rounding``, :func:`solver.integer.gap.objective_rounding`; 0 when
    absent) are equal, a diff of 0.0."""
    everyone = [copter, *rows]
    for r in everyone:
        obj = r.get("objective")
        if r.get("status") not in SUCCESS or obj is None or not np.isfinite(obj):
            r["objective"] = None
    scales = [r.pop("_scale", 0.0) for r in everyone]  # each row's objective_scale (internal, not reported)
    roundings = [r.pop("_rounding", 0.0) for r in everyone]  # and its objective_rounding
    _rank_feasible_first(copter, everyone, sense)
    good = [(r["objective"], g, e) for r, g, e in zip(everyone, scales, roundings, strict=True)
            if r["objective"] is not None and r.get("violates_tol") is not True
            and not r.get("ranked_below_feasible")]
    best, scale, best_rounding = (min(good) if sense == 1 else max(good)) if good else (None, 0.0, 0.0)
    base = copter.get("seconds")
    for r, own, own_rounding in zip(everyone, scales, roundings, strict=True):
        obj = r["objective"]
        # the zero width is the smaller of the two points' (``own`` 0.0: no point to measure): min -x + 0.99999 w,
        # x - w <= 0, x, w <= 1e12 has HiGHS's best -1e7 at x = w = 1e12, whose column-wise width 2e8 read a
        # copter point at 0 (x = w = 0, width 2e-4) as '0.0' apart; both objectives must be 0 to within it
        width = min(scale, own) if own > 0.0 else scale
        r["objective_diff_rel"] = (None if obj is None or best is None
                                   else objective_diff_rel(sense, obj, best, tol * width,
                                                           best_rounding + own_rounding))
        r["time_ratio"] = _ratio(r.get("seconds"), base)
        if "pop_seconds" in r:
            r["pop_time_ratio"] = _ratio(r["pop_seconds"], base)


def _rank_feasible_first(copter: dict, everyone: list[dict], sense: int) -> None:
    """Set each row's ``ranked_below_feasible``: True for an OPTIMAL/FEASIBLE LP row within its contract (no
    ``violates_tol``) but not ``feasible_at_common_tol`` whose objective beats the best row that is, by no more
    than what its row violations buy (``violation_buys`` by copter's duals, plus copter's absolute duality gap,
    the duals' own slack; unknown buys count as enough): its lead may be the violation's, so the feasible point
    ranks above it. Such a row also gets ``lead_over_feasible`` (sense * (feasible best - objective), objective
    units, > 0), ``lead_allowance`` (buys + gap, objective units; inf when unknown) and ``feasible_best`` (that
    row's name). A lead larger than that is the point's own (e.g. over
    POP's exact but partitioned point) and the row keeps its rank, unless the feasible best is HiGHS's proven LP
    optimum, which no feasible point beats (``feasible_best_proven``). Pops the internal ``_gap_abs``."""
    gap = copter.get("_gap_abs")
    for r in everyone:
        r.pop("_gap_abs", None)
        r["ranked_below_feasible"] = False
    ok = [r for r in everyone if r["objective"] is not None and r.get("violates_tol") is not True]
    strict = [r for r in ok if r.get("feasible_at_common_tol") is True]
    if not strict:
        return
    top = min(strict, key=lambda r: sense * r["objective"])
    for r in ok:
        if r.get("feasible_at_common_tol") is not False:
            continue
        lead = sense * (top["objective"] - r["objective"])
        buys = r.get("violation_buys")
        slack = (buys + (gap or 0.0)) if buys is not None and math.isfinite(buys) else math.inf
        # HiGHS's OPTIMAL LP point is the optimum (to its 1e-7 tolerances): no feasible point beats it, so a lead over
        # it is the violations' whatever the duals price them at (helper-187: e226's warm OPTIMAL 0.27% past it, the
        # violations priced at a third of that by duals far from the optimum's)
        if lead > 0.0 and (lead <= slack or _proven_optimum(top)):
            r.update(ranked_below_feasible=True, lead_over_feasible=lead, lead_allowance=slack,
                     feasible_best=top["name"], feasible_best_proven=_proven_optimum(top))


def _proven_optimum(row: dict) -> bool:
    """A compare row holding HiGHS's proven optimum of the LP (``highs_status`` "Optimal", exact): POP's rows and
    copter's have no ``highs_status``. Used for LP rows only (:func:`_rank_feasible_first` looks at the rows that
    are not ``feasible_at_common_tol``, which a MILP's exact points always are)."""
    return row.get("highs_status") == "Optimal" and row.get("status") == "OPTIMAL"
