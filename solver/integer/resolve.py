"""Fix the integer columns and re-solve the continuous part, then finish it exactly.

With the integers fixed at x_I, what remains is the LP over the continuous columns C:

    min c_C' x_C   s.t.  rl - A_I x_I <= A_C x_C <= ru - A_I x_I,   l_C <= x_C <= u_C.

Rows without continuous columns are checked directly. Rows with a single continuous column are
bounds on it and are folded into its bounds (vectorized), which makes the LP of, e.g., load balancing
(r <= x links) small. The remaining LP is solved by

1. the LP core ``solver.lp.dispatch.solve``, warm-started from the relaxation's primal/dual point restricted to
   the kept columns/rows (skipped while the LP core is not importable), then
2. the **exact clean-up**: HiGHS dual simplex on the same small LP, started from the PDHG point
   (``setSolution``) with primal feasibility tolerance 1e-10. A simplex basic solution satisfies its rows
   up to the floating-point error of the basis solve, far below the product's rule.

The continuous values are then clipped into their original bounds (so bounds hold exactly) and the full
point is re-checked with :func:`solver.integer.check.check_point` (rows to 1e-9 relative to
max(1, |bound|)); a point that fails is reported as not found, never returned as feasible.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from solver.integer import options
from solver.integer.check import ROW_TOL_REL, check_point
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.state import SolverState

RESOLVE_ITERATIONS = 20_000  #: PDHG iteration cap of the warm re-solve (HiGHS finishes exactly anyway)


def column_arrays(problem: Problem, cols: np.ndarray):
    """CSC arrays (indptr (k+1,) int64, indices (nnz_k,) int32, data (nnz_k,)) of A's columns ``cols`` ((k,)
    int indices), in that order (vectorized gather)."""
    ptr = problem.a_indptr
    cnt = ptr[cols + 1] - ptr[cols]
    new_ptr = np.concatenate(([0], np.cumsum(cnt))).astype(np.int64)
    if new_ptr[-1] == 0:
        return new_ptr, np.zeros(0, dtype=np.int32), np.zeros(0)
    starts = np.repeat(ptr[cols] - new_ptr[:-1], cnt)
    pos = np.arange(new_ptr[-1], dtype=np.int64) + starts
    return new_ptr, problem.a_indices[pos], problem.a_data[pos]


def fix_and_resolve(problem: Problem, x: np.ndarray, settings: Settings, lp_x: np.ndarray | None = None,
                    lp_y: np.ndarray | None = None, resolve_seconds: float = 1.0) -> tuple[np.ndarray | None, dict]:
    """Complete the integer assignment in ``x`` with exact continuous values.

    Args:
        problem: the MILP (n columns, m rows).
        x: (n,) point whose integer columns hold the (integer) values to fix.
        settings: solver settings (the LP core's tolerance/limits are used for step 1).
        lp_x, lp_y: (n,), (m,) relaxation primal/dual point for the warm start, or None.
        resolve_seconds: wall budget of the PDHG warm re-solve (seconds; no such re-solve when the continuous
            LP has at most ``settings.integer_highs_max_nonzeros`` nonzeros); the exact HiGHS clean-up follows
            regardless.
    Returns:
        (x_full or None, info): x_full passes :func:`check_point` exactly; info has ``changed``
        (continuous columns that moved), ``lp_columns``, ``lp_rows``, ``pdhg_iterations``,
        ``highs_status``, ``check`` and ``reason`` when None is returned.
    """
    x = np.asarray(x, dtype=np.float64).copy()
    info = {"changed": 0, "lp_columns": 0, "lp_rows": 0, "pdhg_iterations": 0, "highs_status": "",
            "reason": ""}
    cont = np.flatnonzero(~problem.integrality)
    if cont.size == 0:
        return _checked(problem, x, info, "integer point violates a row")
    sub, rows, reason = continuous_subproblem(problem, x, cont)
    if sub is None:
        info["reason"] = reason
        return None, info
    lo, up = sub.col_lower, sub.col_upper
    info["lp_columns"], info["lp_rows"] = int(cont.size), int(rows.size)
    start = np.clip(lp_x[cont] if lp_x is not None else np.clip(0.0, lo, up), lo, up)
    t0 = time.perf_counter()
    # a continuous LP within the small-model rule (Settings.integer_highs_max_nonzeros) goes to HiGHS simplex alone
    if rows.size and sub.nnz > options.highs_max_nonzeros(settings):
        start = _warm_pdhg(sub, start, lp_y[rows].copy() if lp_y is not None else np.zeros(rows.size), settings,
                           resolve_seconds, info)
    info["pdhg_seconds"] = time.perf_counter() - t0
    xc, status = _highs_exact(sub, start)
    info["highs_status"] = status
    info["highs_seconds"] = time.perf_counter() - t0 - info["pdhg_seconds"]
    if xc is None:
        info["reason"] = f"continuous LP with fixed integers: HiGHS {status}"
        return None, info
    xc = np.clip(xc, problem.col_lower[cont], problem.col_upper[cont])
    info["changed"] = int(np.count_nonzero(np.abs(xc - x[cont]) > 1e-9 * np.maximum(1.0, np.abs(x[cont]))))
    x[cont] = xc
    return _checked(problem, x, info, None)


def _checked(problem: Problem, x: np.ndarray, info: dict, reason: str | None):
    """(x, info) when ``x`` passes :func:`check_point`, else (None, info) with ``reason`` (default: the
    exact check's row violation)."""
    chk = check_point(problem, x)
    info["check"] = chk
    if not chk["ok"]:
        info["reason"] = reason or f"exact check failed (max row violation {chk['max_row_violation_rel']:.3g} rel)"
        return None, info
    return x, info


def continuous_subproblem(problem: Problem, x: np.ndarray, cont: np.ndarray):
    """The LP over the continuous columns ``cont`` ((k,) indices) with the integers fixed at ``x`` ((n,)).

    Rows without continuous columns must hold already (to 1e-9 relative); rows with one continuous column
    become bounds on it (vectorized); the rest are the LP's rows.

    Returns:
        (sub, rows, reason): ``sub`` the LP (k columns, bounds folded, ``rows`` (r,) the kept row indices),
        or (None, None, reason) when the fixed integers already make it infeasible.
    """
    ints = np.flatnonzero(problem.integrality)
    m = problem.n_rows
    iptr, iind, idat = column_arrays(problem, ints)
    act_i = np.bincount(iind, weights=idat * np.repeat(x[ints], np.diff(iptr)), minlength=m) if idat.size \
        else np.zeros(m)
    cptr, cind, cdat = column_arrays(problem, cont)
    ccount = np.bincount(cind, minlength=m)
    rl = problem.row_lower - act_i
    ru = problem.row_upper - act_i
    # rows with no continuous column: integer activity must satisfy them already
    none = ccount == 0
    scale_l = np.maximum(1.0, np.abs(np.where(np.isfinite(problem.row_lower), problem.row_lower, 0.0)))
    scale_u = np.maximum(1.0, np.abs(np.where(np.isfinite(problem.row_upper), problem.row_upper, 0.0)))
    with np.errstate(invalid="ignore"):
        bad = none & ((rl > ROW_TOL_REL * scale_l) | (-ru > ROW_TOL_REL * scale_u))
    if bad.any():
        return None, None, f"{int(bad.sum())} integer-only rows violated"
    colpos = np.repeat(np.arange(cont.size), np.diff(cptr))
    lo, up = _folded_bounds(problem, cont, ccount == 1, cind, cdat, colpos, rl, ru)
    if lo is None:
        return None, None, "fixed integers leave a continuous column with an empty range"
    # the remaining LP: rows with >= 2 continuous columns
    keep = ccount >= 2
    rows = np.flatnonzero(keep)
    newrow = np.full(m, -1, dtype=np.int64)
    newrow[rows] = np.arange(rows.size)
    nzk = keep[cind]
    counts = np.bincount(colpos[nzk], minlength=cont.size)
    sub_ptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    sub = Problem(col_names=problem.col_names[cont], row_names=problem.row_names[rows], cost=problem.cost[cont],
                  col_lower=lo, col_upper=up, row_lower=rl[rows], row_upper=ru[rows],
                  integrality=np.zeros(cont.size, dtype=bool), a_indptr=sub_ptr,
                  a_indices=newrow[cind[nzk]].astype(np.int32), a_data=cdat[nzk].copy(), sense=problem.sense)
    return sub, rows, ""


def _folded_bounds(problem, cont, single, cind, cdat, colpos, rl, ru):
    """Bounds (k,) of the continuous columns ``cont`` with the single-continuous-column rows (``single``
    (m,) mask; the columns' CSC row indices ``cind``, values ``cdat``, column positions ``colpos``) folded
    in; (None, None) when a range is empty beyond 1e-9 relative."""
    lo = problem.col_lower[cont].copy()
    up = problem.col_upper[cont].copy()
    sel = single[cind]
    if sel.any():
        r, a, j = cind[sel], cdat[sel], colpos[sel]
        with np.errstate(invalid="ignore", divide="ignore"):
            b1, b2 = rl[r] / a, ru[r] / a
        nlo = np.where(a > 0, b1, b2)
        nup = np.where(a > 0, b2, b1)
        np.maximum.at(lo, j, np.nan_to_num(nlo, nan=-np.inf))
        np.minimum.at(up, j, np.nan_to_num(nup, nan=np.inf))
    gap = lo - up
    if np.any(gap > 1e-9 * np.maximum(1.0, np.abs(up))):
        return None, None
    return np.minimum(lo, up), up


def _warm_pdhg(sub: Problem, start: np.ndarray, y0: np.ndarray, settings: Settings, resolve_seconds: float,
               info: dict) -> np.ndarray:
    """The LP core on ``sub`` warm from (``start``, ``y0``) within ``resolve_seconds`` and RESOLVE_ITERATIONS;
    returns its point clipped into the bounds (``start`` when the LP core is missing or returns no finite
    point) and records ``pdhg_iterations``."""
    try:
        from solver.lp.dispatch import solve as lp_solve
    except ImportError:
        return start
    ws = SolverState(x=start.copy(), y=y0)
    budget = replace(settings, iteration_limit=min(int(settings.iteration_limit), RESOLVE_ITERATIONS),
                     time_limit_seconds=max(min(float(settings.time_limit_seconds), resolve_seconds), 0.0))
    res = lp_solve(sub, budget, ws)
    info["pdhg_iterations"] = int(res.iterations)
    if res.x is not None and np.all(np.isfinite(res.x)):
        return np.clip(res.x, sub.col_lower, sub.col_upper)
    return start


def _highs_exact(sub: Problem, start: np.ndarray) -> tuple[np.ndarray | None, str]:
    """Dual simplex on ``sub`` started from ``start`` ((n,) point); returns (x or None, HiGHS status)."""
    from solver.highs_bridge import (
        interruptible,
        is_optimal,
        new_highs,
        pass_model,
        read_point,
        set_solution,
        status_text,
        to_highs_lp,
    )

    h = new_highs()
    h.setOptionValue("primal_feasibility_tolerance", 1e-10)
    h.setOptionValue("solver", "simplex")
    reason = pass_model(h, to_highs_lp(sub, with_names=False), sub)
    if reason is not None:  # its empty model would read as optimal ("Empty")
        return None, f"Refused: {reason}"
    set_solution(h, start)
    with interruptible(h):
        h.run()
    status = status_text(h)
    if not is_optimal(h):
        return None, status
    return read_point(h, sub.n_cols, is_mip=False), status
