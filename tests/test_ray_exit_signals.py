"""A command that used Ray keeps ignoring SIGTERM/SIGHUP once its answer is decided: Ray's core worker resets them
to the default action in C at ``ray.shutdown`` (hunt 37b: a ``step --executor ray`` whose round was stored and
printed died by a SIGTERM during its exit, status -15, no error line). ``copter_cli.process_exit._shutdown_ray``
runs the shutdown and puts the ignored dispositions back. One process per case, with a local one-CPU cluster."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers import REPO, require_ray

require_ray()

PROBE = r"""
import os, signal, sys, time
import ray
from copter_cli import process_exit
ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
@ray.remote
def f():
    return 1
assert ray.get(f.remote()) == 1
for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)  # what copter_cli.entry.ignore_sigint_at_exit does once the answer is decided
if sys.argv[1] == "copter":
    process_exit._shutdown_ray()
else:
    ray.shutdown()  # Ray's own: the control case
print("shut down", flush=True)
os.kill(os.getpid(), signal.SIGTERM)
os.kill(os.getpid(), signal.SIGHUP)
time.sleep(0.3)
print("survived", ray.is_initialized(), flush=True)
"""


@pytest.mark.parametrize("how", ["copter", "ray"])
def test_signals_stay_ignored_after_the_ray_shutdown(how):
    res = subprocess.run([sys.executable, "-c", PROBE, how], capture_output=True, text=True, timeout=300,
                         cwd=str(REPO), env={**os.environ, "PYTHONPATH": str(REPO)})
    assert "shut down" in res.stdout, res.stderr[-2000:]
    if how == "copter":
        assert res.returncode == 0 and "survived False" in res.stdout, (res.returncode, res.stderr[-2000:])
    elif res.returncode == 0:  # the reset this guards against is gone in this Ray release: nothing to compare
        pytest.skip("this Ray release no longer resets SIGTERM at shutdown")
    else:  # the control: Ray's own shutdown left the default action, and the SIGTERM killed the process
        assert res.returncode == -15, (res.returncode, res.stdout)
