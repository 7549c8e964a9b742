"""A step whose Ray address is the state's own (``init --ray-address``, stored as ``partition.ray_address``) and
unreachable says so: the message offered $RAY_ADDRESS, which the stored address overrides, and did not say where
the address came from (helper-185, session 46). An address given to the step keeps the plain message. The steps
run as processes of their own: a Ray already joined by this test process would take the parts without a probe."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from formats.io import write_delta, write_problem
from solver.workloads import make_scenario
from tests.helpers import REPO, cli_json, closed_port, require_ray, snapshot

require_ray()


def _step(state, delta, *extra) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COPTER_WORKER": "off", "RAY_ADDRESS": "local"}
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(delta), "--state", str(state), "--executor",
                           "ray", *extra, "--json"], env=env, capture_output=True, text=True, timeout=300)
    return proc.returncode, json.loads(proc.stdout)["error"]["message"]


def test_a_stored_unreachable_address_names_config_json(tmp_path):
    sc = make_scenario("te", 16, seed=4)
    write_problem(sc.base(), tmp_path / "base.parquet")
    write_delta(sc.next_delta(1), tmp_path / "d1.parquet")
    state = tmp_path / "st"
    address = f"127.0.0.1:{closed_port()}"
    code, out = cli_json("init", tmp_path / "base.parquet", "--state", state, "--partitions", "2", "--executor",
                         "inline", "--ray-address", address, "--json")
    assert code == 0, out
    before = snapshot(state)
    code, msg = _step(state, tmp_path / "d1.parquet")
    assert code == 7 and address in msg, msg
    assert "partition.ray_address in" in msg and "config.json" in msg and "does not override" in msg, msg
    assert "give another --ray-address or $RAY_ADDRESS" not in msg, msg
    assert snapshot(state) == before
    other = f"127.0.0.1:{closed_port()}"
    code, msg = _step(state, tmp_path / "d1.parquet", "--ray-address", other)
    assert code == 7 and other in msg and "partition.ray_address" not in msg, msg
