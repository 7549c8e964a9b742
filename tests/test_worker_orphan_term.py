"""A command whose client was killed (``kill -9``: nothing forwarded) is ended by the worker with SIGTERM, as a
SIGTERM ends it in-process (its undo actions run), and SIGKILL only if it is still running 10 s later: the SIGKILL
the worker sent at once left a demo's temporary folder and multiprocessing's ``pymp-*`` folder behind (helpers
169 and 170, session 36)."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from copter_cli import worker_server
from tests.worker_helpers import ROUTED, running_worker

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Unix sockets, signals")


def _wait(cond, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.1)
    return cond()


def test_a_killed_clients_demo_in_the_worker_removes_its_temporary_folder(tmp_path):
    tmp = tmp_path / "t"
    tmp.mkdir()
    with running_worker("cwo-") as w:
        env = dict(w.env, TMPDIR=str(tmp))
        proc = subprocess.Popen([sys.executable, "-m", "copter_cli", "demo", "--domain", "lb", "--scale", "128x16",
                                 "--rounds", "500"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            assert _wait(lambda: any(tmp.glob("copter-demo-*")), 180), "the demo never made its folder"
            proc.kill()
            proc.wait(timeout=60)
            err = proc.stderr.read().decode()
            assert ROUTED in err, err  # it ran in the worker
            assert _wait(lambda: not any(tmp.glob("copter-demo-*")), worker_server.ORPHAN_GRACE + 20), \
                sorted(p.name for p in tmp.iterdir())
        finally:
            if proc.poll() is None:
                proc.kill()
    assert sorted(p.name for p in tmp.iterdir()) == []  # no pymp-* either
