"""SIGTERM (a scheduler's, a ``timeout``'s) ends a command as SIGINT does: what the command wrote is removed, a
partitioned round's pools are ended without the resource tracker's "leaked semaphore" warning, and the exit code
is 143 with the interrupted error (JSON with ``--json``). It used to kill the process at once: a partitioned
``copter init`` left a state folder holding only ``.lock`` (a later ``init`` then found a folder it had not
made) and the tracker printed "There appear to be 6 leaked semaphore objects"."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from formats.io import write_problem
from solver.workloads import make_scenario
from tests.helpers import REPO, snapshot
from tests.partition_helpers import partitioned_te_state

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals, forkserver")


def copter(*args, extra_env: dict | None = None) -> subprocess.Popen:
    """``python -m copter_cli ARGS`` (the console script's entry point) in a subprocess, not via a worker."""
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_WORKER_DIR="/nonexistent-copter-worker", **(extra_env or {}))
    return subprocess.Popen([sys.executable, "-m", "copter_cli", *map(str, args)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def assert_terminated(out: str, err: str, code: int) -> None:
    """Exit 143 with the interrupted error naming SIGTERM, no traceback, no resource-tracker warning."""
    assert code == 143, (code, out, err[-2000:])
    error = json.loads(out)["error"]
    assert (error["code"], error["kind"]) == (143, "interrupted")
    assert "interrupted by SIGTERM" in err and "the state is unchanged" in err, err[-2000:]
    assert "Traceback" not in err and "leaked" not in err and "resource_tracker" not in err, err[-2000:]


def test_sigterm_during_a_partitioned_init_leaves_no_state_folder(tmp_path):
    base = tmp_path / "base.parquet"
    write_problem(make_scenario("te", 16, seed=4).base(), base)
    st = tmp_path / "st"
    p = copter("init", base, "--state", st, "--partitions", "2", "--json")
    while not (st / ".lock").exists() and p.poll() is None:  # the folder is made before the solve
        time.sleep(0.01)
    p.send_signal(signal.SIGTERM)
    out, err = p.communicate(timeout=300)
    assert_terminated(out, err, p.returncode)
    assert not st.exists()


def test_sigterm_while_init_saves_round_0_leaves_no_state_folder(tmp_path):
    base = tmp_path / "base.parquet"
    write_problem(make_scenario("te", 16, seed=4).base(), base)
    st = tmp_path / "st"
    p = copter("init", base, "--state", st, "--partitions", "2", "--json",
               extra_env={"COPTER_FAULT_INJECT": "sigterm_during_save"})
    out, err = p.communicate(timeout=300)
    assert_terminated(out, err, p.returncode)
    assert not st.exists()


def test_sigterm_while_a_partitioned_step_saves_leaves_the_state_unchanged(tmp_path):
    st, delta = partitioned_te_state(tmp_path)
    (st / "config.json").write_text((st / "config.json").read_text().replace('"inline"', '"process"'))
    before = snapshot(st)
    p = copter("step", delta, "--state", st, "--json", extra_env={"COPTER_FAULT_INJECT": "sigterm_during_save"})
    out, err = p.communicate(timeout=300)
    assert_terminated(out, err, p.returncode)
    assert snapshot(st) == before
    p = copter("step", delta, "--state", st, "--json")
    out, _ = p.communicate(timeout=300)
    assert p.returncode == 0 and json.loads(out)["round"] == 1, out


def test_once_the_answer_is_decided_sigterm_and_sighup_are_ignored_as_sigint_is():
    """A SIGTERM during a partitioned step's exit (after the round was stored, while the exit joined the pool's
    manager thread) ended it with multiprocessing's "leaked semaphore" warning (session 31)."""
    probe = ("import os, signal\n"
             "from copter_cli import entry\n"
             "entry.install()\n"
             "entry.ignore_sigint_at_exit()\n"
             "for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):\n"
             "    os.kill(os.getpid(), s)\n"
             "print('still here')\n")
    proc = subprocess.run([sys.executable, "-c", probe], env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() == "still here", (proc.returncode, proc.stderr[-2000:])
