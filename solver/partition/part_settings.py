"""The solver settings an LP round's parts run with (:func:`lp_part_settings`); a MILP round's parts take
``solver.partition.improve.cheap_part_settings``. Used by :mod:`solver.partition.round`."""

from __future__ import annotations

from dataclasses import replace

from solver.model.settings import Settings

#: an LP part stops at this many times the round's ``tol`` (its relative KKT tolerance, ``solver.lp.termination``).
#: Why: a merged point is judged on the whole model, never on the parts': OPTIMAL at ``tol``, FEASIBLE with a primal
#: residual within K x ``tol`` (``solver.partition.merge``), and a merge that misses that is solved whole. The parts
#: met ``tol`` exactly and then stood still: on TE Kdl, K = 4 (round 1, the four parts replayed in-process from the
#: pickles of their calls), part 3's first outer step of the proximal ALM ended at 1.0-1.1x ``tol`` and its second
#: took 5 more Newton steps: 6 / 6 / 7 / 11 Newton steps at 1.0x, 6 / 4 / 6 / 6 at 1.5x (and at 2x), the slowest part
#: 2.19 s -> 1.53 s. Through ``copter step``, rounds 1-5 against the code before: no part in a second outer step (4
#: before), the merged objectives within 1.2e-5 relative (four of five higher), the same gap to the bound (0.050-0.053%),
#: the merge's primal residual 0.45-0.59x ``tol`` (0.33-0.40x before): the parts' residuals sit on different rows,
#: and a shared row sums its shares' residuals, which do not all point one way. A MILP round's parts keep ``tol``
#: (``solver.partition.improve.cheap_part_settings``: their relaxations feed the integerization).
PART_TOL_FACTOR = 1.5


def lp_part_settings(settings: Settings) -> Settings:
    """An LP round's ``settings`` (any ``time_limit_seconds`` kept) for its parts: one thread each (the parts run side
    by side), and ``tol`` :data:`PART_TOL_FACTOR` times the round's, kept below 1 (a relative tolerance,
    ``solver.model.settings``): ``min(1.5 tol, (1 + tol) / 2)``, which is at least ``tol`` for any tol below 1."""
    tol = float(settings.tol)
    return replace(settings, threads=1, tol=min(PART_TOL_FACTOR * tol, 0.5 * (1.0 + tol)))
