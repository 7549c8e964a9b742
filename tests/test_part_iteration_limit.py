"""A MILP part's iteration limit (``solver.partition.improve.PART_ITERATION_LIMIT``): the round's own when lower,
an infinite one included (``Settings`` allows it; ``int(inf)`` raised OverflowError, helper-168)."""

from __future__ import annotations

import math

from solver.model.settings import Settings
from solver.partition.improve import PART_ITERATION_LIMIT, cheap_part_settings


def test_the_part_limit_caps_the_rounds():
    assert cheap_part_settings(Settings()).iteration_limit == PART_ITERATION_LIMIT
    assert cheap_part_settings(Settings(iteration_limit=math.inf)).iteration_limit == PART_ITERATION_LIMIT


def test_a_lower_round_limit_is_kept():
    assert cheap_part_settings(Settings(iteration_limit=500)).iteration_limit == 500
