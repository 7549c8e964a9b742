"""The state directory's writer lock (``STATE/.lock``) with the standard library: ``fcntl.flock`` on the whole
file, re-entrant per thread, polled until a deadline.

``import filelock`` (4.x) cost 0.08 s of CPU in every ``copter init``, ``step`` and ``rollback`` (a third of a
rollback's process, issue #15: start-up that fits cron). This lock does what copter used of it: an exclusive
``flock`` on ``STATE/.lock``, which is the lock ``filelock.FileLock`` takes on Unix, so a copter process and
any ``filelock.FileLock`` on the same file (an older copter, a user's script) exclude each other. As
``FileLock``'s default (``thread_local=True``), re-entry counts per thread: another thread of the process
waits like another process. The file stays in place on release (waiters share its inode); a lock won on an
inode that was unlinked meanwhile is dropped and taken again on the new file. On a file system without
``flock`` (ENOSYS, EOPNOTSUPP) the lock is handed to ``filelock.FileLock``, whose soft-lock fallback covers
it. A child made by ``fork`` holds none of its parent's locks.
"""

from __future__ import annotations

import errno
import fcntl
import os
import threading
import time

POLL_SECONDS = 0.05  #: wait between two attempts while another holder keeps the lock (filelock's default)
_BUSY = (errno.EAGAIN, errno.EWOULDBLOCK, errno.EACCES)
_NO_FLOCK = {errno.ENOSYS, errno.EOPNOTSUPP, getattr(errno, "ENOTSUP", errno.EOPNOTSUPP)}


class Timeout(Exception):
    """The lock was still held by another process (or thread) when the wait ended."""


class StateLock:
    """An exclusive ``flock`` on ``path``, re-entrant within a thread.

    Args:
        path: the lock file (created with mode 0666 minus the umask, as filelock creates it).
    """

    def __init__(self, path: str):
        self.path = path
        self._local = threading.local()
        self._pid = os.getpid()
        self._fallback = None  # filelock.FileLock when the file system has no flock

    def _held(self) -> tuple[int | None, int]:
        """(descriptor, count) of the calling thread in this process."""
        if os.getpid() != self._pid:  # a forked child: the parent's holds are not the child's
            self._local, self._pid = threading.local(), os.getpid()
        return getattr(self._local, "fd", None), getattr(self._local, "count", 0)

    @property
    def is_locked(self) -> bool:
        """True while the calling thread holds the lock."""
        if self._fallback is not None:
            return self._fallback.is_locked
        return self._held()[1] > 0

    def acquire(self, timeout: float = -1) -> None:
        """Take the lock, waiting up to ``timeout`` seconds for another holder (negative: forever; 0: one
        attempt).

        Raises:
            Timeout: still held by another holder after ``timeout`` seconds.
            OSError: the lock file cannot be created or opened (permission, read-only file system, a folder).
        """
        if self._fallback is not None:
            return self._acquire_fallback(timeout)
        fd, count = self._held()
        if count:
            self._local.count = count + 1
            return
        deadline = None if timeout < 0 else time.monotonic() + timeout
        while True:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o666)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as err:
                os.close(fd)
                if err.errno in _NO_FLOCK:
                    from filelock import FileLock

                    self._fallback = FileLock(self.path, timeout=0)
                    return self._acquire_fallback(timeout)
                if err.errno not in _BUSY:
                    raise
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    raise Timeout(f"{self.path} is held by another process") from None
                time.sleep(POLL_SECONDS if left is None else min(POLL_SECONDS, left))
                continue
            if os.fstat(fd).st_nlink == 0:  # unlinked while we waited: lock the file now at the path
                os.close(fd)
                continue
            self._local.fd, self._local.count = fd, 1
            return

    def _acquire_fallback(self, timeout: float) -> None:
        from filelock import Timeout as FileLockTimeout

        try:
            self._fallback.acquire(timeout=timeout)
        except FileLockTimeout:
            raise Timeout(f"{self.path} is held by another process") from None

    def release(self) -> None:
        """Leave one level of the calling thread's hold; the last one unlocks and closes the file."""
        if self._fallback is not None:
            self._fallback.release()
            return
        fd, count = self._held()
        if count > 1:
            self._local.count = count - 1
        elif count == 1:
            self._local.fd, self._local.count = None, 0
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)


__all__ = ["POLL_SECONDS", "StateLock", "Timeout"]
