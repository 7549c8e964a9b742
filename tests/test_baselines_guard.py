"""The hard wall-clock guard: a child process that overruns its deadline is killed; results and errors
come back."""

from __future__ import annotations

import math
import time

from solver.baselines.guard import run_with_deadline


def test_function_finishing_in_time_returns_its_value():
    outcome, value, seconds = run_with_deadline(math.sqrt, (16.0,), wall_seconds=30.0)
    assert (outcome, value) == ("ok", 4.0) and seconds < 30.0


def test_function_overrunning_the_deadline_is_killed_near_it():
    t = time.perf_counter()
    outcome, value, seconds = run_with_deadline(time.sleep, (60.0,), wall_seconds=0.5)
    assert outcome == "killed" and value is None
    assert 0.5 <= seconds < 5.0 and time.perf_counter() - t < 60.0


def test_exception_in_the_child_is_reported_as_an_error():
    outcome, value, _ = run_with_deadline(math.sqrt, (-1.0,), wall_seconds=30.0)
    assert outcome == "error" and "ValueError" in value


def test_a_deadline_too_far_for_one_os_wait_is_waited_for_in_steps():
    # compare --baseline highs --time-limit 3000000 (any finite limit past 2^31 - 1 ms) was exit 1:
    # "OverflowError: timeout is too large" (1e10: "timestamp too large to convert to C _PyTime_t") from the pipe's poll
    for wall in (3e6, 1e10, 1e23, 1e300, math.inf):
        outcome, value, _ = run_with_deadline(math.sqrt, (16.0,), wall_seconds=wall)
        assert (outcome, value) == ("ok", 4.0), wall
