"""The cores a partitioned round's parts get on this machine, said at ``init`` when there are fewer than parts.

A partitioned round is faster than a monolithic one only when its parts run side by side (POP's measure, and the
issue #18 goal, is set-up + slowest part + merge on one core per part). With fewer cores the parts take turns:
user trial 37 on this 2-core machine (TE Colt, 365k nonzeros) measured K = 2 / 4 steps of 1.2-1.3 / 1.4-1.5 s
against 0.56-0.72 s monolithic, with nothing at ``init --partitions`` to say why.
"""

from __future__ import annotations

import os


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity, else ``os.cpu_count()``, at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def cores_warning(k: int, executor: str, workers: int | None = None) -> list[str]:
    """The warning (a list of at most one) for ``k`` parts run by ``executor`` on fewer usable cores than parts.

    Args:
        k: number of parts; executor: the executor round 0 ran its parts on (``process``, ``inline``, ``ray``);
        workers: the worker processes asked for (``PartitionConfig.workers``; None: one per part, as cores allow).
    Returns:
        ``[]`` for ``ray`` (the cluster's cores, not this machine's), ``inline`` (parts one after another by design:
        a model too small for workers) or at least ``k`` cores; else one sentence
        naming both counts and what the rounds will pay.
    """
    usable = usable_cores()
    cores = min(usable, workers) if workers else usable
    if executor in ("ray", "inline") or k <= cores:  # inline: a model small enough that workers cost more
        return []
    what = f"{cores} {'worker' if workers and workers < usable else 'core'}{'s' if cores > 1 else ''}"
    return [f"{k} parts on {what}: the parts share them, so a round takes about "
            "as long as its parts together plus the split and merge, often longer than a monolithic round; "
            "partitioned rounds pay off with a core per part (or on a Ray cluster: --executor ray)"]
