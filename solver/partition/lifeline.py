"""Part workers die with the process that started them (``copter step`` killed by SIGKILL, SIGTERM or SIGINT).

Why they outlived it: a ``forkserver`` pool's workers are forked by the forkserver, not by this process, and
they block on the pool's call queue, whose pipe they hold both ends of, so they never see the parent go; each
also holds the forkserver's "alive" pipe (``multiprocessing.forkserver`` hands it to every child) and the
resource tracker's pipe, so the forkserver and the tracker wait for them forever: four processes, two of them
~150 MB each, per killed step.

Two independent lifelines, set up by the pool's initializer (:func:`worker_init`) in every worker:

- a daemon thread that waits on ``multiprocessing.parent_process().sentinel`` (a pipe whose write end only the
  process that submitted the parts holds; the kernel closes it when that process dies, whatever killed it) and
  then SIGKILLs its own worker. Portable; needs the GIL for a moment, which a running solve gives up between
  kernel calls;
- Linux: ``prctl(PR_SET_PDEATHSIG, SIGKILL)`` (prctl(2)), so the kernel kills the worker when its parent, the
  forkserver, dies; the forkserver itself gets the same signal on the death of this process when it was started
  from the main thread (:func:`forkserver_preload`: the pdeathsig fires when the *thread* that forked exits).

After them the resource tracker sees every writer of its pipe gone and exits by itself.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

PR_SET_PDEATHSIG = 1  #: prctl(2) option (linux/prctl.h)
PRELOAD_MODULE = "solver.partition.forkserver_lifeline"  #: imported by the forkserver only (sets its pdeathsig)


def set_parent_death_signal(sig: int = signal.SIGKILL) -> bool:
    """Linux: ask the kernel to send ``sig`` to this process when its parent (the thread that forked it) dies
    (``prctl(PR_SET_PDEATHSIG)``). Returns True when set; False elsewhere or when prctl is not reachable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def _watch(sentinel: int) -> None:
    from multiprocessing.connection import wait

    wait([sentinel])  # readable (EOF) only when the parent is gone
    os.kill(os.getpid(), signal.SIGKILL)


def watch_parent() -> bool:
    """Start a daemon thread that SIGKILLs this process when ``multiprocessing.parent_process()`` ends (its
    sentinel pipe reaches EOF). Returns False when this process has no multiprocessing parent."""
    import multiprocessing as mp

    parent = mp.parent_process()
    if parent is None or parent.sentinel is None:
        return False
    threading.Thread(target=_watch, args=(parent.sentinel,), name="copter-parent-watch", daemon=True).start()
    return True


@contextmanager
def blocked_in_this_thread(*names: str) -> Iterator[None]:
    """Block the signals named (``"SIGINT"``, ``"SIGHUP"``; those this platform lacks are skipped) in this thread
    for the ``with`` block, then restore its mask. A process this thread starts meanwhile (fork + exec) starts with
    them blocked: a blocked signal stays blocked across ``exec``. No handler is changed, so a signal sent to this
    process meanwhile reaches its handler through another thread. Without ``pthread_sigmask``: nothing."""
    sigs = {getattr(signal, n) for n in names if hasattr(signal, n)}
    if not sigs or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def start_resource_tracker() -> None:
    """Start ``multiprocessing``'s resource tracker (if it is not running) with SIGHUP and SIGINT blocked. The
    tracker ignores SIGINT and SIGTERM itself (then unblocks them), not SIGHUP: a terminal's hangup, which reaches
    the whole process group, killed it mid-round, and the interrupted command printed "resource_tracker: process
    died unexpectedly, relaunching" and six ``KeyError: '/mp-...'`` tracebacks (helper-167). It ignores SIGINT only
    once its Python has started: a Ctrl-C during that start printed "Fatal Python error: init_import_site" and a
    traceback (helper-182); blocked, it waits until the tracker ignores it."""
    from multiprocessing import resource_tracker

    with blocked_in_this_thread("SIGHUP", "SIGINT"):
        resource_tracker.ensure_running()


def start_forkserver() -> None:
    """Start ``multiprocessing``'s forkserver (if it is not running; the resource tracker first,
    :func:`start_resource_tracker`) with SIGINT blocked. The forkserver ignores SIGINT only once its ``main`` runs,
    after Python's start-up and its preload (:mod:`solver.partition.forkserver_warm`: seconds): a terminal's Ctrl-C,
    which reaches the whole process group, landing meanwhile printed "Fatal Python error: init_import_site: Failed
    to import the site module" and a 25-line traceback after the command's one error line (helper-182). The
    forkserver never unblocks it, and the workers it forks inherit the mask; they ignore SIGINT anyway
    (:func:`worker_init`: the command ends them)."""
    from multiprocessing import forkserver

    start_resource_tracker()
    with blocked_in_this_thread("SIGINT"):
        forkserver.ensure_running()


def worker_init(forkserver: bool) -> None:
    """Initializer of the part workers' pool (``solver.partition.executor``): both lifelines (module docstring).
    The pdeathsig is set only under ``forkserver``, where the worker's parent is the forkserver's main thread
    (under ``spawn`` the forking thread may be a short-lived thread of the caller). SIGINT is ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal's Ctrl-C reaches the process group: the parent,
    # which kills its workers when interrupted, decides (an idle worker printed a KeyboardInterrupt traceback)
    watch_parent()
    if forkserver:
        set_parent_death_signal()
