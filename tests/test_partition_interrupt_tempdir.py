"""A partitioned ``copter step`` ended by a signal outside a region (the CLI's handler runs the undo actions and
ends the process at once) removes ``multiprocessing``'s temporary folder: the forkserver's listening socket in
``$TMPDIR/pymp-*``. Its finalizer runs only at a normal exit, so every such step a ``timeout`` stopped used to
leave one folder behind (a cron job's ``/tmp`` collected them round after round)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.helpers import REPO, snapshot
from tests.partition_helpers import partitioned_te_state

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux") or "forkserver" not in
                                __import__("multiprocessing").get_all_start_methods(), reason="forkserver")


@pytest.mark.parametrize("fault", ["sigterm_after_parts", "sigint_after_parts"])
def test_an_interrupted_partitioned_step_leaves_no_multiprocessing_folder(tmp_path, fault):
    state, delta = partitioned_te_state(tmp_path)
    before = snapshot(state)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(tmp), COPTER_WORKER_DIR="/nonexistent-copter-worker",
               COPTER_FAULT_INJECT=fault)
    res = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(delta), "--state", str(state),
                          "--executor", "process"], env=env, capture_output=True, text=True,
                         timeout=300)
    assert res.returncode == (143 if fault.startswith("sigterm") else 130), res.stderr[-2000:]
    assert "the state is unchanged" in res.stderr, res.stderr[-2000:]
    assert snapshot(state) == before
    assert list(tmp.iterdir()) == [], list(tmp.iterdir())


def test_a_partitioned_step_that_ends_normally_leaves_no_multiprocessing_folder(tmp_path):
    state, delta = partitioned_te_state(tmp_path)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(tmp), COPTER_WORKER_DIR="/nonexistent-copter-worker")
    env.pop("COPTER_FAULT_INJECT", None)
    res = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(delta), "--state", str(state),
                          "--executor", "process", "--json"], env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    assert json.loads(res.stdout)["partitions"]["executor"] == "process"
    assert list(tmp.iterdir()) == [], list(tmp.iterdir())
