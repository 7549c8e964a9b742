"""The ``copter`` console script's entry point (and ``python -m copter_cli``'s): it installs a SIGINT handler
(also SIGTERM's and SIGHUP's, exiting 143 and 129 instead of 130) before anything heavy is imported, so an
interrupt at any moment ends the process cleanly.

The handler (:func:`_on_sigint`) asks ``formats.undo`` where the process is. Inside a region that must
unwind (a generation, a failed-round record or an output file being written, CURRENT being replaced) it
raises KeyboardInterrupt: the code removes what it wrote and the command exits 130. Anywhere else (the
imports, parsing, reading, solving) nothing is half-written: it runs the registered undo actions (``init``
removes the state folder it created), prints the interrupted error (``{"error": {"code": 130, "kind":
"interrupted", ...}}`` on stdout with ``--json``, one line on stderr; or a command's reporter prints it with
what the command has to say beside it, ``formats.undo.on_interrupt_report``) and exits 130 at once, so no
library can swallow the interrupt or turn it into another error. Only the few milliseconds in which the
interpreter itself starts, before this module runs, keep Python's default behaviour.
"""

from __future__ import annotations

import json  # here, not in the handler: a SIGINT landing while some module imports json would find it half-initialised
import os
import signal
import sys

MESSAGE = "interrupted; the state is unchanged"
#: what an interrupt leaves, said instead of "; the state is unchanged" by the commands that have no state to leave
#: unchanged (:func:`as_the_command_says`)
LEFT = {"worker": "; a worker started before the interrupt keeps running (`copter worker status` tells)",
        "worker stop": "; the worker may have stopped or not (`copter worker status` tells)",
        "worker status": "; nothing was changed",
        **dict.fromkeys(("solve", "convert", "diff", "export", "show", "history", "report", "version"),
                        "; nothing was changed (copter writes a file whole or not at all)")}


def as_the_command_says(message: str) -> str:
    """``message`` (an interrupt's, ending "; the state is unchanged" unless a round was stored) with that ending
    replaced by what this process's command leaves (:data:`LEFT`): a stateless command said "the state is
    unchanged" (helper-160)."""
    words = [a for a in sys.argv[1:] if not a.startswith("-")]
    command = words[0] if words else ""
    tail = "; the state is unchanged"
    left = LEFT.get(" ".join(words[:2]), LEFT.get(command))
    undo = sys.modules.get("formats.undo")
    written = undo.written() if undo is not None and hasattr(undo, "written") else None
    if written and left is not None and left.startswith("; nothing was changed"):
        # files it had written whole before the interrupt (``report --png``'s charts): "nothing" was not true
        left = f"; {written} (whole) and nothing else was changed"
    return message[:-len(tail)] + left if left is not None and message.endswith(tail) else message


CONSOLE = [False]  #: True in the console script's process (``main``), not for in-process callers
#: called with the exit code just before an interrupt ends the process with ``os._exit`` (the worker's child tells
#: its client the code itself: its worker may be gone, and the client then took the closed connection for a
#: worker that died, exit 7 beside the interrupt's own error line)
BEFORE_EXIT: list = []


def _exit_now(code: int) -> None:
    for hook in BEFORE_EXIT:
        try:
            hook(code)
        except Exception:  # noqa: BLE001 - the exit goes on
            pass
    os._exit(code)


def _on_sigint(signum, frame) -> None:
    """SIGINT, SIGTERM, SIGHUP: KeyboardInterrupt inside a ``formats.undo`` region (the signal noted with
    ``undo.received``, so the command exits 128 + it); else undo actions, the interrupted error, exit 128 +
    the signal at once (SIGINT 130, SIGHUP 129, SIGTERM 143)."""
    undo = sys.modules.get("formats.undo")
    if undo is not None and not hasattr(undo, "exit_code"):  # the signal landed while it was being imported
        undo = None
    if undo is not None:
        if undo.repeated(signum):  # the same interrupt again (``timeout``'s to its process group): already ending
            return
        undo.received(signum)
        if undo.active():
            raise KeyboardInterrupt
    code = 128 + int(signum)
    message = MESSAGE if signum == signal.SIGINT else MESSAGE.replace("interrupted", f"interrupted by "
                                                                          f"{signal.Signals(signum).name}", 1)
    if undo is not None:
        undo.run_actions()
        message = undo.interrupted_message()
    message = as_the_command_says(message)
    try:
        sys.stdout.flush()  # what a command printed before stays in order before the error
    except Exception:  # noqa: BLE001 - a closed or broken stdout: nothing to keep
        pass
    if undo is not None and _reported(undo, code, message):
        _exit_now(code)
    write_error(code, "interrupted", message, "--json" in sys.argv[1:])
    _exit_now(code)


def _reported(undo, code: int, message: str) -> bool:
    """Let the command print the interrupt's error with what it has to say beside it (``formats.undo``'s
    reporter: ``copter step`` with several deltas prints the reports of the rounds it stored); further
    signals are ignored meanwhile (the process is ending). True when the command printed it."""
    for signum in HANDLED:
        try:
            signal.signal(signum, signal.SIG_IGN)
        except (ValueError, OSError):
            pass
    if not undo.report_interrupt(code, message):
        return False
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001 - a closed or broken stream: nothing to keep
            pass
    return True


def write_error(code: int, kind: str, message: str, json_out: bool) -> None:
    """The CLI's error with the standard library only (a signal handler, the worker's client): with
    ``json_out`` ``{"error": {"code", "kind", "message"}}`` on stdout, and always one line on stderr; a closed
    or broken stream is skipped."""
    if json_out:
        _write(1, json.dumps({"error": {"code": code, "kind": kind, "message": message}}) + "\n")
    _write(2, f"error ({kind}, exit {code}): {message}\n")


def _write(fd: int, text: str) -> None:
    try:
        os.write(fd, text.encode())
    except OSError:
        pass


HANDLED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  #: the signals :func:`_on_sigint` handles


def install() -> None:
    """Install the interrupt handler for SIGINT, SIGTERM and SIGHUP (main thread only; a no-op elsewhere): a
    scheduler's SIGTERM ends the command as Ctrl-C does (what it wrote removed, partition pools ended, no
    "leaked semaphore" warning), with exit 143 (SIGHUP: 129) instead of 130. A signal the process ignores
    (``nohup``: SIGHUP) stays ignored."""
    for signum in HANDLED:
        try:
            if signum != signal.SIGINT and signal.getsignal(signum) == signal.SIG_IGN:
                continue
            signal.signal(signum, _on_sigint)
        except ValueError:  # not the main thread
            return


class _NoNumpy:
    """A meta-path finder that refuses ``import numpy`` (see :func:`keep_numpy_out`)."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if name == "numpy" or name.startswith("numpy."):
            raise ModuleNotFoundError("numpy is kept out of this copter command's process (it reads Arrow files "
                                      "with pyarrow alone; copter_cli.entry.keep_numpy_out)", name=name)
        return None


def keep_numpy_out() -> bool:
    """Make numpy unimportable in the console script's process of a command that reads Arrow files but
    computes nothing (``copter history``: the round log). pyarrow imports numpy when it is installed (232 of
    pyarrow's 315 ms of import in ``copter history``, ``python -X importtime`` at load average 1.5) and runs without it (numpy is an optional runtime
    dependency of pyarrow since 16.0: reading IPC files and ``to_pylist`` need none of it). A no-op, returning
    False, in an in-process caller (``CONSOLE`` unset) and when numpy or pyarrow is already imported.

    Returns:
        True when numpy is kept out of this process from now on.
    """
    if not CONSOLE[0] or "numpy" in sys.modules or "pyarrow" in sys.modules:
        return False
    if not any(isinstance(f, _NoNumpy) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoNumpy())
    return True


#: optional modules numba's own import loads that a copter process never uses: name -> (the numba module that
#: imports it, why it can be left out); see :func:`skip_numba_extras`
NUMBA_EXTRAS = {
    "yaml": ("numba.core.config", "it reads .numba_config.yaml, which is then not in the working directory"),
    "scipy": ("numba", "numba imports it only to check its version (a round needs no scipy)"),
}
NUMBA_CONFIG_FILE = ".numba_config.yaml"  #: numba.core.config reads it from the working directory


class _NoNumbaExtras:
    """A meta-path finder that refuses the :data:`NUMBA_EXTRAS` to the numba module importing them."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        extra = NUMBA_EXTRAS.get(name)
        if extra is None or (name == "yaml" and os.path.exists(NUMBA_CONFIG_FILE)):
            return None
        frame = sys._getframe(1)
        while frame is not None and frame.f_globals.get("__name__", "").startswith(("importlib", "_frozen_importlib")):
            frame = frame.f_back  # the import machinery's frames, up to the module that imports
        if frame is None or frame.f_globals.get("__name__") != extra[0]:
            return None
        raise ModuleNotFoundError(f"{name} is not imported for {extra[0]} in copter's CLI: {extra[1]}", name=name)


def skip_numba_extras() -> None:
    """Let numba's own import leave out PyYAML and scipy in the console script's process (issue #15:
    ``copter step`` start-up; at load average 6: yaml 20-30 ms of the CPU of ``import numba``, scipy 19-60 ms
    of import time). Both are optional to numba:
    ``numba.core.config`` imports yaml only to read ``.numba_config.yaml`` (refused only while no such file
    is in the working directory, so a user's file is still read), and ``numba/__init__`` imports scipy
    only to check that its version is >= 1.0. The refusal applies to those two importers alone: any
    other module (numba's linear algebra included) imports them as usual. A library user's process is left
    alone."""
    if not any(isinstance(f, _NoNumbaExtras) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoNumbaExtras())


def main() -> None:
    """Console-script entry: install the handler; hand a solving command to the long-running worker when one
    runs for this install (``copter_cli.worker_client``: standard library only, so nothing heavy is imported
    before it decides; it exits with the command's code); else keep pandas out, let numba skip its extras
    (:func:`skip_numba_extras`) and run :func:`run_app`.

    The process then ends without the interpreter's teardown (``copter_cli.process_exit.exit_now``: threads
    joined, ``atexit`` handlers run, stdout and stderr flushed, same exit status); an exception other than
    SystemExit is left to the interpreter."""
    CONSOLE[0] = True
    install()
    console_environment()
    if os.environ.get("COPTER_FAULT_INJECT") == "sigint_at_start":  # tests: an interrupt during the imports
        os.kill(os.getpid(), signal.SIGINT)
    from copter_cli import worker_client

    worker_client.run_or_return()
    from formats.no_pandas import keep_pandas_out

    keep_pandas_out()
    skip_numba_extras()
    try:
        run_app()
    except SystemExit as ex:
        code = ex.code
    else:
        code = 0
    from copter_cli import process_exit

    process_exit.exit_now(code)


BLAS_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")  #: read by numpy's BLAS when it loads


def single_threaded_blas() -> None:
    """One BLAS thread for numpy in this process and the processes it starts (partition workers, the
    long-running worker), unless the user set the variables. copter's heavy loops are numba kernels with their
    own threads; numpy's BLAS only does level-1 work (dot products, norms) on vectors of 10^4-10^6 entries,
    where OpenBLAS's threads contend with numba's: a 59k dot product took 1.09 ms with OpenBLAS's default
    threads against 65 us with one on the loaded 2-core machine, and Sia 10,240-GPU rounds 13.4 / 6.2 / 15.0 s
    against 7.4 / 4.0 / 11.0 s with the same points. Must run before numpy is imported."""
    for var in BLAS_THREAD_VARS:
        os.environ.setdefault(var, "1")


ARROW_POOL_VAR = "ARROW_DEFAULT_MEMORY_POOL"  #: read by pyarrow when it loads


def arrow_system_allocator() -> None:
    """pyarrow's buffers from the C library's malloc in this process and the processes it starts, unless the user
    set ``ARROW_DEFAULT_MEMORY_POOL``. The wheels' default here, mimalloc, stalled at random in a fresh process:
    ``pyarrow.compute.dictionary_encode`` of a Sia 10,240 delta's 167k names took 0.013 s in most processes and
    0.10-0.26 s in one of three (``index_in`` against 237k names 0.018 vs 0.06-0.14 s), which made a step's
    ``apply`` 0.09 s or 0.3-0.7 s; with ``system`` (or jemalloc) 0.016 / 0.019 s in every process, and 45 MB less
    resident. Must run before pyarrow is imported."""
    os.environ.setdefault(ARROW_POOL_VAR, "system")


def console_environment() -> None:
    """The console script's settings of the libraries it loads, each unless the user set it (and each must run
    before its library is imported): one BLAS thread (:func:`single_threaded_blas`), pyarrow's buffers from malloc
    (:func:`arrow_system_allocator`), no huge-page advice from numpy (:func:`no_numpy_hugepage_advice`). The
    bench scripts call it too, so their in-process rounds run as the console script's do."""
    single_threaded_blas()
    arrow_system_allocator()
    no_numpy_hugepage_advice()


NUMPY_HUGEPAGE_VAR = "NUMPY_MADVISE_HUGEPAGE"  #: read by numpy when it loads


def no_numpy_hugepage_advice() -> None:
    """numpy's arrays without ``madvise(MADV_HUGEPAGE)`` in this process and the processes it starts (partition
    workers, a local Ray cluster, the long-running worker), unless the user set ``NUMPY_MADVISE_HUGEPAGE``.

    numpy marks every allocation of 4 MiB or more for transparent huge pages. Where the kernel's THP ``defrag``
    setting is ``madvise`` (or ``defer+madvise``, the usual distribution defaults), the first touch of such memory
    while no free huge page is at hand stalls in synchronous compaction instead of falling back to small pages
    (numpy issue #31590), and the mark stays on the heap after numpy frees the array. On this 2-core machine
    (``enabled`` and ``defrag`` both ``madvise``), in a TE Kdl part's solve replayed in-process, writing the part's
    scaled matrix (62 MB, one sweep) took 0.35-0.37 s against 0.04 s without the mark, the part 1.53-1.55 against
    1.23-1.25 s, and the monolithic Kdl step's solve 5.05-5.08 against 4.67-4.70 s (the same points); Sia 10,240
    rounds, whose arrays are small, were unchanged. Must run before numpy is imported."""
    os.environ.setdefault(NUMPY_HUGEPAGE_VAR, "0")


def run_app() -> None:
    """Import and run :func:`copter_cli.app.main` on ``sys.argv`` (the console script, and the worker's child
    for a client); SIGINT is ignored once it returns or raises (:func:`ignore_sigint_at_exit`)."""
    from copter_cli.app import main as app_main

    try:
        app_main()
    finally:
        ignore_sigint_at_exit()


def ignore_sigint_at_exit() -> None:
    """The command has ended (output printed, exit code decided): SIGINT, SIGTERM and SIGHUP are ignored from
    here (the exit is bounded: ``copter_cli.process_exit``). While the interpreter shuts down (100-200 ms of
    module and thread teardown measured after a step) Python has already reset its handlers, and an interrupt
    killed the process with -2 and no message although the round was stored and reported. A SIGTERM there
    (session 31, a partitioned step under load) ended the exit while it joined the pool's manager thread, whose
    interrupt clean-up the exit had already unregistered: exit 143 and multiprocessing's "6 leaked semaphore
    objects" warning after the stored round."""
    for signum in HANDLED:
        try:
            signal.signal(signum, signal.SIG_IGN)
        except (ValueError, OSError):  # not the main thread
            pass


if __name__ == "__main__":  # `python -m copter_cli.entry`: run the imported module, whose CONSOLE the commands read
    from copter_cli.entry import main as _main

    _main()
