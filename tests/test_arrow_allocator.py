"""The console script gives pyarrow the C library's allocator unless the user chose one
(copter_cli.entry.arrow_system_allocator: the wheels' mimalloc stalled at random in a fresh process, making a
Sia 10,240 step's ``apply`` 0.09 s or 0.3-0.7 s). Checked in real subprocesses by asking pyarrow's default pool."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

PROBE = r"""
import sys
sys.argv = ["copter", "version"]
from copter_cli import entry, process_exit, worker_client
worker_client.run_or_return = lambda: None  # no worker, no command: only what main does first
entry.run_app = lambda: None
process_exit.exit_now = lambda code: None  # and main returns here instead of ending the process
entry.main()
assert "pyarrow" not in sys.modules, "main imported pyarrow before choosing its allocator"
import pyarrow
print(pyarrow.default_memory_pool().backend_name)
"""


def _backend(extra_env: dict) -> str:
    env = {k: v for k, v in os.environ.items() if k != "ARROW_DEFAULT_MEMORY_POOL"}
    env.update(PYTHONPATH=str(REPO), COPTER_WORKER="off", **extra_env)
    res = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    return res.stdout.strip().splitlines()[-1]


def test_the_console_script_gives_pyarrow_the_system_allocator():
    assert _backend({}) == "system"


def test_a_users_own_arrow_allocator_is_kept():
    assert _backend({"ARROW_DEFAULT_MEMORY_POOL": "jemalloc"}) in ("jemalloc", "system")  # system: no jemalloc build
    assert _backend({"ARROW_DEFAULT_MEMORY_POOL": "mimalloc"}) == "mimalloc"
