"""The state directory's writer lock: an exclusive ``flock`` of ``STATE/.lock`` with the standard library.

The protocol is the one of the ``filelock`` package (``filelock.FileLock`` on POSIX: ``fcntl.flock(LOCK_EX)``
of the whole file, the file left in place on release so every waiter locks the same inode), so copter and a
script or an older copter holding ``filelock.FileLock(STATE/.lock)`` exclude each other. It is not
``filelock`` itself because importing ``filelock`` 4 (logging, secrets, its fork, shutdown and soft-lock
machinery) cost every ``copter step`` and ``rollback`` 59-65 ms of imports at load average 6-8 (``python -X
importtime`` of a step; issue #15: start-up).

Semantics kept from ``filelock.FileLock(path, timeout=0)`` as copter used it: re-entrant within a thread
(``thread_local``: another thread of the process waits like another process), polled every
:data:`POLL_SECONDS` while waiting, a process fork leaves the child not holding the lock. Where ``flock``
is missing (no ``fcntl`` module, or a file system that refuses it with ENOSYS/EOPNOTSUPP/ENOLCK) the lock
falls back to ``filelock.FileLock``, whose soft lock handles those cases.
"""

from __future__ import annotations

import errno
import os
import threading
import time
import weakref

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None

POLL_SECONDS = 0.05  #: delay between two attempts while waiting (filelock's default poll interval)
_NO_FLOCK = {errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOLCK}
_ALL: weakref.WeakSet = weakref.WeakSet()  # every lock of this process (reset in a forked child)


class LockTimeout(Exception):
    """The lock is still held by another process (or thread) after the timeout."""


class StateLock:
    """An exclusive advisory lock of the file ``path`` (created when missing, never removed).

    Args:
        path: the lock file (``STATE/.lock``); a symbolic link is not followed (``OSError``).
    """

    def __init__(self, path: str):
        self.path = path
        self._local = threading.local()  # .fd, .count of the calling thread
        self._fallback = None  # filelock.FileLock where flock is unavailable
        _ALL.add(self)

    def acquire(self, timeout: float) -> None:
        """Take the lock (again, in a thread that holds it: counted).

        Args:
            timeout: seconds to wait for another holder; 0 = one attempt, negative = forever.
        Raises:
            LockTimeout: still held by another process or thread after ``timeout`` seconds.
            OSError: the lock file cannot be created or opened (permission, read-only file system, a
                symbolic link, disk full).
        """
        if self._fallback is not None:
            return self._acquire_fallback(timeout)
        local = self._local
        if getattr(local, "count", 0):
            local.count += 1
            return
        if fcntl is None:
            return self._acquire_fallback(timeout)
        flags = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd, created = os.open(self.path, flags | os.O_CREAT | os.O_EXCL, 0o666), True
        except FileExistsError:
            fd, created = os.open(self.path, flags), False
        deadline = None if timeout < 0 else time.monotonic() + timeout
        try:
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    left = None if deadline is None else deadline - time.monotonic()
                    if left is not None and left <= 0:
                        raise LockTimeout(self.path) from None
                    time.sleep(POLL_SECONDS if left is None else min(POLL_SECONDS, left))
        except OSError as err:
            os.close(fd)
            if err.errno in _NO_FLOCK:
                if created:  # filelock's soft lock takes a lock file it creates itself
                    os.unlink(self.path)
                return self._acquire_fallback(timeout)
            raise
        except BaseException:
            os.close(fd)
            raise
        local.fd, local.count = fd, 1

    def release(self) -> None:
        """Undo one :meth:`acquire` of this thread; the last one unlocks and closes the file."""
        if self._fallback is not None:
            self._fallback.release()
            return
        local = self._local
        if not getattr(local, "count", 0):
            return
        local.count -= 1
        if local.count == 0:
            fd, local.fd = local.fd, None
            try:
                fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)

    def _acquire_fallback(self, timeout: float) -> None:
        from filelock import FileLock, Timeout

        if self._fallback is None:
            self._fallback = FileLock(self.path, timeout=0)
        try:
            self._fallback.acquire(timeout=timeout)
        except Timeout:
            raise LockTimeout(self.path) from None

    def _forget_after_fork(self) -> None:
        """In a forked child: hold nothing (the parent still holds its lock through its own descriptor)."""
        fd = getattr(self._local, "fd", None)
        self._local = threading.local()
        if fd is not None:
            try:
                os.close(fd)  # the lock stays with the parent's descriptor of the same open file
            except OSError:
                pass


def _after_fork_in_child() -> None:
    for lock in list(_ALL):
        lock._forget_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)

__all__ = ["POLL_SECONDS", "LockTimeout", "StateLock"]
