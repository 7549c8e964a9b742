"""``--executor ray`` keeps copter's SIGTERM handling (README "Exit codes": exit 143, the interrupted error, the state
unchanged). ``ray.init`` installs its own SIGTERM handler (``sys.exit(15)``) in the driver: a scheduler's SIGTERM
during a Ray round ended ``copter step`` with exit 15, no error line, no JSON, and Ray's native handler's stack
dump on stderr. Each case runs in its own process (copter's handler ends the process)."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.helpers import REPO, require_ray

require_ray()

PRELUDE = """
import os, signal, sys
os.environ.setdefault("RAY_AUTH_MODE", "disabled")
from copter_cli import entry
entry.install()
from solver.partition import executor
"""


def _run(code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COPTER_WORKER": "off"}
    env.pop("RAY_ADDRESS", None)
    return subprocess.run([sys.executable, "-c", PRELUDE + code], env=env, capture_output=True, text=True, timeout=600)


def test_after_ray_starts_the_sigterm_handler_is_copters():
    """(The process then exits normally: Ray's exit hook ends the local cluster it started.)"""
    proc = _run("""
print(executor.map_parts(abs, [(-1,), (-2,)], executor="ray"), flush=True)
print("handler kept:", signal.getsignal(signal.SIGTERM) is entry._on_sigint, flush=True)
""")
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-2000:])
    assert "[1, 2]" in proc.stdout and "handler kept: True" in proc.stdout, (proc.stdout, proc.stderr[-2000:])


def test_a_sigterm_while_ray_starts_is_copters():
    """Ray's handler is in place while ``ray.init`` runs (it starts a local cluster: seconds); a SIGTERM then
    raises its SystemExit(15) out of ray.init, which copter hands to its own handler."""
    proc = _run("""
import ray
def init(*args, **kw):
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(signum))  # what ray.init does first
    os.kill(os.getpid(), signal.SIGTERM)
ray.init = init
ray.is_initialized = lambda: False
executor.map_parts(abs, [(-1,)], executor="ray")
print("not reached", flush=True)
""")
    assert proc.returncode == 143 and "not reached" not in proc.stdout, (proc.returncode, proc.stderr[-2000:])
    assert "error (interrupted, exit 143): interrupted by SIGTERM" in proc.stderr
