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

The joins and handlers are bounded (:data:`EXIT_GRACE_SECONDS`, :func:`_bound_the_exit`): the command's work is
over by then, and nothing it waits for at exit (a process pool's manager thread and queue feeders, its killed
workers, ``ray.shutdown``) may hold a cron job forever. Past the bound the process ends with its status and one
more line on stderr naming the wait (``--debug``: every thread's stack too). A partitioned ``copter step``
interrupted by SIGTERM 1.5 s in printed its error line and was still running 300 s later, once (the readme
check at f481f53; its cause not found, and not reproduced in about 560 interrupted steps since). An interrupted
exit (status 128 + a signal) now kills the process's ``multiprocessing`` children first (:func:`_kill_children`):
a child outside its pool's bookkeeping is joined by ``multiprocessing``'s exit handler forever, one way to that
wait (helper-164 saw it twice in about 230 interrupted partitioned MILP steps, without stacks).

Used by the console script (``copter_cli.entry.main``) and the long-running worker's child
(``copter_cli.worker_child``); never by in-process callers of ``copter_cli.app.main``, who get SystemExit.
Standard library only.
"""

from __future__ import annotations

import os
import sys

FLUSH_FAILED = 120  #: the status the interpreter gives when flushing stdout fails at exit
EXIT_GRACE_SECONDS = 60.0
"""How long the exit may wait for the non-daemon threads and the ``atexit`` handlers (seconds): a local Ray
cluster's shutdown takes a few seconds on the loaded 2-core machine, a pool's teardown well under one."""


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

    bound = _bound_the_exit(code)
    if code >= 128:  # an interrupted command: its worker processes have nothing left to finish
        _kill_children()
    _end_kept_pools()
    _shutdown_ray()
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
    bound.set()  # the flush is not bounded: a reader that is slow to take the output loses none of it
    if not flush_std_streams() and code == 0:
        code = FLUSH_FAILED
    return code


_HANDLED = ("SIGINT", "SIGTERM", "SIGHUP")  #: the signals the CLI ignores once its answer is decided
_SIG_IGN = 1  #: C's SIG_IGN, for ``signal(2)`` called through ctypes


def _shutdown_ray() -> None:
    """``ray.shutdown()`` of a command that used Ray (before the ``atexit`` handlers, which would run it too),
    keeping the signal dispositions it had. Ray's core worker resets SIGTERM (and the other signals of its failure
    handler) to the default action in C when it shuts down, behind Python's back: a SIGTERM in the seconds a local
    cluster takes to stop then killed a ``step --executor ray`` whose round was stored and printed (status -15,
    no error line; hunt 37b). While it runs, a thread puts SIG_IGN back every 5 ms through ``signal(2)`` (any
    thread may; Python's ``signal.signal`` is main-thread only) for the signals the exit ignores; after it, Python
    installs its handlers again, which makes the C disposition what Python believes it is."""
    ray = sys.modules.get("ray")
    if ray is None or not getattr(ray, "is_initialized", lambda: False)():
        return
    import ctypes
    import signal
    import threading

    before = {name: signal.getsignal(getattr(signal, name)) for name in _HANDLED}
    ignored = [getattr(signal, name) for name, h in before.items() if h is signal.SIG_IGN]
    stop = threading.Event()
    keeper = None
    if ignored:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.signal.restype, libc.signal.argtypes = ctypes.c_void_p, [ctypes.c_int, ctypes.c_void_p]

        def keep_ignored() -> None:
            while not stop.wait(0.005):
                for signum in ignored:
                    libc.signal(int(signum), _SIG_IGN)

        keeper = threading.Thread(target=keep_ignored, name="copter-keep-ignored", daemon=True)
        keeper.start()
    try:
        ray.shutdown()
    except Exception:  # noqa: BLE001 - as an atexit handler's failure: the exit goes on
        pass
    finally:
        stop.set()
        if keeper is not None:
            keeper.join()
        for name, handler in before.items():
            try:
                if handler is not None:
                    signal.signal(getattr(signal, name), handler)
            except (ValueError, OSError, TypeError):  # not the main thread, or a handler Python did not install
                pass


def _bound_the_exit(code: int):
    """Start a daemon thread that ends the process with ``code`` once the exit has waited
    :data:`EXIT_GRACE_SECONDS` for the threads and the ``atexit`` handlers, saying so on stderr (with
    ``--debug`` in ``sys.argv``: every thread's stack too, ``faulthandler``). Returns the ``threading.Event``
    that the caller sets when those are done (the thread then ends without a word)."""
    import threading

    done = threading.Event()

    def watch() -> None:
        if done.wait(EXIT_GRACE_SECONDS):
            return
        try:
            os.write(2, (f"copter: the exit waited {EXIT_GRACE_SECONDS:g} s for its threads and worker processes to "
                         f"end; ended without them (exit {code})\n").encode())
            if "--debug" in sys.argv[1:]:
                import faulthandler

                faulthandler.dump_traceback(all_threads=True)
        except Exception:  # noqa: BLE001 - nowhere left to say it
            pass
        os._exit(code)

    threading.Thread(target=watch, name="copter-exit-bound", daemon=True).start()
    return done


def _kill_children() -> None:
    """SIGKILL this process's live ``multiprocessing`` children (part workers, a baseline's guarded HiGHS child)
    before the exit joins them: ``multiprocessing``'s exit handler joins every non-daemon child, and a part worker
    the interrupt left outside its pool's bookkeeping (spawned as the signal landed, so never killed with the
    pool) waits on the pool's call queue forever. An interrupted partitioned MILP step then waited out
    :data:`EXIT_GRACE_SECONDS` and left the resource tracker warning of 5 leaked semaphores (helper-164: 2 of
    about 230 interrupts)."""
    mp = sys.modules.get("multiprocessing")
    if mp is None:
        return
    try:
        children = mp.active_children()
    except Exception:  # noqa: BLE001 - the exit goes on; the bounded join still ends it
        return
    for child in children:
        try:
            child.kill()
        except Exception:  # noqa: BLE001 - already gone
            pass


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
