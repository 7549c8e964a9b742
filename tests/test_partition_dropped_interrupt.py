"""An interrupt whose KeyboardInterrupt is dropped in a finalizer still ends a partitioned round's wait for its
parts (solver.partition.interrupts): ``kill -INT`` on a waiting pool under load used to hang about one time in 50
until the parts ended, the handler's exception "ignored" in importlib's module-lock callback."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from solver.partition import interrupts
from tests.helpers import REPO


class _Dropper:
    """Its finalizer receives SIGINT: the handler's KeyboardInterrupt is raised there, and dropped by Python."""

    def __del__(self):
        signal.raise_signal(signal.SIGINT)


@pytest.fixture
def default_sigint():
    saved = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, saved)


def test_a_dropped_interrupt_is_raised_again_by_check(default_sigint, monkeypatch):
    dropped = []
    monkeypatch.setattr(sys, "unraisablehook", dropped.append)
    with interrupts.noted() as noted:
        noted.check()  # nothing yet
        d = _Dropper()
        del d  # "Exception ignored in ... KeyboardInterrupt": the block goes on
        with pytest.raises(KeyboardInterrupt):
            noted.check()
    assert [type(u.exc_value) for u in dropped] == [KeyboardInterrupt]  # it was dropped, not delivered
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored


def test_a_delivered_interrupt_propagates_once(default_sigint):
    with pytest.raises(KeyboardInterrupt):
        with interrupts.noted():
            signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_handlers_that_do_not_raise_are_not_noted():
    got = []
    saved = signal.signal(signal.SIGINT, lambda s, f: got.append(s))
    try:
        with interrupts.noted() as noted:
            signal.raise_signal(signal.SIGINT)
            noted.check()  # the handler chose not to raise: nothing to raise again
        assert got == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, saved)


def test_ignored_and_default_dispositions_are_left_alone():
    saved = {s: signal.getsignal(s) for s in interrupts.WATCHED}
    try:
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        with interrupts.noted():
            assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
    finally:
        for s, h in saved.items():
            signal.signal(s, h)


DROPPED_DURING_WAIT = r"""
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from solver.partition.executor import map_parts

class Dropper:  # its finalizer receives SIGINT: the handler's KeyboardInterrupt is dropped there
    def __del__(self):
        signal.raise_signal(signal.SIGINT)

def drop():
    d = Dropper()
    del d

t = time.monotonic()
try:
    map_parts(time.sleep, [(120,), (120,)], sys.argv[1], 2, on_submitted=drop)
except KeyboardInterrupt:
    print(f"interrupted {time.monotonic() - t:.2f}", flush=True)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forkserver pool")
@pytest.mark.parametrize("executor", ["process", "ray"])
def test_pool_wait_ends_on_an_interrupt_dropped_in_a_finalizer(executor):
    # before: the dropped KeyboardInterrupt left the wait sleeping the parts' 120 s (past this timeout)
    if executor == "ray":
        pytest.importorskip("ray")
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-c", DROPPED_DURING_WAIT, executor], env=env, capture_output=True, text=True,
                         timeout=100, cwd=REPO)
    assert out.stdout.startswith("interrupted"), (out.stdout, out.stderr[-2000:])
    assert "Exception ignored" in out.stderr  # the handler's own KeyboardInterrupt was dropped
