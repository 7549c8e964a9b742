"""formats.state_lock: the state's writer lock without filelock's import (issue #15), excluding and excluded by
``filelock.FileLock`` on the same file, re-entrant per thread, not inherited by a forked child."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time

import pytest
from filelock import FileLock

from formats.state_lock import StateLock, Timeout

HOLD = ("import sys, time\nfrom {mod} import {cls}\nlk = {cls}(sys.argv[1])\nlk.acquire({arg})\n"
        "print('held', flush=True)\nsys.stdin.readline()\nlk.release()\nprint('released', flush=True)\n")


def _holder(path, mod="filelock", cls="FileLock", arg=""):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    p = subprocess.Popen([sys.executable, "-c", HOLD.format(mod=mod, cls=cls, arg=arg), str(path)], env=env,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def _let_go(p):
    p.stdin.write("\n")
    p.stdin.flush()
    assert p.stdout.readline().strip() == "released"
    p.wait(timeout=30)


def test_filelock_holder_excludes_state_lock_and_release_lets_it_in(tmp_path):
    path = str(tmp_path / ".lock")
    p = _holder(path)
    lk = StateLock(path)
    try:
        with pytest.raises(Timeout):
            lk.acquire(timeout=0)
        assert not lk.is_locked
        t = time.monotonic()
        with pytest.raises(Timeout):
            lk.acquire(timeout=0.2)
        assert time.monotonic() - t >= 0.2
    finally:
        _let_go(p)
    lk.acquire(timeout=0)
    assert lk.is_locked
    lk.release()
    assert not lk.is_locked


def test_state_lock_holder_excludes_filelock(tmp_path):
    path = str(tmp_path / ".lock")
    p = _holder(path, "formats.state_lock", "StateLock", "timeout=0")
    try:
        with pytest.raises(Exception) as ex:
            FileLock(path).acquire(timeout=0)
        assert type(ex.value).__name__ == "Timeout"
    finally:
        _let_go(p)
    with FileLock(path, timeout=0):
        pass


def test_a_wait_ends_when_the_holder_releases(tmp_path):
    path = str(tmp_path / ".lock")
    p = _holder(path)
    threading.Timer(0.3, lambda: _let_go(p)).start()
    lk = StateLock(path)
    lk.acquire(timeout=30)
    assert lk.is_locked
    lk.release()


def test_reentrant_in_a_thread_exclusive_between_threads(tmp_path):
    lk = StateLock(str(tmp_path / ".lock"))
    lk.acquire(timeout=0)
    lk.acquire(timeout=0)  # re-entered
    lk.release()
    assert lk.is_locked
    seen = []

    def other():
        try:
            lk.acquire(timeout=0)
            seen.append("got it")
        except Timeout:
            seen.append("busy")

    th = threading.Thread(target=other)
    th.start()
    th.join()
    assert seen == ["busy"]
    lk.release()
    assert not lk.is_locked
    th = threading.Thread(target=other)
    th.start()
    th.join()
    assert seen == ["busy", "got it"]


def test_a_forked_child_does_not_hold_the_parents_lock(tmp_path):
    lk = StateLock(str(tmp_path / ".lock"))
    lk.acquire(timeout=0)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: it does not hold the lock, and the parent's flock keeps it out
        try:
            held = lk.is_locked
            try:
                lk.acquire(timeout=0)
                got = "got"
            except Timeout:
                got = "busy"
            os.write(w, f"{held} {got}".encode())
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    assert os.read(r, 100).decode() == "False busy"
    assert lk.is_locked  # the child's exit did not release the parent's lock
    lk.release()


def test_an_unlinked_lock_file_is_locked_anew(tmp_path):
    path = tmp_path / ".lock"
    a = StateLock(str(path))
    a.acquire(timeout=0)
    os.unlink(path)  # e.g. removed by hand while held: a new holder locks the new file
    b = StateLock(str(path))
    b.acquire(timeout=0)
    assert os.path.exists(path)
    b.release()
    a.release()


def test_a_folder_or_an_unwritable_place_is_an_oserror(tmp_path):
    (tmp_path / "dir.lock").mkdir()
    with pytest.raises(OSError):
        StateLock(str(tmp_path / "dir.lock")).acquire(timeout=0)
    with pytest.raises(OSError):
        StateLock(str(tmp_path / "missing" / ".lock")).acquire(timeout=0)
