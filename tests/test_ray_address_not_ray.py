"""``--ray-address`` where something listens but not Ray (an HTTP server on the dashboard's port, a silent proxy) is
exit 7 within seconds, naming the address and what the service did, the state as it was. The probe only checked
that a TCP connection opened, and ``ray.init`` then retried inside Ray's C++ client with no deadline: 12 minutes
holding the state's lock, --time-limit ignored, Ray's log lines flooding stderr (helper-185, session 46). Ray's GCS
speaks gRPC, so the probe now sends HTTP/2's connection preface and wants a SETTINGS frame back."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from solver.model.errors import EnvironmentFaultError
from solver.partition.executor import probe_ray_address
from tests.helpers import REPO, closed_port, require_ray, snapshot
from tests.partition_helpers import partitioned_te_state


def _serve(reply: bytes | None, close: bool = False):
    """A local TCP server answering every connection's first bytes with ``reply`` (None: silence), then closing
    (``close``) or holding it open. Returns (its port, a stop function)."""
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    stop = threading.Event()
    held = []

    def loop():
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except (TimeoutError, OSError):
                continue
            conn.settimeout(2)
            try:
                conn.recv(64)
                if reply is not None:
                    conn.sendall(reply)
            except OSError:
                pass
            if close:
                conn.close()
            else:
                held.append(conn)

    threading.Thread(target=loop, daemon=True).start()

    def end():
        stop.set()
        for c in held:
            c.close()
        srv.close()
    return srv.getsockname()[1], end


SETTINGS = bytes([0, 0, 6, 4, 0, 0, 0, 0, 0, 0, 4, 0, 0x40, 0, 0])  # an HTTP/2 SETTINGS frame, as a gRPC server sends


def test_a_grpc_server_passes_the_probe():
    port, end = _serve(SETTINGS)
    try:
        probe_ray_address(f"127.0.0.1:{port}")
    finally:
        end()


@pytest.mark.parametrize("reply,close,said", [
    (b"HTTP/1.0 400 Bad request\r\n\r\n", True, "answered 'HTTP/1.0 400 Bad request'"),
    (b"-ERR unknown command\r\n", True, "answered '-ERR unknown command'"),
    (None, True, "closed the connection"),
    (None, False, "said nothing in 1 s"),
])
def test_another_service_is_refused_naming_what_it_did(reply, close, said):
    port, end = _serve(reply, close)
    try:
        t = time.monotonic()
        with pytest.raises(EnvironmentFaultError) as ex:
            probe_ray_address(f"127.0.0.1:{port}", seconds=1.0)
        assert time.monotonic() - t < 5
    finally:
        end()
    msg = str(ex.value)
    assert f"127.0.0.1:{port}" in msg and "is not a Ray cluster" in msg and said in msg, msg
    assert "--executor process" in msg


def test_a_step_given_an_http_server_is_exit_7_and_changes_nothing(tmp_path):
    require_ray()
    port, end = _serve(b"HTTP/1.0 404 Not Found\r\n\r\n", close=True)
    state, delta = partitioned_te_state(tmp_path)
    before = snapshot(state)
    env = {**os.environ, "PYTHONPATH": str(REPO), "COPTER_WORKER": "off"}
    env.pop("RAY_ADDRESS", None)
    try:
        proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(delta), "--state", str(state),
                               "--executor", "ray", "--ray-address", f"127.0.0.1:{port}", "--json"], env=env,
                              capture_output=True, text=True, timeout=120)
    finally:
        end()
    error = json.loads(proc.stdout)["error"]
    assert proc.returncode == 7 and error["kind"] == "environment", (proc.stdout, proc.stderr[-2000:])
    assert "is not a Ray cluster" in error["message"] and "HTTP/1.0 404" in error["message"], error
    assert "gcs_client" not in proc.stderr and "rpc_client" not in proc.stderr, proc.stderr[-2000:]
    assert snapshot(state) == before


class _FakeRay:
    """Just what ``executor._ray_ready`` calls: ``wait`` that never finds a part ended (the parts' owner, the
    cluster, is gone)."""

    _private = None

    def wait(self, refs, num_returns, timeout):
        time.sleep(timeout)
        return [], list(refs)


def test_a_cluster_that_goes_away_mid_round_is_exit_7_not_rays_exit_1(monkeypatch):
    """helper-185: ``ray stop`` on the cluster while a round's parts ran: Ray's driver waited 60 s for its GCS and
    ended the whole process with exit 1, nothing on stdout and no error line. The wait for each part now checks
    every GCS_CHECK_SECONDS that the GCS still accepts connections."""
    from solver.partition import executor

    monkeypatch.setattr(executor, "GCS_CHECK_SECONDS", 0.3)
    port = closed_port()  # nothing listens: the head is gone
    t = time.monotonic()
    with pytest.raises(EnvironmentFaultError, match=f"went away mid-round .*127.0.0.1:{port} refuses") as ex:
        executor._ray_ready(_FakeRay(), [object()], lambda: None, ("127.0.0.1", port))
    assert time.monotonic() - t < 5 and "--executor process" in str(ex.value)


def test_a_live_gcs_keeps_the_wait_going(monkeypatch):
    from solver.partition import executor

    port, end = _serve(SETTINGS)
    calls = []

    class Finishes(_FakeRay):
        def wait(self, refs, num_returns, timeout):
            calls.append(1)
            if len(calls) < 6:
                return super().wait(refs, num_returns, timeout)
            return list(refs), []

    monkeypatch.setattr(executor, "GCS_CHECK_SECONDS", 0.3)
    try:
        ref = object()
        assert executor._ray_ready(Finishes(), [ref], lambda: None, ("127.0.0.1", port)) == [ref]
    finally:
        end()
