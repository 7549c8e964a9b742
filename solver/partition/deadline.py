"""A partitioned round's time budget (:class:`Deadline`): the parts' share of ``--time-limit``, the reserve kept
for the merge, its re-check and the save (:func:`merge_reserve`), and the merge's dual-ascent budget
(:func:`ascent_seconds`). Used by :mod:`solver.partition.round` and :mod:`solver.partition.merge`."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace

from solver import clock
from solver.model.settings import Settings

MERGE_RESERVE_FRACTION = 0.1  #: of ``--time-limit`` kept from the parts for the merge, its re-check and the save
MERGE_RESERVE_MAX = 1.0  #: ... but at most this many seconds
POOL_START_SECONDS = 3.0  #: parts' time left below which no new worker pool is started (the parts run in this
#: process): a pool's start (the forkserver loading the solver and its kernels, the workers' fork) blocks this process
#: and cannot stop at a deadline; it took 1.4-2.3 s on the shared 2-core machine (TE Cogentco, K = 2), 3.5 s under
#: heavy load, and ``step --time-limit 0.5`` / ``2`` ended 4.3 s / 1.3 s late
ASCENT_MIN_SECONDS = 0.01  #: the merge's ascent budget at least (a spent one): its start value is still evaluated,
#: so the round keeps a proven bound and gap



@dataclass
class Deadline:
    """A partitioned round's time budget on the ``time.monotonic()`` clock: ``settings.time_limit_seconds``
    (``limit``, inf: none) counts from ``start``, the command's start when the CLI registered one
    (:mod:`solver.clock`), else the round's. The parts (and their RENS / re-solves) must end by ``parts_end``,
    which leaves :func:`merge_reserve` seconds before ``end`` for the merge, its re-check and the save."""

    limit: float
    start: float
    wall_start: float  #: ``start`` as ``time.time()`` seconds (what the workers get: they may be on another machine)
    parts_limit: float  #: the parts' time limit, counted from ``start``

    @classmethod
    def of(cls, settings: Settings) -> Deadline:
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

    def left(self) -> float:
        """Seconds left of the whole limit (inf without one; <= 0 when spent)."""
        return self.limit - self.since_start()

    def merge_left(self) -> float:
        """Seconds the merge's dual ascent may take: until half the reserve after the parts' end."""
        return (0.5 * (self.parts_limit + self.limit) - self.since_start()) if self.timed else math.inf

    def part_settings(self, settings: Settings, limit: float | None = None) -> Settings:
        """``settings`` with the parts' limit (or ``limit``), counted from ``start`` (``run_parts``'s
        ``command_start``)."""
        if not self.timed:
            return settings
        return replace(settings, time_limit_seconds=self.parts_limit if limit is None else limit)

    def executor_for(self, executor: str, ready: bool) -> str:
        """The executor the parts run on now: ``executor``, or ``"inline"`` (this process, whose solver and kernels
        are loaded; the parts one after another, each stopping at the parts' deadline) when its workers are not
        ``ready`` (a pool or a Ray cluster to start first) and the parts have less than
        :data:`POOL_START_SECONDS` left: that start would run past the deadline, which its parts then meet at
        once."""
        if ready or not self.timed or self.parts_left() >= POOL_START_SECONDS:
            return executor
        return "inline"

    def note(self) -> str:
        """The sentence a round the limit stopped ends with, naming the user's limit, as a monolithic round's; when
        the parts stopped at their own limit, before the user's (the merge's reserve kept back), it says so: "time
        limit 0.8 s reached (0.74 s since the command started)" read as the limit hit early (hunt 38)."""
        since = self.since_start()
        text = clock.time_limit_reached(self.limit, since)
        if since < self.limit and math.isfinite(self.parts_limit) and self.parts_limit < self.limit:
            text += (f"; the parts stop {self.limit - self.parts_limit:.2f} s before it, kept for the merge, its "
                     "re-check and the save")
        return text


def ascent_seconds(clock: Deadline) -> float:
    """The merge's dual-ascent budget (seconds): what is left of the merge's reserve, at least
    :data:`ASCENT_MIN_SECONDS` (a spent budget still evaluates the start); inf without a limit."""
    return max(clock.merge_left(), ASCENT_MIN_SECONDS)


def merge_reserve(limit: float) -> float:
    """Seconds of a ``limit``-second round kept from the parts for the merge, the re-check and the save:
    :data:`MERGE_RESERVE_FRACTION` of it, at most :data:`MERGE_RESERVE_MAX`."""
    return min(MERGE_RESERVE_MAX, MERGE_RESERVE_FRACTION * max(limit, 0.0))
