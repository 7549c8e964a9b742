"""A signal to the whole process group (a terminal's Ctrl-C or hangup; ``timeout`` signals the group too) while
copter's child processes run ends the command with its one error line: no traceback from a child, no child left
running, no ``$TMPDIR/pymp-*`` folder.

- ``copter compare --baseline highs`` runs HiGHS in a child (``solver.baselines.guard``): it printed a
  KeyboardInterrupt and a BrokenPipeError traceback, and the forkserver's folder was left behind (helper-167).
  (With SIGTERM or SIGHUP the child dies of the signal's default action; SIGINT, which it ignores, tests that
  the parent kills it.)
- Part workers (``solver.partition.executor``): an idle worker printed "Process ForkServerProcess-N: ...
  KeyboardInterrupt"; a hangup killed the resource tracker, which ignores only SIGINT and SIGTERM
  ("resource_tracker: process died unexpectedly" and six ``KeyError: '/mp-...'`` tracebacks)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux")
                                or "forkserver" not in __import__("multiprocessing").get_all_start_methods(),
                                reason="forkserver, process groups")

GUARD = r"""
import sys
from copter_cli import entry
entry.install()  # the console script's handlers
from solver.baselines.guard import run_with_deadline
from tests.test_process_group_signals import child_signals_group
try:
    run_with_deadline(child_signals_group, (sys.argv[1], int(sys.argv[2])), wall_seconds=120)
except KeyboardInterrupt:  # what copter_cli.output.run does with it
    from copter_cli import process_exit
    from formats import undo
    process_exit.exit_now(undo.exit_code())
"""

PARTS = r"""
import os, sys
from copter_cli import entry
entry.install()
from solver.partition.executor import map_parts
from tests.test_process_group_signals import child_signals_group
try:
    map_parts(child_signals_group, [(sys.argv[1], int(sys.argv[2])), (sys.argv[1] + ".idle", 0)], "process", 2)
except KeyboardInterrupt:
    from copter_cli import process_exit
    from formats import undo
    process_exit.exit_now(undo.exit_code())
"""


def child_signals_group(pid_file: str, sig: int) -> int:
    """In a child: write this pid to ``pid_file``; ``sig`` 0: return at once (the part's worker then waits idle
    for more work); else send ``sig`` to the whole process group and sleep. With both parts (``map_parts``), the
    signal waits until the other part has written its file and returned: its worker is idle then."""
    with open(pid_file, "w") as f:
        f.write(str(os.getpid()))
    if not sig:
        return 0
    idle = pid_file + ".idle"
    if "PARTS" in os.environ.get("COPTER_TEST_GROUP", ""):
        for _ in range(1200):  # the other part's worker may start late on a loaded machine
            if os.path.exists(idle):
                break
            time.sleep(0.05)
        else:
            raise AssertionError("the other part never ran")
    time.sleep(0.3)  # ... and is back waiting for work
    os.killpg(os.getpgid(0), sig)
    time.sleep(60)
    return 1


def run_in_own_group(tmp_path, script: str, sig: int) -> subprocess.CompletedProcess:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmp),
           "COPTER_TEST_GROUP": "PARTS" if script is PARTS else "GUARD"}
    return subprocess.run([sys.executable, "-c", script, str(tmp_path / "child.pid"), str(int(sig))], env=env,
                          cwd=REPO, capture_output=True, text=True, timeout=300, start_new_session=True)


def assert_clean(tmp_path, res: subprocess.CompletedProcess, sig: int) -> None:
    assert res.returncode == 128 + sig, res.stderr[-3000:]
    for bad in ("Traceback", "KeyError", "resource_tracker", "Process ForkServerProcess"):
        assert bad not in res.stderr, res.stderr[-3000:]
    assert list((tmp_path / "tmp").iterdir()) == [], list((tmp_path / "tmp").iterdir())
    pid = int((tmp_path / "child.pid").read_text())
    for _ in range(100):  # killed by the parent; the kernel reaps it once its parent has gone
        if not os.path.exists(f"/proc/{pid}") or open(f"/proc/{pid}/stat").read().split()[2] == "Z":
            return
        time.sleep(0.05)
    raise AssertionError(f"child {pid} is still running")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP], ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_a_group_signal_during_a_highs_baseline_ends_clean(tmp_path, sig):
    assert_clean(tmp_path, run_in_own_group(tmp_path, GUARD, sig), sig)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGHUP], ids=["SIGINT", "SIGHUP"])
def test_a_group_signal_while_parts_run_ends_clean(tmp_path, sig):
    assert_clean(tmp_path, run_in_own_group(tmp_path, PARTS, sig), sig)
