"""``copter worker start --idle-timeout inf`` and ``copter worker stop --timeout inf``: the range check accepts inf
for the worker's seconds ("must be >= 0 (seconds, or inf)"), but the worker then died on its first wait
(selectors: "OverflowError: cannot convert float infinity to integer", exit 7 quoting its log) and stop, having
stopped the worker, ended as an internal error (exit 1, "timestamp out of range for platform time_t"; found by the
input hunt of the numeric options). inf now means never, as 0 does for the idle timeout, and wait as long as it
takes for stop. A real worker in its own folder (COPTER_WORKER_DIR), killed by its pid if it outlives the test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import kill_own_workers

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def folder(tmp_path):
    d = tmp_path / "w"
    d.mkdir(mode=0o700)
    pids: list[int] = []
    yield d, pids
    kill_own_workers(pids)  # only the worker this test started


def _cli(d: Path, *args) -> tuple[int, str, str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_WORKER_DIR=str(d))
    env.pop("COPTER_WORKER", None)  # tests/conftest.py turns the worker off
    proc = subprocess.run([sys.executable, "-m", "copter_cli", *args], env=env, capture_output=True, text=True,
                          timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def _start(d: Path, pids: list, *options) -> dict:
    """``copter worker start OPTIONS --json`` (exit 0), its pid kept for the fixture's clean-up; its answer."""
    code, out, err = _cli(d, "worker", "start", *options, "--json")
    assert code == 0, (out, err)
    started = json.loads(out)
    pids.append(started["pid"])
    return started


def test_infinite_idle_timeout_and_stop_timeout(folder):
    d, pids = folder
    started = _start(d, pids, "--idle-timeout", "inf", "--timeout", "inf")
    assert started["idle_timeout_seconds"] == "inf" and not started["already_running"], started
    code, out, err = _cli(d, "worker", "start", "--idle-timeout", "0", "--json")  # 0 is "never" too: one value
    assert code == 0 and "warnings" not in json.loads(out), (out, err)
    code, out, err = _cli(d, "worker", "status")
    assert code == 0 and "worker running" in out and "(never exits idle)" in out, (out, err)
    code, out, err = _cli(d, "worker", "start", "--idle-timeout", "inf")
    assert code == 0 and "never exits when idle" in out and "warning" not in err, (out, err)
    code, out, err = _cli(d, "worker", "stop", "--timeout", "inf", "--json")
    assert code == 0 and json.loads(out) == {"stopped": True, "pid": started["pid"]}, (out, err)
    code, out, _ = _cli(d, "worker", "status", "--json")
    assert code == 0 and not json.loads(out)["running"]
    started = _start(d, pids, "--idle-timeout", "0")  # never idles out, as inf: shown as inf (it said 0.0)
    assert started["idle_timeout_seconds"] == "inf", started
    code, out, err = _cli(d, "worker", "stop", "--json")
    assert code == 0 and json.loads(out)["stopped"] is True, (out, err)


def test_finite_timeouts_too_long_for_the_os_waits(folder):
    # --idle-timeout 3000000 (35 days): the worker died on its first wait (select takes at most 2^31-1 ms,
    # "OverflowError: timeout is too large"); stop --timeout 1e10 ended as exit 1 (socket.settimeout: time_t)
    d, pids = folder
    started = _start(d, pids, "--idle-timeout", "3000000", "--timeout", "1e10")
    assert started["idle_timeout_seconds"] == 3000000, started
    code, out, err = _cli(d, "worker", "status", "--json")
    assert code == 0 and json.loads(out)["running"], (out, err)  # still there after its first idle wait
    code, out, err = _cli(d, "worker", "stop", "--timeout", "1e10", "--json")
    assert code == 0 and json.loads(out) == {"stopped": True, "pid": started["pid"]}, (out, err)


def test_start_with_timeout_zero_starts_in_the_background(folder):
    """``worker start --timeout 0`` (accepted by its range) waited 0 s, failed with exit 7 "did not answer within
    0 s" and left no worker (helper-226). As ``worker stop --timeout 0`` does not wait, it now starts the worker
    and returns at once."""
    d, pids = folder
    code, out, err = _cli(d, "worker", "start", "--timeout", "0", "--json")
    assert code == 0, (out, err)
    res = json.loads(out)
    pids.append(res["pid"])
    assert res["running"] is False and res["background"] is True and res["already_running"] is False, res
    deadline = time.monotonic() + 120
    st = {}
    while time.monotonic() < deadline:
        st = json.loads(_cli(d, "worker", "status", "--json")[1])
        if st["running"]:
            break
        time.sleep(0.2)
    assert st["running"] is True and st["pid"] == res["pid"], st
    code, out, err = _cli(d, "worker", "start", "--timeout", "0")
    assert code == 0 and "already running" in out, (out, err)
    code, out, err = _cli(d, "worker", "stop", "--json")
    assert json.loads(out) == {"stopped": True, "pid": res["pid"]}, (out, err)
