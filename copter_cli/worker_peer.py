"""Whether the worker can stand in for a client's process: the same view of the files and the same privileges.

The worker's child runs a command with the worker's mount namespace, root directory, credentials, capabilities and
security confinement, not the client's. A client of the same user whose process sees other files or holds fewer
privileges got another command than the one it ran (session 54, helper-211): under ``unshare -m`` with a bind mount
over its state folder, a ``step`` through the worker exited 0 and stored the round in the folder the client could not
see (its own still at the old round); a root client without ``CAP_DAC_OVERRIDE`` read a mode-000 state file through
the worker and stored a round, where in-process it was exit 7 naming the file. The server compares what the kernel
says of the connecting process (its pid from ``SO_PEERCRED``, read in ``/proc``, never what the client claims) with
the same of itself (:func:`refusal`); when they differ it refuses, and the client runs the command itself, as for a
nice value or a limit the worker cannot take on (``copter_cli.worker_limits``).

Compared: the mount, network and user namespaces (the files, the addresses such as ``--ray-address``, the ids'
meaning), the root directory (``chroot``), every user and group id, the supplementary groups, the capability sets,
``NoNewPrivs``, the seccomp mode and the security label (AppArmor/SELinux). Not compared: control groups (a cron job
and a worker started from a login shell sit in different ones; the memory limit that matters to a command alone,
``ulimit -v``, is ``worker_limits``'s).
"""

from __future__ import annotations

import functools
import os

NAMESPACES = ("mnt", "net", "user")  #: /proc/<pid>/ns links compared
#: /proc/<pid>/status fields compared, and what a refusal calls them
STATUS_FIELDS = {"Uid": "user ids", "Gid": "group ids", "Groups": "supplementary groups",
                 "CapInh": "inheritable capabilities", "CapPrm": "permitted capabilities",
                 "CapEff": "effective capabilities", "CapBnd": "capability bounding set",
                 "CapAmb": "ambient capabilities", "NoNewPrivs": "no_new_privs", "Seccomp": "seccomp mode"}


def available() -> bool:
    """True where the comparison can be made (Linux's ``/proc/self/ns``)."""
    return os.path.isdir("/proc/self/ns")


def standing(pid: int | str = "self") -> dict[str, str | None]:
    """What the kernel says of process ``pid`` that decides which files a command it runs sees and what it may do:
    {what: value} over :data:`NAMESPACES` ("mnt namespace": "mnt:[4026531841]"), "root directory" (device and
    inode), :data:`STATUS_FIELDS` (their /proc text, blanks normalised) and "security label" (None when unreadable).

    Raises:
        OSError: the process is gone or its /proc entries cannot be read.
    """
    base = f"/proc/{pid}"
    out: dict[str, str | None] = {f"{ns} namespace": os.readlink(f"{base}/ns/{ns}") for ns in NAMESPACES}
    st = os.stat(f"{base}/root")
    out["root directory"] = f"{st.st_dev}:{st.st_ino}"
    with open(f"{base}/status", encoding="utf-8", errors="replace") as f:
        for line in f:
            key, _, value = line.partition(":")
            if key in STATUS_FIELDS:
                out[STATUS_FIELDS[key]] = " ".join(value.split())
    try:
        with open(f"{base}/attr/current", encoding="utf-8", errors="replace") as f:
            out["security label"] = f.read().strip("\0\n ")
    except OSError:
        out["security label"] = None
    return out


@functools.cache
def _own() -> dict[str, str | None]:
    """:func:`standing` of this process, read once: the worker's does not change while it lives."""
    return standing("self")


def refusal(pid: int) -> str | None:
    """Why the worker cannot run a command for the process ``pid`` (the peer of a connection, ``SO_PEERCRED``), or
    None when it can (or where :func:`available` is False: the socket's mode 0600 in a 0700 folder is the guard).
    A pid of 0 (a process in a PID namespace the worker cannot see) or a process whose entries cannot be read is
    refused: the worker cannot tell what it would stand in for."""
    if not available():
        return None
    if pid <= 0:
        return "the worker cannot see the command's process (another PID namespace)"
    try:
        ours, theirs = _own(), standing(pid)
    except OSError as err:
        return f"the worker cannot read the command's process ({err.strerror or err})"
    differ = [what for what, value in ours.items() if theirs.get(what) != value]
    if not differ:
        return None
    return ("the command's process differs from the worker's in its " + ", ".join(differ)
            + ": the worker's child would see other files or hold other privileges than the command")
