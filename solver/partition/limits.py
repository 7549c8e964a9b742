"""The partition options' upper limits (numpy-free: the CLI's ``--partition-passes`` checks and states its range
from here without importing the round machinery)."""

from __future__ import annotations

MAX_PASSES = 50  #: largest ``--partition-passes``: twice the 25 passes in which the share update's step schedule
#: (:mod:`solver.partition.shares`) can carry a share across its whole range, FLOOR to 1 (log 1000 = 6.9: 15 steps
#: growing from D0 by GROW to D_MAX), and then halve its step from D_MAX to D_MIN (10 flips); a larger count is a
#: typo (99999999999999999999 ran init for ever), and the round's ``--time-limit`` ends the passes earlier anyway
