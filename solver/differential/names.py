"""Name -> position resolution against a problem (cached dict or Arrow ``index_in``).

Names not created by a delta are looked up once per distinct name in the problem's cached name ->
position dict (``Problem.col_index``), or, before that dict exists, with one ``pyarrow.compute.index_in``
against Arrow copies of the names attached by :func:`attach_arrow_names` (e.g. memory-mapped from a
checkpoint). See the package docstring for the measured costs.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from solver.model.problem import Problem


def lookup(index, names: pa.Array) -> np.ndarray:
    """Positions of ``names`` (-1 when absent) in ``index``: a name -> position dict (O(len(names))
    once built) or an Arrow array of the problem's names (one vectorised ``index_in``)."""
    if index is None or len(names) == 0 or (isinstance(index, dict) and not index):
        return np.full(len(names), -1, dtype=np.int64)
    if isinstance(index, pa.Array):
        import pyarrow.compute as pc  # here: loading a checkpoint attaches Arrow names without this import

        if names.type != index.type:
            names = names.cast(index.type)
        return pc.index_in(names, value_set=index).fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)
    get = index.get
    return np.fromiter((get(s, -1) for s in names.to_pylist()), dtype=np.int64, count=len(names))


def attach_arrow_names(problem: Problem, col_names, row_names) -> None:
    """Give ``problem`` Arrow copies of its names (e.g. memory-mapped from a checkpoint): each a ``pa.Array``,
    None, or a zero-argument function that returns one (called on the first look-up).

    Until the problem's name -> position dict exists, :func:`apply_delta` then resolves names with one
    ``pyarrow.compute.index_in`` per phase (~0.3 s at 1M names) instead of building that dict in Python
    (~0.8 s at 1M names, once per process). The arrays must equal ``problem.col_names``/``row_names``.
    """
    problem.__dict__["_arrow_names"] = (col_names, row_names)


def name_index(problem: Problem, is_col: bool):
    """The fastest available name -> position resolver for one side of ``problem``."""
    n = problem.n_cols if is_col else problem.n_rows
    if not n:
        return {}
    cached = problem._col_index if is_col else problem._row_index
    if cached is not None:
        return cached
    arrow = problem.__dict__.get("_arrow_names")
    side = arrow[0 if is_col else 1] if arrow is not None else None
    if callable(side):  # built on first use (a checkpoint's patched names: formats.checkpoint_arrays)
        side = side()
        attach_arrow_names(problem, side if is_col else arrow[0], arrow[1] if is_col else side)
    if side is not None and len(side) == n:
        return side
    return problem.col_index() if is_col else problem.row_index()



def next_index(old_index, side, names):
    """Carry the name -> position dict forward when no entity was dropped (else rebuilt lazily)."""
    if old_index is None or side["keep"] is not None:
        return None
    if not side["n_add"]:
        return old_index
    if len(old_index) < 4 * side["n_add"]:
        return None  # cheaper to rebuild on demand
    idx = dict(old_index)
    base = len(names) - side["n_add"]
    idx.update(zip(side["added"].tolist(), range(base, len(names)), strict=True))
    return idx
