"""The worker's main process killed (``kill -9``, the OOM killer) while its child runs a command.

Signals to the client went to the worker's main process, which passed them on: with it gone, a SIGTERM to the
client no longer reached the command, and the client then took the closed connection for a dead worker (exit 7
beside the command's own interrupt line). The client's death no longer stopped the command either, which kept
the state's lock until it ended. Now the client signals the command's process directly (a pidfd), the command
tells its client its exit code itself, and the command ends as an interrupt when its client dies.
Each test kills its own worker, so each has its own (``running_worker``).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from copter_cli import exit_codes
from formats.checkpoint import StateStore
from tests.helpers import snapshot
from tests.worker_helpers import ROUTED, init_state, lp_stream, running_worker

pytestmark = pytest.mark.slow  # a worker start per test


def _waiting_step(w, st: Path, delta: Path):
    """A step through the worker that waits for the state's lock (held by the caller): the client process and
    the worker child's pid."""
    proc = subprocess.Popen([sys.executable, "-m", "copter_cli", "step", str(delta), "--state", str(st),
                             "--wait", "300", "--json"], env=dict(w.env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    line = proc.stderr.readline().decode()
    assert ROUTED in line, line + proc.stderr.read().decode()
    child = int(line.rsplit("process", 1)[1].strip(" )\n"))
    time.sleep(1.0)  # the child imports the CLI, parses, then waits for the lock
    return proc, child


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def _kill_main(w) -> None:
    pid = w.status()["pid"]
    os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


@contextlib.contextmanager
def _step_whose_worker_died(tmp_path):
    """A step through its own worker, waiting for the state's lock (held inside the block), whose worker's main
    process was then killed: yields (worker, state, delta, the state's snapshot before, client process, command
    pid). The lock is released when the block ends; the worker's folder is removed after the test."""
    base, d1 = lp_stream(tmp_path)
    st = tmp_path / "state"
    with running_worker("cwk-") as w:
        init_state(w, base, st)
        before = snapshot(st)
        with StateStore(st).lock():
            proc, child = _waiting_step(w, st, d1)
            _kill_main(w)
            yield w, st, d1, before, proc, child


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_to_the_client_reaches_the_command_after_the_worker_died(tmp_path, sig):
    with _step_whose_worker_died(tmp_path) as (_w, st, _d1, before, proc, child):
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=120)
    out, err = out.decode(), err.decode()
    assert proc.returncode == 128 + sig, (out, err)  # as in-process: 143 / 130, not the worker's 7
    assert json.loads(out)["error"]["kind"] == "interrupted", out
    assert err.count("error (") == 1 and "worker ended" not in err, err  # one error line, the interrupt's
    assert snapshot(st) == before
    assert not _alive(child)


def test_the_command_ends_when_its_client_dies_after_the_worker_died(tmp_path):
    with _step_whose_worker_died(tmp_path) as (w, st, d1, before, proc, child):
        proc.kill()
        proc.communicate(timeout=60)
        deadline = time.monotonic() + 60
        while _alive(child) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _alive(child), "the command outlived its client and the worker"
    assert snapshot(st) == before
    code, out, err, _ = w.cli("step", d1, "--state", st, "--json", off=True)  # the lock is free again
    assert code == 0, err


def test_the_exit_code_still_reaches_the_client_after_the_worker_died(tmp_path):
    with _step_whose_worker_died(tmp_path) as (_w, st, _d1, _before, proc, _child):
        pass  # the lock released: the round runs and is stored
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == exit_codes.OK, err
    assert json.loads(out)["round"] == 1
    assert StateStore(st, reuse=False).load().round == 1


def test_the_client_waits_for_the_command_process_to_end():
    """The command tells its client its exit code just before it ends (still holding the state's lock); the client
    waits on the command's pidfd until the process has ended (helper-229: a script's next step met StateBusyError
    in the 24-77 ms between)."""
    from copter_cli import worker_client as wc

    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(0.6)"])
    fd = wc._pidfd(proc.pid)
    assert fd is not None
    t = time.monotonic()
    wc._wait_ended(fd)
    assert time.monotonic() - t >= 0.3  # it waited for the process, which had 0.6 s to live
    assert proc.poll() == 0  # and the process had ended (a zombie until this reaps it)
    os.close(fd)
