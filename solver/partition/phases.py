"""Where a partitioned round's own (serial) time goes: named wall-clock phases of the coordinating process.

The round's report carries them as ``partitions.seconds.phases`` (seconds, summed over the round's passes and
merges), next to the parts' own times, so a round on K cores can be broken down into setup, each part,
merge, whole-model bound, dual ascent, RENS dispatch and the exact re-check (``bench/bench_partitions.py``
prints them).
"""

from __future__ import annotations

import time
from contextlib import contextmanager


class Phases:
    """Accumulates wall seconds per phase name (:meth:`time` as a context manager, or :meth:`add`)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}

    def add(self, name: str, seconds: float) -> None:
        """Add ``seconds`` (wall seconds) to phase ``name``."""
        self.seconds[name] = self.seconds.get(name, 0.0) + float(seconds)

    @contextmanager
    def time(self, name: str):
        """Time the ``with`` block into phase ``name``."""
        t = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - t)

    def report(self) -> dict[str, float]:
        """``{phase: seconds}`` rounded to microseconds, in the order the phases first ran."""
        return {k: round(v, 6) for k, v in self.seconds.items()}
