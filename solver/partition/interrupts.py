"""Interrupts that must not be lost while a partitioned round waits for its parts.

A Python signal handler runs in the main thread at the next point the interpreter checks for signals. When that
point is inside a finalizer or a weakref callback (``importlib``'s module-lock callback during an import, a
``__del__``), the KeyboardInterrupt the handler raises is printed as "Exception ignored in ..." and dropped: the
interrupted wait went on until the parts finished (``kill -INT`` on a waiting pool under load: about one time in
50, the workers sleeping on; the same drop happens with the CLI's handler, which raises KeyboardInterrupt inside a
``formats.undo`` region). :func:`noted` wraps the Python handlers of SIGINT, SIGTERM and SIGHUP for the length of a
block so that an exception a handler raises is also kept; :meth:`Noted.check`, called where the block's wait
returns to Python, raises it again when it never reached the block (dropped on the way).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

WATCHED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)  #: the signals whose handlers' exceptions are kept


class Noted:
    """The exceptions the wrapped handlers raised while the block ran (first one first)."""

    def __init__(self) -> None:
        self.raised: list[BaseException] = []

    def check(self) -> None:
        """Raise again the first exception a handler raised, if any: called in the block's own code, it reached
        the block only if it was dropped on the way (an exception that propagated has left the block).

        Raises:
            BaseException: the handler's exception (KeyboardInterrupt for SIGINT with Python's default handler
                or the CLI's inside a region; whatever a handler raised).
        """
        if self.raised:
            raise self.raised[0]


@contextmanager
def noted() -> Iterator[Noted]:
    """Within the block, every Python-level handler of :data:`WATCHED` that raises has its exception kept in the
    yielded :class:`Noted`, then propagated as before; the handlers are restored when the block ends. In a
    thread other than the main one (where handlers cannot be set) nothing is wrapped and ``check`` never
    raises. A signal ignored or left to its default action (not a Python callable) is not touched."""
    out = Noted()
    if threading.current_thread() is not threading.main_thread():
        yield out
        return
    saved = {}
    for signum in WATCHED:
        prev = signal.getsignal(signum)
        if not callable(prev):
            continue

        def wrapper(sig, frame, prev=prev):
            try:
                prev(sig, frame)
            except BaseException as exc:
                out.raised.append(exc)
                raise

        try:
            saved[signum] = signal.signal(signum, wrapper)
        except (ValueError, OSError):
            pass
    try:
        yield out
    finally:
        for signum, prev in saved.items():
            signal.signal(signum, prev)
