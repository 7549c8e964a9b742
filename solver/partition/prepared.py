"""A partitioned LP round's parts built while the first ones already run: :class:`PreparedTasks`.

A round's first pass builds its k part problems (``solver.partition.split.part_builder``: two passes over each part's
nonzeros, written into the memory its worker maps) and maps each part's warm start from its previous iterate
(``solver.partition.round``). Built all at once, every part waited for all of them, then for the shipping of the
parts before it: on TE Kdl, K = 4 (30.9M nonzeros, 2 cores), the last part left 0.5 s after the pass began, and that
part was often the slowest (session 49: 0.42 s of set-up and 0.09 s of shipping against a slowest part of 1.28 s).

Here each part is prepared (built, then its warm start mapped) in a thread of its own as soon as a thread is free,
in the order of the work its previous solve made (the most first), and a worker gets it as soon as it is ready
(``solver.partition.executor.map_parts`` takes the tasks as a sequence whose items wait for their part, and the
same order). The parts and their warm starts are the same as built at once (each part's build reads only the
whole problem), so the round's results are too; only when each part starts moves.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from solver.partition.split import Part


def expected_work(previous: list, n_cols: np.ndarray) -> list[float] | None:
    """Each part's expected work this round, from its previous solve: the matrix passes it made (the engine record's
    ``passes``, ``solver.lp.engine_choice.EngineRecord``) times its columns now; None when a part has no such record
    (a new part, a cold round, a state from before the record): then no part is favoured.

    Args:
        previous: (k,) each part's previous ``SolverState`` (or None).
        n_cols: (k,) the columns each part holds this round.
    """
    out = []
    for state, n in zip(previous, n_cols, strict=True):
        engine = getattr(state, "engine", None) if state is not None else None
        passes = (engine or {}).get("passes", math.nan) if isinstance(engine, dict) else math.nan
        try:
            passes = float(passes)
        except (TypeError, ValueError):
            return None
        if not math.isfinite(passes) or passes < 0:
            return None
        out.append(passes * float(n))
    return out


def submission_order(solve_idx: list[int], work: list[float] | None) -> list[int]:
    """Task indices (positions in ``solve_idx``) in the order to prepare and submit them: the most expected work
    first, ties (and no ``work``: index order) by part number."""
    if work is None:
        return list(range(len(solve_idx)))
    return sorted(range(len(solve_idx)), key=lambda i: (-work[solve_idx[i]], solve_idx[i]))


class PreparedTasks(Sequence):
    """The tasks ``(problem, settings, warm)`` of a pass's parts ``solve_idx``, prepared in threads.

    ``prepare(p) -> (Part, warm state or None)`` runs for every part 0..k-1 (the parts that are not solved are built
    too: the round stores them), the solved ones in ``order`` (task indices) first, on ``threads`` threads.
    ``self[i]`` waits for part ``solve_idx[i]`` and returns its task; an exception raised while preparing it is
    raised there. :meth:`parts` and :meth:`warms` wait for all of them.

    Times (``time.perf_counter()`` seconds): :attr:`started` when the threads began; :meth:`prepared_wall` from then
    until the last part was ready; :meth:`seconds` the summed ``("build", "warm")`` seconds of the threads' work.
    """

    def __init__(self, k: int, solve_idx: list[int], settings, prepare: Callable[[int], tuple],
                 order: list[int], threads: int):
        self.solve_idx, self.settings = list(solve_idx), settings
        self._prepare = prepare
        first = [self.solve_idx[i] for i in order]
        taken = set(first)
        rest = [p for p in range(k) if p not in taken]
        self._times: dict[int, tuple[float, float, float]] = {}
        self.started = time.perf_counter()
        ex = ThreadPoolExecutor(max(1, threads), thread_name_prefix="copter-part-prepare")
        try:
            self._futures: dict[int, Future] = {p: ex.submit(self._timed, p) for p in first + rest}
        finally:
            ex.shutdown(wait=False)  # the queued parts still run; the threads end after the last one

    def _timed(self, p: int) -> tuple:
        t0 = time.perf_counter()
        part, warm, t_built = self._prepare(p)
        t1 = time.perf_counter()
        self._times[p] = (t_built - t0, t1 - t_built, t1)
        return part, warm

    def __len__(self) -> int:
        return len(self.solve_idx)

    def __getitem__(self, i):
        if not isinstance(i, int):
            raise TypeError("a task index, not a slice")
        part, warm = self._futures[self.solve_idx[i]].result()
        return (part.problem, self.settings, warm)

    def parts(self) -> list[Part]:
        """The k Parts, in part order (waits for every one)."""
        return [self._futures[p].result()[0] for p in sorted(self._futures)]

    def warms(self) -> list:
        """The k warm states (None where a part has none), in part order (waits for every one)."""
        return [self._futures[p].result()[1] for p in sorted(self._futures)]

    def prepared_wall(self) -> float:
        """Seconds from :attr:`started` until the last part was ready (waits for every one)."""
        self.parts()
        return max((t[2] for t in self._times.values()), default=self.started) - self.started

    def seconds(self) -> tuple[float, float]:
        """(build, warm): the threads' seconds building the parts and mapping their warm starts, summed over the
        parts (waits for every one)."""
        self.parts()
        return (sum(t[0] for t in self._times.values()), sum(t[1] for t in self._times.values()))
