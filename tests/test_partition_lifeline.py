"""Part workers die with the process that started them: a partitioned step killed by SIGKILL, SIGTERM or SIGINT
mid-round leaves no forkserver, resource tracker or part worker behind (they used to live forever, ~150 MB per
part worker, after every interrupted ``copter step``)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from tests.helpers import REPO
from tests.partition_helpers import partitioned_te_state

SLEEPER = r"""
import signal, sys, time
# SIGINT as an interactive process has it, whatever this test process passes on (an ignored or blocked
# SIGINT is inherited across exec, and Python then installs no KeyboardInterrupt handler)
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
from solver.partition.executor import map_parts
print("start", flush=True)
map_parts(time.sleep, [(120,), (120,)], "process", 2)
"""


def _descendants(pid: int) -> list[int]:
    kids: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    ppid = int(f.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            kids.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        for c in kids.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _wait_for(proc: subprocess.Popen, n: int, seconds: float = 300.0) -> list[int]:
    """The process's descendants once there are at least ``n`` of them (forkserver, tracker, workers)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and proc.poll() is None:
        d = _descendants(proc.pid)
        if len(d) >= n:
            return d
        time.sleep(0.1)
    raise AssertionError(f"never saw {n} descendants (exit {proc.poll()})")


def _assert_all_gone(pids: list[int], seconds: float = 10.0) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end and any(_alive(p) for p in pids):
        time.sleep(0.1)
    left = [p for p in pids if _alive(p)]
    for p in left:  # never leave them to the next test
        os.kill(p, signal.SIGKILL)
    assert not left, f"{len(left)} of {len(pids)} child processes outlived their killed parent"


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


@pytest.fixture
def child_env():
    """The children's environment, with a TMPDIR of their own (short: the forkserver's socket lives there) that is
    removed afterwards: a parent killed by SIGKILL cannot remove multiprocessing's ``pymp-*`` folder, which every run
    of these tests used to leave in /tmp (3 a run)."""
    tmp = tempfile.mkdtemp(prefix="cpl-", dir="/tmp")
    try:
        yield {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": tmp}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
def test_part_workers_die_with_their_parent(sig, child_env):
    env = child_env
    proc = subprocess.Popen([sys.executable, "-c", SLEEPER], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout.readline().strip() == "start"
        kids = _wait_for(proc, 4)  # resource tracker, forkserver, two part workers
        proc.send_signal(sig)
        proc.wait(timeout=60)  # SIGINT: the interrupted pool is killed, the interpreter does not wait for it
    finally:
        if proc.poll() is None:
            proc.kill()
    _assert_all_gone(kids)


def test_killed_partitioned_step_leaves_no_process(tmp_path, child_env):
    state, delta = partitioned_te_state(tmp_path)
    env = child_env
    proc = subprocess.Popen([sys.executable, "-m", "copter_cli", "step", str(delta), "--state", str(state),
                             "--executor", "process"], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        kids = _wait_for(proc, 4)
        assert proc.poll() is None  # mid-round
        proc.kill()
        proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    _assert_all_gone(kids)


def lifelines_of_this_worker() -> tuple:
    """(the forkserver preload saw itself in the forkserver, this worker's pdeathsig, its parent watch thread)."""
    import ctypes
    import threading

    mod = sys.modules.get("solver.partition.forkserver_lifeline")
    sig = ctypes.c_int(-1)
    ctypes.CDLL(None).prctl(2, ctypes.byref(sig), 0, 0, 0)  # PR_GET_PDEATHSIG
    watching = any(t.name == "copter-parent-watch" for t in threading.enumerate())
    return getattr(mod, "FORKSERVER", None), sig.value, watching


LIFELINES = r"""
import json
from solver.partition.executor import map_parts, shutdown
from tests.test_partition_lifeline import lifelines_of_this_worker
out = map_parts(lifelines_of_this_worker, [(), ()], "process", 2)
shutdown()
import solver.partition.forkserver_lifeline as fl  # imported here: no pdeathsig on this process (worker server)
print(json.dumps({"parts": out, "here": fl.FORKSERVER}))
"""


def test_workers_and_forkserver_have_their_lifelines_and_this_process_none():
    # In a fresh interpreter: within the suite another test may have started multiprocessing's forkserver
    # first (without copter's preload), and a process has only one forkserver.
    import json

    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", LIFELINES], env=env, cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert all(o == [True, int(signal.SIGKILL), True] for o in got["parts"]), got
    assert got["here"] is False
