"""The client's scheduling priority (``nice``) and resource limits (``ulimit``), carried to the worker's child.

A command run in-process runs at its caller's nice value and under its caller's limits: a cron line's
``nice -n 19`` or ``ulimit -t 60`` / ``ulimit -f`` guards it. The worker's child is forked from a process
started elsewhere, so without this it ran at the worker's priority and limits and those guards silently stopped
applying (session 33, helper-160: exit 0 through the worker where the in-process command was killed at its
CPU limit or refused its output past the file size limit).

The client sends :func:`current` with its run request. The worker refuses (the client then runs the command
itself) when its child could not take them on without privileges (:func:`unadoptable`: a lower nice value than
the worker's, or a hard limit above the worker's) or could not meet them as the command alone would (a memory
limit, :data:`MEMORY`); otherwise the child applies them (:func:`adopt`) before
running the command. The child's CPU time counts from its fork, as a new process's does.
"""

from __future__ import annotations

import os
import resource

#: limits on the process's memory: a command under one runs in-process (:func:`unadoptable`). The worker's child
#: starts with the worker's address space (the stack and the kernels loaded: ~590 MB), so ``ulimit -v 400000``,
#: which the command alone meets, failed it with MemoryError, and the child then hung at its exit (session 33,
#: helper-162)
MEMORY = ("RLIMIT_AS", "RLIMIT_DATA")
#: the limits carried over (those this platform has)
NAMES = tuple(n for n in ("RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_AS", "RLIMIT_DATA", "RLIMIT_RSS", "RLIMIT_NOFILE",
                          "RLIMIT_CORE", "RLIMIT_NPROC", "RLIMIT_MEMLOCK", "RLIMIT_STACK")
              if hasattr(resource, n))


def current() -> dict:
    """This process's nice value and limits: {"nice": int, "rlimits": {name: [soft, hard]}} (RLIM_INFINITY as
    given by ``resource``, -1 on Linux)."""
    return {"nice": os.getpriority(os.PRIO_PROCESS, 0),
            "rlimits": {n: list(resource.getrlimit(getattr(resource, n))) for n in NAMES}}


def _above(a: int, b: int) -> bool:
    """Limit a is above limit b (RLIM_INFINITY above everything)."""
    inf = resource.RLIM_INFINITY
    return a != b and (a == inf or (b != inf and a > b))


def unadoptable(theirs: dict | None) -> str | None:
    """Why this process's child cannot take on ``theirs`` (:func:`current` of a client) unprivileged, or None.
    A request without them (an older client) is None: nothing to take on."""
    if not theirs:
        return None
    ours = current()
    if int(theirs.get("nice", ours["nice"])) < ours["nice"]:
        return (f"the command's nice value {theirs['nice']} is below the worker's ({ours['nice']}): a worker "
                "process cannot raise its priority")
    for name, (soft, hard) in (theirs.get("rlimits") or {}).items():
        if name in MEMORY and int(soft) != resource.RLIM_INFINITY:
            return (f"the command runs under a memory limit ({name.removeprefix('RLIMIT_').lower()}): the worker's "
                    "process holds the whole numerical stack and every kernel already (~600 MB of address space), so "
                    "the same limit would fail it where the command alone fits")
        if name in ours["rlimits"] and _above(int(hard), ours["rlimits"][name][1]):
            return (f"the command's {name.removeprefix('RLIMIT_').lower()} limit is above the worker's hard limit: "
                    "a worker process cannot raise it")
    return None


def adopt(theirs: dict | None) -> None:
    """Apply ``theirs`` (:func:`current` of the client) to this process. Raises OSError/ValueError when the
    system refuses one (:func:`unadoptable` checked it before the fork)."""
    if not theirs:
        return
    nice = int(theirs.get("nice", os.getpriority(os.PRIO_PROCESS, 0)))
    if nice != os.getpriority(os.PRIO_PROCESS, 0):
        os.setpriority(os.PRIO_PROCESS, 0, nice)
    for name, (soft, hard) in (theirs.get("rlimits") or {}).items():
        if hasattr(resource, name):
            resource.setrlimit(getattr(resource, name), (int(soft), int(hard)))


def limited_cpu(theirs: dict | None) -> bool:
    """Whether ``theirs`` holds a finite CPU limit (a child killed by SIGKILL then died of it, as in-process)."""
    cpu = ((theirs or {}).get("rlimits") or {}).get("RLIMIT_CPU")
    return bool(cpu) and int(cpu[1]) != resource.RLIM_INFINITY
