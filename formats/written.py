"""Checking a file that a library wrote through C stdio before it is renamed into place.

HiGHS writes MPS with ``fprintf`` and reports success even when the writes failed (disk full, over quota,
the file size limit ``ulimit -f``): the file then ends mid-line. :func:`check_complete` looks at the file's
last bytes (an MPS file HiGHS writes ends with its ``ENDATA`` line) and, when they are not the expected
ones, finds the machine's reason by writing to the file itself: the same limit refuses that write with the
real errno (``EFBIG``, ``ENOSPC``, ``EDQUOT``, ``EIO``), which becomes an ``EnvironmentFaultError`` (exit 7)
naming the destination. A short file is never reported as bad input.
"""

from __future__ import annotations

import os

from formats.faults import as_environment_fault, is_environment_fault
from solver.model.errors import EnvironmentFaultError

_PROBE = 1 << 16
"""Bytes appended to a short file to learn why it is short (more than a file system block, so a disk with a
few free bytes in the file's last block still refuses it)."""


def check_complete(tmp: str | os.PathLike, destination: str | os.PathLike, tail: bytes, what: str) -> None:
    """Raise unless the file ``tmp`` (written for ``destination``) ends with ``tail``.

    Args:
        tmp: the file just written (a temporary file; it is spoiled by the probe when it is short).
        destination: the path named in the error (the file the user asked for).
        tail: the bytes a complete file ends with (``b"ENDATA\\n"`` for MPS).
        what: the writer and format for the message (``"HiGHS's MPS"``).
    Raises:
        EnvironmentFaultError: the file does not end with ``tail``: the OS error a further write to it
            raises (``reason`` ``"no_space"`` for EFBIG/ENOSPC/EDQUOT), else reason ``"io"`` with the
            size found.
    """
    with open(tmp, "rb") as f:
        size = f.seek(0, os.SEEK_END)
        f.seek(max(0, size - len(tail)))
        if size >= len(tail) and f.read() == tail:
            return
    try:
        with open(tmp, "ab") as f:
            f.write(b"\n" * _PROBE)
            f.flush()
            os.fsync(f.fileno())
    except OSError as err:
        if is_environment_fault(err):
            raise as_environment_fault(err, destination, destination=True) from None
        raise
    raise EnvironmentFaultError(f"cannot write: {what} file is incomplete ({size} bytes, not ending with "
                                f"{tail.decode().strip()!r}); the disk may be full or a file size limit "
                                "reached", file=str(destination), reason="io")


__all__ = ["check_complete"]
