"""POP: partitioned optimization (Narayanan et al., "Solving Large-Scale Granular Resource Allocation
Problems Efficiently with POP", SOSP 2021).

Clients are split uniformly at random into k groups; group p's sub-problem has the group's columns, the
rows owned by its clients, and every shared row restricted to its columns with its finite bounds scaled
by the part's share. The shares of a row sum to 1 over the parts, so parts that satisfy their rows give a
combined point that satisfies the full row. Shares (``shared_scaling``):

- ``"uniform"``: 1/k for every shared row (POP's "1/k of every resource").
- ``"auto"`` (default): 1/k for one-sided rows (capacities ``<= cap`` or ``>= need``); for a shared row
  with two finite bounds (a band ``lo <= a'x <= hi`` or an equality) the part's share of the row's
  coefficient mass ``sum |a_ij|`` over its columns. For load balancing's band ``L - eps <= sum_j load_j
  r_ij <= L + eps`` that is the part's share of the total load: the band is re-centred on the part's
  own mean load, as POP does when it splits shards. With 1/k instead, a part whose random shards carry
  more or less than 1/k of the load (Zipf loads: almost always) has an empty band and is infeasible
  (measured on ``bench_lb.py``).

Parts are solved independently by HiGHS, in parallel on the executor of partitioned rounds
(:func:`solver.partition.executor.map_parts`: ``process`` worker processes, ``ray`` tasks or ``inline``, with
the same retry and fault injection), and their points concatenated into one full-length x, whose objective
and violations are evaluated on the FULL problem. The executor changes where parts run, not the result.

Runtime is reported two ways: ``seconds`` is the wall time of the whole call on this machine (with as
many worker processes as ``workers``), and ``extra["pop_seconds"]`` is POP's own measure, setup (split +
sub-problem build + combine) plus the maximum over the parts' solve times (measured in the workers), i.e.
the time with k cores.
Client grouping: :mod:`solver.partition.clients`; the split itself: :mod:`solver.partition.split`.
"""

from __future__ import annotations

import math
import time
from collections import Counter

import numpy as np

from solver.baselines.highs import check_solver, solve_highs
from solver.baselines.result import BaselineResult, make_result, point_quality
from solver.model.errors import NotApplicableError, UsageError
from solver.model.problem import Problem
from solver.model.status import Status
from solver.partition.clients import ClientGrouping, group_clients
from solver.partition.executor import check_executor, map_parts
from solver.partition.split import (
    build_part_problems,
    combine_points,
    pop_shares,
    split_clients,
)

FEASIBLE_REL_TOL = 1e-6  #: combined point counts as feasible when row/bound violations (rel.) are below this

# worst first: the combined status is the worst part's status
_SEVERITY = [Status.PRIMAL_INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED, Status.DUAL_INFEASIBLE,
             Status.NUMERICAL_ERROR, Status.NO_INTEGER_SOLUTION, Status.TIME_LIMIT, Status.ITERATION_LIMIT,
             Status.FEASIBLE, Status.OPTIMAL]


def build_parts(problem: Problem, grouping: ClientGrouping, col_part: np.ndarray,
                k: int, shared_scaling: str = "auto") -> list[tuple[np.ndarray, Problem]]:
    """The k POP sub-problems: ``[(cols, sub_problem), ...]`` with ``cols`` the (n_p,) full-problem columns.

    POP's shares (:func:`solver.partition.split.pop_shares`, module docstring) on the split of
    :func:`solver.partition.split.build_part_problems`. ``col_part`` is (n,) with -1 for global columns.

    Raises:
        UsageError: unknown ``shared_scaling``.
    """
    shares = pop_shares(problem, grouping, col_part, k, shared_scaling)
    return [(part.cols, part.problem)
            for part in build_part_problems(problem, grouping, col_part, k, shares, name="pop")]


def combine_parts(problem: Problem, parts: list[tuple[np.ndarray, Problem]], points: list[np.ndarray],
                  global_cols: np.ndarray) -> np.ndarray:
    """Concatenate the parts' (n_p,) points into one (n,) point (:func:`solver.partition.split.combine_points`)."""
    return combine_points(problem, parts, points, global_cols)[0]


def _solve_part(sub: Problem, solver: str, time_limit_seconds: float, threads: int | None,
                kkt_tolerance: float) -> tuple[int, np.ndarray | None, float, bool, str]:
    """Worker: solve one part with HiGHS; returns (status value, x, seconds, hit_limit, message)."""
    # in-process limit (callback): a child process per part would cost a process start per part; a part
    # may therefore overrun its limit in HiGHS's MIP presolve (see solver/baselines/guard.py)
    r = solve_highs(sub, solver=solver, time_limit_seconds=time_limit_seconds, threads=threads,
                    kkt_tolerance=kkt_tolerance, name=sub.name, hard_limit=False)
    return int(r.status), r.x, r.seconds, r.hit_limit, r.message


def solve_pop(problem: Problem, *, k: int = 4, seed: int | None = 0, solver: str = "choose",
              time_limit_seconds: float = math.inf, threads_per_part: int | None = 1,
              kkt_tolerance: float = 1e-4, client_regex: str | None = None,
              shared_rows_regex: str | None = None, shared_scaling: str = "auto",
              executor: str = "process", workers: int | None = None, ray_address: str | None = None,
              grouping: ClientGrouping | None = None, name: str | None = None) -> BaselineResult:
    """Solve ``problem`` with POP-k: random client split, 1/k of shared resources, HiGHS per part.

    Args:
        problem: the full LP/MILP (n columns).
        k: number of parts (>= 1; more parts than clients leaves some parts empty).
        seed: seed of the random split (None = fresh randomness).
        solver, kkt_tolerance: HiGHS solver per part (see :func:`solver.baselines.highs.solve_highs`).
        time_limit_seconds: time budget of every part, in seconds.
        threads_per_part: HiGHS threads inside each worker (1: parts run side by side).
        client_regex, shared_rows_regex: client grouping overrides (:mod:`solver.baselines.clients`).
        shared_scaling: ``auto`` or ``uniform`` share of shared rows per part (module docstring).
        executor: where the parts run, ``process`` (a pool of ``workers`` processes kept across calls),
            ``ray`` (one Ray task per part, joining ``ray_address`` / ``$RAY_ADDRESS`` or a local cluster)
            or ``inline`` (one after another in this process); :mod:`solver.partition.executor`.
        workers: ``process`` pool size (default: the CPU count); 0 means ``inline`` whatever ``executor``.
        ray_address: the Ray cluster of ``executor="ray"``.
        grouping: a precomputed grouping (skips name parsing).
        name: result name (default ``pop-{k}``).
    Returns:
        BaselineResult with the concatenated (n,) point; status FEASIBLE when every part was solved and
        the combined point is feasible on the full problem (it is not the full problem's optimum), else
        the worst part status. ``extra``: ``pop_seconds``, ``setup_seconds``, ``max_part_seconds``,
        ``sum_part_seconds``, ``k``, ``seed``, ``n_clients``, ``n_shared_rows``, ``part_statuses``,
        ``executor`` (the one that ran the parts).
    Raises:
        UsageError: for k < 1, an unknown solver, scaling or executor, ``ray`` without Ray installed, or an
            invalid regex. NotApplicableError (a UsageError): the model has no column, or no clients to split
            (no ``<client>/`` names, no regex given).
        PartWorkerError: a part's worker died on its retry too (no result).
    """
    if k < 1:
        raise UsageError(f"POP needs k >= 1 parts, got {k}")
    check_solver(solver)
    executor = "inline" if workers == 0 else executor
    check_executor(executor)
    name = name or f"pop-{k}"
    t0 = time.perf_counter()
    if problem.n_cols == 0:  # e.g. a partitioned state's round after a delta that dropped every client
        raise NotApplicableError("POP has nothing to split: the model has no column")
    if grouping is None:
        grouping = group_clients(problem, client_regex=client_regex, shared_rows_regex=shared_rows_regex)
    if grouping.n_clients == 0 and client_regex is not None:  # helper-185: it said "give --pop-client-regex"
        from solver.partition.clients import POP_OPTIONS, no_client_matched

        raise NotApplicableError(no_client_matched(client_regex, problem.col_names, POP_OPTIONS[0], "POP"))
    if grouping.n_clients == 0:
        raise NotApplicableError("POP found no clients: variable names carry no '<client>/' prefix; say how to group "
                         "columns with --pop-client-regex (and shared rows with --pop-shared-rows-regex)")
    col_part = np.full(problem.n_cols, -1, dtype=np.int64)
    own = grouping.col_client >= 0
    col_part[own] = split_clients(grouping.n_clients, k, seed)[grouping.col_client[own]]
    parts = [(cols, sub) for cols, sub in build_parts(problem, grouping, col_part, k, shared_scaling)
             if (~grouping.global_cols[cols]).any() or k == 1]
    setup = time.perf_counter() - t0
    outcomes = map_parts(_solve_part, [(sub, solver, time_limit_seconds, threads_per_part, kkt_tolerance)
                                       for _, sub in parts], executor, workers, ray_address)
    t1 = time.perf_counter()
    statuses = [Status(o[0]) for o in outcomes]
    missing = sum(o[1] is None for o in outcomes)
    point = None if missing else combine_parts(problem, parts, [o[1] for o in outcomes], grouping.global_cols)
    combine = time.perf_counter() - t1
    part_seconds = [o[2] for o in outcomes] or [0.0]
    hit_limit = any(o[3] for o in outcomes)
    status, message = _verdict(problem, k, len(parts), statuses, point, missing)
    extra = {"k": k, "seed": seed, "shared_scaling": shared_scaling, "n_clients": grouping.n_clients,
             "n_shared_rows": int(grouping.shared.sum()), "setup_seconds": setup + combine,
             "max_part_seconds": max(part_seconds), "sum_part_seconds": float(sum(part_seconds)),
             "pop_seconds": setup + combine + max(part_seconds),
             "part_statuses": dict(Counter(s.name for s in statuses)), "executor": executor}
    message += f"; POP time (setup + slowest part) {extra['pop_seconds']:.3f} s; parts on executor {executor}"
    return make_result(name, problem, status, point, time.perf_counter() - t0, hit_limit=hit_limit,
                       message=message, extra=extra)


def _verdict(problem: Problem, k: int, n_parts: int, statuses: list, point, missing: int) -> tuple[Status, str]:
    """(status, message) of POP-k: FEASIBLE when every part was solved and the combined (n,) ``point`` holds
    on the full problem (NUMERICAL_ERROR when it does not), else the worst part status."""
    worst = min(statuses, key=_SEVERITY.index) if statuses else Status.OPTIMAL
    if worst in (Status.OPTIMAL, Status.FEASIBLE) and point is not None:
        q = point_quality(problem, point)
        feasible = max(q.max_row_violation_rel, q.max_bound_violation) <= FEASIBLE_REL_TOL
        status = Status.FEASIBLE if feasible else Status.NUMERICAL_ERROR
        empty = (f" (the other {k - n_parts} of the {k} parts have no client: more parts than clients)"
                 if n_parts < k else "")
        message = (f"POP-{k}: {n_parts} parts solved{empty}, combined point feasible on the full problem"
                   if feasible else f"POP-{k}: parts solved{empty} but the combined point violates the full problem")
        return status, message
    return worst, f"POP-{k}: a part ended {worst.name}" + (f"; {missing} part(s) without a point" if missing else "")
