"""Exact feasibility check of an integer point against the raw problem.

The acceptance rule copter promises for MILP results (docs/DESIGN.md "Integerization"): every bound holds exactly
(``col_lower <= x <= col_upper`` with no tolerance), every integer column holds an exact integer, and
every row holds to ``1e-9 * max(1, |violated bound|)`` (floating-point activity ``A @ x``).
"""

from __future__ import annotations

import numpy as np

from solver.model.problem import Problem

ROW_TOL_REL = 1e-9  #: row tolerance relative to max(1, |bound|)


def row_violation_rel(problem: Problem, x: np.ndarray) -> np.ndarray:
    """(m,) row violations of the (n,) point x, each divided by max(1, |violated bound|)."""
    act = problem.row_activity(x)
    rl, ru = problem.row_lower, problem.row_upper
    with np.errstate(invalid="ignore"):
        low = np.where(np.isfinite(rl), (rl - act) / np.maximum(1.0, np.abs(rl)), 0.0)
        upp = np.where(np.isfinite(ru), (act - ru) / np.maximum(1.0, np.abs(ru)), 0.0)
    return np.maximum(np.maximum(low, upp), 0.0)


def check_point(problem: Problem, x: np.ndarray) -> dict:
    """Judge the (n,) point x exactly.

    Returns:
        dict with ``bounds_ok``, ``integral_ok`` (bools), ``max_row_violation_rel`` (float),
        ``max_row_violation`` (absolute, original units), ``ok`` (all three hold, rows within 1e-9 rel).
    """
    x = np.asarray(x, dtype=np.float64)
    finite = bool(np.all(np.isfinite(x)))
    bounds_ok = finite and bool(np.all(x >= problem.col_lower) and np.all(x <= problem.col_upper))
    xi = x[problem.integrality]
    integral_ok = finite and bool(np.all(xi == np.round(xi)))
    if not finite:
        return {"bounds_ok": False, "integral_ok": False, "max_row_violation_rel": float("inf"),
                "max_row_violation": float("inf"), "ok": False}
    rel = row_violation_rel(problem, x)
    act = problem.row_activity(x)
    with np.errstate(invalid="ignore"):
        absv = np.maximum(np.maximum(np.where(np.isfinite(problem.row_lower), problem.row_lower - act, 0.0),
                                     np.where(np.isfinite(problem.row_upper), act - problem.row_upper, 0.0)),
                          0.0)
    mrel = float(rel.max()) if rel.size else 0.0
    return {"bounds_ok": bounds_ok, "integral_ok": integral_ok, "max_row_violation_rel": mrel,
            "max_row_violation": float(absv.max()) if absv.size else 0.0,
            "ok": bounds_ok and integral_ok and mrel <= ROW_TOL_REL}
