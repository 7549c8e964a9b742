"""Start, stop and ask the long-running worker (``copter worker start|stop|status``; the commands in
``copter_cli.cmd_worker`` print what these return). The worker itself is ``copter_cli.worker_server``; where
its files live and how a command reaches it is ``copter_cli.worker_client``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager

from copter_cli import worker_client as wc
from copter_cli import worker_phase
from solver.clock import os_wait
from solver.model.errors import EnvironmentFaultError

SOCKET_PATH_MAX = 107  #: bytes of a Unix socket path (sun_path holds 108 with the terminating NUL)
SERVER = "import sys; from copter_cli.worker_server import main; sys.exit(main())"


def status() -> dict:
    """The worker's status (``"running": True`` and its figures: pid, uptime, served, active, idle timeout,
    socket, log, whether its sources are stale and its import-time environment matches this process's), or
    ``{"running": False, "starting": a worker holds the lock and is loading (or says nothing: a worker older than
    the lock's phase record, :mod:`copter_cli.worker_phase`), "stopping": it holds the lock and finishes its running
    commands, "pid": the lock holder's (None when unknown), "active": its running commands (stopping), "stale_socket":
    a socket file nobody answers on, "socket", "log", "dir"}``, with ``"message"`` when the worker refused or its folder cannot be
    used (not a directory, another owner, open to others: what ``worker start`` refuses)."""
    p = wc.paths()
    reply = wc.call("status")
    if reply and reply.get("running"):
        reply.pop("identity", None)
        return reply
    held = lock_held(p["lock"])
    rec = worker_phase.read(p["lock"]) if held else None
    stopping = rec is not None and rec["phase"] == "stopping"
    lost = rec is not None and _unreachable(p, rec) is not None
    out = {"running": False, "starting": held and not stopping and not lost, "stopping": stopping,
           "unreachable": lost,
           "pid": rec["pid"] if rec else None, "active": rec["active"] if stopping else None,
           "stale_socket": os.path.exists(p["socket"]) and not held,
           "socket": p["socket"], "log": p["log"], "dir": p["dir"]}
    if os.path.isdir(p["socket"]) and not os.path.islink(p["socket"]):
        out["stale_socket"] = False  # `worker start` cannot replace a folder
        out["message"] = f"{p['socket']} is a folder, not a socket: remove it, or the worker cannot start"
    elif os.path.isdir(p["lock"]) and not os.path.islink(p["lock"]):
        out["message"] = f"{p['lock']} is a folder, not the lock file: remove it, or the worker cannot start"
    elif reply and reply.get("refused"):
        out["message"] = reply["refused"]
    elif os.path.lexists(p["dir"]) and (problem := wc.folder_problem(p["dir"])):  # `worker start` would refuse it
        out["message"] = f"the worker's folder cannot be used: {problem}; set COPTER_WORKER_DIR to a private folder"
    return out


def lock_held(path: str) -> bool:
    """True when a worker process holds the install's lock (it is starting or running)."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    except OSError:
        return True
    finally:
        os.close(fd)


def ensure_folder(folder: str) -> None:
    """Create the worker's folder (mode 0700) and check it is this user's private folder.

    Raises:
        EnvironmentFaultError: it cannot be created, belongs to another user or is open to others; or it is the
            default folder under a home folder that does not exist (``HOME=/nonexistent``, a service account's
            way of saying "write nothing here": ``worker start`` as root made ``/nonexistent/.cache/...``, helper-241).
    """
    if not os.environ.get("COPTER_WORKER_DIR"):
        home = os.path.expanduser("~")
        if os.environ.get("HOME") == "":  # Python reads an empty HOME as "/": /.cache/copter/worker (helper-242)
            why = "HOME is set but empty (read as the root folder /)"
        elif not os.path.lexists(home):
            why = f"the home folder {home} does not exist"
        elif not os.path.isdir(home):
            why = f"the home folder {home} is not a folder"
        else:
            why = None
        if why is not None:
            raise EnvironmentFaultError(f"{why}, and the worker's folder would be made in it ({folder}); set "
                                        "COPTER_WORKER_DIR to a private folder", file=home, reason="worker")
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
    except OSError as err:
        why = wc.folder_problem(folder) if os.path.lexists(folder) else None  # a file there: "File exists" alone
        raise EnvironmentFaultError(f"cannot create the worker's folder: {why or err.strerror} (set "
                                    "COPTER_WORKER_DIR to a private folder)", file=folder, reason="worker") from None
    problem = wc.folder_problem(folder)
    if problem:
        raise EnvironmentFaultError(f"the worker's folder cannot be used: {problem} (set COPTER_WORKER_DIR to "
                                    "a private folder)", file=folder, reason="worker")


def start(idle_timeout: float, timeout: float, prepare: Callable[[], None],
          progress: Callable[[str], None] | None = None) -> dict:
    """Start this install's worker detached (new session, stdio to its log) and return its status once it
    answers; a running, current worker is left alone (``"already_running": True``), a stale one (its
    sources changed) is stopped and replaced. A lock held by a worker that does not answer is a worker starting
    (waited for) or stopping (finishing its commands): once it is released without a worker answering, this
    starts one.

    Args:
        idle_timeout: seconds without a command after which the worker exits (0: never).
        timeout: seconds to wait for it to answer; 0: do not wait (the worker starts in the background: the
            answer is :func:`status` then, ``"running": False``, with ``"background": True`` and the new
            process's pid; commands run in-process until it answers).
        prepare: compiles the kernels first when they are not (``copter_cli.cmd_prepare.ensure_prepared``,
            with its progress line), so the worker loads them from the cache.
        progress: told once (e.g. printed on stderr) when a new worker process starts, which takes seconds.
    Returns:
        the worker's status plus "already_running" and "start_seconds".
    Raises:
        EnvironmentFaultError: the folder cannot be used, the socket path is too long, the worker exited
            before it answered (the message quotes its log's last lines) or did not answer in time.
    """
    t0 = time.monotonic()
    p = wc.paths()
    ensure_folder(p["dir"])
    with _starting(p["lock"] + ".start", timeout):
        return _start(p, t0, idle_timeout, timeout, prepare, progress)


@contextmanager
def _starting(path: str, timeout: float):
    """One ``copter worker start`` of this install at a time (``flock`` on ``path``, waited for up to ``timeout``
    seconds): two at once (cron jobs that each start the worker) both found no worker, both spawned one and
    truncated its log, and the later spawn could be left running past a ``worker stop`` (helper-159). The later
    start now finds the earlier one's worker running. A start that cannot take it in time goes on without it."""
    import fcntl

    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError:  # the folder's problems are reported by the start itself
        yield
        return
    deadline = time.monotonic() + timeout
    try:
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                if time.monotonic() >= deadline:
                    break
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # releases the lock


def _start(p: dict, t0: float, idle_timeout: float, timeout: float, prepare: Callable[[], None],
           progress: Callable[[str], None] | None) -> dict:
    """:func:`start` under the start lock."""
    current = wc.call("status")
    if current and current.get("running"):
        if not current.get("stale"):
            current.pop("identity", None)
            return {**current, "already_running": True, "start_seconds": time.monotonic() - t0}
        stop(timeout, wait_for_start=False)
    elif lock_held(p["lock"]) and (rec := worker_phase.read(p["lock"])) and _unreachable(p, rec) is not None:
        stop(timeout, wait_for_start=False)  # a worker without its socket: ended, then a new one starts
    if len(os.fsencode(p["socket"])) > SOCKET_PATH_MAX:
        raise EnvironmentFaultError(f"the worker's socket path is {len(os.fsencode(p['socket']))} bytes, over the "
                                    f"{SOCKET_PATH_MAX} a Unix socket allows: set COPTER_WORKER_DIR to a shorter "
                                    "folder", file=p["socket"], reason="worker")
    proc = None
    prepared = False

    def spawn() -> subprocess.Popen:
        nonlocal prepared
        if not prepared:
            prepare()
            prepared = True
        if progress is not None:
            progress("starting the worker: it imports the solver and loads the kernels (seconds) ...")
        try:
            log = os.open(p["log"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        except OSError as err:  # a folder there was IsADirectoryError, exit 1
            raise EnvironmentFaultError(f"cannot write the worker's log: {err.strerror or err} (remove what is in "
                                        "the way, or set COPTER_WORKER_DIR to another folder)", file=p["log"],
                                        reason="worker") from None
        try:
            return subprocess.Popen([sys.executable, "-c", SERVER, "--idle-timeout", repr(float(idle_timeout))],
                                    stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, cwd=p["dir"],
                                    start_new_session=True, close_fds=True,
                                    # absolute: the worker runs in its folder, where a relative
                                    # COPTER_WORKER_DIR=wd named wd/wd (it exited 7, start failed) and a
                                    # relative PYTHONPATH another copter (wc.import_env)
                                    env={**os.environ, **wc.import_env(), "COPTER_WORKER_DIR": p["dir"]})
        finally:
            os.close(log)

    if not lock_held(p["lock"]):  # else another worker holds it: one starting, or one stopping (draining)
        proc = spawn()
    if timeout == 0:  # as `worker stop --timeout 0`: do not wait (it failed, exit 7, the worker left unstarted)
        return {**status(), **({"pid": proc.pid, "starting": True} if proc is not None else {}), "already_running": False,
                "background": True, "idle_timeout_seconds": wc.idle_seconds(idle_timeout),
                "start_seconds": time.monotonic() - t0}
    deadline = time.monotonic() + timeout
    while True:
        code = None if proc is None else proc.poll()
        if code == 0:  # it started and was stopped (a `worker stop` run beside this start) before it was seen
            return {**status(), "pid": proc.pid, "already_running": False, "stopped_meanwhile": True,
                    "idle_timeout_seconds": wc.idle_seconds(idle_timeout),
                    "start_seconds": time.monotonic() - t0,
                    "message": "the worker started and was stopped (a `copter worker stop` or a SIGTERM) before "
                               f"this start saw it answer; its log ends: {_tail(p['log'])}"}
        if code is not None and code != 6:  # 6: another worker of this install took the lock: wait for it
            raise EnvironmentFaultError(f"the worker exited with code {code} before it answered; its log "
                                        f"ends: {_tail(p['log'])}", file=p["log"], reason="worker")
        reply = wc.call("status", timeout=2.0)
        if reply and reply.get("running"):
            reply.pop("identity", None)
            return {**reply, "already_running": proc is None or code == 6, "start_seconds": time.monotonic() - t0}
        if (proc is None or code == 6) and not lock_held(p["lock"]):
            # the lock's holder exited without a worker answering: it was a worker stopping (`worker stop`
            # returned at its --timeout while it finished a command; a stale one replaced above), or a start
            # that failed. Waiting on for it took the whole --timeout (300 s) and failed with exit 7.
            proc = spawn()
            continue
        if time.monotonic() > deadline:
            if proc is not None and code is None:
                proc.terminate()
            raise EnvironmentFaultError(f"the worker did not answer within {timeout:g} s; its log ends: "
                                        f"{_tail(p['log'])}", file=p["log"], reason="worker")
        time.sleep(0.05)


def stop(timeout: float, wait_for_start: bool = True) -> dict:
    """Ask the worker to stop and wait (up to ``timeout`` seconds) until it has exited; commands it is
    running finish first, new ones already run in-process.

    Args:
        timeout: seconds to wait (0: ask and return).
        wait_for_start: wait for a ``worker start`` under way (it holds ``worker-<key>.lock.start`` until its
            worker answers) and stop the worker it starts: ``worker start &`` then ``worker stop`` found no lock
            yet and left the new worker running (helper-229). False for the start itself (replacing a stale worker).
    Returns:
        {"stopped": True, "pid"} once it exited; {"stopped": False, "running": False} when none runs;
        {"stopped": False, "stopping": True, "pid", "active"} when it still finishes commands at the timeout;
        the same with the pid and running commands the lock file records (:mod:`copter_cli.worker_phase`) when
        one an earlier ``stop`` left finishing its commands holds the install's lock; a worker still starting is
        waited for (up to ``timeout``) and then stopped, or at the timeout {"stopped": False, "starting": True,
        "pid", "message"}; a worker that runs but has no socket to answer on (its socket file removed) is sent
        SIGTERM, its stop signal; {"stopped": False, "stopping": True, "pid": None, "active": None, "message"}
        when the lock's holder records nothing (a worker of an older copter).
    """
    deadline = time.monotonic() + timeout  # `--timeout inf`: wait as long as it takes
    p = wc.paths()
    lock = p["lock"]
    while True:
        reply = wc.call("stop")
        if reply and reply.get("stopping"):
            break
        held = lock_held(lock)
        under_way = wait_for_start and lock_held(lock + ".start")
        if reply or not (held or under_way):
            return {"stopped": False, "running": False, **({"message": reply["refused"]} if reply else {})}
        rec = worker_phase.read(lock) if held else None  # hunt 56: a second stop said none runs
        if rec and rec["phase"] == "stopping":
            return {"stopped": False, "stopping": True, "pid": rec["pid"], "active": rec["active"]}
        if rec and (pid := _unreachable(p, rec)) is not None:
            return _signal_stop(pid, lock, deadline)
        if held and rec is None:
            return {"stopped": False, "stopping": True, "pid": None, "active": None,
                    "message": "a worker holds this install's lock without answering: one still finishing its "
                               "running commands after an earlier stop (or one starting); new commands run "
                               "in-process meanwhile"}
        if time.monotonic() >= deadline:
            return {"stopped": False, "starting": True, "pid": rec["pid"] if rec else None, "active": None,
                    "message": f"{'worker ' + str(rec['pid']) if rec else 'a worker'} is still starting (it did "
                               f"not answer within {timeout:g} s); new commands run in-process meanwhile"}
        time.sleep(0.1)  # a worker starting (a `worker start` under way, or loading the solver): stop it once it answers
    sock = reply.pop("_sock")
    try:
        while True:
            # in steps the socket takes (os_wait): settimeout(1e10) raised OverflowError (exit 1)
            sock.settimeout(os_wait(deadline - time.monotonic()))
            try:
                if not sock.recv(4096):
                    return {"stopped": True, "pid": reply["pid"]}
            except TimeoutError:
                if time.monotonic() >= deadline:
                    raise
    except OSError:  # timeout: commands still running
        return {"stopped": False, "stopping": True, "pid": reply["pid"], "active": reply.get("running")}
    finally:
        sock.close()


def _unreachable(p: dict, rec: dict) -> int | None:
    """The pid of a worker that records itself running but cannot be reached: its socket file is gone (removed by
    hand or by a clean-up of the folder) or is no socket. It serves nothing and lives until its idle timeout (never,
    with 0); status called it starting and stop could not end it (helper-229). None otherwise, or when the pid is
    not a copter worker process (its command line, from /proc)."""
    import stat

    if rec["phase"] != "running":
        return None
    try:
        if stat.S_ISSOCK(os.lstat(p["socket"]).st_mode):
            return None
    except OSError:
        pass
    try:
        with open(f"/proc/{rec['pid']}/cmdline", "rb") as f:
            if b"copter_cli.worker_server" not in f.read():
                return None
    except OSError:
        return None
    return rec["pid"]


def _signal_stop(pid: int, lock: str, deadline: float) -> dict:
    """SIGTERM (the worker's stop signal: it finishes its commands, then exits) to an unreachable worker ``pid``;
    wait until it released the install's lock or ``deadline``; :func:`stop`'s answer."""
    import signal

    try:
        os.kill(pid, signal.SIGTERM)
    except OSError:
        pass
    while lock_held(lock) and time.monotonic() < deadline:
        time.sleep(0.05)
    if not lock_held(lock):
        return {"stopped": True, "pid": pid}
    rec = worker_phase.read(lock) or {}
    return {"stopped": False, "stopping": True, "pid": pid, "active": rec.get("active")}


def _tail(path: str, lines: int = 5) -> str:
    try:
        with open(path, "rb") as f:
            text = f.read()[-4000:].decode("utf-8", "replace")
    except OSError as err:
        return f"(unreadable: {err.strerror})"
    return " | ".join(text.strip().splitlines()[-lines:]) or "(empty)"
