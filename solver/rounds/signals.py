"""SIGINT deferral around the replacement of ``CURRENT`` (no numerical imports: ``copter rollback`` uses it)."""

from __future__ import annotations

import signal
import threading
from contextlib import contextmanager


@contextmanager
def sigint_deferred():
    """Hold SIGINT back while CURRENT is replaced (main thread only); the round then completes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got = []
    old = signal.signal(signal.SIGINT, lambda *_: got.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
