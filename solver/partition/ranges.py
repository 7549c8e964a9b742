"""Column (or row) ranges of a large model's merge passes, run side by side in threads of the round's process.

A partitioned round's merge runs after its parts, when the cores that ran them are idle, so its passes over the
whole matrix (the Lagrangian bound's candidates, ``solver.partition.bound_kernels.terms_range``; the assignment
rows' exact duals, ``assignment_duals_range``) are split into ranges that numba kernels without the GIL run in a
thread pool. The ranges are fixed by the model alone (:data:`RANGE_SIZE` columns or rows each), never by the
machine's cores, and sums are added range after range in order: a round gives the same floats on every machine.
A model of at most one range runs the single pass as before.

Measured on TE Kdl (1.06M columns, 31M nonzeros; the bound's pass over three candidates): 0.125-0.197 s in one
thread, 0.074-0.089 s in two on the 2-core machine (session 48; the pass is bound by memory traffic).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from solver.partition.cores import usable_cores

T = TypeVar("T")

RANGE_SIZE = 1 << 17
"""Columns (or rows) per range: TE Kdl's 1.06M columns make 9 ranges; a model of at most this many is one pass."""


def ranges(count: int, size: int | None = None) -> list[tuple[int, int]]:
    """The half-open ranges [a, b) of ``size`` items each (default :data:`RANGE_SIZE`; the last shorter) covering
    ``count`` items; one empty range when ``count`` is 0, so that a caller always gets a result to start its sums
    from.

    Raises:
        ValueError: ``size`` < 1 or ``count`` < 0.
    """
    size = RANGE_SIZE if size is None else int(size)
    if size < 1 or count < 0:
        raise ValueError(f"ranges: count {count} and size {size} (count >= 0, size >= 1)")
    if count == 0:
        return [(0, 0)]
    return [(a, min(a + size, count)) for a in range(0, count, size)]


def run_ranges(fn: Callable[[int, int], T], spans: list[tuple[int, int]], threads: int | None = None) -> list[T]:
    """``[fn(a, b) for (a, b) in spans]``, in that order; with more than one span and more than one usable core,
    the calls run in a thread pool of ``threads`` (default: the usable cores, at most one per span). ``fn`` must
    release the GIL (a ``nogil`` kernel) for the threads to overlap, and its calls must write disjoint outputs.
    An exception of any call is raised here."""
    threads = min(len(spans), usable_cores() if threads is None else max(1, int(threads)))
    if threads <= 1:
        return [fn(a, b) for a, b in spans]
    from concurrent.futures import ThreadPoolExecutor  # several ranges only (a large model's merge)

    with ThreadPoolExecutor(threads, thread_name_prefix="copter-merge") as ex:
        return list(ex.map(lambda s: fn(*s), spans))


KKT_SPANS = 4
"""Column ranges at most of the merged point's re-check (:func:`kkt_spans`): each range but the first adds up its A x
in an (m,) array of its own, so the count is kept small (TE Kdl: 4 ranges of 265k columns, 3 x 4.6 MB)."""
KKT_SPAN_BYTES = 256 << 20  #: the extra arrays' bytes above which the re-check makes one pass instead


def kkt_spans(n: int, m: int) -> list[tuple[int, int]]:
    """The column ranges of the whole model's KKT re-check of a merged point (``solver.lp.original_kkt``'s
    ``spans``): at most :data:`KKT_SPANS` ranges of at least :data:`RANGE_SIZE` columns each, fixed by (n, m)
    alone like :func:`ranges`; one range (the single pass) when the other ranges' (m,) float64 arrays would
    take more than :data:`KKT_SPAN_BYTES`. Measured on TE Kdl (1.06M columns, 570k rows, 31M nonzeros; the
    2-core machine, quiet, session 51): 0.083-0.088 s in one pass, 0.055-0.065 s in four ranges in two threads
    (12 calls each, in-process); a K = 4 step's ``recheck`` phase 0.10-0.17 -> 0.075 s."""
    size = max(RANGE_SIZE, -(-n // KKT_SPANS))
    spans = ranges(n, size)
    if (len(spans) - 1) * m * 8 > KKT_SPAN_BYTES:
        return [(0, n)]
    return spans

