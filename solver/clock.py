"""The command clock: ``--time-limit`` is the wall time of the whole ``copter`` command, from process start
(issue #15), so imports, loading the numba cache, compiling kernels on a cold install, reading the state and
applying the delta all count, and the solve gets what is left.

The CLI registers the start once per command (:func:`start_command`, from :func:`process_start` as early as
the process can tell); :func:`solver.api.solve_problem` then hands the solver ``time_limit_seconds`` minus
the seconds since that start (:func:`budgeted`). A budget already spent reaches the solver as a limit of 0,
and the round ends TIME_LIMIT at once, honestly, instead of running past the limit. Without a registered
start (library use in-process) the limit counts from the solve's own start, as before.

A command run by the long-running worker (``copter worker start``) runs in a child of the worker, not in
the process the user started: the child calls :func:`inherit_process_start` with the client's start, so
the limit still counts from the ``copter`` process the user (or cron) started. This module imports only
small standard modules: the worker's client reads :func:`process_start` before it decides anything.
"""

from __future__ import annotations

import math
import os
import re
import time

#: the longest single OS wait copter asks for (seconds): ``select``/``poll`` take at most 2^31 - 1 ms (24.8 days;
#: "OverflowError: timeout is too large" past it) and ``socket.settimeout``/``time.sleep`` at most ~9.2e9 s, so a
#: longer deadline (``worker start --idle-timeout 3000000``, ``compare --time-limit 1e10``) is waited for in
#: steps of at most this, each loop checking its own deadline
MAX_OS_WAIT_SECONDS = 86400.0

_START: float | None = None  # time.monotonic() of the command's start, or None (library use)
_INHERITED: float | None = None  # in a worker's child: the client process's start (inherit_process_start)


def process_start() -> float:
    """This process's start on the ``time.monotonic()`` clock (seconds); in a worker's child, the start of
    the client process it runs the command for (:func:`inherit_process_start`).

    On Linux from ``/proc/self/stat`` (field 22: start time in clock ticks since boot, compared with
    ``CLOCK_BOOTTIME``; resolution 10 ms), so the interpreter's start-up and the imports count; elsewhere,
    or when that cannot be read, the time of this call.
    """
    if _INHERITED is not None:
        return _INHERITED
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()  # the command name may hold spaces and ")"
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22 overall; fields[0] is field 3
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - age if 0.0 <= age < 86400.0 else now


def inherit_process_start(start: float) -> None:
    """Make :func:`process_start` return ``start`` (``time.monotonic()`` seconds of another process on this
    machine: the monotonic clock is system-wide). Called by the worker's child for the client process."""
    global _INHERITED
    _INHERITED = float(start)


def start_command(start: float | None) -> None:
    """Register the running command's start (``time.monotonic()`` seconds; None: no command clock)."""
    global _START
    _START = start


def command_start() -> float | None:
    """The registered command start (``time.monotonic()`` seconds), or None (library use)."""
    return _START


TIME_LIMIT_MSG = re.compile(r"time limit \S+ s reached")  #: what an engine's TIME_LIMIT message says


def time_limit_reached(limit: float, since: float | None = None) -> str:
    """The sentence a round the time limit stopped says: "time limit ``limit`` s reached", plus "(``since`` s
    since the command started)" when given (seconds)."""
    return f"time limit {limit:g} s reached" + ("" if since is None else f" ({since:.2f} s since the command started)")


def name_user_limit(message: str, limit: float, since: float | None = None) -> str:
    """``message`` with an engine's "time limit X s reached" (X: the budget it was given, what was left of
    the command's) naming the user's whole ``limit`` instead (:func:`time_limit_reached`)."""
    return TIME_LIMIT_MSG.sub(time_limit_reached(limit, since), message)


def elapsed() -> float:
    """Seconds since the registered command start (0.0 when none is registered)."""
    return 0.0 if _START is None else max(time.monotonic() - _START, 0.0)


def budgeted(settings):
    """``settings`` with ``time_limit_seconds`` reduced by :func:`elapsed` (unchanged when no command start
    is registered or the limit is infinite). A spent budget is 0 (``Settings`` refuses a negative limit),
    which the solver reports as TIME_LIMIT."""
    if _START is None or not math.isfinite(settings.time_limit_seconds):
        return settings
    import dataclasses  # here: dataclasses imports inspect (30 ms), which the worker's client must not pay

    return dataclasses.replace(settings, time_limit_seconds=max(settings.time_limit_seconds - elapsed(), 0.0))


def os_wait(seconds: float | None) -> float | None:
    """A timeout the OS's waits take: ``seconds`` clipped to [0, :data:`MAX_OS_WAIT_SECONDS`] (None stays None:
    no timeout). The caller re-checks its deadline when the wait returns."""
    return None if seconds is None else min(max(0.0, seconds), MAX_OS_WAIT_SECONDS)
