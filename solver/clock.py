"""The command clock: ``--time-limit`` is the wall time of the whole ``copter`` command, from process start
(issue #15), so imports, loading the numba cache, compiling kernels on a cold install, reading the state and
applying the delta all count, and the solve gets what is left.

The CLI registers the start once per command (:func:`start_command`, from :func:`process_start` as early as
the process can tell); :func:`solver.api.solve_problem` then hands the solver ``time_limit_seconds`` minus
the seconds since that start (:func:`budgeted`). A budget already spent reaches the solver as a limit <= 0,
and the round ends TIME_LIMIT at once, honestly, instead of running past the limit. Without a registered
start (library use in-process) the limit counts from the solve's own start, as before.
"""

from __future__ import annotations

import dataclasses
import math
import os
import time

_START: float | None = None  # time.monotonic() of the command's start, or None (library use)


def process_start() -> float:
    """This process's start on the ``time.monotonic()`` clock (seconds).

    On Linux from ``/proc/self/stat`` (field 22: start time in clock ticks since boot, compared with
    ``CLOCK_BOOTTIME``; resolution 10 ms), so the interpreter's start-up and the imports count; elsewhere,
    or when that cannot be read, the time of this call.
    """
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()  # the command name may hold spaces and ")"
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 overall; fields[0] is field 3
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - age if 0.0 <= age < 86400.0 else now


def start_command(start: float | None) -> None:
    """Register the running command's start (``time.monotonic()`` seconds; None: no command clock)."""
    global _START
    _START = start


def elapsed() -> float:
    """Seconds since the registered command start (0.0 when none is registered)."""
    return 0.0 if _START is None else max(time.monotonic() - _START, 0.0)


def budgeted(settings):
    """``settings`` with ``time_limit_seconds`` reduced by :func:`elapsed` (unchanged when no command start
    is registered or the limit is infinite). The result may be <= 0: an exhausted budget, which the solver
    reports as TIME_LIMIT."""
    if _START is None or not math.isfinite(settings.time_limit_seconds):
        return settings
    return dataclasses.replace(settings, time_limit_seconds=settings.time_limit_seconds - elapsed())
