"""The result of a solve (LP) or of integerization (MILP)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from solver.model.state import SolverState
from solver.model.status import Status


@dataclass(eq=False)
class SolveResult:
    """Everything a solve returns, in the problem's original units and sense.

    Shapes: n columns, m rows of the solved problem.

    Attributes:
        status: termination status.
        x: (n,) primal point (for a MILP after integerization: the integer allocation).
        y: (m,) row duals (HiGHS sign convention).
        reduced_cost: (n,) c - A'y.
        row_activity: (m,) A x.
        objective: cost @ x + offset of the returned point, in the problem's sense.
        dual_objective: the dual objective of y (a bound on the LP optimum), in the problem's sense.
        primal_residual_rel: ||A x - proj_[rl,ru](A x)||_2 / (1 + ||b||_2) (b: finite row bounds).
        dual_residual_rel: ||c - A'y - proj(reduced cost)||_2 / (1 + ||c||_2).
        gap_rel: |objective - dual_objective| / (1 + |objective| + |dual_objective|).
        iterations: iterations taken (PDHG iterations; 0 for trivial problems).
        seconds: wall seconds per phase, at least ``{"solve": ..., "total": ...}``; LP solves add
            ``setup`` (reduction of empty rows/columns, scaling), ``iterate`` (PDHG iterations) and, when
            HiGHS presolve ran, ``presolve`` (HiGHS presolve), ``reduced_solve``, ``postsolve`` and ``polish``.
        point_feasible: True when x is feasible within tolerance (MILP: exactly, see integerization).
        state: warm-start data for the next round.
        warm_started: True when the solve started from a previous iterate.
        message: one human sentence on why it stopped (or why the warm start was refused).
        max_row_violation: max absolute row violation of x (original units).
        mip: MILP report (integer objective, lp_bound, gap, heuristic steps) or None for an LP.
        iis: for a PRIMAL_INFEASIBLE result, the conflicting rows and bounds HiGHS isolated
            (``solver.highs_bridge.find_iis``: found, status, rows, columns, n_rows, n_columns, seconds),
            else None.
        engine: the LP engine that produced the point, ``"pdhg"`` or ``"alm"`` (``solver.lp.engine_choice``),
            ``"presolve"`` when HiGHS presolve settled the LP alone (``solver.lp.presolve.PRESOLVE_ENGINE``);
            "" when no LP engine ran, e.g. a MILP result, whose ``state.engine`` names its relaxation's.
        engine_reason: why that engine ran: one sentence with the numbers the choice used.
    """

    status: Status
    x: np.ndarray
    y: np.ndarray
    reduced_cost: np.ndarray
    row_activity: np.ndarray
    objective: float
    dual_objective: float
    primal_residual_rel: float
    dual_residual_rel: float
    gap_rel: float
    iterations: int
    seconds: dict = field(default_factory=dict)
    point_feasible: bool = False
    state: SolverState | None = None
    warm_started: bool = False
    message: str = ""
    max_row_violation: float = float("nan")
    mip: dict | None = None
    iis: dict | None = None
    engine: str = ""
    engine_reason: str = ""
