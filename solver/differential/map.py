"""Map the previous iterate onto the index space a delta produced (:func:`map_state`, for warm starts)."""

from __future__ import annotations

import numpy as np

from solver.differential.apply import ApplyInfo
from solver.model.errors import StateError
from solver.model.problem import Problem
from solver.model.state import SolverState


def map_state(state: SolverState, info: ApplyInfo, problem: Problem | None = None) -> SolverState:
    """Map a solver state onto the index space produced by :func:`apply_delta`.

    Surviving variables keep their value, new variables start at 0 projected onto their bounds; every
    value is then projected onto the (possibly changed) bounds of the new problem. Surviving rows keep
    their dual, new rows start at dual 0. ``step_size``/``primal_weight``/``iterations`` are kept
    (whether to reuse them is the solver's decision), so is the ``engine`` record (the engine choice reads it).
    ``integer_x`` is mapped like ``x``.

    Args:
        state: state computed for the problem the delta was applied to: x (n_old,), y (m_old,).
        info: the ApplyInfo of that apply.
        problem: the new problem (optional; bounds are taken from ``info`` when omitted).
    Returns:
        A new SolverState with x (n_new,), y (m_new,).
    Raises:
        StateError: when the state's lengths do not match the problem the delta was applied to.
    """
    if state.x.shape != (info.old_n_cols,) or state.y.shape != (info.old_n_rows,):
        raise StateError(f"solver state has x of length {state.x.shape[0]} and y of length "
                         f"{state.y.shape[0]}, but the problem had {info.old_n_cols} variables and "
                         f"{info.old_n_rows} constraints; warm start impossible")
    lo = problem.col_lower if problem is not None else info.col_lower
    up = problem.col_upper if problem is not None else info.col_upper

    def mx(x):
        out = np.where(info.col_map >= 0, x[np.maximum(info.col_map, 0)] if x.size else 0.0, 0.0)
        if lo is not None:
            out = np.minimum(np.maximum(out, lo), up)
        return out.astype(np.float64)

    y = np.where(info.row_map >= 0, state.y[np.maximum(info.row_map, 0)] if state.y.size else 0.0, 0.0)
    ix = None
    if state.integer_x is not None and state.integer_x.shape == (info.old_n_cols,):
        ix = mx(state.integer_x)
    return SolverState(x=mx(state.x), y=y.astype(np.float64), step_size=state.step_size,
                       primal_weight=state.primal_weight, iterations=state.iterations, integer_x=ix,
                       engine=state.engine)
