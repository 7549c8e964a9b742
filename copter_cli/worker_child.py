"""A command in the long-running worker's forked child: become the client process, run the console script's
code path, report the exit code (see ``copter_cli.worker_server`` and ``copter_cli.worker_client``).

"Become the client" means: its standard input, output and error are the client's own descriptors (passed
over the socket), its working directory is the client's (an open descriptor, so a renamed folder still
works), its environment, umask, nice value and resource limits (``copter_cli.worker_limits``), ``sys.argv``, ``sys.path`` and the encoding and buffering of ``sys.stdin``,
``sys.stdout`` and ``sys.stderr`` are the client's, ``--time-limit`` counts from the client's start
(``solver.clock.inherit_process_start``), and the CLI's console (``copter_cli.output.console``, built in the
worker for its log file) is built again for the client's stderr and variables (colour, width, ``NO_COLOR``).
Then ``copter_cli.entry.run_app`` runs the command exactly as the console script does, with its SIGINT
handling (``copter_cli.entry``: exit 130, state unchanged).
The exit follows what the interpreter does at exit (threads joined, ``atexit`` handlers, streams flushed)
before ``{"exit": code}`` goes to the client and the process ends with ``os._exit``: the parent's own
clean-up never runs here.
"""

from __future__ import annotations

import io
import os
import signal
import sys

from copter_cli import process_exit
from copter_cli import worker_client as wc


def run(sock, request: dict, fds: list[int], close: list[int], selector, limits: dict | None = None) -> None:
    """The child's whole life (never returns).

    Args:
        sock: the connection to the client (the parent keeps its copy, for signals and a death by signal).
        request: the client's "go" frame (argv, env, umask, start, stdio, main_package, sys_path).
        fds: the client's stdin, stdout, stderr and working directory.
        close: the parent's descriptors this process must not keep (listening socket, wake-up pipe, lock,
            other clients' connections).
        selector: the parent's selector, closed here without touching its registrations.
        limits: the client's nice value and resource limits from its run request, which the worker checked it
            can take on (``copter_cli.worker_limits``).
    """
    signal.set_wakeup_fd(-1)
    for s in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)
    selector.close()
    for fd in close:
        try:
            os.close(fd)
        except OSError:
            pass
    wc.send(sock, {"started": os.getpid()})
    _adopt(request, fds, limits)
    from copter_cli import entry

    entry.CONSOLE[0] = True
    entry.BEFORE_EXIT.append(lambda code: _tell_exit(sock, code))  # an interrupt's exit: the client hears it here
    entry.install()  # SIGINT, SIGTERM and SIGHUP as in the console script (exit 130, 143, 129; state unchanged)
    _watch_client(int(request.get("pid") or 0))
    signal.pthread_sigmask(signal.SIG_UNBLOCK, (*wc.FORWARDED, signal.SIGCHLD))  # blocked since the fork
    code = _run_app(entry)
    _exit(sock, code)


def _adopt(request: dict, fds: list[int], limits: dict | None) -> None:
    """Take over the client's descriptors, directory, environment, umask, nice value, limits, argv, path, streams
    and clock."""
    for target, fd in zip((0, 1, 2), fds[:3], strict=True):
        os.dup2(fd, target)
    os.fchdir(fds[3])
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.environ.clear()
    os.environ.update(request["env"])
    try:
        import locale

        locale.setlocale(locale.LC_CTYPE, "")  # as the interpreter does at start, from the client's variables
    except Exception:  # noqa: BLE001 - an unknown locale: the interpreter's start-up keeps "C" too
        pass
    os.umask(int(request["umask"]))
    from copter_cli.worker_limits import adopt

    adopt(limits)  # nice value and ulimits: the worker checked they can be taken on
    sys.argv = list(request["argv"])
    if request.get("sys_path"):
        sys.path[:] = list(request["sys_path"])
    main = sys.modules.get("__main__")
    if main is not None:
        main.__package__ = request.get("main_package")  # click names the program from it ("copter")
    streams = [_stream(fd, info) for fd, info in zip((0, 1, 2), request["stdio"], strict=True)]
    sys.stdin, sys.stdout, sys.stderr = streams
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = streams
    from solver import clock

    clock.inherit_process_start(float(request["start"]))
    output = sys.modules.get("copter_cli.output")
    if output is not None:  # built in the worker for its log file: now for the client's stderr and variables
        output.console.__init__(**output.CONSOLE_OPTIONS)


def _stream(fd: int, info: dict):
    """A text stream over ``fd`` like the client's (encoding, errors, line buffering, write-through)."""
    reading = fd == 0
    raw = io.FileIO(fd, "rb" if reading else "wb", closefd=False)
    buffered = io.BufferedReader(raw) if reading else io.BufferedWriter(raw)
    return io.TextIOWrapper(buffered, encoding=info["encoding"], errors=info["errors"],
                            line_buffering=info["line_buffering"], write_through=info["write_through"])


def _run_app(entry) -> int:
    """``entry.run_app()``; the exit code the interpreter would give its SystemExit or exception."""
    try:
        entry.run_app()
    except SystemExit as ex:
        return process_exit.exit_status(ex.code)
    except KeyboardInterrupt:  # uncaught, the interpreter ends the process by SIGINT
        import traceback

        traceback.print_exc()
        process_exit.flush_std_streams()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        return 130
    except BaseException:  # noqa: BLE001 - as the interpreter: traceback on stderr, exit 1
        import traceback

        traceback.print_exc()
        return 1
    return 0


def _exit(sock, code: int) -> None:
    """End as the interpreter would (threads, atexit, flush; 120 when stdout cannot be flushed:
    ``copter_cli.process_exit.finish``), tell the client the exit code, and leave without running the parent's
    clean-up."""
    try:
        code = process_exit.finish(code)
    except BaseException:  # noqa: BLE001 - as the interpreter: reported, the exit goes on
        pass
    _tell_exit(sock, code)
    os._exit(code)


_TOLD = [False]  #: the exit code went to the client (once: an interrupt landing in the exit says nothing more)


def _tell_exit(sock, code: int) -> None:
    """Send ``{"exit": code}`` to the client, once. The worker repeats it when it reaps this process; this one
    reaches the client when the worker is gone (killed while it served this command)."""
    if _TOLD[0]:
        return
    _TOLD[0] = True
    try:
        wc.send(sock, {"exit": code})
    except OSError:
        pass


def _watch_client(pid: int) -> None:
    """End this command as an interrupt (SIGTERM: what it wrote undone, exit 143) when its client process dies, as
    the command would have died with it in-process. The worker does this too (its orphan clean-up); this watch is
    for a worker that is gone (killed while it served the command), when nothing else would stop the command, which
    then held the state's lock until it ended. A daemon thread waiting on the client's pidfd (Linux 5.3+;
    elsewhere, or for a client that is not this user's, nothing is watched)."""
    if pid <= 0 or not hasattr(os, "pidfd_open"):
        return
    try:
        fd = os.pidfd_open(pid)
    except OSError:
        return
    import select
    import threading

    def watch() -> None:
        try:
            select.select([fd], [], [])  # readable once the process has ended
        except (OSError, ValueError):
            return
        if not _TOLD[0]:
            os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, name="copter-client-watch", daemon=True).start()
