"""A partitioned step whose parts run in local processes starts their workers' forkserver before it loads the
state (``solver.rounds.loop._prestart_parts``, ``solver.partition.executor.prestart``): the forkserver's preload
(the solver and the cached kernels) took 2.2-3.3 s of every TE Kdl K = 4 step process after the set-up; started
first it runs beside the load and the set-up (session 25: the wait for the pool 2.6-3.1 -> 1.5-1.6 s, the
process 15.1-15.6 -> 13.5-14.1 s wall, the same merged point)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from formats import checkpoint
from solver.partition import executor
from tests.helpers import REPO, cli_json, small_lp_state, snapshot
from tests.partition_helpers import partitioned_te_state

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forkserver")


def _calls(monkeypatch) -> list[str]:
    order: list[str] = []
    real_load = checkpoint.StateStore.load
    monkeypatch.setattr(executor, "prestart", lambda k, workers=None: order.append(f"prestart {k} {workers}"))
    monkeypatch.setattr(checkpoint.StateStore, "load",
                        lambda self, *a, **kw: order.append("load") or real_load(self, *a, **kw))
    return order


def test_the_forkserver_starts_before_the_state_loads(tmp_path, monkeypatch):
    state, delta = partitioned_te_state(tmp_path)  # stored executor: inline
    order = _calls(monkeypatch)
    code, out = cli_json("step", delta, "--state", state, "--executor", "process", "--json")
    assert code == 0, out
    assert order[0] == "prestart 2 None" and "load" in order[1:], order


@pytest.mark.parametrize("executor_option", [None, "inline"])
def test_no_forkserver_for_parts_that_run_in_this_process_or_a_monolithic_state(tmp_path, monkeypatch,
                                                                                executor_option):
    state, delta = partitioned_te_state(tmp_path)
    order = _calls(monkeypatch)
    args = ["step", delta, "--state", state, "--json"] + ([] if executor_option is None else
                                                          ["--executor", executor_option])
    code, out = cli_json(*args)
    assert code == 0, out
    assert not [c for c in order if c.startswith("prestart")], order
    (tmp_path / "mono").mkdir()
    mono, mono_delta = small_lp_state(tmp_path / "mono")
    order.clear()
    assert cli_json("step", mono_delta, "--state", mono, "--json")[0] == 0
    assert not [c for c in order if c.startswith("prestart")], order


def test_no_forkserver_when_the_time_limit_leaves_the_parts_too_little_for_a_pool(tmp_path, monkeypatch):
    """With less than POOL_START_SECONDS left for the parts, they run in this process (solver.partition.deadline):
    a forkserver preloading beside them only took a core from them (``step --time-limit 1`` on a partitioned TE
    state ended TIME_LIMIT where it had merged its parts)."""
    state, delta = partitioned_te_state(tmp_path)
    order = _calls(monkeypatch)
    code, out = cli_json("step", delta, "--state", state, "--executor", "process", "--time-limit", "1", "--json")
    assert code in (0, 5), out
    assert not [c for c in order if c.startswith("prestart")], order


def test_a_refused_step_leaves_the_state_as_it_was(tmp_path):
    """A delta refused after the early start (exit 3) changes nothing, and the process ends (its forkserver with
    it: the test would hang otherwise)."""
    state, _ = partitioned_te_state(tmp_path)
    before = snapshot(state)
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet")
    env = {**os.environ, "PYTHONPATH": str(REPO), "COPTER_WORKER": "off"}
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(bad), "--state", str(state), "--executor",
                           "process", "--json"], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3, (proc.stdout, proc.stderr[-2000:])
    assert json.loads(proc.stdout)["error"]["file"] == str(bad)
    assert snapshot(state) == before


def _python(script: str) -> subprocess.CompletedProcess:
    """``python -c script`` in its own process (its own forkserver), from the repository; it must exit 0."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300,
                          cwd=str(REPO))
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc


def test_prestart_starts_the_forkserver_with_the_solver_preloaded():
    script = (
        "import os, sys, time\n"
        "from multiprocessing import forkserver\n"
        "from solver.partition import executor\n"
        "assert executor.prestart(2, 2)\n"
        "pid = forkserver._forkserver._forkserver_pid\n"
        "for _ in range(300):  # empty, or the parent's, until the spawned child has exec'd\n"
        "    argv = open(f'/proc/{pid}/cmdline', 'rb').read().split(bytes(1))\n"
        "    ok = any(a.startswith(b'from multiprocessing.forkserver') for a in argv)\n"
        "    if ok:\n"
        "        break\n"
        "    time.sleep(0.1)\n"
        "print(pid, ok)\n"
    )
    proc = _python(script)
    assert proc.stdout.split()[1] == "True", proc.stdout


def test_a_prestarted_pool_is_not_ready_until_it_has_run_a_task():
    """The pool :func:`executor.prestart` makes must not count as started workers (``workers_ready``): its
    forkserver may still be loading the solver, and a time-limited round with less than POOL_START_SECONDS left
    then waited for it instead of solving its parts in this process (``step --time-limit 0.5`` on a partitioned TE
    state: 1.6-2.6 s wall against 0.7-0.8 s before the early start)."""
    script = (
        "import os\n"
        "from solver.partition import executor\n"
        "assert executor.prestart(2, 2)\n"
        "print(executor.workers_ready('process', 2, 2))\n"
        "executor.map_parts(os.getpid, [(), ()], 'process', 2)\n"
        "print(executor.workers_ready('process', 2, 2))\n"
        "executor.shutdown()\n"
    )
    proc = _python(script)
    assert proc.stdout.split() == ["False", "True"], proc.stdout


@pytest.mark.parametrize("how", ["prestart", "pool"])
def test_the_forkserver_and_its_workers_start_with_sigint_blocked(how):
    """A terminal's Ctrl-C reaches the whole process group; a forkserver still in Python's start-up or its preload
    (it ignores SIGINT only once its main runs) printed "Fatal Python error: init_import_site" and a traceback after
    copter's one error line (helper-182). It now starts with SIGINT blocked, and so do the workers it forks; this
    process's own mask is as it was. Both ways the forkserver starts: prestart, and a pool's first use."""
    start = "assert executor.prestart(2, 2)\n" if how == "prestart" else ""
    script = (
        "import os, signal\n"
        "from multiprocessing import forkserver\n"
        "from solver.partition import executor\n"
        + start +
        "pids = executor.map_parts(os.getpid, [(), ()], 'process', 2)\n"
        "def blocked(pid):\n"
        "    line = [x for x in open(f'/proc/{pid}/status') if x.startswith('SigBlk:')][0]\n"
        "    return int(line.split()[1], 16) >> (signal.SIGINT - 1) & 1\n"
        "print(blocked(forkserver._forkserver._forkserver_pid), min(blocked(p) for p in set(pids)),\n"
        "      int(signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, set())))\n"
        "executor.shutdown()\n"
    )
    proc = _python(script)
    assert proc.stdout.split() == ["1", "1", "0"], (proc.stdout, proc.stderr)
