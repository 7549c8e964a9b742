"""``copter worker start`` while the previous worker is still stopping (finishing a running command).

A user hunt: ``copter worker stop`` returns at its ``--timeout`` while the worker finishes a running command (it
holds the install's lock, its socket already gone); a ``copter worker start`` right after it (a restart after an
update, systemd's ExecStop then ExecStart, the cron line ``copter worker start; copter step ...``) took the held
lock for "another start is under way", waited the whole ``--timeout`` (300 s by default) for a worker nobody was
starting, and failed with exit 7 although the old worker had exited seconds after. ``worker status`` meanwhile
said "a worker is starting (loading the solver)". Now start waits for the lock to be released and then starts
the worker, and status says the lock's holder is starting or stopping.

The lock's holder is simulated by this test (``flock`` on the install's ``.lock``, released after a second), so
no old worker is needed; the new worker is a real process, stopped (killed if need be) at the end.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tests.helpers import kill_own_workers

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def folder():
    """A private short folder under /tmp (a Unix socket path holds 107 bytes), removed afterwards."""
    path = tempfile.mkdtemp(prefix="cws-", dir="/tmp")
    os.chmod(path, 0o700)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _env(folder: str) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_WORKER_DIR=folder)
    env.pop("COPTER_WORKER", None)
    return env


def _cli(env, *args, timeout=120):
    p = subprocess.run([sys.executable, "-m", "copter_cli", *args], env=env, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout.decode(), p.stderr.decode()


def _hold_lock(env) -> int:
    code, out, _ = _cli(env, "worker", "status", "--json")
    assert code == 0, out
    st = json.loads(out)
    lock = st["log"][: -len(".log")] + ".lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return fd


def test_start_after_the_old_worker_released_its_lock_starts_a_new_worker(folder):
    env = _env(folder)
    fd = _hold_lock(env)  # the old worker, finishing its last command
    code, out, _ = _cli(env, "worker", "status", "--json")
    assert code == 0 and json.loads(out)["starting"] is True
    code, out, _ = _cli(env, "worker", "status")
    assert "starting" in out and "stopping" in out, out  # the lock alone cannot tell which
    release = threading.Timer(1.0, lambda: os.close(fd))
    release.start()
    pid = None
    try:
        t0 = time.monotonic()
        code, out, err = _cli(env, "worker", "start", "--json", "--timeout", "60")
        took = time.monotonic() - t0
        assert code == 0, (out, err)
        res = json.loads(out)
        pid = res["pid"]
        assert res["running"] is True and res["already_running"] is False
        assert took < 40, took  # not the whole --timeout
    finally:
        release.join()
        if pid is not None:
            _cli(env, "worker", "stop", "--timeout", "10")
            kill_own_workers([pid])


def test_a_stop_while_the_lock_is_held_says_a_worker_is_stopping_not_that_none_runs(folder):
    """hunt 56: a second ``worker stop`` while the first one's worker still finished its command said "no worker
    running for this install" ({"stopped": false, "running": false}), which the lock contradicts."""
    env = _env(folder)
    fd = _hold_lock(env)
    try:
        code, out, _ = _cli(env, "worker", "stop", "--timeout", "1", "--json")
        res = json.loads(out)
        assert code == 0 and res["stopping"] is True and res["stopped"] is False and "running" not in res, res
        code, out, _ = _cli(env, "worker", "stop", "--timeout", "1")
        assert "no worker running" not in out and "finishing its running commands" in out, out
    finally:
        os.close(fd)
    code, out, _ = _cli(env, "worker", "stop", "--timeout", "1", "--json")
    assert json.loads(out) == {"stopped": False, "running": False}, out  # the lock released: none runs


def test_a_relative_worker_dir_starts_the_worker(folder):
    """``COPTER_WORKER_DIR=wd`` (relative to the working directory): the worker, started in its folder, read the
    name again from there (``wd/wd``), exited 7 "cannot use the worker folder", and ``worker start`` failed."""
    parent = folder
    env = dict(_env("wd"))
    pid = None
    try:
        p = subprocess.run([sys.executable, "-m", "copter_cli", "worker", "start", "--json", "--timeout", "60"],
                           env=env, cwd=parent, capture_output=True, timeout=120)
        assert p.returncode == 0, (p.stdout, p.stderr)
        res = json.loads(p.stdout)
        pid = res["pid"]
        assert res["socket"].startswith(os.path.join(parent, "wd") + os.sep)
        p = subprocess.run([sys.executable, "-m", "copter_cli", "worker", "status", "--json"], env=env, cwd=parent,
                           capture_output=True, timeout=60)
        assert json.loads(p.stdout)["running"] is True
    finally:
        if pid is not None:
            subprocess.run([sys.executable, "-m", "copter_cli", "worker", "stop", "--timeout", "10"], env=env,
                           cwd=parent, capture_output=True, timeout=60)
            kill_own_workers([pid])


def test_a_relative_pythonpath_starts_the_worker_on_the_same_code(tmp_path, folder):
    """``PYTHONPATH=. copter worker start`` in a checkout: the worker, started in its own folder, read ``.`` from
    there and imported another copter (the virtualenv's, or none): it listened under another install's key, and
    ``worker start`` waited its whole ``--timeout`` and exited 7."""
    env = dict(_env(folder), PYTHONPATH=".", COPTER_WORKER_DEBUG="1")
    from formats.io import write_problem
    from tests.helpers import small_lp

    write_problem(small_lp(), tmp_path / "m.parquet")
    pid = None
    try:
        p = subprocess.run([sys.executable, "-m", "copter_cli", "worker", "start", "--json", "--timeout", "30"],
                           env=env, cwd=REPO, capture_output=True, timeout=120)
        assert p.returncode == 0, (p.stdout, p.stderr)
        pid = json.loads(p.stdout)["pid"]
        p = subprocess.run([sys.executable, "-m", "copter_cli", "convert", tmp_path / "m.parquet", tmp_path / "m.mps"],
                           env=env, cwd=REPO, capture_output=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert b"running in the worker" in p.stderr, p.stderr
        # the same folder named absolutely from elsewhere: the same import-time environment
        p = subprocess.run([sys.executable, "-m", "copter_cli", "convert", tmp_path / "m.parquet", tmp_path / "n.mps"],
                           env=dict(env, PYTHONPATH=str(REPO)), cwd=tmp_path, capture_output=True, timeout=120)
        assert p.returncode == 0, p.stderr
        assert b"running in the worker" in p.stderr, p.stderr
    finally:
        if pid is not None:
            subprocess.run([sys.executable, "-m", "copter_cli", "worker", "stop", "--timeout", "10"], env=env,
                           cwd=REPO, capture_output=True, timeout=60)
            kill_own_workers([pid])


def test_a_folder_at_the_socket_path_is_named_not_a_traceback(folder):
    """A folder where the socket belongs (``mkdir worker-<key>.sock``): the worker died on an IsADirectoryError
    (exit 1, its traceback quoted by ``worker start``); now it logs what is in the way and exits 7, and ``worker
    start`` quotes that line (exit 7, as for any worker that cannot start)."""
    env = _env(folder)
    code, out, _ = _cli(env, "worker", "status", "--json")
    sock = json.loads(out)["socket"]
    os.mkdir(sock)
    code, out, err = _cli(env, "worker", "start", "--timeout", "30")
    assert code == 7, (out, err)
    assert "Traceback" not in err and "exited with code 7" in err, err
    assert f"cannot listen on {sock}" in err and "remove it" in err, err
    code, out, _ = _cli(env, "worker", "status")
    assert "not a socket" in out, out


def test_a_folder_at_the_lock_path_is_named_not_a_traceback(folder):
    """A folder where the install's lock file belongs: the worker died on an IsADirectoryError (exit 1, its
    traceback quoted by ``worker start``); now it logs the path and exits 7, and ``worker status`` says so."""
    env = _env(folder)
    code, out, _ = _cli(env, "worker", "status", "--json")
    lock = json.loads(out)["log"][: -len(".log")] + ".lock"
    os.mkdir(lock)
    code, out, err = _cli(env, "worker", "start", "--timeout", "30")
    assert code == 7, (out, err)
    assert "Traceback" not in err and "exited with code 7" in err, err
    assert f"cannot use the lock file {lock}" in err and "remove it" in err, err
    code, out, _ = _cli(env, "worker", "status")
    assert f"{lock} is a folder" in out, out


def test_a_folder_at_the_log_path_is_exit_7_naming_it(folder):
    """A folder where the worker's log belongs: ``worker start`` failed as an internal error (exit 1,
    IsADirectoryError); now exit 7 naming the path, as for any worker that cannot start."""
    env = _env(folder)
    code, out, _ = _cli(env, "worker", "status", "--json")
    log = json.loads(out)["log"]
    os.mkdir(log)
    code, out, err = _cli(env, "worker", "start", "--json", "--timeout", "30")
    assert code == 7, (out, err)
    e = json.loads(out)["error"]
    assert e["code"] == 7 and e["file"] == log and "worker's log" in e["message"], e


@pytest.mark.parametrize("phase", ["stopping", "starting"])
def test_status_and_stop_tell_a_stopping_worker_from_a_starting_one(folder, phase):
    """The lock alone could not tell a worker finishing its commands after a stop from one loading the solver
    (``"starting": true`` for both, no pid). The worker records its phase in the lock file (``worker_phase``);
    status and a second stop now say which, with the holder's pid."""
    from copter_cli import worker_phase

    env = _env(folder)
    fd = _hold_lock(env)
    try:
        worker_phase.record(fd, phase, 2 if phase == "stopping" else None)
        code, out, _ = _cli(env, "worker", "status", "--json")
        st = json.loads(out)
        assert code == 0 and st["running"] is False and st["pid"] == os.getpid(), st
        assert (st["stopping"], st["starting"]) == ((True, False) if phase == "stopping" else (False, True)), st
        assert st["active"] == (2 if phase == "stopping" else None) and st["stale_socket"] is False, st
        code, out, _ = _cli(env, "worker", "status")
        assert f"worker {os.getpid()} is {phase}" in out and "starting (loading the solver) or" not in out, out
        code, out, _ = _cli(env, "worker", "stop", "--timeout", "1", "--json")
        res = json.loads(out)
        assert code == 0 and res["stopped"] is False and res["pid"] == os.getpid(), res
        if phase == "stopping":
            assert res == {"stopped": False, "stopping": True, "pid": os.getpid(), "active": 2}, res
        else:  # waited its --timeout for the worker to answer, then says it still starts
            assert res["starting"] is True and "still starting" in res["message"], res
        code, out, _ = _cli(env, "worker", "stop", "--timeout", "1")
        assert f"worker {os.getpid()}" in out and "no worker running" not in out, out
    finally:
        os.close(fd)


def test_the_lock_record_is_fixed_length_and_a_foreign_content_is_no_record(tmp_path):
    from copter_cli import worker_phase

    path = tmp_path / "w.lock"
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        assert worker_phase.read(str(path)) is None  # empty: an older worker's lock
        worker_phase.record(fd, "stopping", 12345)
        worker_phase.record(fd, "stopping", 0)  # shorter: no tail of the longer one left
        assert worker_phase.read(str(path)) == {"pid": os.getpid(), "phase": "stopping", "active": 0}
        assert path.stat().st_size == worker_phase.RECORD_BYTES
        with pytest.raises(ValueError):
            worker_phase.record(fd, "sleeping")
    finally:
        os.close(fd)
    for text in (b"garbage", b'{"pid": true, "phase": "running"}', b'{"pid": 1, "phase": "dead"}', b"\xff\xfe"):
        path.write_bytes(text)
        assert worker_phase.read(str(path)) is None, text


def test_a_stop_while_the_worker_is_starting_waits_for_it_and_stops_it(folder):
    """``worker start &`` then ``worker stop``: the stop found the lock held and nobody answering, said a worker
    was stopping and returned, and the new worker went on running. Now it waits for the worker to answer."""
    from copter_cli import worker_phase

    env = _env(folder)
    code, out, _ = _cli(env, "worker", "status", "--json")
    lock = json.loads(out)["log"][: -len(".log")] + ".lock"
    starter = subprocess.Popen([sys.executable, "-m", "copter_cli", "worker", "start", "--json", "--timeout", "120"],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pid = None
    try:
        deadline = time.monotonic() + 60
        rec = None
        while time.monotonic() < deadline and not (rec and rec["phase"] != "stopping"):
            rec = worker_phase.read(lock) if os.path.exists(lock) else None
            time.sleep(0.01)
        assert rec is not None, "the worker recorded no phase in its lock file"
        pid = rec["pid"]
        code, out, err = _cli(env, "worker", "stop", "--timeout", "120", "--json", timeout=200)
        assert code == 0 and json.loads(out) == {"stopped": True, "pid": pid}, (out, err, rec)
        starter.communicate(timeout=200)
        code, out, _ = _cli(env, "worker", "status", "--json")
        st = json.loads(out)
        assert st["running"] is False and st["starting"] is False and st["stopping"] is False, st
    finally:
        if starter.poll() is None:
            starter.kill()
        if pid is not None:
            kill_own_workers([pid])
