"""Partitioned rounds on a local Ray cluster (``--executor ray``, issue #18).

Skipped with a reason when Ray is not importable, unless ``COPTER_REQUIRE_RAY=1`` (CI installs the ``ray``
extra and sets it), which turns the missing module into an error. One local cluster serves every Ray test of
the session (``ray_cluster`` in ``tests/conftest.py``: ``ray.init`` costs seconds), the tests are few.
"""

from __future__ import annotations

import pytest

from solver import rounds
from solver.workloads import make_scenario
from tests.helpers import require_ray

require_ray()


def test_ray_rounds_equal_the_inline_rounds(ray_cluster, tmp_path):
    """The executor changes where parts run, not what they compute: same objectives round by round."""
    objectives = {}
    for executor in ("inline", "ray"):
        sc = make_scenario("te", 16, seed=5)
        state = tmp_path / executor
        reps = [rounds.init(sc.base(), state, partition={"k": 2, "executor": executor})]
        reps += [rounds.step(sc.next_delta(r), state) for r in (1, 2)]
        assert all(r["partitions"]["executor"] == executor for r in reps)
        objectives[executor] = [r["objective"] for r in reps]
    assert objectives["ray"] == pytest.approx(objectives["inline"], rel=1e-12)


def test_a_ray_worker_killed_mid_round_fails_the_round_and_keeps_the_state(ray_cluster, tmp_path, monkeypatch):
    from tests.helpers import snapshot

    sc = make_scenario("te", 16, seed=6)
    state = tmp_path / "st"
    rounds.init(sc.base(), state, partition={"k": 2, "executor": "inline"})
    delta = sc.next_delta(1)
    before = {k: v for k, v in snapshot(state).items() if k == "CURRENT" or k.startswith("gen-")}
    monkeypatch.setenv("COPTER_FAULT_KILL_PART", "0")
    rep = rounds.step(delta, state, executor="ray")  # the part is run again once (copter's retry), dies again
    assert rep["status"] == "NUMERICAL_ERROR" and rep["accepted"] is False
    assert rep["partitions"]["worker_failed"] and "Ray task solving part 0 failed twice" in rep["message"]
    after = {k: v for k, v in snapshot(state).items() if k == "CURRENT" or k.startswith("gen-")}
    assert after == before
    monkeypatch.delenv("COPTER_FAULT_KILL_PART")
    ok = rounds.step(delta, state, executor="ray")
    assert ok["round"] == 1 and ok["status"] in ("OPTIMAL", "FEASIBLE")



def test_a_ray_worker_that_dies_once_has_its_part_run_again_and_said(ray_cluster, tmp_path):
    """Ray retried a dead worker's task itself (max_retries=1), so a round that survived a SIGKILL said nothing:
    no warning, ``worker_retries`` empty (helper-201). copter now runs the part again once and says so, as for a
    process pool's worker; the rounds read the sentences through ``take_retries``."""
    from solver.partition import executor

    def die_once(marker: str) -> str:  # nested: Ray pickles it by value
        import os
        import signal

        if not os.path.exists(marker):
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        return "done"

    executor.take_retries()
    tasks = [(str(tmp_path / "m0"),), (str(tmp_path / "m1"),)]
    assert executor.map_parts(die_once, tasks, "ray") == ["done", "done"]
    said = executor.take_retries()
    assert len(said) == 2, said
    for p, sentence in enumerate(sorted(said)):  # in the order the deaths were seen
        assert sentence.startswith(f"the Ray worker solving part {p} died (WorkerCrashedError)"), sentence
    assert executor.take_retries() == []


def test_a_later_part_whose_worker_died_runs_again_while_an_earlier_part_still_runs(ray_cluster, tmp_path):
    """The driver waited for the parts in order (``ray.get`` on part 0, then part 1, ...), so a later part whose
    worker died was submitted again only after every part before it had ended: its retry came after them on the
    round's critical path. It is now run again as soon as its death is seen (``ray.wait`` on every part). Part 0
    runs until part 1's retry has started (a marker file), with a bound far above the test's needs: before, part 0
    ended at that bound, after part 1's retry started."""

    def part(role: str, marker: str, started: str) -> str:  # nested: Ray pickles it by value
        import os
        import signal
        import time

        if role == "slow":  # part 0: runs until part 1's retry has started, or 120 s
            t0 = time.monotonic()
            while not os.path.exists(started) and time.monotonic() - t0 < 120.0:
                time.sleep(0.05)
            return "retry seen" if os.path.exists(started) else "bound reached"
        if not os.path.exists(marker):  # part 1: its first worker dies
            open(marker, "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
        open(started, "w").close()
        return "done"

    from solver.partition import executor

    started = str(tmp_path / "retry-started")
    executor.take_retries()
    out = executor.map_parts(part, [("slow", "", started), ("dies once", str(tmp_path / "m1"), started)], "ray")
    assert out == ["retry seen", "done"]
    said = executor.take_retries()
    assert len(said) == 1 and said[0].startswith("the Ray worker solving part 1 died"), said


def test_a_ray_worker_without_the_console_scripts_setting_turns_numpys_hugepage_advice_off(ray_cluster,
                                                                                          monkeypatch):
    """A Ray worker whose environment lacks NUMPY_MADVISE_HUGEPAGE (a cluster started elsewhere) runs its part
    without numpy's huge-page advice, as the console script's own workers do (executor._call_ray)."""
    import numpy

    from solver.partition import executor

    advice = numpy._core.multiarray._get_madvise_hugepage  # a builtin: pickled by name, runs in the worker
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    assert executor.map_parts(advice, [()], "ray") == [False]
    # a worker with its own setting keeps it (the same wrapper, here, where the variable is set)
    monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
    was = numpy._core.multiarray._set_madvise_hugepage(True)
    try:
        assert executor._call_ray(advice, (), False) is True
    finally:
        numpy._core.multiarray._set_madvise_hugepage(was)


def test_a_command_that_starts_its_own_cluster_reports_the_start_and_prints_no_ray_info(tmp_path):
    """``copter init --executor ray`` in a fresh process starts a local cluster: the seconds that takes are the
    round's ``pool_start`` phase (they were hidden in its parts' time and ``solve``: helper-158, 3-5 s a command)
    and Ray's INFO line ("Started a local Ray instance.") is not on stderr (it was, with ``--json`` too)."""
    import json
    import os
    import subprocess
    import sys
    from pathlib import Path

    from formats.io import write_problem
    from tests.helpers import client_allocation

    write_problem(client_allocation(n_clients=8), tmp_path / "base.parquet")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]), COPTER_WORKER="off")
    env.pop("RAY_ADDRESS", None)
    p = subprocess.run([sys.executable, "-m", "copter_cli", "init", str(tmp_path / "base.parquet"), "--partitions", "2",
                        "--executor", "ray", "--state", str(tmp_path / "st"), "--json"], env=env, capture_output=True,
                       text=True, timeout=300)
    assert p.returncode == 0, p.stderr
    rep = json.loads(p.stdout)
    assert rep["partitions"]["executor"] == "ray"
    started = rep["partitions"]["seconds"]["phases"]["pool_start"]
    assert 0 < started <= rep["seconds"]["solve"]
    assert "Started a local Ray instance" not in p.stderr, p.stderr
