"""What ``copter compare`` does, as a library function (the command itself only parses options and prints).

Loads the current round of a state directory (``formats.checkpoint``), evaluates copter's own saved point
on the same ruler as the baselines (``solver.baselines.result.point_quality``), runs each named baseline
and derives the relative objective difference to the best and the time ratio baseline / copter.

Row fields (the same for copter and every baseline; the bench scripts' rows use the same names):

- ``status``, ``objective`` (null unless the status is OPTIMAL or FEASIBLE: an infeasible, limited or
  failed row has no objective to compare), ``objective_diff_rel`` = sense * (objective - best) /
  max(1, |best|) over the OPTIMAL/FEASIBLE rows (0 = best, > 0 = worse; null for the other rows, which
  never count toward the best);
- ``seconds``: wall seconds of the method's work on this round's problem on this machine: copter's
  apply + solve + integerize phases (its report; load and save are I/O no baseline does), HiGHS's model
  hand-over + solve, POP's whole call (split, worker processes, parts, combine); ``time_ratio`` =
  seconds / copter's seconds;
- copter only: ``solve_seconds`` (solve + integerize) and ``round_seconds`` (the round's total with I/O);
- POP only: ``setup_seconds`` (split + sub-problems + combine), ``max_part_seconds`` (slowest part),
  ``sum_part_seconds``, and ``pop_seconds`` = setup_seconds + max_part_seconds, POP's own measure (the time
  with one core per part), with ``pop_time_ratio`` = pop_seconds / copter's seconds.

The ``highs-warm`` baseline keeps its simplex basis by name in ``STATE/baselines/highs-warm/``
(``round-NNNNNN.parquet``, the newest 3 kept). To time round r hot-started from round r-1 it uses the
stored basis of round r-1; when there is none but generation r-1 is still kept, that round is first
solved cold (untimed) to produce it.
"""

from __future__ import annotations

import math
import os
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from formats.checkpoint import StateStore
from solver.baselines.highs import check_solver, solve_highs
from solver.baselines.highs_warm import StoredBasis, solve_from_basis_bounded
from solver.baselines.pop import solve_pop
from solver.baselines.result import BaselineResult, point_quality
from solver.model.errors import StateError, UsageError
from solver.model.problem import Problem

BASELINES = ("highs", "highs-warm", "pop")
BASIS_DIR = Path("baselines") / "highs-warm"
KEEP_BASES = 3
SUCCESS = ("OPTIMAL", "FEASIBLE")


def _basis_path(root: Path, round_: int) -> Path:
    return root / BASIS_DIR / f"round-{round_:06d}.parquet"


def save_basis(root: Path, basis: StoredBasis) -> None:
    """Write ``basis`` atomically (temp file + os.replace) and keep only the newest :data:`KEEP_BASES`."""
    folder = root / BASIS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    final = _basis_path(root, basis.round)
    tmp = folder / f".tmp-{uuid.uuid4().hex}.parquet"
    pq.write_table(basis.to_table(), tmp)
    os.replace(tmp, final)
    for old in sorted(folder.glob("round-*.parquet"))[:-KEEP_BASES]:
        old.unlink(missing_ok=True)


def load_basis(root: Path, round_: int) -> StoredBasis | None:
    """The stored basis of ``round_``, or None when absent or unreadable."""
    path = _basis_path(root, round_)
    try:
        return StoredBasis.from_table(pq.read_table(path))
    except (OSError, pa.ArrowException, KeyError, ValueError):
        return None


def copter_point(gen, problem: Problem) -> np.ndarray | None:
    """copter's saved (n,) point of this round (solution.parquet), aligned to ``problem`` by name."""
    rel = gen.report.get("solution_path")
    path = (gen.path.parent / rel) if rel else (gen.path / "solution.parquet")
    try:
        t = pq.read_table(path, columns=["name", "value"])
    except (OSError, pa.ArrowException):
        return None
    names = t.column("name").to_numpy(zero_copy_only=False)
    pos = pd.Index(names).get_indexer(problem.col_names)
    if (pos < 0).any():
        return None
    return t.column("value").to_numpy()[pos]


def copter_row(gen, problem: Problem) -> dict:
    """copter's own figures for this round: status and objective from its report, violations recomputed."""
    rep = gen.report
    q = point_quality(problem, copter_point(gen, problem))
    secs = rep.get("seconds") or {}
    solve_s = float(secs.get("solve", math.nan)) + float(secs.get("integerize", 0.0) or 0.0)
    return {"name": "copter", "status": rep.get("status"), "objective": rep.get("objective", q.objective),
            "seconds": float(secs.get("apply", 0.0) or 0.0) + solve_s, "solve_seconds": solve_s,
            "round_seconds": secs.get("total"), "max_row_violation": q.max_row_violation,
            "max_row_violation_rel": q.max_row_violation_rel, "max_bound_violation": q.max_bound_violation,
            "integrality_violation": q.integrality_violation, "hit_limit": rep.get("status") == "TIME_LIMIT",
            "warm_started": rep.get("warm_started"), "iterations": rep.get("iterations"),
            "message": rep.get("message", "")}


def _highs_warm(store: StateStore, round_: int, problem: Problem, **kw) -> BaselineResult:
    prev = load_basis(store.root, round_ - 1) if round_ > 0 else None
    note = ""
    if prev is None and round_ > 0 and round_ - 1 in store.generations():
        prev_problem = store.load(round_ - 1, with_state=False).problem
        _, prev = solve_from_basis_bounded(prev_problem, None, round=round_ - 1, **kw)
        if prev is not None:
            save_basis(store.root, prev)
            note = f"; round {round_ - 1} solved cold first (untimed) to get its basis"
    res, basis = solve_from_basis_bounded(problem, prev, round=round_, **kw)
    if basis is not None:
        save_basis(store.root, basis)
    res.message += note
    return res


def run_compare(state_dir, baselines: list[str], *, ks: list[int] | None = None, highs_solver: str = "choose",
                time_limit_seconds: float = math.inf, threads: int | None = None, seed: int | None = None,
                pop_client_regex: str | None = None, pop_shared_rows_regex: str | None = None,
                pop_workers: int | None = None, pop_scaling: str = "auto", progress=None) -> dict:
    """Run ``baselines`` on the current round of ``state_dir``.

    Args:
        state_dir: an initialised state directory.
        baselines: names from :data:`BASELINES` (order kept; duplicates removed).
        ks: POP part counts (one ``pop-k`` row each; default [4]).
        highs_solver: HiGHS solver of ``highs`` and of POP's parts (``choose|simplex|ipm|pdlp|mip``);
            ``highs-warm`` always uses simplex (a basis hot start needs it; MIP for integer problems).
        time_limit_seconds: per-baseline time limit in seconds (POP: per part).
        threads: HiGHS threads for highs/highs-warm (None = HiGHS default).
        seed: POP split seed (default: the round number).
        pop_client_regex, pop_shared_rows_regex: POP grouping overrides.
        pop_workers: POP worker processes (default: CPU count).
        pop_scaling: POP's share of shared rows per part, ``auto`` or ``uniform`` (solver.baselines.pop).
        progress: optional callable(str) told which baseline starts.
    Returns:
        ``{"round", "n_cols", "n_rows", "nnz", "copter": {...}, "baselines": [{...}, ...]}``; every row
        has name, status, objective, objective_diff_rel, seconds, time_ratio, max_row_violation,
        max_row_violation_rel, max_bound_violation, integrality_violation, hit_limit, message (the
        module docstring defines them; POP rows add the POP time fields).
    Raises:
        UsageError: unknown baseline or solver, k < 1, a time limit <= 0, threads < 1, pop_workers < 0, bad
            regex. StateError: not initialised/damaged.
    """
    names = list(dict.fromkeys(baselines))
    bad = [b for b in names if b not in BASELINES]
    if bad or not names:
        raise UsageError(f"unknown baseline {bad[0] if bad else '(none)'}; choose from {', '.join(BASELINES)}")
    check_solver(highs_solver)
    if not (time_limit_seconds > 0):  # also refuses nan
        raise UsageError(f"--time-limit must be positive seconds, got {time_limit_seconds}")
    if threads is not None and threads < 1:
        raise UsageError(f"--threads must be at least 1, got {threads}")
    if pop_workers is not None and pop_workers < 0:
        raise UsageError(f"--pop-workers must be >= 0 (0: parts in this process), got {pop_workers}")
    ks = list(dict.fromkeys(ks or [4]))
    if any(k < 1 for k in ks):
        raise UsageError(f"--k must be at least 1, got {min(ks)}")
    store = StateStore(state_dir)
    gen = store.load(with_state=False)
    problem = gen.problem
    if gen.report.get("status") is None:
        raise StateError(f"round {gen.round} has no solved report to compare against", file=str(store.root))
    copter = copter_row(gen, problem)
    rows: list[BaselineResult] = []
    for b in names:
        if progress:
            progress(b)
        if b == "highs":
            rows.append(solve_highs(problem, solver=highs_solver, time_limit_seconds=time_limit_seconds,
                                    threads=threads))
        elif b == "highs-warm":
            rows.append(_highs_warm(store, gen.round, problem, solver="simplex",
                                    time_limit_seconds=time_limit_seconds, threads=threads))
        else:
            for k in ks:
                rows.append(solve_pop(problem, k=k, seed=gen.round if seed is None else seed,
                                      solver=highs_solver, time_limit_seconds=time_limit_seconds,
                                      client_regex=pop_client_regex, shared_rows_regex=pop_shared_rows_regex,
                                      shared_scaling=pop_scaling, workers=pop_workers))
    out = [r.summary() for r in rows]
    _derive(copter, out, problem.sense)
    return {"round": gen.round, "n_cols": problem.n_cols, "n_rows": problem.n_rows, "nnz": problem.nnz,
            "copter": copter, "baselines": out}


def _ratio(seconds, base) -> float:
    if seconds is None or not base or not np.isfinite(base) or base <= 0:
        return math.nan
    return float(seconds) / base


def _derive(copter: dict, rows: list[dict], sense: int) -> None:
    """Blank the objective of every row that is not OPTIMAL/FEASIBLE (None: an infeasible or limited row's
    point is no allocation to compare) and add ``objective_diff_rel`` (sense * (objective - best) /
    max(1, |best|) over the OPTIMAL/FEASIBLE rows, >= 0; None for the other rows), ``time_ratio`` (seconds /
    copter's seconds) and, for POP rows, ``pop_time_ratio`` (pop_seconds / copter's seconds)."""
    everyone = [copter, *rows]
    for r in everyone:
        obj = r.get("objective")
        if r.get("status") not in SUCCESS or obj is None or not np.isfinite(obj):
            r["objective"] = None
    good = [r["objective"] for r in everyone if r["objective"] is not None]
    best = (min(good) if sense == 1 else max(good)) if good else None
    base = copter.get("seconds")
    for r in everyone:
        obj = r["objective"]
        r["objective_diff_rel"] = (None if obj is None or best is None
                                   else sense * (obj - best) / max(1.0, abs(best)) + 0.0)
        r["time_ratio"] = _ratio(r.get("seconds"), base)
        if "pop_seconds" in r:
            r["pop_time_ratio"] = _ratio(r["pop_seconds"], base)
