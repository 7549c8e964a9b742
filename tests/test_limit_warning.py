"""A MILP round its time limit stopped above the --mip-gap target says so in a warning (user trial 37: exit 0
rounds 41-58% worse than unlimited ones, no warning)."""

from __future__ import annotations

from types import SimpleNamespace

from solver.model.settings import Settings
from solver.model.status import Status
from solver.rounds.limit_warning import time_limit_gap_warning

STOPPED = "integer point from the heuristic; gap 2.39; time limit 0.4 s reached (0.46 s since the command started)"


def _result(status=Status.FEASIBLE, gap=2.39, message=STOPPED):
    return SimpleNamespace(status=status, message=message, mip={"gap_rel": gap})


def test_a_round_stopped_by_its_limit_above_target_is_warned():
    (w,) = time_limit_gap_warning(_result(), Settings(time_limit_seconds=0.4), 3)
    assert w.startswith("round 3 stopped at its time limit (0.4 s") and "239% from its LP bound" in w
    assert "--mip-gap target 0.5%" in w and "--time-limit" in w


def test_no_warning_without_the_limit_within_target_or_other_status():
    limited = Settings(time_limit_seconds=0.4)
    assert time_limit_gap_warning(_result(gap=0.004), limited, 1) == []  # within 0.5%
    assert time_limit_gap_warning(_result(message="integer point from the heuristic; gap 2.39"), limited, 1) == []
    assert time_limit_gap_warning(_result(), Settings(), 1) == []  # no limit set
    assert time_limit_gap_warning(_result(status=Status.OPTIMAL), limited, 1) == []
    assert time_limit_gap_warning(_result(gap=None), limited, 1) == []
    assert time_limit_gap_warning(SimpleNamespace(status=Status.FEASIBLE, message=STOPPED, mip=None), limited, 1) == []
    assert time_limit_gap_warning(_result(gap=float("inf")), limited, 1) == []
