"""Signal deferral around the replacement of ``CURRENT`` (no numerical imports: ``copter rollback`` uses it)."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

#: signals held back and delivered once the block ends, when a Python handler catches them (the CLI's:
#: ``copter_cli.entry``); left alone when they would kill the process (it dies before or after the rename). SIGINT
#: was dropped instead, so a Ctrl-C during the switch was lost: a batch went on to its next deltas and exited 0
#: (helper-159)
REDELIVERED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@contextmanager
def signals_deferred():
    """Hold SIGINT, SIGTERM and SIGHUP back while CURRENT is replaced (main thread only): the round then
    completes, and each signal a Python handler catches is delivered to it once the block ends (the command then
    ends saying the round is stored and current; a batch stops there)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    old = {}
    for s in REDELIVERED:
        if callable(signal.getsignal(s)):
            old[s] = signal.signal(s, lambda signum, _frame: got.append(signum))
    try:
        yield
    finally:
        for s, handler in old.items():
            signal.signal(s, handler)
        for s in dict.fromkeys(got):
            signal.raise_signal(s)
