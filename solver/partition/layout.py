"""The client -> part assignment of a partitioned state, carried from round to round.

A round's problem is split by its clients (:mod:`solver.partition.clients`). The assignment is kept by
client *name*, so a delta's rows reach the part that owns their client whatever the delta does to the index
space: a surviving client stays in its part, a dropped client simply no longer appears, and a new client goes
to the least-loaded part (load = number of columns). New clients are placed all at once, without a Python
loop over them: the parts' deficits below the balanced load are laid end to end and each new client goes to
the part whose stretch holds the middle of its own column range (water filling).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from solver.partition.clients import ClientGrouping
from solver.partition.split import split_clients


@dataclass(eq=False)
class Assignment:
    """Which part every client of a round belongs to.

    Attributes:
        k: number of parts.
        client_names: (n_clients,) object array of client names.
        client_part: (n_clients,) int64 part in ``0..k-1``.
    """

    k: int
    client_names: np.ndarray
    client_part: np.ndarray


def initial_assignment(grouping: ClientGrouping, k: int, seed: int | None = 0) -> Assignment:
    """POP's uniformly random, size-balanced split of the clients (``solver.partition.split.split_clients``)."""
    return Assignment(k=k, client_names=grouping.client_names,
                      client_part=split_clients(grouping.n_clients, k, seed))


def route(previous: Assignment, grouping: ClientGrouping) -> tuple[Assignment, int, int]:
    """Carry ``previous`` onto the clients of ``grouping`` (a new round).

    Args:
        previous: the last round's assignment.
        grouping: the new round's client grouping (n_clients clients).
    Returns:
        (assignment, n_new, n_dropped): surviving clients keep their part, new clients go to the least
        loaded parts (module docstring); n_dropped counts previous clients absent now.
    """
    k = previous.k
    n_old = len(previous.client_names)
    carried = grouping.previous_client
    if carried is not None and grouping.carried_from is previous.client_names:
        # carried from these very clients (solver.partition.clients.carry_grouping): the join is known
        found = carried >= 0
        idx = np.maximum(carried, 0)
    else:
        names = pa.array(grouping.client_names, type=pa.string())
        old = pa.array(previous.client_names, type=pa.string())
        hit = pc.index_in(names, value_set=old)
        found = hit.is_valid().to_numpy(zero_copy_only=False).astype(bool)
        idx = hit.fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64)
    part = np.full(grouping.n_clients, -1, dtype=np.int64)
    part[found] = previous.client_part[idx[found]]
    size = np.bincount(grouping.col_client[grouping.col_client >= 0], minlength=grouping.n_clients)
    new = np.flatnonzero(~found)
    if new.size:
        load = np.bincount(part[found], weights=size[found], minlength=k).astype(np.float64)
        part[new] = fill_least_loaded(load, size[new].astype(np.float64))
    n_dropped = n_old - int(found.sum())
    return Assignment(k=k, client_names=grouping.client_names, client_part=part), int(new.size), n_dropped


def fill_least_loaded(load: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Parts for new clients of the given (c,) sizes on parts with (k,) current loads: water filling.

    The target is the balanced load ``(load.sum() + sizes.sum()) / k``; part p can take ``target - load_p``
    (at least 0). Those capacities are laid end to end and client i goes to the part whose stretch holds
    the midpoint of its range in the cumulative sizes. O(c log k), no loop over clients.
    """
    k = load.size
    target = (load.sum() + sizes.sum()) / k
    room = np.maximum(target - load, 0.0)
    if room.sum() <= 0:
        room = np.ones(k)
    ends = np.cumsum(room) * (sizes.sum() / room.sum())
    mid = np.cumsum(sizes) - 0.5 * sizes
    return np.minimum(np.searchsorted(ends, mid, side="right"), k - 1).astype(np.int64)
