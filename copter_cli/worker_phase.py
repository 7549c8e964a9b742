"""What the worker holding the install's lock is doing, recorded in the lock file itself.

The lock (``worker-<key>.lock``, ``flock``-ed by the worker while it lives) says only that a worker lives; a worker
that does not answer on its socket is either starting (importing the solver, loading kernels) or stopping (its
socket already gone, finishing the commands it runs). ``worker status`` and a second ``worker stop`` could not
tell which (session 56's notes). The worker now writes one JSON line into the lock file at each change,
``{"pid": N, "phase": "starting" | "running" | "stopping", "active": commands still running}``, padded with spaces
to :data:`RECORD_BYTES` and written at offset 0 in one ``pwrite``, so a reader sees a whole record (or, before
the first one, an empty file). The record is only read while the lock is held: a dead worker's is never believed.
Standard library only (the client imports this before anything numerical).
"""

from __future__ import annotations

import json
import os

RECORD_BYTES = 256  #: every record has this length, so a shorter later one never leaves an older one's tail
PHASES = ("starting", "running", "stopping")


def record(fd: int, phase: str, active: int | None = None) -> None:
    """Write this process's phase into the lock file ``fd`` (opened read-write, held by this process).

    Args:
        fd: the lock file's descriptor.
        phase: one of :data:`PHASES`.
        active: the commands still running (stopping), else None.

    Raises:
        ValueError: ``phase`` is not one of :data:`PHASES`.
    A write the file system refuses is ignored: the phase is advice for ``worker status``, never needed to serve.
    """
    if phase not in PHASES:
        raise ValueError(f"unknown worker phase {phase!r}")
    line = json.dumps({"pid": os.getpid(), "phase": phase, "active": active}).encode()
    try:
        os.pwrite(fd, line.ljust(RECORD_BYTES - 1) + b"\n", 0)
    except OSError:
        pass


def read(path: str) -> dict | None:
    """The lock file's record (``{"pid", "phase", "active"}``), or None when there is none or it is not one
    this copter writes (an older worker's empty lock file, another tool's content). Call only while the lock is
    held (:func:`copter_cli.worker_control.lock_held`)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(RECORD_BYTES)
    except OSError:
        return None
    try:
        rec = json.loads(raw.decode())
    except (ValueError, UnicodeDecodeError):
        return None
    if not (isinstance(rec, dict) and rec.get("phase") in PHASES and isinstance(rec.get("pid"), int)
            and not isinstance(rec.get("pid"), bool)):
        return None
    active = rec.get("active")
    return {"pid": rec["pid"], "phase": rec["phase"],
            "active": active if isinstance(active, int) and not isinstance(active, bool) else None}
