"""The CLI's exit (``copter_cli.process_exit.finish``) ends the partitioned rounds' kept pools before it joins
the threads: while a pool is kept, an interrupt runs its clean-up (kill the workers, join the pool's manager
thread), and a signal that arrived while the exit was already joining that thread made the handler join it a
second time: a SIGHUP 2.1 s into a partitioned step through the worker, after the round was stored, hung for
9 minutes (a fresh-install user, gdb)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.helpers import REPO

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forkserver")

SCRIPT = r"""
import json, os, threading
from copter_cli import process_exit
from solver.model.settings import Settings
from solver.partition import executor
from solver.workloads import make_scenario

if __name__ == "__main__":
    problem = make_scenario("te", 8, seed=1).base()
    executor.run_parts([(problem, Settings(), None)] * 2, "process", 2)
    seen = {"before": [len(executor._POOLS), len(executor._ON_INTERRUPT)]}
    joined = threading._shutdown

    def probe():  # what an interrupt arriving during the exit's join would find registered
        seen["at_join"] = [len(executor._POOLS), len(executor._ON_INTERRUPT)]
        joined()

    threading._shutdown = probe
    code = process_exit.finish(0)
    print(json.dumps(seen), flush=True)
    os._exit(code)
"""


def test_the_exit_ends_kept_pools_before_joining_threads(tmp_path):
    script = tmp_path / "exit_pools.py"
    script.write_text(SCRIPT)
    proc = subprocess.run([sys.executable, str(script)], env={**os.environ, "PYTHONPATH": str(REPO)}, cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    seen = json.loads(proc.stdout.splitlines()[-1])
    assert seen["before"] == [1, 1]  # a kept pool and its interrupt clean-up
    assert seen["at_join"] == [0, 0], seen  # both gone before the join
    assert "leaked" not in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-3000:]
