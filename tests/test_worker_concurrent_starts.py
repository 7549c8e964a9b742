"""Two ``copter worker start`` at once (cron jobs that each start the worker) start ONE worker: the later start
waits for the earlier (a start lock beside the install's lock) and finds its worker running. helper-159: both found
no worker and spawned one; both truncated the log, so the first worker's start lines were overwritten, and a
worker was left running after ``copter worker stop`` said "worker stopped"."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests.helpers import kill_own_workers

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def env():
    folder = tempfile.mkdtemp(prefix="cwc-", dir="/tmp")  # short: a Unix socket path holds 107 bytes
    os.chmod(folder, 0o700)
    e = dict(os.environ, PYTHONPATH=str(REPO), COPTER_WORKER_DIR=folder)
    e.pop("COPTER_WORKER", None)
    yield e
    shutil.rmtree(folder, ignore_errors=True)


def _cli(env, *args):
    cmd = [sys.executable, "-m", "copter_cli", *args]
    return subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_starts_at_once_start_one_worker_and_stop_ends_it(env):
    pids: set[int] = set()
    try:
        procs = [_cli(env, "worker", "start", "--json") for _ in range(2)]
        answers = []
        for p in procs:
            out, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
            answers.append(json.loads(out))
        pids.update(a["pid"] for a in answers)
        assert len(pids) == 1, answers
        assert sorted(a["already_running"] for a in answers) == [False, True], answers
        log = Path(answers[0]["log"]).read_text()
        assert log.count("starting: python") == 1 and "another worker of this install" not in log, log
        stop = _cli(env, "worker", "stop", "--json")
        out, err = stop.communicate(timeout=120)
        assert stop.returncode == 0 and json.loads(out)["stopped"], (out, err)
        status = _cli(env, "worker", "status", "--json")
        out, _ = status.communicate(timeout=120)
        assert json.loads(out)["running"] is False
    finally:
        kill_own_workers(pids)
