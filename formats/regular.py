"""Reading copter's own small files inside a state directory without ever blocking on one that is not a file.

``Path.read_text`` opens a FIFO and waits for a writer: a FIFO put where ``CURRENT``, a ``generation.json``, a
``report.json`` or a round-log segment belongs made ``show``, ``history`` and ``step`` hang for good, and a
``step`` that had stored its round then hung holding the lock, deaf to SIGTERM (hunt 37). These readers open
with ``O_NONBLOCK`` (a FIFO opens at once, without a writer), check that what they opened is a regular file, and
only then read it. What is not raises :class:`NotRegularFile`, an ``OSError`` without an errno: every caller
already treats an ``OSError`` that is not an environment fault (``formats.faults.is_environment_fault``) as a
damaged or unreadable file, so the generation is incomplete, CURRENT is unusable (``StateStore.check_links``
then names it, exit 3), or the log segment is damaged, as for any other bad file there.
"""

from __future__ import annotations

import os
import stat


class NotRegularFile(OSError):
    """The path is a FIFO, socket, device or folder, not a regular file (``filename``: the path; ``strerror``:
    what it is, e.g. "is a pipe (FIFO), not a regular file"; no errno)."""

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def what_it_is(mode: int) -> str:
    """Words for a non-regular file's kind (``st_mode``, from ``stat`` or ``lstat``)."""
    return ("a folder" if stat.S_ISDIR(mode) else "a symbolic link" if stat.S_ISLNK(mode) else
            "a pipe (FIFO)" if stat.S_ISFIFO(mode) else
            "a socket" if stat.S_ISSOCK(mode) else
            "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file")


def _refused(path, mode: int) -> NotRegularFile:
    err = NotRegularFile()
    err.filename, err.strerror = str(path), f"is {what_it_is(mode)}, not a regular file"
    return err


def read_regular_bytes(path: str | os.PathLike) -> bytes:
    """The bytes of the regular file ``path`` (a symbolic link to one is followed, as ``open`` does).

    Raises:
        NotRegularFile: ``path`` is a FIFO, socket, device or folder (nothing read, nothing waited for).
        OSError: as ``open`` raises it (FileNotFoundError, PermissionError, ...).
    """
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise _refused(path, mode)
        os.set_blocking(fd, True)
        with open(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def read_regular_text(path: str | os.PathLike) -> str:
    """:func:`read_regular_bytes` decoded as UTF-8 (``Path.read_text``'s replacement for state files).

    Raises:
        NotRegularFile, OSError: as :func:`read_regular_bytes`; UnicodeDecodeError (a ValueError): not UTF-8.
    """
    return read_regular_bytes(path).decode("utf-8")
