"""Relax-and-fix dive: what the pipeline does when the rounded integers leave the continuous LP infeasible.

Rounding checks each row on its own; rows coupled through continuous columns can still make the
fixed LP infeasible. Example (load balancing, r <= x): a first-order LP optimum spreads a shard over
many servers with tiny fractions (equal cost, degenerate), memory admits only some of those copies,
and the band rows then cannot be met. The dive (the "relax-and-fix" / diving family of MIP
heuristics, e.g. Berthold, "Primal heuristics for MIP", 2006) fixes the integer columns the rounding is
sure about, re-solves the LP relaxation over the rest warm with the LP core, and rounds again:

- fixed: integer columns whose rounded value equals the preferred rounding of their LP value (the
  rounding did not have to reject it) and lies within ``SURE`` of the LP value; if that fixes fewer
  than half of the remaining free integer columns, the accepted preferred roundings closest to their LP
  values are fixed as well (a column the rounding had to reject is never fixed by this rule);
- free: the others keep their (inward-rounded) bounds in the LP.

At most ``max_dives`` LP re-solves, each within ``time_limit_seconds`` and at most twice the relaxation's
iterations (at least ``DIVE_MIN_ITERATIONS``); each round of fixing shrinks the free set, so the dive ends.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np

from solver.integer.resolve import fix_and_resolve
from solver.integer.rounding import run_rounding, targets
from solver.integer.structure import Structure
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status

SURE = 0.1  #: an integer column within this of its LP value counts as sure
DIVE_MIN_ITERATIONS = 2000  #: a dive re-solve may always run this many PDHG iterations


def dive(problem: Problem, st: Structure, x_lp: np.ndarray, y_lp: np.ndarray, x_round: np.ndarray,
         settings: Settings, prev: np.ndarray | None, lp_state: SolverState | None, max_dives: int = 3,
         resolve_seconds: float = 1.0) -> tuple[np.ndarray | None, dict]:
    """Try up to ``max_dives`` fix / LP re-solve / round cycles; returns (exact point or None, info).

    Args:
        problem, st: the MILP and its structure.
        x_lp, y_lp: (n,), (m,) relaxation point.
        x_round: (n,) the failed rounding (integer columns).
        settings: solver settings for the LP core; ``time_limit_seconds`` bounds the whole dive.
        prev: previous round's integer allocation for tie-breaking, or None.
        lp_state: the relaxation's state (step size / primal weight reuse), or None.
    Returns:
        x: (n,) exactly checked point, or None; info: {"dives", "fixed", "seconds", "reason"}.
    """
    from solver.lp.dispatch import solve as lp_solve

    t0 = time.perf_counter()
    it = problem.integrality
    lo, up = st.lower.copy(), st.upper.copy()
    info = {"dives": 0, "fixed": 0, "reason": ""}
    x_cur, y_cur, state = x_lp, y_lp, lp_state
    x_int = x_round
    # each re-solve gets at most twice the relaxation's iterations (a fixed LP that is infeasible but not
    # certified otherwise runs to the iteration limit: LB 1024x128 spent 290 s in one such re-solve)
    budget = int(settings.iteration_limit)
    if lp_state is not None and lp_state.iterations:
        budget = min(budget, max(DIVE_MIN_ITERATIONS, 2 * int(lp_state.iterations)))
    for k in range(max_dives):
        left = float(settings.time_limit_seconds) - (time.perf_counter() - t0)
        if left <= 0:
            info["reason"] = "time limit reached"
            break
        pref, _ = targets(problem, replace(st, lower=lo, upper=up), x_cur)
        free = it & (lo != up)
        sure = free & (x_int == pref) & (np.abs(x_int - x_cur) <= SURE)
        nfree = int(free.sum())
        if nfree == 0:
            break
        if sure.sum() * 2 < nfree:
            # more progress: the accepted preferred roundings with the largest LP values (never a column
            # the rounding had to reject: the LP re-solve decides those)
            cand = np.flatnonzero(free & ~sure & (x_int == pref))
            conf = -np.abs(x_int[cand] - x_cur[cand])
            extra = cand[np.argsort(-conf, kind="stable")[: max(1, nfree // 2 - int(sure.sum()))]]
            sure[extra] = True
        lo = np.where(sure, x_int, lo)
        up = np.where(sure, x_int, up)
        info["fixed"] = int(np.count_nonzero(it & (lo == up)))
        info["dives"] = k + 1
        relaxed = problem.replace(integrality=np.zeros(problem.n_cols, dtype=bool), col_lower=lo, col_upper=up)
        ws = SolverState(x=np.clip(x_cur, lo, up), y=y_cur.copy(),
                         step_size=state.step_size if state is not None else float("nan"),
                         primal_weight=state.primal_weight if state is not None else float("nan"))
        res = lp_solve(relaxed, replace(settings, time_limit_seconds=left, iteration_limit=max(budget, 0)), ws)
        if res.status in (Status.PRIMAL_INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED, Status.DUAL_INFEASIBLE):
            info["reason"] = f"LP after fixing {info['fixed']} integer columns: {res.status.name}"
            break
        x_cur, y_cur, state = np.asarray(res.x, dtype=np.float64), np.asarray(res.y, dtype=np.float64), res.state
        out = run_rounding(problem, replace(st, lower=lo, upper=up), x_cur, prev)
        if out.rows_violated:
            x_int = out.x
            continue
        for cand_x in (out.x, out.x_before_fill):
            xb, rinfo = fix_and_resolve(problem, cand_x, settings, x_cur, y_cur, resolve_seconds=resolve_seconds)
            if xb is not None:
                info["seconds"] = time.perf_counter() - t0
                return xb, info
            info["reason"] = rinfo.get("reason", "")
        x_int = out.x
    info["seconds"] = time.perf_counter() - t0
    return None, info
