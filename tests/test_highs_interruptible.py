"""A signal stops a HiGHS run at once (``solver.highs_bridge.interruptible``), not when HiGHS returns: Python runs a
handler only between bytecodes of the main thread, and HiGHS runs in C++ (compare's HiGHS on TE Cogentco answered
Ctrl-C 95-122 s late). Evidence that the run was cut short is HiGHS's own model status kInterrupt, which only the
interrupt callbacks produce here (no time limit is set), not a time measurement."""

from __future__ import annotations

import os
import signal
import threading

import highspy
import numpy as np
import pytest
import scipy.sparse as sp

from solver import highs_bridge

SLOW_SECONDS = 3.0  #: about what the LP below takes with dual simplex on the 2-core machine (not asserted)


def _slow_lp() -> highspy.Highs:
    """A random 2,000 x 4,000 packing LP: ~9,000 dual simplex iterations, ~3-4 s on the 2-core machine."""
    rng = np.random.default_rng(0)
    m, n = 2000, 4000
    A = sp.random(m, n, density=8.0 / m, format="csc", random_state=1)
    A.data = rng.uniform(0.1, 1.0, A.data.size)
    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = n, m
    lp.col_cost_ = -rng.uniform(0, 1, n)
    lp.col_lower_, lp.col_upper_ = np.zeros(n), np.full(n, 10.0)
    lp.row_lower_, lp.row_upper_ = np.full(m, -highspy.kHighsInf), rng.uniform(1, 2, m)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    h = highs_bridge.new_highs(1)
    h.setOptionValue("solver", "simplex")
    h.passModel(lp)
    return h


def _signal_soon(signum: int, after: float = 0.2) -> threading.Timer:
    timer = threading.Timer(after, lambda: os.kill(os.getpid(), signum))
    timer.start()
    return timer


@pytest.fixture
def default_sigint():
    before = signal.getsignal(signal.SIGINT)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


def test_sigint_stops_the_run_and_raises_after_it(default_sigint):
    h = _slow_lp()
    timer = _signal_soon(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        highs_bridge.run(h)
    timer.join()
    assert h.getModelStatus() == highspy.HighsModelStatus.kInterrupt  # cut short, not run to the optimum
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # the handler is back


def test_a_handler_that_returns_is_called_once_after_the_run():
    calls = []
    before = signal.getsignal(signal.SIGTERM)
    signal.signal(signal.SIGTERM, lambda signum, frame: calls.append((signum, h.getModelStatus())))
    try:
        h = _slow_lp()
        timer = _signal_soon(signal.SIGTERM)
        ok, _ = highs_bridge.run(h)
        timer.join()
        assert ok and h.getModelStatus() == highspy.HighsModelStatus.kInterrupt
        # called after run() returned (the status it saw is the final one), once
        assert calls == [(signal.SIGTERM, highspy.HighsModelStatus.kInterrupt)]
    finally:
        signal.signal(signal.SIGTERM, before)


def test_no_signal_no_change():
    h = _slow_lp()
    h.setOptionValue("simplex_iteration_limit", 200)
    before = {s: signal.getsignal(s) for s in highs_bridge.DEFERRED_SIGNALS}
    ok, _ = highs_bridge.run(h)
    assert ok and h.getModelStatus() == highspy.HighsModelStatus.kIterationLimit
    assert {s: signal.getsignal(s) for s in highs_bridge.DEFERRED_SIGNALS} == before


def test_outside_the_main_thread_nothing_is_swapped():
    seen = {}

    def body():
        h = _slow_lp()
        h.setOptionValue("simplex_iteration_limit", 200)
        with highs_bridge.interruptible(h):
            seen["inside"] = signal.getsignal(signal.SIGINT)
            h.run()
        seen["status"] = h.getModelStatus()

    before = signal.getsignal(signal.SIGINT)
    t = threading.Thread(target=body)
    t.start()
    t.join()
    assert seen == {"inside": before, "status": highspy.HighsModelStatus.kIterationLimit}
