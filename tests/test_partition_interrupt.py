"""An interrupted partitioned round ends clean: exit 130 and no "resource_tracker: There appear to be 6 leaked
semaphore objects to clean up at shutdown" warning on stderr. The CLI's SIGINT handler ends the process at once
(``os._exit``) outside a ``formats.undo`` region, so the kept process pool's semaphores (its call and result
queues, the progress board) were never unlinked and the resource tracker found them registered at the exit.
Now the wait for the parts is a region (KeyboardInterrupt, the usual exit runs multiprocessing's finalizers), and
an interrupt elsewhere (the merge) ends the kept pools before the process ends."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from tests.helpers import REPO

SCRIPT = r"""
import os, signal, sys, time
from copter_cli import entry
entry.install()  # the console script's SIGINT handler
from solver.partition.executor import map_parts
from tests.test_partition_interrupt import part
mode, sig = sys.argv[1], int(sys.argv[2])
try:
    map_parts(part, [(os.getpid(), mode, sig)], "process", 1)
    if mode == "after":  # the pool is kept, idle: an interrupt during the merge, say
        os.kill(os.getpid(), sig)
        time.sleep(60)
except KeyboardInterrupt:  # what copter_cli.output.run does with it: exit 130 (SIGTERM: 143)
    from copter_cli import process_exit
    from formats import undo
    process_exit.exit_now(undo.exit_code())
"""


def part(parent: int, mode: str, sig: int = signal.SIGINT) -> int:
    """Worker: send ``sig`` to ``parent`` while it waits for this part (``mode`` "during"), then run on."""
    if mode == "during":
        os.kill(parent, sig)
        time.sleep(60)
    return 1


pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forkserver, SIGINT")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
@pytest.mark.parametrize("mode", ["during", "after"])
def test_an_interrupted_partitioned_round_exits_130_without_a_leaked_semaphore_warning(mode, sig):
    """SIGINT exits 130; a scheduler's SIGTERM is handled the same way and exits 143 (it used to kill the process
    at once, and the resource tracker warned of the leaked semaphores)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    # stderr is read to its end: the resource tracker, which printed the warning after this process ended, holds
    # the pipe until it exits itself
    proc = subprocess.run([sys.executable, "-c", SCRIPT, mode, str(int(sig))], env=env, cwd=REPO, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 128 + sig, proc.stderr[-2000:]
    assert "leaked" not in proc.stderr and "resource_tracker" not in proc.stderr, proc.stderr[-2000:]
