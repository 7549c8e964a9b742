"""Preloaded by the multiprocessing forkserver (``set_forkserver_preload``, ``solver.partition.executor``): the
forkserver gets SIGKILL from the kernel when the process that started it dies
(:func:`solver.partition.lifeline.set_parent_death_signal`).

The import does that only inside ``multiprocessing.forkserver.main`` (the forkserver's preload): anything else
that imports every module (``copter worker start``'s server walks the packages, ``solver.prepare`` too) must
not get a parent-death signal, which would kill the server when the command that started it exits.

The forkserver also gets a quiet ``sys.excepthook`` (:func:`quiet_when_owner_left`), which the workers it forks
inherit: a worker forked while the command was being interrupted (SIGINT, SIGTERM, SIGHUP landing while the
command waited for the forkserver to fork it, its pid not yet known, so not killed with the pool) found the pool's
semaphores already unlinked by the command's exit and printed a 14-line ``FileNotFoundError`` traceback
(``SemLock._rebuild``) after copter's one error line. Such a start now ends silently (exit status 1, as before)."""

import os
import sys

from solver.partition.lifeline import set_parent_death_signal


def _in_forkserver_preload() -> bool:
    """True when this import runs within ``multiprocessing.forkserver.main``."""
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_name == "main" and frame.f_globals.get("__name__") == "multiprocessing.forkserver":
            return True
        frame = frame.f_back
    return False


def owner_left(exc: BaseException) -> bool:
    """Whether ``exc``, raised while a forked worker started (``multiprocessing.spawn._main`` reading what the
    command sent), says the command gave that start up: the pool's semaphores are gone (FileNotFoundError from
    ``multiprocessing.synchronize``'s ``SemLock._rebuild``: only the pool's owner unlinks them, when it ends the
    pool) or the command's pipe ended early (EOFError, a broken or reset connection)."""
    if isinstance(exc, (EOFError, BrokenPipeError, ConnectionResetError)):
        return True
    return isinstance(exc, FileNotFoundError) and raised_in(exc, "multiprocessing.synchronize")


def raised_in(exc: BaseException, module: str) -> bool:
    """Whether ``exc``'s traceback passes through a frame of ``module``."""
    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame.f_globals.get("__name__") == module:
            return True
        tb = tb.tb_next
    return False


def quiet_when_owner_left(exc_type, exc, tb, _server: int = os.getpid(), _hook=sys.excepthook) -> None:
    """``sys.excepthook`` of the forkserver and of the workers it forks: silent in a forked worker whose start
    the command gave up (:func:`owner_left`), and for a KeyboardInterrupt anywhere (a terminal's Ctrl-C reaches
    the whole process group: the forkserver, still importing its preload, printed a 17-37-line traceback before
    the command's one error line, helper-165), and in the forkserver for an EOFError of a fork request the command
    left half-sent (it ran out of file descriptors); else the previous hook (the forkserver's own errors, any other
    error of a worker, are printed as before)."""
    if exc_type is not None and issubclass(exc_type, KeyboardInterrupt):
        return
    if os.getpid() != _server and exc is not None and owner_left(exc):
        return
    if os.getpid() == _server and isinstance(exc, EOFError) and raised_in(exc, "multiprocessing.reduction"):
        # the command closed its fork request half-sent: it ran out of file descriptors (ulimit -n) and says so
        # itself (solver.partition.executor); the forkserver's 9-line traceback came first (helper-170)
        return
    _hook(exc_type, exc, tb)


FORKSERVER = _in_forkserver_preload()  #: whether this process is the forkserver (its pdeathsig is then set)
if FORKSERVER:
    set_parent_death_signal()
    sys.excepthook = quiet_when_owner_left
