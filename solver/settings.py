"""Solver settings: one documented dataclass, every limit in seconds.

Defaults follow the r2HPDHG / cuPDLPx recipe (Lu, Peng, Yang 2025, arXiv 2507.14051) and PDLP
(Applegate et al., arXiv 2106.04756). The LP core owns and may extend this module.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class Settings:
    """Parameters of the proximal-point LP core and of integerization.

    Attributes:
        tol: relative KKT tolerance for primal residual, dual residual and gap (default 1e-4).
        time_limit_seconds: wall-clock budget of one solve, in seconds (inf = none).
        iteration_limit: maximum PDHG iterations.
        check_every: iterations between termination / restart checks.
        verbose: print HiGHS-style progress lines to stderr.
        integer_fallback: ``"highs"`` (HiGHS MIP, time-limited) or ``"none"`` when the integerization
            heuristics find no feasible point.
        integer_fallback_seconds: time limit of the fallback, in seconds.
        mip_gap_tol: relative gap under which a MILP result is OPTIMAL rather than FEASIBLE.
    """

    tol: float = 1e-4
    time_limit_seconds: float = float("inf")
    iteration_limit: int = 1_000_000
    check_every: int = 64
    verbose: bool = False
    integer_fallback: str = "highs"
    integer_fallback_seconds: float = 60.0
    mip_gap_tol: float = 1e-4
