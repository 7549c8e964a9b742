"""A signal is acted on at once while HiGHS runs (``solver.highs_bridge.interruptible``). Python runs a signal
handler only on the main thread between bytecodes; the main thread used to sit in HiGHS's C ``run()``, so
``copter compare --baseline highs`` interrupted by SIGINT or SIGTERM exited (130/143, "the state is unchanged")
only once HiGHS returned: 95-122 s late on a large TE round. Now HiGHS runs in a helper thread and the main
thread waits in short steps, so the CLI's handler ends the command within a fraction of a second."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import scipy.sparse as sp

from formats.io import write_problem
from solver.model.problem import Problem
from tests.helpers import REPO

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals, /proc-free but POSIX")

#: the console script, with a line on stderr each time HiGHS's run() starts (the test's marker: no progress line
#: is drawn when stderr is not a terminal)
WRAPPER = r"""
import sys
import highspy
_run = highspy.Highs.run
def run(self):
    sys.stderr.write("HIGHS-RUN-STARTED\n")
    sys.stderr.flush()
    return _run(self)
highspy.Highs.run = run
sys.argv = ["copter", *sys.argv[1:]]
from copter_cli.entry import main
main()
"""


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(REPO), "COPTER_WORKER": "off"}


def _digest(root) -> dict:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def hard_lp() -> Problem:
    """A random packing LP HiGHS's dual simplex (one thread) needs 15-20 s for."""
    n, m = 3000, 2000
    rng = np.random.default_rng(0)
    A = sp.random(m, n, density=0.01, random_state=1, format="csc", data_rvs=lambda k: rng.random(k))
    return Problem.from_arrays(cost=rng.random(n), col_lower=np.zeros(n), col_upper=np.full(n, 10.0),
                               row_lower=np.full(m, -np.inf), row_upper=np.full(m, 5.0), matrix=A,
                               col_names=[f"x{j}" for j in range(n)], row_names=[f"r{i}" for i in range(m)], sense=-1)


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    """:func:`hard_lp`'s round 0 as copter stored it."""
    d = tmp_path_factory.mktemp("highs-int")
    p = hard_lp()
    write_problem(p, d / "base.parquet")
    # copter's own solve is cut short: the state holds whatever it found (compare only needs a current round)
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "init", str(d / "base.parquet"), "--state", str(d / "st"),
                           "--time-limit", "5", "--accept-failed"], env=_env(), cwd=REPO, capture_output=True,
                          text=True, timeout=120)
    assert (d / "st" / "CURRENT").exists(), proc.stderr[-2000:]
    return d / "st"


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_compare_highs_exits_at_once_on_a_signal_with_the_state_unchanged(state, sig):
    before = _digest(state)
    proc = subprocess.Popen([sys.executable, "-c", WRAPPER, "compare", "--baseline", "highs", "--highs-solver",
                             "simplex", "--threads", "1", "--state", str(state)], env=_env(), cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        seen = []
        for line in proc.stderr:  # blocks until HiGHS has started (or the process ended)
            seen.append(line)
            if line.startswith("HIGHS-RUN-STARTED"):
                break
        assert seen and seen[-1].startswith("HIGHS-RUN-STARTED"), "".join(seen)[-2000:]
        time.sleep(1.0)  # well inside the simplex
        assert proc.poll() is None, "HiGHS finished before the signal: the model is too easy here"
        sent = time.perf_counter()
        proc.send_signal(sig)
        try:
            code = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running {time.perf_counter() - sent:.1f} s after {signal.Signals(sig).name}")
        waited = time.perf_counter() - sent
        rest = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert code == 128 + sig, rest[-2000:]
    assert waited < 2.0, waited
    assert "the state is unchanged" in rest, rest[-2000:]
    assert _digest(state) == before


LIBRARY = r"""
import os, signal, sys, threading, time
from solver.baselines.highs import solve_highs
from tests.test_highs_interrupt_prompt import hard_lp
p = hard_lp()
threading.Timer(1.5, os.kill, (os.getpid(), signal.SIGINT)).start()
t0 = time.perf_counter()
try:
    solve_highs(p, solver="simplex", threads=1)
    print("finished", time.perf_counter() - t0)
except KeyboardInterrupt:
    t1 = time.perf_counter()
    cpu = time.process_time()
    time.sleep(1.0)
    print("interrupted", t1 - t0, time.process_time() - cpu)  # CPU seconds the process used in that second
"""


def test_a_library_callers_keyboardinterrupt_stops_highs():
    """Without the CLI's handler, Python's KeyboardInterrupt reaches the caller at once, and HiGHS has stopped
    (its interrupt callbacks) by then: no thread left solving in the background, using the CPU."""
    proc = subprocess.run([sys.executable, "-c", LIBRARY], env=_env(), cwd=REPO, capture_output=True, text=True,
                          timeout=120)
    words = proc.stdout.split()
    assert words and words[0] == "interrupted", proc.stdout + proc.stderr[-2000:]
    assert float(words[1]) < 1.5 + 1.5, proc.stdout
    assert float(words[2]) < 0.3, proc.stdout  # HiGHS no longer solving
