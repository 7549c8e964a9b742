"""Relative KKT measures of a point on the ORIGINAL LP (after HiGHS postsolve, or any given x, y).

The formulas are ``solver.lp.termination``'s (cuPDLPx / PDLP relative KKT, arXiv 2507.14051, 2106.04756)
with the projections PDLP uses to turn an arbitrary (x, y) into a candidate: x clipped to the column
bounds (a non-finite entry becomes 0 first, so the candidate is finite and within them), y projected
onto the signs its row bounds allow (y >= 0 needs a finite lower bound, y <= 0 a finite upper bound, in
minimisation form; a non-finite entry becomes 0),
the reduced cost c - A'y split into the part the column bounds allow (r: the bound it points at is finite
and near x_j, or below 1e15 in magnitude, ``solver.lp.termination.near_bound``) and the rest, which is the dual
residual.

:func:`original_kkt` does it in one numba pass over the columns (A x scattered and A'y gathered from
the same CSC entries) and two short passes over the rows; :func:`original_kkt_ref` is its numpy twin.
One call on a 105-row LP took ~150 us as two dozen numpy operations; the presolved path measures every
point its reduced run stops at (``solver.lp.presolve``), so it ran once or more per cold solve.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace

import numpy as np
from numba import njit

from solver import kernel_cache
from solver.lp import kernels, kernels_ref
from solver.lp.scaling import FAR_ROW_BOUND, combined_bound_norm
from solver.lp.termination import (
    FAR_COLUMN_BOUND,
    KKT,
    OrigLP,
    kkt_from_original,
    objective_scale,
    relative_gap,
    row_absmax,
    row_tolerance,
    row_violation_rel,
)
from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.state import SolverState
from solver.model.status import Status

kernel_cache.install()  # cached kernels load without numba's compiler set-up (solver/kernel_cache.py)


@njit(cache=True, nogil=True)
def kkt_rows_first(lc, uc, y_in, sense, y_min, ax):
    """:func:`kkt_pass`'s first pass over the rows: y_min (m,) (y_in's projection, minimisation form), ax (m,) set
    to 0, and (||b||^2 of the bounds below ``FAR_ROW_BOUND``, whether a bound at or above it exists)."""
    m = lc.shape[0]
    inf = np.inf
    b2 = 0.0
    far = False
    for i in range(m):
        v = sense * y_in[i]
        if not (v > -inf and v < inf):  # NaN and +-inf alike
            v = 0.0
        yv = 0.0
        if lc[i] > -inf and v > 0.0:
            yv += v
        if uc[i] < inf and v < 0.0:
            yv += v
        y_min[i] = yv
        ax[i] = 0.0
        if lc[i] > -inf:
            if abs(lc[i]) < FAR_ROW_BOUND:
                b2 += lc[i] * lc[i]
            else:
                far = True
        if uc[i] < inf and lc[i] != uc[i]:
            if abs(uc[i]) < FAR_ROW_BOUND:
                b2 += uc[i] * uc[i]
            else:
                far = True
    return b2, far


@njit(cache=True, nogil=True)  # nogil: a partitioned round's merge runs column ranges in threads
def kkt_columns(cost, lv, uv, cp, ci, cv, x_in, y_min, sense, tol, a, b, x, rc, ax):
    """:func:`kkt_pass`'s pass over the columns a..b-1 (0 <= a <= b <= n): x[a:b] (clipped), rc[a:b] and A[:, a:b]
    x added into ax (m,), which the caller zeroed; returns this range's (c_min'x, the column terms of the dual
    objective, ||dual residual||^2, ||cost||^2)."""
    inf = np.inf
    real = tol < inf  # a finite tol: a bound below FAR_COLUMN_BOUND is real and absorbs its reduced cost
    pobj = 0.0
    dobj = 0.0
    dres2 = 0.0
    c2 = 0.0
    for j in range(a, b):
        xj = x_in[j]
        if not (xj > -inf and xj < inf):  # before the clip: a NaN or inf entry becomes 0 clipped
            xj = 0.0
        if xj < lv[j]:
            xj = lv[j]
        if xj > uv[j]:
            xj = uv[j]
        x[j] = xj
        s = 0.0
        for p in range(cp[j], cp[j + 1]):
            s += cv[p] * y_min[ci[p]]
            ax[ci[p]] += cv[p] * xj
        cj = sense * cost[j]
        rj = cj - s
        rc[j] = rj
        r_ok = 0.0  # the part its finite bound absorbs: near x, significant or a bound < 1e15 (termination.near_bound)
        significant = abs(rj) > tol * (1.0 + abs(cj) + abs(s))
        if rj > 0.0 and lv[j] > -inf and (abs(xj - lv[j]) <= abs(xj) or significant or (real and abs(lv[j]) < FAR_COLUMN_BOUND)):
            r_ok = rj
        if rj < 0.0 and uv[j] < inf and (abs(xj - uv[j]) <= abs(xj) or significant or (real and abs(uv[j]) < FAR_COLUMN_BOUND)):
            r_ok = rj
        d = rj - r_ok
        dres2 += d * d
        pobj += cj * xj
        if r_ok > 0.0:
            dobj += lv[j] * r_ok  # r_ok > 0 only where lv is finite
        elif r_ok < 0.0:
            dobj += uv[j] * r_ok
        c2 += cost[j] * cost[j]
    return pobj, dobj, dres2, c2


@njit(cache=True, nogil=True)
def kkt_rows_last(lc, uc, ax, y_min, far, b2, dobj):
    """:func:`kkt_pass`'s last pass over the rows, after A x: (||primal residual||^2, the priced violations' sum,
    ``dobj`` plus the rows' terms, ``b2`` plus the far bounds A x is near)."""
    m = lc.shape[0]
    inf = np.inf
    pres2 = 0.0
    worth = 0.0
    for i in range(m):
        pr = kernels.bound_violation(ax[i], lc[i], uc[i])
        pres2 += pr * pr
        worth += abs(y_min[i] * pr)
        yv = y_min[i]
        if yv > 0.0:
            dobj += lc[i] * yv  # yv > 0 only where lc is finite
        elif yv < 0.0:
            dobj += uc[i] * yv
        if far:  # a far row bound counts where A x is near it (termination.OrigLP.b_norm_at)
            a = ax[i]
            if lc[i] > -inf and abs(lc[i]) >= FAR_ROW_BOUND and abs(a - lc[i]) <= abs(a):
                b2 += lc[i] * lc[i]
            if uc[i] < inf and lc[i] != uc[i] and abs(uc[i]) >= FAR_ROW_BOUND and abs(a - uc[i]) <= abs(a):
                b2 += uc[i] * uc[i]
    return pres2, worth, dobj, b2


@njit(cache=True)
def kkt_pass(cost, lv, uv, lc, uc, cp, ci, cv, x_in, y_in, sense, tol, x, y_min, rc, ax):
    """Fill x (n,), y_min (m,), rc = c_min - A'y_min (n,) and ax = A x (m,) from x_in (n,), y_in (m,).

    ``sense`` is +1 or -1 (c_min = sense * cost, y_min = sense * y_in before projection); ``tol`` the
    significance of ``solver.lp.termination.near_bound`` (0: every rc_j counts through its finite bound). Returns the
    sums (c_min'x, dual objective without the constant, ||primal residual||^2, ||dual residual||^2,
    ||b||^2 as ``solver.lp.scaling.combined_bound_norm`` counts it, plus the bounds of magnitude >= ``FAR_ROW_BOUND``
    it leaves out that A x is near (``solver.lp.termination.OrigLP.b_norm_at``), ||cost||^2, sum_i |y_min_i| viol_i:
    the row violations priced by the projected duals, ``solver.lp.termination.KKT.violation_worth_rel``'s numerator).
    One pass over the columns between two over the rows (:func:`kkt_rows_first`, :func:`kkt_columns`,
    :func:`kkt_rows_last`, which :func:`original_kkt` also runs over column ranges). Twin: :func:`original_kkt_ref`.
    """
    b2, far = kkt_rows_first(lc, uc, y_in, sense, y_min, ax)
    pobj, dobj, dres2, c2 = kkt_columns(cost, lv, uv, cp, ci, cv, x_in, y_min, sense, tol, 0, cp.shape[0] - 1, x,
                                        rc, ax)
    pres2, worth, dobj, b2 = kkt_rows_last(lc, uc, ax, y_min, far, b2, dobj)
    return pobj, dobj, pres2, dres2, b2, c2, worth


def _zero_point(problem: Problem, x: np.ndarray, y: np.ndarray) -> bool:
    """True when x (n,) is all zero and inside every column's bounds and y (m,) is all zero: the cold start of
    PDHG and the ALM (``solver.lp.engine_choice.cold_point``), which the engine choice measures beside every warm
    start. Its row activity and reduced costs need no pass over the matrix (TE Kdl: 0.27 s of a warm round, a
    K = 4 part's 0.065 s); the matrix's entries are finite (``Problem.check``), so each product is a zero."""
    return (not x.any() and not y.any() and bool((problem.col_lower <= 0.0).all())
            and bool((problem.col_upper >= 0.0).all()))


def original_kkt(problem: Problem, x: np.ndarray, y: np.ndarray, tol: float = 0.0,
                 spans: list[tuple[int, int]] | None = None, run: Callable | None = None):
    """Relative KKT measures of (x, y) on the ORIGINAL problem (see the module docstring).

    Args:
        problem: the original LP (integrality ignored), n columns, m rows.
        x: (n,) primal point; y: (m,) row duals, problem's sense (HiGHS convention).
        tol: the tolerance the point is judged at: a reduced cost insignificant at it (|rc_j| <= tol (1 +
            |c_j| + |(A'y)_j|)) whose bound is far from x_j is dual residual, not bound * rc_j in the dual
            objective (``solver.lp.termination.near_bound``: a bound of 9.99e19 times rounding-level reduced
            costs kept the gap open); 0 (the default) counts every reduced cost through its finite bound.
        spans: half-open column ranges [(0, b0), (b0, b1), ..., (., n)] covering the columns in order (None: one
            pass, :func:`kkt_pass`). Each range's A x goes into its own (m,) array (the first into the result's),
            added range after range in order, as are the column sums: the floats depend on the spans, never on how
            they are run; one span gives :func:`kkt_pass`'s floats exactly.
        run: ``run(fn, spans)`` returns ``[fn(a, b) for (a, b) in spans]`` in that order, possibly in threads
            (``solver.partition.ranges.run_ranges``: a partitioned round's re-check of its merged point; the
            kernel releases the GIL); None: one after another.
    Returns:
        (kkt, x, y, reduced_cost, row_activity): KKT in minimisation form, the clipped x (n,), the
        projected y (m,, problem's sense), c - A'y (n,, problem's sense) and A x (m,).
    """
    sense = int(problem.sense)
    n, m = problem.n_cols, problem.n_rows
    xo, y_min, rc, ax = np.empty(n), np.empty(m), np.empty(n), np.empty(m)
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    cp, ci, cv = problem.a_indptr, problem.a_indices, problem.a_data
    if _zero_point(problem, x, y):  # A x = 0 and A'y = 0 whatever A holds: the same sums without the matrix
        cp, ci, cv = np.zeros_like(cp), ci[:0], cv[:0]
    if spans is None:
        pobj, dobj, pres2, dres2, b2, c2, worth = kkt_pass(
            problem.cost, problem.col_lower, problem.col_upper, problem.row_lower, problem.row_upper,
            cp, ci, cv, x, y, float(sense), float(tol), xo, y_min, rc, ax)
    else:
        pobj, dobj, pres2, dres2, b2, c2, worth = _kkt_in_spans(problem, cp, ci, cv, x, y, float(sense), float(tol),
                                                                xo, y_min, rc, ax, spans, run)
    off = sense * problem.offset
    p, d = pobj + off, dobj + off
    pn, dn = math.sqrt(pres2), math.sqrt(dres2)
    kkt = KKT(primal_objective=p, dual_objective=d, primal_residual=pn, dual_residual=dn,
              primal_residual_rel=pn / (1.0 + math.sqrt(b2)), dual_residual_rel=dn / (1.0 + math.sqrt(c2)),
              gap_rel=relative_gap(p, d, off), violation_worth_rel=worth / objective_scale(p, d, off),
              objective_constant=off, **_rows(ax, problem))
    return kkt, xo, sense * y_min, sense * rc, ax


def _kkt_in_spans(problem: Problem, cp, ci, cv, x, y, sense: float, tol: float, xo, y_min, rc, ax,
                  spans: list[tuple[int, int]], run: Callable | None) -> tuple:
    """:func:`kkt_pass`'s sums with its column pass split into ``spans`` (:func:`original_kkt`'s arguments)."""
    ends = [0] + [b for _, b in spans]
    if not spans or ends[-1] != problem.n_cols or any(a != e or a > b for (a, b), e in zip(spans, ends, strict=False)):
        raise ValueError(f"original_kkt: spans {spans[:3]}... do not cover the {problem.n_cols} columns in order")
    lc, uc = problem.row_lower, problem.row_upper
    b2, far = kkt_rows_first(lc, uc, y, sense, y_min, ax)
    work = [(a, b) for a, b in spans if b > a] or [(0, 0)]  # the non-empty ranges start at distinct columns
    outs = {a: ax if i == 0 else np.zeros(problem.n_rows) for i, (a, _) in enumerate(work)}

    def columns(a: int, b: int):
        return kkt_columns(problem.cost, problem.col_lower, problem.col_upper, cp, ci, cv, x, y_min, sense, tol,
                           a, b, xo, rc, outs[a])

    parts = run(columns, work) if run is not None else [columns(a, b) for a, b in work]
    pobj, dobj, dres2, c2 = parts[0]
    for (a, _), (p_, d_, r_, c_) in zip(work[1:], parts[1:], strict=True):
        ax += outs[a]
        pobj, dobj, dres2, c2 = pobj + p_, dobj + d_, dres2 + r_, c2 + c_
    pres2, worth, dobj, b2 = kkt_rows_last(lc, uc, ax, y_min, far, b2, dobj)
    return pobj, dobj, pres2, dres2, b2, c2, worth


def row_sentence(problem: Problem, measured, tol: float) -> str:
    """A clause naming the worst row of a point :func:`original_kkt` measured (``measured`` = its output) that
    misses ``solver.lp.termination.row_tolerance`` (``tol``): its name, activity, bound and relative violation."""
    k, ax = measured[0], measured[4]
    i = k.worst_row
    lo, hi = problem.row_lower[i], problem.row_upper[i]
    bound, side = (lo, ">=") if ax[i] < lo else (hi, "<=")
    return (f"row {problem.row_names[i]!r} ({side} {bound:.6g}) is at {ax[i]:.6g}, {k.row_violation_rel:.1e} relative "
            f"to max(1, |bound|, the row's largest |coefficient|), above the per-row tolerance {row_tolerance(tol):g} (relative primal residual "
            f"{k.primal_residual_rel:.1e} norm-wise)")


def _rows(ax: np.ndarray, problem: Problem) -> dict:
    """KKT's row-wise fields of A x (m,) on ``problem`` (``solver.lp.termination.row_violation_rel``)."""
    rel, i = row_violation_rel(ax, problem.row_lower, problem.row_upper,
                               row_absmax(problem.a_indices, problem.a_data, problem.n_rows))
    return {"row_violation_rel": rel, "worst_row": i}


def measured_result(problem: Problem, measured, status: Status, message: str, tol: float, iterations: int,
                    seconds: dict, state: SolverState, warm_started: bool) -> SolveResult:
    """A complete SolveResult of the point :func:`original_kkt` measured (``measured`` = its output: KKT,
    x (n,), y (m,), reduced cost (n,), A x (m,)), in original units and the problem's sense.

    Args:
        problem: the LP the point was measured on.
        status, message, iterations, seconds, warm_started: the result's fields as given.
        tol: ``point_feasible`` is the relative primal residual <= tol.
        state: the state for the next warm start (its x and y should be copies of the result's).
    """
    kkt, x, y, rc, ax = measured
    viol = np.maximum(problem.row_lower - ax, ax - problem.row_upper)
    return SolveResult(
        status=status, x=x, y=y, reduced_cost=rc, row_activity=ax,
        objective=float(problem.cost @ x + problem.offset), dual_objective=int(problem.sense) * kkt.dual_objective,
        primal_residual_rel=kkt.primal_residual_rel, dual_residual_rel=kkt.dual_residual_rel,
        gap_rel=kkt.gap_rel, iterations=iterations, seconds=seconds,
        point_feasible=bool(kkt.primal_residual_rel <= tol), state=state, warm_started=warm_started,
        message=message, max_row_violation=float(np.max(np.maximum(viol, 0.0), initial=0.0)))


def original_kkt_ref(problem: Problem, x: np.ndarray, y: np.ndarray, tol: float = 0.0):
    """numpy twin of :func:`original_kkt` (composed of ``solver.lp.termination``'s functions)."""
    sense = int(problem.sense)
    n, m = problem.n_cols, problem.n_rows
    x = np.asarray(x, dtype=np.float64)
    x = np.minimum(np.maximum(np.where(np.isfinite(x), x, 0.0), problem.col_lower), problem.col_upper)
    y_min = sense * np.nan_to_num(np.asarray(y, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
    y_min = (np.where(np.isfinite(problem.row_lower), np.maximum(y_min, 0.0), 0.0)
             + np.where(np.isfinite(problem.row_upper), np.minimum(y_min, 0.0), 0.0))
    c_min = sense * problem.cost
    ax, aty = np.empty(m), np.empty(n)
    kernels_ref.spmv_csc_ref(problem.a_indptr, problem.a_indices, problem.a_data, x, ax)
    kernels_ref.spmv_csr_ref(problem.a_indptr, problem.a_indices, problem.a_data, y_min, aty)
    rc = c_min - aty
    r = (np.where(np.isfinite(problem.col_lower), np.maximum(rc, 0.0), 0.0)
         + np.where(np.isfinite(problem.col_upper), np.minimum(rc, 0.0), 0.0))
    lp = OrigLP(c=c_min, lc=problem.row_lower, uc=problem.row_upper, lv=problem.col_lower,
                uv=problem.col_upper, b_norm=combined_bound_norm(problem.row_lower, problem.row_upper),
                c_norm=float(np.linalg.norm(problem.cost)), offset=sense * problem.offset,
                constant=sense * problem.offset)
    kkt = kkt_from_original(lp, x, ax, y_min, aty, r, tol)
    worth = float(np.sum(np.abs(y_min * (ax - np.minimum(np.maximum(ax, lp.lc), lp.uc)))))
    kkt = replace(kkt, violation_worth_rel=worth / objective_scale(kkt.primal_objective, kkt.dual_objective,
                                                                   lp.constant),
                  **_rows(ax, problem))
    return kkt, x, sense * y_min, sense * rc, ax
