"""Standard streams that were closed when the process started (``copter step d.parquet >&-``).

Python sets ``sys.stdout`` to None when file descriptor 1 is closed at start, and every write of the answer
then failed with ``AttributeError: 'NoneType' object has no attribute 'write'``: exit 1, an internal error,
after the round was stored. :func:`adopt` makes that stdout a :class:`ClosedStdout`, whose writes raise
:class:`ClosedStreamError`; ``copter_cli.output.stdout_refused`` turns it into exit 7 naming stdout, as for a
stdout the machine refuses (``> /dev/full``). It also points each closed descriptor 0-2 at /dev/null, so a
file copter opens later (a lock, a generation being written) never gets descriptor 1 or 2, where HiGHS's C
output, a child process or the signal handler's error line would write into it. A closed stderr stays
silent: ``sys.stderr`` becomes a writer to /dev/null (``say`` wrote to a None stderr: an internal error, exit 1,
after ``init --json 2>&-`` had stored its round: helper-203). A stderr the machine refuses (``2>/dev/full``, an
I/O error) drops what copter says there (:class:`QuietStderr`): warnings and progress are diagnostics, the answer
and the report keep them, and a stored round must not end as exit 1. Standard library only.
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


class QuietStderr:
    """``sys.stderr`` of the console script: writes and flushes go to ``stream``; one the machine refuses (ENOSPC,
    EIO: anything but a broken pipe, which stays the 141 of ``copter_cli.output.quiet_broken_pipe``) points
    descriptor 2 at /dev/null, so the stream's buffer, later writes and the interpreter's final flush succeed
    there, and the text is dropped. Everything else is the stream's own."""

    def __init__(self, stream):
        self._stream = stream

    def write(self, text: str) -> int:
        """Write to the stream; dropped when the machine refuses it."""
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError:
            _to_devnull(2)
            return len(text)

    def flush(self) -> None:
        """Flush the stream; dropped when the machine refuses it."""
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError:
            _to_devnull(2)
            try:
                self._stream.flush()  # the buffer now goes to /dev/null
            except OSError:
                pass

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _to_devnull(fd: int) -> None:
    """Point descriptor ``fd`` at /dev/null (nothing happens when it cannot be opened)."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    try:
        os.dup2(null, fd)
    except OSError:
        pass
    finally:
        os.close(null)


def adopt(console_script: bool = True) -> None:
    """Point each closed descriptor 0-2 at /dev/null, make a None ``sys.stdout`` a :class:`ClosedStdout` and a None
    ``sys.stderr`` a writer to /dev/null (called first thing by ``copter_cli.app.main``; a no-op when the streams are
    open); in the console script (``console_script``) wrap ``sys.stderr`` in :class:`QuietStderr`."""
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
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - the process's stderr until it ends
    if console_script and not isinstance(sys.stderr, QuietStderr):
        sys.stderr = QuietStderr(sys.stderr)
