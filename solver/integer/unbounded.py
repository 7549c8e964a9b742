"""Telling an unbounded MILP from an infeasible one when all that is known is "no optimum".

A MILP round learns that its model has no optimum from its LP relaxation (a primal ray: DUAL_INFEASIBLE, or
HiGHS's "infeasible or unbounded") or from HiGHS MIP ("Primal infeasible or unbounded", "Unbounded"). That
alone is INFEASIBLE_OR_UNBOUNDED: ``max x, x - y <= 0.5, x integer free, y >= 0`` is unbounded, while
``min -x, 2x - 2y = 1, x, y integer free`` has the same unbounded relaxation and no integer point at all. What
settles it is one integer-feasible point: a MILP with rational data that has a feasible point and no optimum
is unbounded (its relaxation's recession cone is its integer hull's, Meyer 1974), so the round is
DUAL_INFEASIBLE, copter's (and ``highs_bridge``'s, for HiGHS's kUnbounded) "unbounded" status, reported at
that point; HiGHS at its defaults says only "infeasible or unbounded" on these models (it proves "Unbounded"
with presolve off).

:func:`settle_no_optimum` takes the round's own integer point when it has one (re-checked exactly), else asks
HiGHS MIP for any integer-feasible point of the model with its costs set to 0 (a feasibility problem: never
unbounded), within the round's HiGHS MIP budget: a point makes the round DUAL_INFEASIBLE, HiGHS's proof that
none exists PRIMAL_INFEASIBLE, anything else (its budget, no HiGHS MIP allowed) leaves INFEASIBLE_OR_UNBOUNDED.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from solver.integer.check import check_point
from solver.model.problem import Problem
from solver.model.status import Status


@dataclass
class Verdict:
    """status: DUAL_INFEASIBLE (unbounded: ``x`` an integer-feasible point), PRIMAL_INFEASIBLE (HiGHS proved
    that no integer point exists; ``x`` None) or INFEASIBLE_OR_UNBOUNDED (not settled; ``x`` None); ``clause``
    the message's part saying why; ``step`` the report's entry of the HiGHS feasibility run, or None."""

    status: Status
    x: np.ndarray | None
    clause: str
    step: dict | None = None


def feasible(problem: Problem, x: np.ndarray | None) -> bool:
    """x (n,) is an integer point that holds exactly (``check_point``: bounds, integrality, rows within 1e-9)."""
    return x is not None and bool(check_point(problem, x)["ok"])


def settle_no_optimum(problem: Problem, point: np.ndarray | None, seconds: float, threads: int | None = None,
                      who: str = "a known integer point") -> Verdict:
    """The verdict on a MILP known to have no optimum (module docstring).

    Args:
        problem: the MILP (n columns).
        point: (n,) an integer point the round already has (its incumbent, HiGHS's), or None.
        seconds: HiGHS MIP's budget for the feasibility run (<= 0: not run).
        threads: HiGHS's thread count (``Settings.threads``).
        who: what ``point`` is, for the message.
    Returns:
        Verdict; with a point, ``clause`` names its objective (problem's sense).
    """
    if feasible(problem, point):
        return Verdict(Status.DUAL_INFEASIBLE, np.asarray(point, dtype=np.float64),
                       f"{who} is integer-feasible (objective {problem.objective(point):.6g})")
    if not seconds > 0:
        return Verdict(Status.INFEASIBLE_OR_UNBOUNDED, None, "no integer-feasible point is known")
    from solver.integer.fallback import highs_mip

    zero = problem.replace(cost=np.zeros(problem.n_cols), offset=0.0)
    x, info = highs_mip(zero, seconds, threads=threads)
    step = {"step": "feasibility", "changed": 0, **info}
    status = info["highs_status"]
    if feasible(problem, x):
        return Verdict(Status.DUAL_INFEASIBLE, x, "HiGHS MIP found an integer-feasible point of the model with "
                       f"its costs set to 0 (objective {problem.objective(x):.6g})", step)
    if status == "Infeasible":
        return Verdict(Status.PRIMAL_INFEASIBLE, None, "HiGHS MIP proved that the model with its costs set to 0 "
                       "has no integer-feasible point", step)
    return Verdict(Status.INFEASIBLE_OR_UNBOUNDED, None, "HiGHS MIP found no integer-feasible point of the model "
                   f"with its costs set to 0 ({status}, {info['seconds']:.3g} s)", step)
