"""Fallback when the heuristics find no integer point: HiGHS's MIP solver, time-limited, seeded.

HiGHS (branch-and-cut) runs on the full problem with ``time_limit`` = the budget and a wall-clock
deadline enforced through its MIP interrupt callback (``solver.highs_bridge.run``; HiGHS's MIP
clock is not always reliable). It is seeded with the best partial assignment the heuristics produced
(``Highs.setSolution`` with the integer columns only: HiGHS completes a partial solution by solving the
LP over the rest). Its incumbent, if any, is returned with integer columns rounded to exact integers;
the caller then finishes the continuous part exactly and re-checks the point.
"""

from __future__ import annotations

import math
import time

import numpy as np

from solver.highs_bridge import (
    mip_info,
    new_highs,
    read_point,
    run,
    set_partial_solution,
    status_text,
    to_highs_lp,
)
from solver.model.problem import Problem

SEED_MAX = 1e12  #: seed values larger in magnitude are not passed to HiGHS


def highs_mip(problem: Problem, seconds: float, seed: np.ndarray | None = None,
              mip_rel_gap: float | None = None) -> tuple[np.ndarray | None, dict]:
    """Run HiGHS MIP on ``problem`` for at most ``seconds`` (wall); returns (x or None, info).

    Args:
        problem: the MILP (n columns).
        seconds: time budget in seconds (must be finite and > 0 to run).
        seed: (n,) partial assignment: values of integer columns are passed to HiGHS (NaN = unset); values
            outside the column's bounds or above ``SEED_MAX`` in magnitude are left out.
        mip_rel_gap: HiGHS's relative gap at which branch-and-cut stops (None: HiGHS's default, 1e-4).
    Returns:
        x: (n,) HiGHS incumbent with integer columns rounded to integers, or None.
        info: {"highs_status", "seconds", "mip_dual_bound", "mip_gap", "seeded"}.
    """
    t0 = time.perf_counter()
    info = {"highs_status": "not run", "seconds": 0.0, "mip_dual_bound": math.nan, "mip_gap": math.nan,
            "seeded": False}
    if not (seconds > 0):
        return None, info
    h = new_highs()
    h.passModel(to_highs_lp(problem, with_names=False))
    if mip_rel_gap is not None:
        h.setOptionValue("mip_rel_gap", float(mip_rel_gap))
    if seed is not None:
        # only values a solution could take: inside the column's bounds and of a sane size (HiGHS 1.16
        # segfaults in run() on a seed value of 1e18, and answers "Solve error" to one of 1e77; a diverged
        # relaxation rounds to such values)
        seed = np.asarray(seed, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            sane = (np.isfinite(seed) & (np.abs(seed) <= SEED_MAX) & (seed >= problem.col_lower)
                    & (seed <= problem.col_upper))
        idx = np.flatnonzero(problem.integrality & sane)
        if idx.size:
            set_partial_solution(h, idx, seed[idx])
            info["seeded"] = True
    run(h, is_mip=True, time_limit_seconds=seconds)
    info["highs_status"] = status_text(h)
    info.update(mip_info(h))
    x = read_point(h, problem.n_cols, is_mip=True)
    if x is not None:
        it = problem.integrality
        x[it] = np.round(x[it])
    info["seconds"] = time.perf_counter() - t0
    return x, info
