"""``worker stop`` and ``worker start`` against each other and against a worker's odd states (helper-229):

- ``worker start &`` then ``worker stop`` at once: the stop found no lock yet (the start was still preparing) and
  said none runs, and the new worker ran on; the stop now waits for a start under way and stops its worker;
- a stop and another client's frame in one ``select()`` pass: the worker died on the listener the stop had closed
  (AttributeError, exit 1), orphaning a command it ran;
- a worker whose socket file was removed: status called it starting and stop could not end it; now it is
  "unreachable", stop sends it SIGTERM and start replaces it;
- ``worker start --timeout 0`` answered ``"starting": false`` for the worker it had just started.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from copter_cli import worker_client as wc
from copter_cli import worker_phase
from tests.worker_helpers import running_worker

pytestmark = pytest.mark.slow  # real workers


def _cli(w, *args, timeout=120):
    p = subprocess.run([sys.executable, "-m", "copter_cli", *map(str, args)], env=w.env, capture_output=True,
                       text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def _paths(w) -> dict:
    old = os.environ.get("COPTER_WORKER_DIR")
    os.environ["COPTER_WORKER_DIR"] = w.folder
    try:
        return wc.paths()
    finally:
        if old is None:
            os.environ.pop("COPTER_WORKER_DIR")
        else:
            os.environ["COPTER_WORKER_DIR"] = old


def _worker_pid(w) -> int:
    return worker_phase.read(_paths(w)["lock"])["pid"]


@pytest.fixture
def live():
    """A started worker in its own folder: (worker, its paths, its pid); shut down (killed if need be) after."""
    with running_worker("cwr-") as w:
        yield w, _paths(w), _worker_pid(w)


def test_a_stop_right_after_a_background_start_stops_the_new_worker(tmp_path):
    with running_worker("cwr-") as w:
        assert _cli(w, "worker", "stop")[0] == 0
        for _ in range(2):
            starter = subprocess.Popen([sys.executable, "-m", "copter_cli", "worker", "start"], env=w.env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.3)  # the start has taken its start lock (its interpreter is up), its worker not yet
            code, out, err = _cli(w, "worker", "stop", "--json")
            starter.wait(120)
            res = json.loads(out)
            assert code == 0 and res["stopped"] is True, (out, err)
            w.pids.add(res["pid"])
            st = json.loads(_cli(w, "worker", "status", "--json")[1])
            assert st["running"] is False and st["starting"] is False, st


def _frozen(pid: int):
    os.kill(pid, signal.SIGSTOP)
    time.sleep(0.1)


def test_a_stop_and_a_new_connection_in_one_pass_leave_no_traceback(live):
    w, p, pid = live
    a = wc.connect(p["socket"])
    time.sleep(0.3)  # accepted, waiting for its first frame
    _frozen(pid)
    wc.send(a, wc.identity_request("stop"))
    b = wc.connect(p["socket"])  # in the listen backlog: the same select() pass as the stop
    os.kill(pid, signal.SIGCONT)
    deadline = time.monotonic() + 30
    while os.path.exists(f"/proc/{pid}") and time.monotonic() < deadline:
        time.sleep(0.05)
        with open(f"/proc/{pid}/stat") as f:
            if f.read().split(") ", 1)[1][0] == "Z":
                break
    log = Path(p["log"]).read_text()
    assert "Traceback" not in log and log.rstrip().endswith("stopped"), log[-2000:]
    a.close()
    b.close()


def test_a_go_frame_that_meets_a_stop_is_refused_and_runs_in_process(live):
    w, p, pid = live
    a = wc.connect(p["socket"])
    r = wc.Reader(a)
    old = dict(os.environ)
    os.environ.update(w.env)  # the request's identity and import-time environment: the worker's
    for k in [k for k in os.environ if k.startswith(wc.IMPORT_ENV)]:
        del os.environ[k]
    os.environ.update(json.loads(_cli(w, "worker", "status", "--json")[1])["import_env"])
    try:
        wc.send(a, wc.identity_request("run"))
        assert r.read().get("accepted")
        b = wc.connect(p["socket"])
        time.sleep(0.2)
        _frozen(pid)
        wc.send(b, wc.identity_request("stop"))
        cwd = os.open(".", os.O_RDONLY)
        wc.send(a, wc._go_request([sys.executable, "version"]), fds=[0, 1, 2, cwd])
        os.close(cwd)
    finally:
        os.environ.clear()
        os.environ.update(old)
    os.kill(pid, signal.SIGCONT)
    a.settimeout(30)
    assert "refused" in r.read()  # nothing ran: the client runs the command in-process
    log = Path(p["log"]).read_text()
    assert "Traceback" not in log, log[-2000:]
    a.close()
    b.close()


def test_a_worker_without_its_socket_is_unreachable_stopped_and_replaced(live):
    w, p, pid = live
    os.unlink(p["socket"])
    st = json.loads(_cli(w, "worker", "status", "--json")[1])
    assert st["unreachable"] is True and st["starting"] is False and st["pid"] == pid, st
    assert "cannot be reached" in _cli(w, "worker", "status")[1]
    code, out, err = _cli(w, "worker", "start", "--json", "--timeout", "60")
    assert code == 0, (out, err)
    new = json.loads(out)
    w.pids.add(new["pid"])
    assert new["running"] is True and new["pid"] != pid, new
    os.unlink(p["socket"])
    code, out, err = _cli(w, "worker", "stop", "--json", "--timeout", "30")
    assert json.loads(out) == {"stopped": True, "pid": new["pid"]}, (out, err)


def test_start_with_timeout_zero_says_starting(tmp_path):
    with running_worker("cwr-") as w:
        assert _cli(w, "worker", "stop")[0] == 0
        code, out, err = _cli(w, "worker", "start", "--timeout", "0", "--json")
        res = json.loads(out)
        w.pids.add(res["pid"])
        assert code == 0 and res["starting"] is True and res["running"] is False, res


def test_a_stop_waits_for_a_start_under_way(tmp_path):
    """A ``worker start`` holds ``worker-<key>.lock.start`` from its first step (compiling, spawning) until its
    worker answers; a stop in that window said no worker runs. Held here by the test, the start never ends: the
    stop waits its --timeout and says a worker is starting."""
    import fcntl

    with running_worker("cwr-") as w:
        assert _cli(w, "worker", "stop")[0] == 0
        fd = os.open(_paths(w)["lock"] + ".start", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            t = time.monotonic()
            code, out, err = _cli(w, "worker", "stop", "--timeout", "1", "--json")
            res = json.loads(out)
            assert code == 0 and res["stopped"] is False and res["starting"] is True, (out, err)
            assert time.monotonic() - t >= 1.0 and "still starting" in res["message"]
        finally:
            os.close(fd)
        code, out, _ = _cli(w, "worker", "stop", "--json")
        assert json.loads(out) == {"stopped": False, "running": False}, out
