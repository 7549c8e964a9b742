"""Ending the CLI's process without the interpreter's teardown (issue #15).

After a Sia 128 ``copter step`` the interpreter spent 0.24 s (load average 3) to 0.78 s (load 8) freeing the
heap and unloading numba, llvmlite, numpy and pyarrow, work nobody needs: the process is about to disappear. :func:`exit_now` does
what the interpreter's exit does that can be seen from outside - join the non-daemon threads (this runs
``concurrent.futures``' process-pool shutdown, registered with ``threading._register_atexit``), run the
``atexit`` handlers (``multiprocessing``'s children, ``ray.shutdown``, ``logging.shutdown``,
``weakref.finalize`` objects such as a ``tempfile.TemporaryDirectory``), flush ``sys.stdout`` and
``sys.stderr`` - then ends the process with ``os._exit``. What it skips is garbage collection at exit: copter
writes every file inside ``with`` blocks (``formats.atomic`` fsyncs them), so no output waits for a
finalizer.

Used by the console script (``copter_cli.entry.main``) and the long-running worker's child
(``copter_cli.worker_child``); never by in-process callers of ``copter_cli.app.main``, who get SystemExit.
Standard library only.
"""

from __future__ import annotations

import os
import sys

FLUSH_FAILED = 120  #: the status the interpreter gives when flushing stdout fails at exit


def exit_status(code) -> int:
    """The status ``sys.exit(code)`` gives a process: 0 for None, an int modulo 256, else 1 after ``code``
    is printed on stderr (as the interpreter does)."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        sys.stderr.write(f"{code}\n")
    except Exception:  # noqa: BLE001 - nowhere left to say it
        pass
    return 1


def flush_std_streams() -> bool:
    """Flush ``sys.stdout`` and ``sys.stderr``; False when stdout could not be flushed (its reader went away
    with output still buffered: the interpreter reports that as exit status 120)."""
    ok = True
    for stream in (sys.stdout, sys.stderr):
        try:
            if stream is not None:
                stream.flush()
        except Exception:  # noqa: BLE001 - a closed pipe: nothing more to write there
            ok = ok and stream is not sys.stdout
    return ok


def finish(code: int) -> int:
    """Do what the interpreter's exit does before its teardown: join the non-daemon threads (with them the
    process pools' shutdown), run the ``atexit`` handlers, flush stdout and stderr. Returns the exit status:
    ``code``, or 120 when ``code`` is 0 and stdout could not be flushed. An exception in a handler is
    printed, as the interpreter does, and the exit goes on."""
    import atexit
    import threading

    _end_kept_pools()
    try:
        shutdown = getattr(threading, "_shutdown", None)
        if shutdown is not None:
            shutdown()
    except BaseException:  # noqa: BLE001 - as the interpreter: the atexit handlers still run
        pass
    try:
        atexit._run_exitfuncs()  # prints a failing handler's traceback itself and runs the others
    except BaseException:  # noqa: BLE001 - as the interpreter: the exit goes on
        pass
    if not flush_std_streams() and code == 0:
        code = FLUSH_FAILED
    return code


def _end_kept_pools() -> None:
    """End the partitioned rounds' kept process pools (``solver.partition.executor``, only when a round loaded it)
    before the threads are joined. Their interrupt clean-up (kill the workers, then join the pool's manager
    thread) is unregistered with them, so a signal that arrives while the exit joins that thread cannot make the
    handler join it a second time: a SIGHUP 2.1 s into a partitioned step through the worker, after the round
    was stored, hung the command for 9 minutes in that nested join."""
    executor = sys.modules.get("solver.partition.executor")
    if executor is None:
        return
    try:
        executor.shutdown()
    except Exception:  # noqa: BLE001 - the exit goes on; the threads' join still ends the pools
        pass


def exit_now(code) -> None:
    """End the process with the status ``sys.exit(code)`` would give, after :func:`finish`, without the
    interpreter's teardown (never returns)."""
    status = exit_status(code)
    try:
        status = finish(status)
    finally:
        os._exit(status)
