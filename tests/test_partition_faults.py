"""A partitioned step whose worker process dies (SIGKILL, fault injection ``COPTER_FAULT_KILL_PART``) fails
cleanly: the worker is retried once, then the round ends NUMERICAL_ERROR (exit code 5) with a failed-round
record, CURRENT and every generation byte-identical, and the next step works."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from solver import rounds
from tests.helpers import REPO, snapshot
from tests.partition_helpers import partitioned_te_state


def _generations(root) -> dict:
    """Every file of CURRENT and the generations (not failed/ records or the round log)."""
    return {k: v for k, v in snapshot(root).items() if k == "CURRENT" or k.startswith("gen-")}


def test_killed_worker_fails_the_partitioned_round_and_leaves_the_state_unchanged(tmp_path):
    state, delta = partitioned_te_state(tmp_path)
    before = _generations(state)
    env = {**os.environ, "COPTER_FAULT_KILL_PART": "1", "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(delta), "--state", str(state),
                           "--executor", "process", "--json"], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 5, proc.stderr
    rep = json.loads(proc.stdout)
    assert rep["status"] == "NUMERICAL_ERROR" and rep["accepted"] is False
    assert rep["partitions"]["worker_failed"] and rep["partitions"]["failed_part"] == 1
    assert "died" in rep["message"]
    # the first death, which the round survived, is in the report too (helper-207: only the second was)
    assert len(rep["partitions"]["worker_retries"]) == 1 and "part 1 died" in rep["partitions"]["worker_retries"][0]
    assert _generations(state) == before  # CURRENT and every generation untouched, nothing half-merged
    assert not any(p.name.startswith(".tmp-") for p in state.iterdir())
    assert list((state / "failed").iterdir())
    # the same delta without the fault: stored as round 1, the parts warm from round 0
    ok = rounds.step(delta, state, executor="process")
    assert ok["round"] == 1 and ok["status"] in ("OPTIMAL", "FEASIBLE") and ok["partitions"]["warm"]
