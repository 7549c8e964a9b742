"""Where an interrupt must unwind (undo work on disk) and where it may end the process at once.

A process-wide depth counter is above 0 while the code has made something on disk that an exception must
undo: a temporary generation, a failed-round record being written, a temporary output file, CURRENT
being replaced (:func:`region`). Work that an interrupt could leave behind outside such a region (a state
folder ``init`` created) registers an undo action with :func:`on_interrupt`.

The CLI's SIGINT handler (``copter_cli.entry``; SIGTERM and SIGHUP have the same, :func:`received` noting which
signal, so that the exit code is 128 + it) reads them: inside a region it raises KeyboardInterrupt (the
code removes what it wrote, the command exits 130); outside, nothing is half-written, so it runs the
registered actions and ends the process at once with 130. That is what makes an interrupt clean at any
moment: a KeyboardInterrupt raised in the middle of a third-party import or call can be swallowed or turned
into another error by that library (pyarrow's lazy pandas import turns it into an AttributeError).

Work on scratch states that are not the user's (the kernel warm-up's tiny rounds, ``solver.prepare``) runs
in :func:`scratch`: what it stores is not the command's change, so an interrupt then (or one raised there)
says what was interrupted and that the user's state is unchanged, described by the command
(:func:`about_state`: the state folder and the round its CURRENT names), never "round 2 is stored and
current" of a scratch round.

Library callers without that handler get Python's usual KeyboardInterrupt everywhere; the regions then
only count. Pure standard library, no state but a few module globals (main thread only).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_DEPTH = [0]
_ACTIONS: list[Callable[[], None]] = []
_DONE: list[str] = []
_DONE_REPORT: list = []  #: [the report of the latest stored change] (:func:`done`)
_WROTE: list[str] = []  #: the first two output files the command wrote completely (:func:`wrote`)
_WROTE_COUNT = [0]  #: how many it wrote (a library caller writing every round keeps no growing list)
_SCRATCH: list[str] = []  #: what the scratch work in progress is, innermost last (:func:`scratch`)
_LANDED: list[str] = []  #: the scratch work a KeyboardInterrupt was raised in (this command)
_STATE: list[Callable[[], str]] = []  #: the command's description of the user's state (:func:`about_state`)
_SIGNAL: list[int] = []  #: the signal that interrupted this command, when not SIGINT (:func:`received`)
_SIGNAL_AT: list[float] = []  #: when it came (``time.monotonic()``; :func:`repeated`)
REPEAT_SECONDS = 1.0
"""The same signal again this soon after the one that interrupts the command is a second delivery of it, not a
second request (:func:`repeated`)."""
_REPORTERS: list[Callable[[int, str], bool]] = []  #: who prints an interrupt's error (:func:`on_interrupt_report`)


@contextmanager
def region() -> Iterator[None]:
    """Mark a block whose interruption must unwind through its ``except``/``finally`` clauses."""
    _DEPTH[0] += 1
    try:
        yield
    finally:
        _DEPTH[0] -= 1


def active() -> bool:
    """True inside a :func:`region`."""
    return _DEPTH[0] > 0


@contextmanager
def on_interrupt(action: Callable[[], None]) -> Iterator[None]:
    """Run ``action`` if the process is ended by an interrupt while the block runs (outside any region)."""
    _ACTIONS.append(action)
    try:
        yield
    finally:
        _ACTIONS.remove(action)


@contextmanager
def temporary_folder(prefix: str) -> Iterator[str]:
    """``tempfile.TemporaryDirectory(prefix=prefix)``'s path, removed when the block ends and also when an
    interrupt ends the process at once while it runs (:func:`on_interrupt`: the CLI's handler outside a region
    ends with ``os._exit``, which skips the directory's own finalizer; ``copter init big.mps`` stopped by a
    ``timeout`` while HiGHS read the file left ``$TMPDIR/copter-mps-*`` behind)."""
    import shutil
    import tempfile

    with tempfile.TemporaryDirectory(prefix=prefix) as tmp, \
            on_interrupt(lambda: shutil.rmtree(tmp, ignore_errors=True)):
        yield tmp


_MP_TEMPDIR: list = []  #: [multiprocessing's temporary folder] once :func:`multiprocessing_tempdir` registered it


def multiprocessing_tempdir() -> None:
    """Once per process, before it starts a ``forkserver`` (whose listening socket lies in ``multiprocessing``'s
    temporary folder, ``$TMPDIR/pymp-*``): register an undo action for the rest of the process's life that
    removes that folder. Its own finalizer runs only at a normal exit, which an interrupt ending the process at
    once skips: every ``copter step --partitions K`` or ``copter compare --baseline highs`` a ``timeout``
    stopped mid-round left one folder behind."""
    if _MP_TEMPDIR:
        return
    import shutil
    from multiprocessing import util

    path = util.get_temp_dir()
    _MP_TEMPDIR.append(path)
    _ACTIONS.insert(0, lambda: shutil.rmtree(path, ignore_errors=True))  # oldest: run last, after the pools end


@contextmanager
def on_interrupt_report(report: Callable[[int, str], bool]) -> Iterator[None]:
    """While the block runs, an interrupt that ends the command outside any region has its error printed by
    ``report(exit_code, message)`` (:func:`report_interrupt`), which prints what the command has to say with it
    (``copter step`` with several deltas: the reports of the rounds it stored) and returns True, or returns
    False to leave the plain error to the CLI."""
    _REPORTERS.append(report)
    try:
        yield
    finally:
        _REPORTERS.remove(report)


def report_interrupt(code: int, message: str) -> bool:
    """Hand an interrupt's error (exit ``code``, ``message``: :func:`interrupted_message`) to the innermost
    reporter (:func:`on_interrupt_report`). True when it printed it; False when none is registered, it
    declined, or it failed (the caller then prints the plain error)."""
    if not _REPORTERS:
        return False
    try:
        return bool(_REPORTERS[-1](code, message))
    except Exception:  # noqa: BLE001 - the process is ending: the plain error must still be printed
        return False


def done(what: str, report: dict | None = None) -> None:
    """Record that the command's change is stored (``"round 3 is stored and current"``): an interrupt from
    here on says so instead of "the state is unchanged". ``report``: the stored round's report, for a batch that
    an interrupt delivered right after the store stops before its own bookkeeping saw the round
    (:func:`stored_report`). Ignored inside :func:`scratch` (a scratch state's round is not the command's change)."""
    if not _SCRATCH:
        _DONE.append(what)
        _DONE_REPORT[:] = [report]


def stored_report() -> dict | None:
    """The report :func:`done` recorded with the command's latest stored change (None: none, or none given)."""
    return _DONE_REPORT[0] if _DONE_REPORT else None


def stored() -> str | None:
    """What the command stored (:func:`done`'s latest text, ``"round 3 is stored and current"``), or None
    before it stored anything: an error after that point (a stdout that cannot be written) says so."""
    return _DONE[-1] if _DONE else None


def wrote(path: str) -> None:
    """Record that the command wrote the output file ``path`` completely (``formats.io``'s atomic writers,
    ``solve -o``): an error after it (a stdout that cannot be written) says so (:func:`written`). Ignored
    inside :func:`scratch`."""
    if not _SCRATCH:
        _WROTE_COUNT[0] += 1
        if len(_WROTE) < 2:
            _WROTE.append(str(path))


def written_files() -> list[str]:
    """The first two output files :func:`wrote` recorded, in order."""
    return list(_WROTE)


def written() -> str | None:
    """``"out.mps is written"`` (two files: ``"a and b are written"``; more: ``"a and N other files are
    written"``) for the files :func:`wrote` recorded, or None when the command wrote none."""
    if not _WROTE:
        return None
    if _WROTE_COUNT[0] == 1:
        return f"{_WROTE[0]} is written"
    if _WROTE_COUNT[0] == 2:
        return f"{_WROTE[0]} and {_WROTE[1]} are written"
    return f"{_WROTE[0]} and {_WROTE_COUNT[0] - 1} other files are written"


@contextmanager
def scratch(what: str) -> Iterator[None]:
    """Mark work on scratch states that are not the user's (``what``: "while compiling the solver kernels,
    before the round"): :func:`done` records nothing inside, and an interrupt inside, or a KeyboardInterrupt
    leaving it, is reported as ``interrupted WHAT; the state is unchanged (...)``."""
    _SCRATCH.append(what)
    try:
        yield
    except KeyboardInterrupt:
        _LANDED.append(what)
        raise
    finally:
        _SCRATCH.pop()


def about_state(describe: Callable[[], str]) -> None:
    """Let an interrupt in :func:`scratch` work name the user's state: ``describe()`` (called when the
    interrupt is reported, so it reads the state as it is then) says which state and round, e.g.
    ``"/srv/st: CURRENT names round 0"``; for the rest of the command (:func:`begin_command` forgets it)."""
    _STATE[:] = [describe]


def begin_command() -> None:
    """Forget what an earlier command in this process stored or described (in-process callers run
    several)."""
    _DONE.clear()
    _DONE_REPORT.clear()
    _WROTE.clear()
    _WROTE_COUNT[0] = 0
    _LANDED.clear()
    _STATE.clear()
    _SIGNAL.clear()
    _SIGNAL_AT.clear()


def received(signum: int) -> None:
    """Record the signal that interrupts the command (the CLI's handler, before it raises KeyboardInterrupt):
    :func:`exit_code` and :func:`interrupted_message` then name it. SIGINT (2) is the default."""
    _SIGNAL[:] = [int(signum)]
    _SIGNAL_AT[:] = [time.monotonic()]


def repeated(signum: int) -> bool:
    """True for the signal :func:`received` recorded arriving again within ``REPEAT_SECONDS``: the same
    interrupt delivered twice, which the CLI's handler ignores while the command unwinds from the first.
    ``timeout`` (without ``--foreground``) sends its signal to the command and then to its process group, the
    command included, microseconds apart; the second one used to land in the first one's clean-up (a
    partitioned round's pool being ended) and end the process at once there, and the resource tracker then
    warned of "6 leaked semaphore objects". A signal again later (a second Ctrl-C) still ends it at once."""
    return (bool(_SIGNAL) and bool(_SIGNAL_AT) and _SIGNAL[-1] == int(signum)
            and time.monotonic() - _SIGNAL_AT[-1] <= REPEAT_SECONDS)


def exit_code() -> int:
    """The exit code of the interrupted command: 128 + the signal (SIGINT 130, SIGTERM 143, SIGHUP 129)."""
    return 128 + (_SIGNAL[-1] if _SIGNAL else 2)


def _by() -> str:
    """`` by SIGTERM`` for a signal other than SIGINT, else nothing."""
    if not _SIGNAL or _SIGNAL[-1] == 2:
        return ""
    return " by " + {15: "SIGTERM", 1: "SIGHUP"}.get(_SIGNAL[-1], f"signal {_SIGNAL[-1]}")


def interrupted_message() -> str:
    """What an interrupt at this moment means for the state: ``interrupted; round 3 is stored and
    current`` once the command stored its change, else ``interrupted; the state is unchanged``, or, in
    :func:`scratch` work, ``interrupted WHERE; the state is unchanged (STATE)`` (WHERE: what the scratch work
    is; STATE: :func:`about_state`'s description, the user's state beside the scratch ones)."""
    if _DONE:
        return f"interrupted{_by()}; {_DONE[-1]}"
    where = (_SCRATCH or _LANDED or [""])[-1]
    state = ""
    if where and _STATE:  # scratch rounds were stored meanwhile: say which state is the user's
        try:
            state = f" ({_STATE[-1]()})"
        except Exception:  # noqa: BLE001 - the description is a courtesy; the message must still be printed
            state = ""
    return f"interrupted{_by()}{' ' + where if where else ''}; the state is unchanged{state}"


def run_actions() -> None:
    """Run the registered undo actions, newest first (errors ignored: the process is ending)."""
    for action in reversed(list(_ACTIONS)):
        try:
            action()
        except Exception:  # noqa: BLE001 - best effort while exiting
            pass


__all__ = ["about_state", "active", "begin_command", "done", "exit_code", "interrupted_message",
           "multiprocessing_tempdir", "on_interrupt", "on_interrupt_report", "received", "region", "report_interrupt",
           "run_actions", "scratch", "stored", "temporary_folder", "written", "written_files", "wrote"]
