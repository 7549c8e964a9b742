"""The one table of baselines: name -> description + a callable with one signature.

Both ``copter compare`` (:mod:`solver.rounds.comparison`) and the domain benchmarks (``bench/common.py``)
look baselines up here instead of keeping their own if/elif chains.

Every entry is called as ``run(problem, ctx) -> BaselineResult``: ``problem`` is the round's full
LP/MILP (n columns, m rows), ``ctx`` a :class:`BaselineContext` with the round number, the limits and
the per-caller options. A caller that runs several rounds keeps one ``ctx.memory`` dict per baseline
(what a hot-started baseline carries from one round to the next lives there).

Names: ``highs`` (HiGHS cold, ``ctx.highs_solver``), ``highs-simplex`` / ``highs-ipm`` / ``highs-pdlp``
(HiGHS cold with that solver fixed), ``highs-warm`` (HiGHS simplex hot-started from the previous round)
and ``pop-<k>`` (POP with k parts, Narayanan et al., SOSP'21); ``pop`` alone is the POP family, which a
caller expands into one ``pop-<k>`` per part count (:func:`expand`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from solver.model.errors import UsageError
from solver.model.problem import Problem


class BasisKeeper(Protocol):
    """Where ``highs-warm`` finds the previous round's basis when the caller keeps bases outside memory
    (``copter compare`` keeps them in the state directory, see :mod:`solver.rounds.basis_store`)."""

    def load(self, round_: int) -> Any | None:
        """The stored basis (``solver.baselines.highs_warm.StoredBasis``) of ``round_``, or None."""

    def save(self, basis: Any) -> None:
        """Keep ``basis`` (its ``round`` attribute says which round it belongs to)."""

    def problem(self, round_: int) -> Problem | None:
        """The problem of ``round_`` when it is still available (to solve it cold first), else None."""


@dataclass
class BaselineContext:
    """Everything a baseline needs besides the problem.

    Attributes:
        round: round number (POP's default split seed; the basis of ``round - 1`` is highs-warm's start).
        time_limit_seconds: per-baseline time limit in seconds (POP: per part).
        highs_solver: HiGHS solver of ``highs`` and of POP's parts (``choose|simplex|ipm|pdlp|mip``).
        threads: HiGHS threads for highs/highs-warm (None = HiGHS default).
        seed: POP split seed (None = ``round``).
        pop_client_regex, pop_shared_rows_regex: POP grouping overrides (:mod:`solver.partition.clients`).
        pop_scaling: POP's share of shared rows per part, ``auto`` or ``uniform``.
        pop_workers: POP's ``process`` pool size (None = CPU count; 0 = the parts in this process).
        pop_executor: where POP's parts run: ``process`` (a pool kept across rounds), ``ray`` or ``inline``
            (:mod:`solver.partition.executor`, the executor of partitioned rounds).
        ray_address: the Ray cluster of ``pop_executor="ray"`` (None: ``$RAY_ADDRESS``, else a local one).
        warm_cold_solver: HiGHS solver of highs-warm's first, cold round when it keeps an instance in memory.
        info: the ``solver.differential.ApplyInfo`` that produced ``problem`` from the previous round (lets
            the in-memory highs-warm edit its instance by index instead of by name), or None.
        bases: a :class:`BasisKeeper` (highs-warm then starts from the stored basis of ``round - 1``), or
            None (highs-warm keeps its HiGHS instance / MIP incumbent in ``memory``).
        memory: per-baseline state carried across rounds by the caller (one dict per baseline name).
    """

    round: int = 0
    time_limit_seconds: float = math.inf
    highs_solver: str = "choose"
    threads: int | None = None
    seed: int | None = None
    pop_client_regex: str | None = None
    pop_shared_rows_regex: str | None = None
    pop_scaling: str = "auto"
    pop_workers: int | None = None
    pop_executor: str = "process"
    ray_address: str | None = None
    warm_cold_solver: str | None = None
    info: Any = None
    bases: BasisKeeper | None = None
    memory: dict = field(default_factory=dict)


Run = Callable[[Problem, BaselineContext], Any]


@dataclass(frozen=True)
class Baseline:
    """One registry entry: ``run(problem, ctx)`` returns a ``solver.baselines.result.BaselineResult``."""

    name: str
    description: str
    run: Run


def _highs(solver: str | None) -> Run:
    def run(problem: Problem, ctx: BaselineContext):
        from solver.baselines.highs import solve_highs

        return solve_highs(problem, solver=solver or ctx.highs_solver, time_limit_seconds=ctx.time_limit_seconds,
                           threads=ctx.threads, **({"name": f"highs-{solver}"} if solver else {}))
    return run


def _highs_warm_stored(problem: Problem, ctx: BaselineContext):
    """highs-warm from the basis of round - 1 kept by ``ctx.bases``; when there is none but that round's
    problem is still available, it is first solved cold (untimed) to produce the basis."""
    from solver.baselines.highs_warm import solve_from_basis_bounded

    kw = {"solver": "simplex", "time_limit_seconds": ctx.time_limit_seconds, "threads": ctx.threads}
    r, keeper = ctx.round, ctx.bases
    prev = keeper.load(r - 1) if r > 0 else None
    note = ""
    if prev is None and r > 0:
        prev_problem = keeper.problem(r - 1)
        if prev_problem is not None:
            _, prev = solve_from_basis_bounded(prev_problem, None, round=r - 1, **kw)
            if prev is not None:
                keeper.save(prev)
                note = f"; round {r - 1} solved cold first (untimed) to get its basis"
    res, basis = solve_from_basis_bounded(problem, prev, round=r, **kw)
    if basis is not None:
        keeper.save(basis)
    res.message += note
    return res


def _highs_warm(problem: Problem, ctx: BaselineContext):
    """HiGHS simplex hot-started from the previous round: from ``ctx.bases`` when given; else an LP edits
    one HiGHS instance kept in ``ctx.memory`` (its first round solved by ``ctx.warm_cold_solver``) and a
    MILP starts HiGHS MIP in a child process from the previous incumbent mapped by name (hard wall limit,
    see :mod:`solver.baselines.guard`)."""
    from solver.baselines.highs_warm import WarmHighs, solve_from_basis_bounded

    if ctx.bases is not None:
        return _highs_warm_stored(problem, ctx)
    mem = ctx.memory
    if problem.is_mip:
        res, mem["mip_start"] = solve_from_basis_bounded(problem, mem.get("mip_start"), solver="simplex",
                                                         time_limit_seconds=ctx.time_limit_seconds,
                                                         threads=ctx.threads, round=ctx.round)
        return res
    if "instance" not in mem:
        mem["instance"] = WarmHighs(solver="simplex", cold_solver=ctx.warm_cold_solver, threads=ctx.threads)
    return mem["instance"].solve(problem, time_limit_seconds=ctx.time_limit_seconds, info=ctx.info)


def _pop(k: int) -> Run:
    def run(problem: Problem, ctx: BaselineContext):
        from solver.baselines.pop import solve_pop

        return solve_pop(problem, k=k, seed=ctx.round if ctx.seed is None else ctx.seed, solver=ctx.highs_solver,
                         time_limit_seconds=ctx.time_limit_seconds, client_regex=ctx.pop_client_regex,
                         shared_rows_regex=ctx.pop_shared_rows_regex, shared_scaling=ctx.pop_scaling,
                         workers=ctx.pop_workers, executor=ctx.pop_executor, ray_address=ctx.ray_address)
    return run


_HIGHS_VARIANTS = {"simplex": "dual simplex", "ipm": "interior point (plus crossover)",
                   "pdlp": "its PDLP first-order solver"}
REGISTRY: dict[str, Baseline] = {
    "highs": Baseline("highs", "HiGHS cold, fresh instance, the solver of --highs-solver (MIP for integer "
                               "problems)", _highs(None)),
    **{f"highs-{s}": Baseline(f"highs-{s}", f"HiGHS cold with {what}", _highs(s))
       for s, what in _HIGHS_VARIANTS.items()},
    "highs-warm": Baseline("highs-warm", "HiGHS simplex hot-started from the previous round's basis (MILP: "
                                         "from its incumbent)", _highs_warm),
}
POP_DESCRIPTION = ("POP (SOSP'21): random client split into k parts, 1/k of shared rows each, HiGHS per part; "
                   "one row per part count (pop-<k>)")
_POP_K = re.compile(r"pop-([0-9]+)", re.ASCII)  # ASCII digits, as --k reads them: "pop-٢" is no POP row


def names() -> tuple[str, ...]:
    """The registered names; ``pop`` stands for every ``pop-<k>``."""
    return (*REGISTRY, "pop")


def describe() -> dict[str, str]:
    """name -> one-line description, for help texts."""
    return {**{n: b.description for n, b in REGISTRY.items()}, "pop": POP_DESCRIPTION}


def get(name: str) -> Baseline:
    """The entry called ``name`` (``pop-<k>`` with k >= 1 for POP).

    Raises:
        UsageError: an unknown name, ``pop`` without a part count, or k < 1 (the message lists the names).
    """
    if name in REGISTRY:
        return REGISTRY[name]
    m = _POP_K.fullmatch(name)
    if m:
        k = int(m.group(1))
        if k < 1:
            raise UsageError(f"baseline {name}: POP needs at least 1 part (pop-<k> with k >= 1)")
        return Baseline(name, f"POP with {k} parts", _pop(k))
    raise UsageError(f"unknown baseline {name or '(none)'}; choose from {', '.join(names())}"
                     + (" (pop needs a part count: pop-<k>)" if name == "pop" else ""))


def expand(names_: list[str], ks: list[int]) -> list[str]:
    """Entry names for ``names_`` in order without duplicates, ``pop`` replaced by ``pop-<k>`` per k.

    Raises:
        UsageError: an unknown name (see :func:`get`) or a k < 1.
    """
    out: list[str] = []
    for name in dict.fromkeys(names_):
        for n in ([f"pop-{k}" for k in ks] if name == "pop" else [name]):
            get(n)
            if n not in out:
                out.append(n)
    return out
