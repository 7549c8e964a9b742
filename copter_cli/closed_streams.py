"""Standard streams that were closed when the process started (``copter step d.parquet >&-``).

Python sets ``sys.stdout`` to None when file descriptor 1 is closed at start, and every write of the answer
then failed with ``AttributeError: 'NoneType' object has no attribute 'write'``: exit 1, an internal error,
after the round was stored. :func:`adopt` makes that stdout a :class:`ClosedStdout`, whose writes raise
:class:`ClosedStreamError`; ``copter_cli.output.stdout_refused`` turns it into exit 7 naming stdout, as for a
stdout the machine refuses (``> /dev/full``). It also points each closed descriptor 0-2 at /dev/null, so a
file copter opens later (a lock, a generation being written) never gets descriptor 1 or 2, where HiGHS's C
output, a child process or the signal handler's error line would write into it. A closed stderr stays
silent as before (``sys.stderr`` None: rich prints to nothing). Standard library only.
"""

from __future__ import annotations

import errno
import io
import os
import sys


class ClosedStreamError(OSError):
    """A write to a standard stream that was closed when the process started (errno EBADF)."""


class ClosedStdout(io.TextIOBase):
    """``sys.stdout`` for a descriptor 1 closed at start: writing raises :class:`ClosedStreamError`; flushing
    does nothing (nothing is ever buffered), so the exit's final flush does not fail again."""

    encoding = "utf-8"
    errors = "strict"

    def writable(self) -> bool:
        """True: a write is attempted, and raises."""
        return True

    def write(self, text: str) -> int:
        """Raise :class:`ClosedStreamError`."""
        raise ClosedStreamError(errno.EBADF, "it was closed when copter started (>&-)")

    def flush(self) -> None:
        """Nothing to flush."""

    def isatty(self) -> bool:
        """Not a terminal."""
        return False

    def fileno(self) -> int:
        """No descriptor: raises ``io.UnsupportedOperation`` (an OSError and a ValueError)."""
        raise io.UnsupportedOperation("stdout was closed when copter started")


def adopt() -> None:
    """Point each closed descriptor 0-2 at /dev/null and make a None ``sys.stdout`` a :class:`ClosedStdout`
    (called first thing by ``copter_cli.app.main``; a no-op when the streams are open)."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
            continue
        except OSError:
            pass
        try:
            null = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
        except OSError:
            continue
        if null != fd:  # the lowest free descriptor: fd itself unless a lower one is closed too
            os.dup2(null, fd)
            os.close(null)
    if sys.stdout is None:
        sys.stdout = ClosedStdout()
