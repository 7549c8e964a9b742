"""Where an interrupt must unwind (undo work on disk) and where it may end the process at once.

A process-wide depth counter is above 0 while the code has made something on disk that an exception must
undo: a temporary generation, a failed-round record being written, a temporary output file, CURRENT
being replaced (:func:`region`). Work that an interrupt could leave behind outside such a region (a state
folder ``init`` created) registers an undo action with :func:`on_interrupt`.

The CLI's SIGINT handler (``copter_cli.entry``) reads them: inside a region it raises KeyboardInterrupt (the
code removes what it wrote, the command exits 130); outside, nothing is half-written, so it runs the
registered actions and ends the process at once with 130. That is what makes an interrupt clean at any
moment: a KeyboardInterrupt raised in the middle of a third-party import or call can be swallowed or turned
into another error by that library (pyarrow's lazy pandas import turns it into an AttributeError).

Library callers without that handler get Python's usual KeyboardInterrupt everywhere; the regions then
only count. Pure standard library, no state but two module globals (main thread only).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

_DEPTH = [0]
_ACTIONS: list[Callable[[], None]] = []
_DONE: list[str] = []


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


def done(what: str) -> None:
    """Record that the command's change is stored (``"round 3 is stored and current"``): an interrupt from
    here on says so instead of "the state is unchanged"."""
    _DONE.append(what)


def begin_command() -> None:
    """Forget what an earlier command in this process stored (in-process callers run several)."""
    _DONE.clear()


def interrupted_message() -> str:
    """What an interrupt at this moment means for the state."""
    return f"interrupted; {_DONE[-1]}" if _DONE else "interrupted; the state is unchanged"


def run_actions() -> None:
    """Run the registered undo actions, newest first (errors ignored: the process is ending)."""
    for action in reversed(list(_ACTIONS)):
        try:
            action()
        except Exception:  # noqa: BLE001 - best effort while exiting
            pass


__all__ = ["active", "begin_command", "done", "interrupted_message", "on_interrupt", "region", "run_actions"]
