"""formats.state_lock: the state's writer lock without the filelock package (issue #15: start-up).

It must exclude exactly as ``filelock.FileLock`` did (other processes, including ones that hold the file with
``filelock`` itself, and other threads), be re-entrant within a thread, leave a forked child not holding it,
and fall back to filelock where ``flock`` is refused.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys
import threading

import pytest

from formats import state_lock
from formats.state_lock import LockTimeout, StateLock

HOLD = ("import sys, time, filelock; l = filelock.FileLock(sys.argv[1]); l.acquire(); print('held', flush=True); "
        "time.sleep(float(sys.argv[2])); l.release()")
TRY = ("import sys, filelock\ntry:\n    filelock.FileLock(sys.argv[1]).acquire(timeout=0)\nexcept filelock.Timeout:\n"
       "    sys.exit(3)\n")


def _holder(path, seconds: float) -> subprocess.Popen:
    """A process holding ``path`` with filelock for ``seconds`` (returns once it holds it)."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    return proc


def _filelock_can_take(path) -> bool:
    return subprocess.run([sys.executable, "-c", TRY, str(path)], timeout=60).returncode == 0


def test_excludes_filelock_and_is_reentrant(tmp_path):
    path = tmp_path / ".lock"
    lk = StateLock(str(path))
    lk.acquire(0)
    lk.acquire(0)  # re-entrant
    assert not _filelock_can_take(path)
    lk.release()
    assert not _filelock_can_take(path)  # still held once
    lk.release()
    assert _filelock_can_take(path)
    assert path.exists()  # left in place, as filelock does


def test_held_by_filelock_elsewhere_times_out_then_waits(tmp_path):
    path = tmp_path / ".lock"
    proc = _holder(path, 60)
    try:
        with pytest.raises(LockTimeout):
            StateLock(str(path)).acquire(0)
        with pytest.raises(LockTimeout):
            StateLock(str(path)).acquire(0.15)
    finally:
        proc.kill()
        proc.wait()
    proc = _holder(path, 0.3)
    try:
        lk = StateLock(str(path))
        lk.acquire(60)  # waits for the release
        lk.release()
    finally:
        proc.wait()


def test_another_thread_waits(tmp_path):
    lk = StateLock(str(tmp_path / ".lock"))
    lk.acquire(0)
    got = []

    def other():
        try:
            lk.acquire(0)
            got.append("acquired")
            lk.release()
        except LockTimeout:
            got.append("busy")

    t = threading.Thread(target=other)
    t.start()
    t.join()
    lk.release()
    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert got == ["busy", "acquired"]


@pytest.mark.skipif(not hasattr(os, "fork"), reason="POSIX fork")
def test_forked_child_does_not_hold_it(tmp_path):
    lk = StateLock(str(tmp_path / ".lock"))
    lk.acquire(0)
    pid = os.fork()
    if pid == 0:  # child: the parent holds the lock, so this attempt must fail
        try:
            lk.acquire(0)
            os._exit(0)
        except LockTimeout:
            os._exit(3)
        except BaseException:  # noqa: BLE001
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 3
    assert not _filelock_can_take(tmp_path / ".lock")  # the child's exit left the parent's lock alone
    lk.release()
    assert _filelock_can_take(tmp_path / ".lock")


def test_symbolic_link_is_refused(tmp_path):
    (tmp_path / "target").write_text("")
    os.symlink(tmp_path / "target", tmp_path / ".lock")
    with pytest.raises(OSError):
        StateLock(str(tmp_path / ".lock")).acquire(0)


@pytest.mark.filterwarnings("ignore:flock not supported")
def test_falls_back_to_filelock_where_flock_is_refused(tmp_path, monkeypatch):
    """A file system that refuses flock (ENOSYS): filelock takes over (its soft lock), still exclusive."""
    real = state_lock.fcntl.flock

    def refused(fd, op):
        if op & state_lock.fcntl.LOCK_EX:
            raise OSError(errno.ENOSYS, "flock not supported")
        return real(fd, op)

    monkeypatch.setattr(state_lock.fcntl, "flock", refused)
    path = str(tmp_path / ".lock")
    lk = StateLock(path)
    lk.acquire(0)
    assert lk._fallback is not None and lk._fallback.is_locked
    with pytest.raises(LockTimeout):
        StateLock(path).acquire(0)
    lk.release()
    other = StateLock(path)
    other.acquire(0)
    other.release()
