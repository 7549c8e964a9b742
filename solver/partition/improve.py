"""A partitioned MILP round's whole-model bound, the parts' shares of its gap, and RENS on the parts that hold it.

The parts of a MILP round stop at their first integer point (:func:`cheap_part_settings`): no dual ascent,
no RENS on their own, whose Lagrangian bound is loose (it prices the shared rows only by the part's own
share). The merged point is then judged against ONE bound of the whole model (:func:`whole_bound`): the
choice-row Lagrangian (``solver.integer.bound.ChoiceLagrangian``: the choice rows stay in the inner problem,
Geoffrion 1974) maximised over the coupling rows' duals by ``solver.integer.ascent.coupling_dual_ascent``
(projected subgradient, Polyak's step), started from the merged duals, the same bound a monolithic round
proves its gap with. Every evaluated value is a valid bound, so the round's gap stays a proven one.

When that gap is above the round's target (``mip_gap_tol``), the gap is split over the parts
(:func:`gap_by_part`) and the parts that hold most of it get one RENS step each (:func:`improve_part`,
Berthold 2014, ``solver.integer.submip.rens``) on the executor, in parallel. The split is exact: in
minimisation form, with z = c - A'y the reduced costs (kept choice rows' duals 0), x(y) the inner problem's
minimiser and b_i(y) the row bound y_i's sign points at,

    c'x - L(y) = sum_j z_j (x_j - x_j(y)) + sum_i y_i (a_i x - b_i(y))   (+ L's rounding allowance),

and every column term belongs to the part of its column, every row term of a row of one client to that
client's part, and a shared row's term to the parts by their activity on it minus their share of its bound.
Each part's sum is >= 0 for a point feasible in its part (it is the part's own gap to its Lagrangian at y
with its shares), so the sum over the parts is the whole gap.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict

import numpy as np

from solver.model.problem import Problem
from solver.model.settings import Settings

FIRST_POINT_GAP = 1.0  #: a part's own gap target: its first integer point (100% of its loose bound) is kept
KEEP_UNIMPROVED = 0.5  #: RENS goes to the parts with the largest gap until the rest hold <= this x the target


PART_ITERATION_LIMIT = 16_384
"""A MILP part's iteration limit (``Settings.iteration_limit``; the round's own limit when lower). A part stops at
its first integer point, which the relaxation stages find within a few hundred iterations (LB and Sia parts:
128-7,000). A part its shares leave infeasible without a quick certificate used to double its stages' budget up
to the round's 1,000,000 iterations, then dive with as many again: LB 256 x 32 at K = 4 (helper-166), round 3,
part 3 ran 1,000,000 iterations in 81-107 s before it ended PRIMAL_INFEASIBLE, and the round was then solved whole
anyway (1.8 s). A part that ends at this limit without a point fails the round's parts the same way: the whole
solve follows."""


def cheap_part_settings(settings: Settings) -> Settings:
    """The settings a MILP part is solved with: the round's, with ``threads = 1``, the part's own gap target
    :data:`FIRST_POINT_GAP` (its first stage's rounded point ends its solve), no RENS on a found point
    (``integer_submip_gap`` inf; RENS still runs when rounding finds none) and no dual ascent of its own
    (``integer_dual_ascent_steps`` 0: the whole model's ascent after the merge proves the gap); a small part
    rounds its relaxation too instead of going to HiGHS MIP first (``integer_highs_max_nonzeros`` 0: that rule
    is for a whole small model, and a part's first rounded point is what the merge needs), and at most
    :data:`PART_ITERATION_LIMIT` PDHG iterations per LP solve (its relaxation stages, each dive re-solve)."""
    return Settings(**{**asdict(settings), "threads": 1, "mip_gap_tol": FIRST_POINT_GAP,
                       "integer_submip_gap": math.inf, "integer_dual_ascent_steps": 0,
                       "integer_highs_max_nonzeros": 0,
                       "iteration_limit": min(settings.iteration_limit, PART_ITERATION_LIMIT)})  # inf allowed


class WholeBound:
    """The whole model's choice-row Lagrangian (built once per round: ``detect_structure`` + kept choice rows).

    Args:
        problem: the whole MILP (n columns, m rows).
    """

    def __init__(self, problem: Problem):
        from solver.integer.bound import ChoiceLagrangian
        from solver.integer.structure import detect_structure

        t = time.perf_counter()
        self.problem = problem
        st = detect_structure(problem)
        self.lag = ChoiceLagrangian(problem, st.lower, st.upper, st.choice_rows, st.choice_kind, st.csr_indptr,
                                    st.csr_indices)
        self.seconds = time.perf_counter() - t

    def ascend(self, y_start: np.ndarray | None, objective: float, gap_target: float, steps: int,
               seconds: float = math.inf, resume=None) -> tuple[float, np.ndarray, dict]:
        """(bound, (m,) duals, info): the best of L over ``steps`` dual ascent evaluations from ``y_start`` (m,)
        (HiGHS's sign convention, problem's sense), stopping once ``objective`` is proven within ``gap_target``
        (``solver.integer.ascent.coupling_dual_ascent``; at least the start value is evaluated). With ``resume``
        (``info["state"]`` of an earlier call) the same run goes on, Polyak's level and stall count included,
        ``y_start`` unused; it evaluates nothing when that run's best already proves the target or ``steps`` is 0
        (a fresh run evaluates its start at least)."""
        from solver.integer.ascent import coupling_dual_ascent

        return coupling_dual_ascent(self.lag, y_start, objective, gap_target,
                                    max_steps=max(0 if resume is not None else 1, int(steps)),
                                    seconds=seconds, resume=resume)


def gap_by_part(wb: WholeBound, y: np.ndarray, x: np.ndarray, col_part: np.ndarray, k: int,
                rows_sh: np.ndarray, eff: np.ndarray, global_part: int = 0) -> np.ndarray:
    """(k,) each part's share of the gap between ``x``'s objective and the Lagrangian at ``y`` (module
    docstring), in the problem's objective units (minimisation form: >= 0 for a point feasible in its part).
    One evaluation of the Lagrangian (its minimiser and reduced costs come from the same pass).

    Args:
        wb: the whole model's Lagrangian.
        y: (m,) row duals (HiGHS convention, problem's sense), e.g. the ascent's best.
        x: (n,) the merged integer point.
        col_part: (n,) part of every column, -1 for a global column.
        k: number of parts.
        rows_sh: (ns,) the shared rows; eff: (k, ns) each part's share of their bounds.
        global_part: the part whose values the merge gave the global columns
            (``solver.partition.split.combine_points``): their terms, and those of rows only they touch, are its.
    """
    p = wb.problem
    lag = wb.lag
    s = float(p.sense)
    value, x_in, _ = lag.evaluate(y)
    if x_in is None:
        return np.full(k, np.nan)
    x_in = x_in.copy()
    z = lag.last_reduced_costs()  # of the evaluation above: minimisation form, kept choice rows' duals 0
    ym = s * np.nan_to_num(np.asarray(y, dtype=np.float64))
    rl, ru = p.row_lower, p.row_upper
    ym = np.where(lag.dualized, ym, 0.0)
    ym = np.where(((ym > 0) & ~np.isfinite(rl)) | ((ym < 0) & ~np.isfinite(ru)), 0.0, ym)
    b = np.where(ym > 0, np.where(np.isfinite(rl), rl, 0.0), np.where(ym < 0, np.where(np.isfinite(ru), ru, 0.0), 0.0))
    cp = np.where(col_part >= 0, col_part, min(max(int(global_part), 0), k - 1))
    out = np.bincount(cp, weights=z * (x - x_in), minlength=k)[:k].astype(np.float64)
    # a_ij x_j y_i per nonzero to its column's part; each row's -y_i b_i by the parts' presence / shares
    nnz_col = np.repeat(np.arange(p.n_cols, dtype=np.int64), np.diff(p.a_indptr))
    rows = p.a_indices
    key = cp[nnz_col]
    out += np.bincount(key, weights=ym[rows] * p.a_data * x[nnz_col], minlength=k)[:k]
    flat = np.bincount(rows * k + key, minlength=p.n_rows * k).reshape(p.n_rows, k).astype(np.float64)
    tot = flat.sum(axis=1, keepdims=True)
    w = np.divide(flat, tot, out=np.zeros_like(flat), where=tot > 0)
    if rows_sh.size:
        w[rows_sh] = np.asarray(eff, dtype=np.float64).T
    out -= (w * (ym * b)[:, None]).sum(axis=0)
    return out


def choose_parts(contrib: np.ndarray, target_abs: float) -> list[int]:
    """The parts that get RENS: by decreasing share of the gap, until the others hold at most
    :data:`KEEP_UNIMPROVED` x ``target_abs`` (the round's gap target in objective units)."""
    c = np.nan_to_num(np.asarray(contrib, dtype=np.float64), nan=np.inf)
    order = [int(p) for p in np.argsort(-c, kind="stable") if c[p] > 0]
    rest = float(np.clip(c, 0.0, None)[np.isfinite(c)].sum()) + (np.inf if not np.isfinite(c).all() else 0.0)
    chosen = []
    for p in order:
        if rest <= KEEP_UNIMPROVED * target_abs:
            break
        chosen.append(p)
        rest -= c[p] if np.isfinite(c[p]) else 0.0
    return chosen


def improve_part(index: int, problem: Problem, x_lp: np.ndarray, y_lp: np.ndarray | None, x_int: np.ndarray,
                 settings: Settings, seconds: float) -> dict:
    """Worker: RENS on one part around its LP point, its continuous columns completed exactly.

    Args:
        index: the task's index (returned).
        problem: the part's MILP (n_p columns).
        x_lp, y_lp: (n_p,), (m_p,) the part's last relaxation point (its state).
        x_int: (n_p,) the part's integer point.
        settings: the round's settings (``mip_gap_tol``: HiGHS stops the sub-MIP at half of it, >= 1e-4).
        seconds: wall budget of RENS (seconds).
    Returns:
        ``{"index", "x" ((n_p,) a better feasible point or None), "objective_before", "objective_after",
        "seconds", "highs_status", "max_rss_mb"}``.
    """
    from solver.integer.check import check_point
    from solver.integer.resolve import fix_and_resolve
    from solver.integer.submip import rens
    from solver.partition.executor import peak_rss_mb, reset_peak_rss

    reset_peak_rss()
    t = time.perf_counter()
    before = problem.objective(x_int)
    xr, info = rens(problem, x_lp, seconds, mip_rel_gap=max(1e-4, 0.5 * float(settings.mip_gap_tol)))
    if xr is not None:
        xr, _ = fix_and_resolve(problem, xr, settings, x_lp, y_lp, resolve_seconds=max(0.5, seconds))
    better = (xr is not None and check_point(problem, xr)["ok"]
              and problem.sense * (problem.objective(xr) - before) < 0)
    rss = peak_rss_mb()
    return {"index": index, "x": xr if better else None, "objective_before": float(before),
            "objective_after": float(problem.objective(xr)) if better else float(before),
            "seconds": time.perf_counter() - t, "highs_status": info.get("highs_status", ""), "max_rss_mb": rss}
