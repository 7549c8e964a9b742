"""A partitioned round honours the command-wide ``--time-limit`` (README: wall time of the whole command, from
process start): the parts' limit counts from the command's start (a worker's start-up and queueing included),
minus a reserve for the merge and the save, and a round the limit stopped names the user's limit and the
seconds since the command started, as a monolithic round does. Before, each part got the whole limit from its
own start: ``step --time-limit 2`` took 6.5 s and said only "a part ended TIME_LIMIT"."""

from __future__ import annotations

import math
import re
import time

import pytest

from solver import clock
from solver.model.settings import Settings
from solver.model.status import Status
from solver.partition import after_merge, executor
from solver.partition import round as pround
from solver.partition.deadline import MERGE_RESERVE_MAX, POOL_START_SECONDS, Deadline, merge_reserve
from solver.partition.round import pass_name
from tests.helpers import client_allocation


@pytest.fixture
def command_clock():
    """Register a command start ``ago`` seconds in the past (as the CLI does at process start); restored after."""
    saved = clock.command_start()

    def started(ago: float) -> None:
        clock.start_command(time.monotonic() - ago)

    yield started
    clock.start_command(saved)


@pytest.fixture
def recorded(monkeypatch):
    """The (settings, command_start) every run_parts call of a round passes its parts."""
    calls = []
    real = pround.run_parts

    def spy(tasks, executor="process", workers=None, ray_address=None, command_start=None, **kw):
        calls.append(([t[1] for t in tasks], command_start))
        return real(tasks, executor, workers, ray_address, command_start, **kw)

    monkeypatch.setattr(pround, "run_parts", spy)
    monkeypatch.setattr(after_merge, "run_parts", spy)  # the re-solve tier's
    return calls


def test_parts_budget_is_the_commands_time_left_minus_the_merge_reserve(command_clock, recorded):
    command_clock(3.0)
    cfg = pround.PartitionConfig(k=2, executor="inline")
    out = pround.solve_round(client_allocation(n_clients=6), Settings(time_limit_seconds=60.0), cfg)
    assert out.result.status in (Status.OPTIMAL, Status.FEASIBLE), out.result.message
    assert recorded, "no part was solved"
    reserve = merge_reserve(60.0)
    assert 0 < reserve <= MERGE_RESERVE_MAX
    probe, main = recorded[0], recorded[-1]
    # the last pass: the whole limit less the reserve, counted from the command's start (3 s ago), not its own
    assert all(s.time_limit_seconds == pytest.approx(60.0 - reserve) for s in main[0])
    assert main[1] is not None and main[1] == pytest.approx(time.time() - 3.0, abs=5.0)
    assert main[1] < time.time() - 2.0
    # the probe (round 0) gets half of what the parts had left when it started, from the same start
    assert all(3.0 < s.time_limit_seconds < 60.0 - reserve for s in probe[0])
    assert probe[1] == main[1]


def test_a_spent_budget_ends_the_round_time_limit_naming_the_users_limit(command_clock, recorded):
    command_clock(10.0)  # 10 s of a 2 s limit are gone before the round starts
    cfg = pround.PartitionConfig(k=2, executor="inline")
    out = pround.solve_round(client_allocation(n_clients=6), Settings(time_limit_seconds=2.0), cfg)
    assert out.result.status == Status.TIME_LIMIT, out.result.message
    msg = out.result.message
    assert "a part ended TIME_LIMIT" in msg
    since = re.search(r"time limit 2 s reached \(([0-9.]+) s since the command started\)", msg)
    assert since is not None, msg
    assert float(since.group(1)) >= 10.0
    parts_limit = 2.0 - merge_reserve(2.0)
    assert all(s.time_limit_seconds <= parts_limit + 1e-9 for ss, _ in recorded for s in ss)
    assert all(s.time_limit_seconds == pytest.approx(parts_limit) for s in recorded[-1][0])


def test_no_time_limit_leaves_the_parts_unbounded(recorded):
    cfg = pround.PartitionConfig(k=2, executor="inline")
    out = pround.solve_round(client_allocation(n_clients=6), Settings(), cfg)
    assert out.result.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert all(c is None and all(math.isinf(s.time_limit_seconds) for s in ss) for ss, c in recorded)


def test_a_worker_counts_its_limit_from_the_commands_start(command_clock):
    """A worker (another process, possibly another machine) gets the command's start as wall-clock seconds:
    its start-up counts, and the clock of the process it runs in is left as it was."""
    command_clock(0.0)
    before = clock.command_start()
    out = executor.solve_part(0, client_allocation(n_clients=4), Settings(time_limit_seconds=2.0), None,
                              time.time() - 30.0)
    assert out["result"].status == Status.TIME_LIMIT
    assert "since the command started" in out["result"].message
    assert clock.command_start() == before


def test_a_milp_round_past_its_deadline_still_proves_a_bound(command_clock):
    """The merge's dual ascent gets what is left of the reserve, but at least its start value is evaluated:
    a MILP round whose parts used up the limit still reports a finite whole-model bound and gap."""
    from solver.workloads import make_scenario

    problem = make_scenario("sia", 64, seed=0).base()
    command_clock(0.0)
    cfg = pround.PartitionConfig(k=2, executor="inline", probe=False)
    settings = Settings(time_limit_seconds=60.0, integer_submip_seconds=0.0)
    clock.start_command(time.monotonic() - 60.0 + merge_reserve(60.0))  # the parts' budget is spent
    out = pround.solve_round(problem, settings, cfg)
    # each part stops its relaxation at its first check and rounds it (deterministic: the budget is spent)
    assert out.result.status in (Status.FEASIBLE, Status.OPTIMAL), out.result.message
    assert out.report["dual_ascent"]["evaluations"] >= 1
    assert out.report["bound"] is not None and math.isfinite(out.report["bound"])


def test_no_worker_pool_starts_when_the_parts_time_left_would_not_cover_its_start(command_clock):
    """A process pool's start (the forkserver loading the solver and its kernels) blocks the round and cannot stop
    at a deadline: ``step --time-limit 0.5`` on TE Cogentco, K = 2, ended 4.3 s past it, 2.3 s of which waiting for
    the workers, which then stopped at their first check. With less than POOL_START_SECONDS left the parts run in
    this process instead (each stops at the deadline) and the pass says so."""
    executor.shutdown()
    command_clock(10.0)  # a spent budget: deterministic, whatever the machine's speed
    cfg = pround.PartitionConfig(k=2, executor="process")
    out = pround.solve_round(client_allocation(n_clients=6), Settings(time_limit_seconds=2.0), cfg)
    assert out.result.status == Status.TIME_LIMIT, out.result.message
    assert not executor.workers_ready("process", 2), "a worker pool was started past the deadline"
    assert "pool_start" not in out.report["seconds"]["phases"]
    assert all(p.get("executor") == "inline" for p in out.report["shares"]["passes"])
    assert [pass_name(p) for p in out.report["shares"]["passes"]] == [0]  # no probe: its parts could only stop at once
    assert out.report["bound"] is None  # a failed round's gap is not reported: no bound past the deadline either


def test_the_executor_is_kept_when_its_workers_are_ready_or_time_is_left():
    now = time.monotonic()
    late = Deadline(limit=10.0, start=now - 9.0, wall_start=time.time() - 9.0, parts_limit=9.0)
    assert late.executor_for("process", ready=False) == "inline"
    assert late.executor_for("ray", ready=False) == "inline"
    assert late.executor_for("process", ready=True) == "process"  # a kept pool starts nothing
    early = Deadline(limit=60.0, start=now, wall_start=time.time(), parts_limit=60.0 - merge_reserve(60.0))
    assert early.parts_left() > POOL_START_SECONDS
    assert early.executor_for("process", ready=False) == "process"
    untimed = Deadline(limit=math.inf, start=now - 1e6, wall_start=time.time() - 1e6, parts_limit=math.inf)
    assert untimed.executor_for("process", ready=False) == "process"


def test_a_limit_reached_before_the_users_says_the_parts_stop_early_for_the_merge():
    """``time limit 0.8 s reached (0.74 s since the command started)`` read as the limit hit early (hunt 38): the
    parts stop at the limit less the merge's reserve, and the note says so; past the limit it says nothing more."""
    import time

    from solver.partition.deadline import Deadline

    now = time.monotonic()
    early = Deadline(limit=0.8, start=now - 0.74, wall_start=time.time() - 0.74, parts_limit=0.72)
    assert "the parts stop 0.08 s before it, kept for the merge" in early.note()
    late = Deadline(limit=0.8, start=now - 0.9, wall_start=time.time() - 0.9, parts_limit=0.72)
    assert late.note() == "time limit 0.8 s reached (0.90 s since the command started)"
