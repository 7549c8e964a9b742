"""``--executor ray --ray-address HOST:PORT`` where no Ray cluster answers is exit 7 within seconds, naming the address
and the ways out, the state as it was. ``ray.init`` retried for minutes (>= 4 with nothing listening at
127.0.0.1:1, a warning every 41 s, no end seen), and ignored SIGTERM meanwhile; an address that is not host:port
failed as Ray's ValueError, and ``auto`` with no cluster running as Ray's ConnectionError (both exit 1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.helpers import REPO, cli_json, closed_port, require_ray, snapshot
from tests.partition_helpers import partitioned_te_state

require_ray()



def test_nothing_listening_is_exit_7_naming_the_address(tmp_path):
    state, delta = partitioned_te_state(tmp_path)
    before = snapshot(state)
    address = f"127.0.0.1:{closed_port()}"
    env = {**os.environ, "PYTHONPATH": str(REPO), "COPTER_WORKER": "off"}
    env.pop("RAY_ADDRESS", None)
    # its own process, so that a hang in ray.init (minutes, as before) fails the test at the timeout
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(delta), "--state", str(state), "--executor",
                           "ray", "--ray-address", address, "--json"], env=env, capture_output=True, text=True,
                          timeout=300)
    error = json.loads(proc.stdout)["error"]
    assert proc.returncode == 7 and error["kind"] == "environment", (proc.stdout, proc.stderr[-2000:])
    assert address in error["message"] and "--executor process" in error["message"], error
    assert snapshot(state) == before


@pytest.mark.parametrize("address", ["nocolon", "host:port", "ray://"])
def test_an_address_that_is_not_host_port_is_a_usage_error(tmp_path, address):
    state, delta = partitioned_te_state(tmp_path)
    before = snapshot(state)
    code, out = cli_json("step", delta, "--state", state, "--executor", "ray", "--ray-address", address, "--json")
    error = json.loads(out)["error"]
    assert code == 2 and "--ray-address" in error["message"] and repr(address) in error["message"], out
    assert snapshot(state) == before


def test_ray_finding_no_cluster_is_exit_7(tmp_path, monkeypatch):
    """``--ray-address auto`` (or ``$RAY_ADDRESS=auto``) with no cluster running: Ray's ConnectionError was an
    internal error (exit 1). Ray's own search is replaced here, so a cluster running beside the test is not
    found."""
    import ray

    def no_cluster(*args, **kw):
        raise ConnectionError("Could not find any running Ray instance. Please specify the one to connect to by "
                              "setting `--address` flag or `RAY_ADDRESS` environment variable.")

    monkeypatch.setattr(ray, "is_initialized", lambda: False)
    monkeypatch.setattr(ray, "init", no_cluster)
    state, delta = partitioned_te_state(tmp_path)
    before = snapshot(state)
    code, out = cli_json("step", delta, "--state", state, "--executor", "ray", "--ray-address", "auto", "--json")
    error = json.loads(out)["error"]
    assert code == 7 and error["kind"] == "environment", out
    assert "Could not find any running Ray instance" in error["message"] and "--executor process" in error["message"]
    assert snapshot(state) == before


_SET_UP_FAILS = """
import sys
import solver.rounds.partitioned as partitioned
def refuse(*a, **k):
    raise AssertionError("the partitioned round was set up")
partitioned.apply_and_solve = refuse
from copter_cli.entry import main
sys.argv = ["copter", *sys.argv[1:]]
main()
"""


@pytest.mark.parametrize("address", ["nocolon", "host:port"])
def test_a_malformed_ray_address_variable_is_refused_before_the_round_is_set_up(tmp_path, address):
    """``$RAY_ADDRESS``, which Ray joins when neither ``--ray-address`` nor the state names a cluster: malformed, it
    was found only when the round joined Ray, after the parts were built. Now exit 2 naming the variable and its
    value before the partitioned round is set up (a set-up in the child fails the test), the state as it was. Its
    own process: Ray initialised in the test process by an earlier test joins no address."""
    state, delta = partitioned_te_state(tmp_path)
    before = snapshot(state)
    env = {**os.environ, "PYTHONPATH": str(REPO), "COPTER_WORKER": "off", "RAY_ADDRESS": address}
    proc = subprocess.run([sys.executable, "-c", _SET_UP_FAILS, "step", str(delta), "--state", str(state), "--executor",
                           "ray", "--json"], env=env, capture_output=True, text=True, timeout=300)
    error = json.loads(proc.stdout)["error"]
    assert proc.returncode == 2, (proc.stdout, proc.stderr[-2000:])
    assert "$RAY_ADDRESS" in error["message"] and repr(address) in error["message"], error
    assert snapshot(state) == before
