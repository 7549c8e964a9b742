"""A partitioned round's part seconds are the parts' own work; the wait for new part workers is its own
``pool_start`` phase. Each worker used to import the solver and load the numba kernels its first part called
inside that part's solve: on a small TE round (4 parts, 2 workers) parts 0 and 1 took 1.3-1.9 s and parts 2 and 3,
on the same workers, 0.01-0.02 s, so ``slowest_part`` (and ``on_k_cores``) measured the workers' start-up.
Now the forkserver preloads the solver and its cached kernels once (``solver.partition.forkserver_warm``) and
the workers it forks inherit them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forkserver")

SCRIPT = r"""
import json, sys, time
from solver.model.settings import Settings
from solver.partition import executor
from solver.partition.executor import WARM_MODULE, map_parts, run_parts, take_pool_start
from solver.workloads import make_scenario
from tests.test_partition_pool_start import worker_view

if __name__ == "__main__":
    problem = make_scenario("te", 16, seed=4).base()
    tasks = [(problem, Settings(), None)] * 3
    first = run_parts(tasks, "process", 2)
    start_first = take_pool_start()
    time.sleep(2.0)  # the pool ages (a worker that took no part yet takes its first in a later call)
    began = time.time()
    second = run_parts(tasks, "process", 2)
    second_wall, start_second = time.time() - began, take_pool_start()
    began = time.time()
    third = run_parts(tasks, "process", 2)
    third_wall, start_third = time.time() - began, take_pool_start()
    view = map_parts(worker_view, [()] * 2, "process", 2, preload=(WARM_MODULE,))
    print(json.dumps({"ready": [[o["ready_at"] is not None for o in outs] for outs in (first, second, third)],
                      "start": [start_first, start_second, start_third], "wall": [second_wall, third_wall],
                      "view": view, "objectives": [[o["result"].objective for o in outs]
                                                   for outs in (first, second, third)]}))
"""


def worker_view() -> dict:
    """In a part worker: what it inherited from the forkserver."""
    warm = sys.modules.get("solver.partition.forkserver_warm")
    return {"solver_api": "solver.api" in sys.modules, "loaded": None if warm is None or warm.LOADED is None
            else warm.LOADED["loaded"]}


def test_the_workers_start_up_is_pool_start_not_part_seconds(tmp_path):
    script = tmp_path / "pool_start.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, str(script)], env=env, cwd=REPO, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.splitlines()[-1])
    # a new worker reports when its first part began, once (one pool of two, kept across the three calls); the
    # first call's wait is the pool's start-up
    first, second, third = (sum(r) for r in res["ready"])
    assert first >= 1 and first + second + third <= 2 and res["start"][0] > 0
    # a later call counts only its own wait for a worker's first part, never the pool's age (it used to count
    # from the pool's making: >= the 2 s sleep), and 0 when no worker began its first part in it
    for n, start, wall in zip((second, third), res["start"][1:], res["wall"], strict=True):
        assert 0 <= start <= wall and (start == 0) == (n == 0), res
    # a worker holds the solver and its kernels before any part of its own ran
    assert all(v["solver_api"] and v["loaded"] and v["loaded"] > 0 for v in res["view"]), res["view"]
    assert len({o for outs in res["objectives"] for o in outs}) == 1  # the same part solved the same way


def test_a_partitioned_round_reports_pool_start_as_a_phase(tmp_path):
    from tests.partition_helpers import partitioned_te_state

    st, delta = partitioned_te_state(tmp_path)
    (st / "config.json").write_text((st / "config.json").read_text().replace('"inline"', '"process"'))
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_WORKER_DIR="/nonexistent-copter-worker")
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(delta), "--state", str(st), "--json"],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seconds = json.loads(proc.stdout)["partitions"]["seconds"]
    assert seconds["phases"]["pool_start"] > 0, seconds
    # the parts went through shared memory (Linux): this process's packing is on the critical path
    assert seconds["ship"] > 0 and seconds["phases"]["ship"] == pytest.approx(seconds["ship"], abs=2e-6), seconds
    assert seconds["on_k_cores"] == pytest.approx(seconds["setup"] + seconds["ship"] + seconds["slowest_part"]
                                                  + seconds["merge"], abs=4e-6)


def test_a_kept_pools_late_worker_counts_only_the_calls_wait(monkeypatch):
    """A worker of a kept pool that took no part before (another took them all) begins its first part in a
    later call: ``pool_start`` is that call's wait, not the time since the pool was made (which counted the
    earlier calls, rounds even, as start-up)."""
    import time

    from solver.partition import executor

    monkeypatch.setattr(executor, "_POOL_CREATED", [time.time() - 100.0])
    monkeypatch.setattr(executor, "map_parts", lambda *a, **k: [{"ready_at": time.time() + 0.01},
                                                                {"ready_at": None}])
    executor.take_pool_start()
    executor.run_parts([()] * 2, "process", 2)
    assert 0.0 < executor.take_pool_start() < 1.0
