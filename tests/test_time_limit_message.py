"""--time-limit is the wall time of the whole command (README): a round stopped by it names the limit the
user gave and the seconds since the command started, never the (possibly negative) budget left for the
solve; --help says what the limit covers."""

from __future__ import annotations

import dataclasses
import re
import time

import numpy as np
import pytest

from solver import clock
from solver.api import solve_problem
from solver.model.settings import Settings
from solver.model.status import Status
from tests.helpers import client_allocation, run_main, small_lp


@pytest.fixture
def spent_clock():
    clock.start_command(time.monotonic() - 3.0)  # the command started 3 s ago: a 1 s budget is spent
    yield
    clock.start_command(None)


def test_time_limit_message_names_the_users_limit(spent_clock):
    res = solve_problem(small_lp(), Settings(time_limit_seconds=1.0))
    assert res.status == Status.TIME_LIMIT
    assert "time limit 1 s reached" in res.message
    since = float(re.search(r"\(([0-9.]+) s since the command started\)", res.message).group(1))
    assert since >= 3.0
    assert not re.search(r"time limit -", res.message)


def test_milp_stopped_by_the_limit_says_so(spent_clock):
    # a MILP round keeps the integer point its heuristics found when the limit stops it (FEASIBLE, here a
    # 61% gap) or ends NO_INTEGER_SOLUTION: its message named neither the limit nor that it stopped the round,
    # so a user read the gap (or "no integer-feasible point") as the model's, not as the limit's
    p = client_allocation()
    p = dataclasses.replace(p, integrality=np.ones(p.n_cols, dtype=bool))
    res = solve_problem(p, Settings(time_limit_seconds=1.0))
    assert res.status in (Status.FEASIBLE, Status.NO_INTEGER_SOLUTION)
    assert "time limit 1 s reached" in res.message
    assert float(re.search(r"\(([0-9.]+) s since the command started\)", res.message).group(1)) >= 3.0


def test_milp_within_its_time_says_no_limit():
    p = client_allocation()
    p = dataclasses.replace(p, integrality=np.ones(p.n_cols, dtype=bool))
    res = solve_problem(p, Settings(time_limit_seconds=60.0))
    assert res.status == Status.OPTIMAL
    assert "time limit" not in res.message


def test_time_limit_help_says_whole_command(capsys):
    code, out, _ = run_main(capsys, "step", "--help")
    text = " ".join(out.split())
    assert code == 0 and "whole command from process start" in text
    assert "round's solve" not in text
