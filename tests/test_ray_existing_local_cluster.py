"""``--executor ray`` without an address while a Ray cluster already runs on the machine (``ray start --head``): Ray's
``ray.init()`` joins it, as Ray documents, and refused the ``num_cpus`` copter passes for a new local cluster with a
ValueError, exit 1 (found in session 46, when a cluster started by hand made five Ray tests of the suite fail). The
round now runs on the running cluster."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers import REPO, closed_port, require_ray, snapshot
from tests.partition_helpers import partitioned_te_state

require_ray()

STOP_GRACE = 5.0  #: seconds the head's own stop gets after SIGTERM before its process group is killed


def _forget_cluster(port: int) -> None:
    """Remove Ray's record of the last ``ray start`` when it is this test's cluster, as ``ray stop`` would: a head
    ended by SIGTERM leaves it, and ``ray.init()`` without an address then joined the dead cluster (copter now
    starts a new one instead: test_a_dead_recorded_cluster_is_not_joined)."""
    try:
        from ray._private.utils import get_ray_address_file
    except ImportError:
        return
    record = Path(get_ray_address_file(None))
    try:
        if record.read_text().strip().endswith(f":{port}"):
            record.unlink()
    except OSError:
        pass


def test_a_dead_recorded_cluster_is_not_joined(monkeypatch):
    from ray._private import services

    from solver.partition.executor import _no_address_target

    monkeypatch.setattr(services, "canonicalize_bootstrap_address", lambda addr, temp_dir=None: None)
    assert _no_address_target() is None  # nothing recorded: Ray starts a local cluster
    dead = f"127.0.0.1:{closed_port()}"
    monkeypatch.setattr(services, "canonicalize_bootstrap_address", lambda addr, temp_dir=None: dead)
    t = time.monotonic()
    assert _no_address_target() == "local" and time.monotonic() - t < 5  # a new local cluster, not the dead one


def test_a_step_without_an_address_joins_the_running_cluster(tmp_path):
    state, delta = partitioned_te_state(tmp_path)
    before = snapshot(state)
    ray_cli = Path(sys.executable).with_name("ray")
    if not ray_cli.exists():
        ray_cli = Path(shutil.which("ray") or "ray")
    env = {**os.environ, "RAY_AUTH_MODE": "disabled"}
    env.pop("RAY_ADDRESS", None)
    port = closed_port()
    head = subprocess.Popen([str(ray_cli), "start", "--head", "--block", "--port", str(port), "--num-cpus", "2",
                             "--include-dashboard=false", "--disable-usage-stats"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and head.poll() is None:  # its GCS port open: the cluster is up
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.5)
        time.sleep(2)  # the raylet registers after the GCS
        assert head.poll() is None, head.stderr.read().decode()[-2000:]
        proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(delta), "--state", str(state),
                               "--executor", "ray", "--json"], env={**env, "PYTHONPATH": str(REPO),
                                                                    "COPTER_WORKER": "off"},
                              capture_output=True, text=True, timeout=300)
    finally:
        os.killpg(head.pid, signal.SIGTERM)  # --block: the head ends the cluster it started
        try:
            head.wait(STOP_GRACE)
        except subprocess.TimeoutExpired:  # its graceful stop took 33 s of the suite: the rest of the group goes now
            os.killpg(head.pid, signal.SIGKILL)
            head.wait(60)
        _forget_cluster(port)
    assert proc.returncode == 0, (proc.stdout[-2000:], proc.stderr[-3000:])
    report = json.loads(proc.stdout)
    assert report["round"] == 1 and report["status"] in ("OPTIMAL", "FEASIBLE"), report
    assert snapshot(state) != before
