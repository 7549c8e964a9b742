"""What the part workers of a partitioned round are doing, for the live progress line (``copter_cli.progress``).

The parts run in worker processes, so the LP core's progress callback (``solver.lp.pdhg.progress_callback``)
of the command's process never hears them. Each pool gets a small shared-memory board (``multiprocessing``
``RawArray``, :data:`FIELDS` float64 per worker slot); a worker's solve writes its part index and its latest
termination-check measures into its slot (:func:`reporting`), and the process waiting for the parts reads the
board about four times a second (:func:`summary`) and hands the progress callback one dict: the parts done out
of K and the measures of the running part furthest from converging (its largest relative residual or gap),
the part that holds the round back. Writes are unsynchronised: a torn read shows one redraw of mixed numbers.
"""

from __future__ import annotations

import math
from contextlib import contextmanager

FIELDS = 7  #: per slot: part index, iteration, primal res, dual res, gap, primal objective, write count
_BOARD = None  #: this worker's board (set by :func:`attach`)
_SLOT = -1  #: this worker's slot


def new_board(ctx, slots: int):
    """A zeroed shared (slots * FIELDS) float64 array and a slot counter, for a pool of ``slots`` workers."""
    return ctx.RawArray("d", max(1, slots) * FIELDS), ctx.Value("i", 0)


def attach(board, counter) -> None:
    """Worker initializer: take the next slot of ``board`` (``counter`` counts the workers started)."""
    global _BOARD, _SLOT
    with counter.get_lock():
        _SLOT = counter.value % (len(board) // FIELDS)
        counter.value += 1
    _BOARD = board


def clear(board) -> None:
    """Forget every slot (before a new batch of parts)."""
    board[:] = [0.0] * len(board)


@contextmanager
def reporting(index: int):
    """In a worker with a board: within the block, the LP core's termination checks write part ``index``'s
    measures into this worker's slot. Elsewhere (inline, Ray) nothing happens."""
    if _BOARD is None:
        yield
        return
    from solver.lp.pdhg import progress_callback

    board, base = _BOARD, _SLOT * FIELDS

    def write(info: dict) -> None:
        board[base:base + FIELDS - 1] = [float(index), float(info["iteration"]), float(info["primal_residual_rel"]),
                                         float(info["dual_residual_rel"]), float(info["gap_rel"]),
                                         float(info["primal_objective"])]
        board[base + FIELDS - 1] += 1.0

    with progress_callback(write):
        yield


def summary(board, running: set[int], done: int, k: int) -> dict:
    """The progress callback's dict for a partitioned round: ``parts`` (k), ``parts_done``, and, when a running
    part has reported, ``part`` (its index) with its ``iteration``, ``primal_residual_rel``,
    ``dual_residual_rel``, ``gap_rel`` and ``primal_objective``: the running part with the largest of the three
    relative measures."""
    out: dict = {"parts": int(k), "parts_done": int(done)}
    worst, worst_err = None, -math.inf
    for s in range(len(board) // FIELDS):
        row = board[s * FIELDS:(s + 1) * FIELDS]
        if row[FIELDS - 1] <= 0 or int(row[0]) not in running:
            continue
        err = max((v for v in row[2:5] if math.isfinite(v)), default=math.inf)
        if worst is None or err > worst_err:
            worst, worst_err = row, err
    if worst is not None:
        out.update(part=int(worst[0]), iteration=int(worst[1]), primal_residual_rel=worst[2],
                   dual_residual_rel=worst[3], gap_rel=worst[4], primal_objective=worst[5])
    return out
