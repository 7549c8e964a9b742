"""Termination status of a solve: an append-only integer enum (values never change meaning).

Follows the conventions of HiGHS/PDLP/OSQP: the termination reason is separate from whether the
returned point is feasible (``SolveResult.point_feasible``).
"""

from __future__ import annotations

from enum import IntEnum


class Status(IntEnum):
    """Why a solve stopped. Append new members at the end only."""

    OPTIMAL = 0              #: relative KKT residuals and gap within tolerance
    PRIMAL_INFEASIBLE = 1    #: a dual ray certifies that no feasible point exists
    DUAL_INFEASIBLE = 2      #: a primal ray certifies dual infeasibility (unbounded if primal feasible)
    TIME_LIMIT = 3           #: stopped by ``time_limit_seconds``
    ITERATION_LIMIT = 4      #: stopped by ``iteration_limit``
    NUMERICAL_ERROR = 5      #: NaN/overflow or a stall the method cannot recover from
    FEASIBLE = 6             #: MILP: an integer-feasible point, gap to the LP bound above tolerance
    NO_INTEGER_SOLUTION = 7  #: MILP: no integer-feasible point was found
    INFEASIBLE_OR_UNBOUNDED = 8  #: the model has no optimum; which of the two is not known

    @property
    def is_success(self) -> bool:
        """OPTIMAL or FEASIBLE: the round produced a usable allocation (exit code 0)."""
        return self in (Status.OPTIMAL, Status.FEASIBLE)

    @property
    def is_model_failure(self) -> bool:
        """The model itself has no solution (infeasible / unbounded): exit code 4."""
        return self in (Status.PRIMAL_INFEASIBLE, Status.DUAL_INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED)
