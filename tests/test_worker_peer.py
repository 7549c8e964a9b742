"""The worker runs a command only for a process that sees the same files and holds the same privileges as the worker
(``copter_cli.worker_peer``); any other runs it in-process (session 54, helper-211: under ``unshare -m`` with a bind
mount over the state, a step through the worker exited 0 and stored its round in a folder the caller could not see;
a root caller without CAP_DAC_OVERRIDE read a mode-000 state file through the worker)."""

from __future__ import annotations

import ctypes
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from copter_cli import worker_peer
from tests.worker_helpers import ROUTED, init_state, lp_stream, running_worker

pytestmark = pytest.mark.skipif(not worker_peer.available(), reason="no /proc/self/ns: nothing compared")

PR_SET_NO_NEW_PRIVS = 38


def _no_new_privs() -> None:
    """preexec_fn: this process and its children can gain no privileges (unprivileged, one way)."""
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS)")


def _refusal_of(cmd: list[str], **kw) -> str | None:
    """worker_peer.refusal of a process running ``cmd`` (given time to set itself up)."""
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, **kw)
    try:
        why = None
        for _ in range(50):  # unshare(1) changes namespace, then execs its command: wait for it
            time.sleep(0.02)
            why = worker_peer.refusal(proc.pid)
            if why:
                break
        return why
    finally:
        proc.kill()
        proc.wait()


def test_a_process_like_the_worker_passes_and_one_without_new_privileges_is_refused():
    assert worker_peer.refusal(os.getpid()) is None
    assert _refusal_of(["sleep", "30"]) is None
    why = _refusal_of(["sleep", "30"], preexec_fn=_no_new_privs)
    assert why is not None and "no_new_privs" in why and "namespace" not in why, why
    assert worker_peer.refusal(0).startswith("the worker cannot see the command's process")
    gone = subprocess.Popen(["true"])
    gone.wait()
    assert worker_peer.refusal(gone.pid).startswith("the worker cannot read the command's process")


def _can_unshare_mounts() -> bool:
    if shutil.which("unshare") is None:
        return False
    return subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode == 0


def test_a_process_in_another_mount_namespace_is_refused():
    if not _can_unshare_mounts():
        pytest.skip("unshare -m is not permitted here")
    why = _refusal_of(["unshare", "-m", "sleep", "30"])
    assert why is not None and "mnt namespace" in why, why


@pytest.mark.slow  # a worker start and commands in their own processes
def test_through_the_worker_a_caller_it_cannot_stand_in_for_runs_its_command_itself(tmp_path):
    base, delta = lp_stream(tmp_path)
    with running_worker("cwp-") as w:
        st = tmp_path / "st"
        init_state(w, base, st)
        # the same process standing: routed (so the check below can tell)
        code, out, err, routed = w.cli("solve", base, "--json")
        assert code == 0 and routed, err
        proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(delta), "--state", str(st), "--json"],
                              env=dict(w.env), capture_output=True, preexec_fn=_no_new_privs, timeout=600)
        err = proc.stderr.decode()
        assert proc.returncode == 0, err
        assert ROUTED not in err and "no_new_privs" in err, err
        assert (st / "CURRENT").read_text().strip() == "1"


@pytest.mark.slow
def test_a_step_under_a_bind_mount_stores_its_round_where_the_caller_sees_it(tmp_path):
    # helper-211's case: the caller's own mount namespace binds folder B over folder A; the worker, outside it, saw
    # A itself and stored the round there (exit 0) while the caller's A (really B) stayed at round 0
    if not _can_unshare_mounts():
        pytest.skip("unshare -m is not permitted here")
    base, delta = lp_stream(tmp_path)
    with running_worker("cwp-") as w:
        a, b = tmp_path / "A", tmp_path / "B"
        init_state(w, base, a)
        shutil.copytree(a, b)
        script = (f"mount --bind {b} {a} && {sys.executable} -m copter_cli step {delta} --state {a} --json; "
                  f"echo rc=$?; cat {a}/CURRENT")
        proc = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", script], env=dict(w.env),
                              capture_output=True, timeout=600)
        out, err = proc.stdout.decode(), proc.stderr.decode()
        if "mount" in err and "rc=" not in out:
            pytest.skip(f"bind mount not permitted: {err}")
        assert "rc=0" in out, (out, err)
        assert ROUTED not in err and "mnt namespace" in err, err
        assert out.strip().splitlines()[-1] == "1", out  # the caller's view: B advanced
        assert Path(a / "CURRENT").read_text().strip() == "0"  # the real A untouched
        assert Path(b / "CURRENT").read_text().strip() == "1"
