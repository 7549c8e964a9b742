"""SIGINT deferral around the replacement of ``CURRENT`` (no numerical imports: ``copter rollback`` uses it)."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager

#: signals held back and delivered once the block ends, when a Python handler catches them (the CLI's:
#: ``copter_cli.entry``); left alone when they would kill the process (it dies before or after the rename)
REDELIVERED = (signal.SIGTERM, signal.SIGHUP)


@contextmanager
def sigint_deferred():
    """Hold SIGINT back while CURRENT is replaced (main thread only); the round then completes. SIGTERM and
    SIGHUP, when a Python handler catches them, are held back too and delivered to it once the block ends
    (the command then ends saying the round is stored and current)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got: list[int] = []
    old = {signal.SIGINT: signal.signal(signal.SIGINT, lambda *_: None)}
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
