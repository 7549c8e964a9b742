"""Hard wall-clock limits for baselines: run a function in a child process and kill it at the deadline.

HiGHS honours ``time_limit`` and its interrupt callbacks only at its own check points; a MIP can spend
minutes in presolve before the first one (measured: Sia at 1,024 GPUs asked to stop after 3 s stopped
after 19 s on a loaded 2-core machine; at 10,240 GPUs one solve ran past 15 minutes). Killing a child
process is the only bound that always holds. Cost: one process start (forkserver, so cheap after the
first) plus pickling the problem and the result.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Callable

from solver.clock import os_wait

_CTX = None


def _context():
    global _CTX
    if _CTX is None:
        methods = mp.get_all_start_methods()
        _CTX = mp.get_context("forkserver" if "forkserver" in methods else "spawn")
    return _CTX


def _child(conn, fn, args, kwargs) -> None:
    """The child's body: report that it runs, then ``fn``'s result or its exception's text. It ignores SIGINT
    (a terminal's Ctrl-C reaches the whole process group: the child printed a KeyboardInterrupt, then a
    BrokenPipeError, traceback under the parent's one error line) and dies with its parent
    (``solver.partition.lifeline.watch_parent``); the parent kills it when it is interrupted itself."""
    import signal

    from solver.partition.lifeline import watch_parent

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    watch_parent()
    try:
        conn.send(("started", None))
        conn.send((True, fn(*args, **kwargs)))
    except BaseException as err:  # noqa: BLE001 - reported to the parent, which decides
        conn.send((False, f"{type(err).__name__}: {err}"))
    finally:
        conn.close()


def run_with_deadline(fn: Callable, args: tuple = (), kwargs: dict | None = None, *,
                      wall_seconds: float, startup_seconds: float = 300.0) -> tuple[str, object, float]:
    """Run ``fn(*args, **kwargs)`` in a child process, killed ``wall_seconds`` after it started running.

    ``fn`` and its arguments and result must be picklable (module-level function). The deadline counts
    from the moment the child reports that it runs (process start-up and unpickling the arguments can
    take seconds on a loaded machine and are not the baseline's fault); the start-up itself is bounded
    by ``startup_seconds``. Like every multiprocessing user, a script calling this needs the
    ``if __name__ == "__main__":`` guard.

    Returns:
        (outcome, value, seconds): outcome ``"ok"`` (value = fn's result), ``"killed"`` (deadline hit,
        value None), or ``"error"`` (value = the child's exception text, or why it died); seconds = wall
        time since the child started running.
    """
    from formats import undo
    from solver.partition.lifeline import start_resource_tracker

    ctx = _context()
    undo.multiprocessing_tempdir()  # the forkserver's socket: removed should an interrupt end the process at once
    start_resource_tracker()  # the forkserver shares it: a terminal's hangup must not kill it
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, fn, args, kwargs or {}), daemon=True)
    with undo.on_interrupt(proc.kill):  # ... and this child killed
        proc.start()
        send.close()
        try:
            return _wait_for(proc, recv, wall_seconds, startup_seconds)
        except BaseException:  # KeyboardInterrupt: the child must not run on (it ignores SIGINT)
            proc.kill()
            proc.join()
            raise
        finally:
            recv.close()


def _wait_for(proc, recv, wall_seconds: float, startup_seconds: float) -> tuple[str, object, float]:
    """:func:`run_with_deadline`'s wait for the started child ``proc`` on the pipe's read end ``recv``."""
    start = time.perf_counter()
    try:
        started = recv.poll(startup_seconds) and recv.recv()[0] == "started"
    except EOFError:
        started = False
    if not started:
        proc.kill()
        proc.join()
        return "error", "child process did not start", time.perf_counter() - start
    start = time.perf_counter()
    # in steps the pipe's poll takes (os_wait): poll(3e6) raised OverflowError (compare --time-limit 3000000)
    while not (ready := recv.poll(os_wait(start + wall_seconds - time.perf_counter()))):
        if time.perf_counter() - start >= wall_seconds:
            break
    if ready:
        try:
            ok, value = recv.recv()
        except EOFError:
            proc.join()
            return "error", f"child process died (exit code {proc.exitcode})", time.perf_counter() - start
        proc.join()
        return ("ok" if ok else "error"), value, time.perf_counter() - start
    proc.kill()
    proc.join()
    return "killed", None, time.perf_counter() - start
