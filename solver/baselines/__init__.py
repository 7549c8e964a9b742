"""Baselines copter is measured against: HiGHS cold, HiGHS hot-started, and POP partitioning.

Every baseline returns a :class:`~solver.baselines.result.BaselineResult` whose objective and violations
are recomputed on the full problem, so the figures of copter and of every baseline are comparable.

``solver.baselines.registry`` is the one table of them by name (highs, highs-simplex|ipm|pdlp, highs-warm,
pop-<k>), each called as ``run(problem, BaselineContext)``; ``copter compare`` and the bench scripts use it.
"""

from solver.baselines.highs import SOLVERS, solve_highs
from solver.baselines.pop import solve_pop
from solver.baselines.result import BaselineResult, point_quality

__all__ = ["SOLVERS", "BaselineResult", "point_quality", "solve_highs", "solve_pop"]
