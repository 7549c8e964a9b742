"""The long-running worker (issue #15 item 3: ``copter worker start|stop|status``, copter_cli/worker_*.py).

Every command here is a real process (``python -m copter_cli``, the console script's entry); a command the
worker ran says so on stderr (``COPTER_WORKER_DEBUG=1``: "running in the worker"), one that ran in-process
says why. Through the worker, results equal the in-process ones (reports without their seconds, the
allocations), errors have the same exit code and text and leave the state as it was, ``copter step -``
reads the client's stdin, SIGINT on the client ends the round with 130 and the state unchanged, and a
worker child killed mid-round gives exit 7 with the state intact. A stale socket file, another install's
identity, or another import-time environment make the client run the command itself.

One worker serves the module (started in a short private folder under /tmp: a Unix socket path holds
107 bytes) and is stopped in the fixture's finalizer, killed if it does not stop. A worker whose copter
sources changed refuses and exits (other people may edit the work tree meanwhile): :meth:`Worker.ensure`
restarts it before each routed command.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from copter_cli import exit_codes
from copter_cli import worker_client as wc
from formats.checkpoint import StateStore
from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from solver.workloads import make_scenario
from tests.helpers import snapshot
from tests.worker_helpers import ROUTED, Worker, init_state, lp_stream, running_worker, worker_env

pytestmark = pytest.mark.slow  # a worker start and ~40 commands in their own processes: 2-3 min on 2 cores

@pytest.fixture(scope="module")
def worker():
    with running_worker("cw-") as w:
        yield w


def _strip(obj):
    """A report without its timings (any key naming seconds) and its state directory (each mode has its own)."""
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if "seconds" not in k and k != "state_dir"}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


# ------------------------------------------------------------------------------------------ results


@pytest.mark.parametrize("domain", ["lp", "sia"])
def test_init_and_steps_through_the_worker_equal_in_process(worker, tmp_path, domain):
    """init + steps (an LP; a Sia MILP with jobs arriving and leaving) through the worker and in-process:
    same reports without their seconds, same allocation (solution files), same exit codes."""
    if domain == "lp":
        base, d1 = lp_stream(tmp_path)
        deltas = [d1]
    else:
        sc = make_scenario("sia", 16, seed=3)
        base = tmp_path / "base.parquet"
        write_problem(sc.base(), base)
        deltas = []
        for r in (1, 2):
            deltas.append(tmp_path / f"d{r}.parquet")
            write_delta(sc.next_delta(r), deltas[-1])
    reports = {}
    for mode in ("worker", "in-process"):
        st = tmp_path / f"state-{mode}"
        off = mode == "in-process"
        if not off:
            worker.ensure()
        runs = [worker.cli("init", base, "--state", st, "--json", off=off)]
        for d in deltas:
            if not off:
                worker.ensure()
            runs.append(worker.cli("step", d, "--state", st, "--json", off=off))
        assert all(r[0] == 0 for r in runs), [r[2] for r in runs]
        assert all(r[3] == (not off) for r in runs), [r[2] for r in runs]
        reps = [json.loads(r[1]) for r in runs]
        assert {r["state_dir"] for r in reps} == {str(st.resolve())}  # the child resolves it in the client's folder
        sol = pq.read_table(st / reps[-1]["solution_path"]).to_pydict()
        reports[mode] = ([_strip(r) for r in reps], sol)
    assert reports["worker"][0] == reports["in-process"][0]
    assert reports["worker"][1] == reports["in-process"][1]  # the allocation, name by name, bit for bit


def test_bad_delta_same_error_and_state_untouched(worker, tmp_path):
    """A malformed delta and a delta for another round: the worker's exit code, stdout and stderr are the
    in-process ones, and the state is byte-identical afterwards."""
    base, _ = lp_stream(tmp_path)
    st = tmp_path / "state"
    init_state(worker, base, st)
    garbage = tmp_path / "bad.parquet"
    garbage.write_bytes(b"PAR1 this is not a parquet file")
    wrong_round = tmp_path / "round7.parquet"
    write_delta(Delta.concat([Delta.vars(["x1"], cost=[2.0])], base_round=7), wrong_round)
    before = snapshot(st)
    for delta in (garbage, wrong_round, tmp_path / "missing.parquet"):
        for json_flag in ((), ("--json",)):
            worker.ensure()
            routed = worker.cli("step", delta, "--state", st, *json_flag)
            local = worker.cli("step", delta, "--state", st, *json_flag, off=True)
            assert routed[3] and not local[3]
            assert routed[0] == local[0] == exit_codes.BAD_INPUT, routed
            assert routed[1:3] == local[1:3]
            assert snapshot(st) == before


def test_usage_error_and_help_are_the_same(worker, tmp_path):
    """A missing argument (exit 2 with click's usage text, program name included) and --help."""
    for args in (("step",), ("step", "--help"), ("solve", "--tol", "abc", "x.mps")):
        worker.ensure()
        routed, local = worker.cli(*args, cwd=tmp_path), worker.cli(*args, off=True, cwd=tmp_path)
        assert routed[3], routed
        assert routed[:3] == local[:3]


def test_stdin_delta(worker, tmp_path):
    """``copter step -``: the delta's bytes on the client's stdin reach the worker's child; the round equals
    the same delta given as a file in-process; empty stdin is the same format error (exit 3)."""
    base, d1 = lp_stream(tmp_path)
    for mode in ("worker", "file"):
        init_state(worker, base, tmp_path / mode)
    worker.ensure()
    with open(d1, "rb") as f:
        routed = worker.cli("step", "-", "--state", tmp_path / "worker", "--json", stdin=f)
    local = worker.cli("step", d1, "--state", tmp_path / "file", "--json", off=True)
    assert routed[3] and routed[0] == local[0] == 0, routed[2]
    a, b = json.loads(routed[1]), json.loads(local[1])
    assert a["delta_sha256"] == b["delta_sha256"]  # the bytes, hashed like the file
    assert _strip({k: v for k, v in a.items() if k != "delta"}) == _strip({k: v for k, v in b.items() if k != "delta"})
    before = snapshot(tmp_path / "worker")
    worker.ensure()
    empty = worker.cli("step", "-", "--state", tmp_path / "worker", "--json", stdin=b"")
    empty_local = worker.cli("step", "-", "--state", tmp_path / "worker", "--json", stdin=b"", off=True)
    assert empty[3] and empty[0] == empty_local[0] == exit_codes.BAD_INPUT
    assert empty[1:3] == empty_local[1:3] and '"file": "-"' in empty[1]
    assert snapshot(tmp_path / "worker") == before


def test_closed_stdout_runs_in_process_and_exits_7(worker, tmp_path):
    """``copter step d.parquet --state S >&-`` with a worker running: the client runs it itself (a closed
    descriptor cannot be passed) and exits 7 naming stdout and the stored round, as without a worker (it was
    exit 1, ``AttributeError: 'NoneType' object has no attribute 'write'``)."""
    base, d1 = lp_stream(tmp_path)
    st = tmp_path / "state"
    init_state(worker, base, st)
    worker.ensure()
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(d1), "--state", str(st), "--json"],
                          env=worker.env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=600,
                          preexec_fn=lambda: os.close(1))
    assert "in-process (a standard stream is closed)" in proc.stderr
    assert proc.returncode == exit_codes.ENVIRONMENT, proc.stderr
    assert ("stdout: cannot write: it was closed when copter started (>&-); round 1 is stored and current"
            in proc.stderr), proc.stderr
    assert StateStore(st).current()[0] == 1


# ------------------------------------------------------------------------------------ signals, kills


def _start_waiting_step(worker: Worker, st: Path, delta: Path, json_flag: bool = True):
    """A step through the worker that waits for the state's lock (held by the caller): its process and
    the pid of the worker's child running it (from the client's debug line)."""
    worker.ensure()
    env = dict(worker.env)
    proc = subprocess.Popen([sys.executable, "-m", "copter_cli", "step", str(delta), "--state", str(st),
                             "--wait", "300", *(["--json"] if json_flag else [])], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL)
    line = proc.stderr.readline().decode()  # the client's first words: where the command runs
    assert ROUTED in line, line + proc.stderr.read().decode()
    child = int(line.rsplit("process", 1)[1].strip(" )\n"))
    time.sleep(1.0)  # the child imports the CLI, parses, then waits for the lock
    return proc, child


def test_sigint_on_the_client_interrupts_the_round(worker, tmp_path):
    """SIGINT to the client is forwarded to the child, which ends as the console script does: exit 130,
    the interrupted error (JSON on stdout), no traceback, the state unchanged."""
    base, d1 = lp_stream(tmp_path)
    st = tmp_path / "state"
    init_state(worker, base, st)
    before = snapshot(st)
    with StateStore(st).lock():
        proc, _ = _start_waiting_step(worker, st, d1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=120)
    out, err = out.decode(), err.decode()
    assert proc.returncode == exit_codes.INTERRUPTED, (out, err)
    assert json.loads(out) == {"error": {"code": 130, "kind": "interrupted",
                                         "message": "interrupted; the state is unchanged"}}
    assert "Traceback" not in err and "interrupted; the state is unchanged" in err
    assert snapshot(st) == before


def test_a_sighup_the_client_ignores_stays_ignored_as_in_process(worker, tmp_path):
    """hunt 56: under ``nohup`` (SIGHUP ignored) a SIGHUP to the client was forwarded and ended the step the worker
    served (exit 129), where an in-process step ignores it; now the round goes on and is stored, exit 0."""
    base, d1 = lp_stream(tmp_path)
    st = tmp_path / "state"
    init_state(worker, base, st)
    worker.ensure()
    with StateStore(st).lock():
        proc = subprocess.Popen([sys.executable, "-c", "import signal, runpy, sys; "
                                 "signal.signal(signal.SIGHUP, signal.SIG_IGN); "
                                 "sys.argv = ['copter', 'step', sys.argv[1], '--state', sys.argv[2], '--wait', '300', "
                                 "'--json']; runpy.run_module('copter_cli', run_name='__main__')", str(d1), str(st)],
                                env=dict(worker.env), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                stdin=subprocess.DEVNULL)
        line = proc.stderr.readline().decode()
        assert ROUTED in line, line + proc.stderr.read().decode()
        time.sleep(1.0)  # the worker's child waits for the lock
        proc.send_signal(signal.SIGHUP)
        time.sleep(1.0)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, (out, err)
    assert json.loads(out)["round"] == 1 and (st / "CURRENT").read_text() == "1\n"


def test_sigint_inside_the_save_unwinds_as_in_process(worker, tmp_path):
    """An interrupt while the round is being written (``sigint_during_save``: the child interrupts itself
    inside the commit region): same exit code and output as in-process, and the state still loads round 0."""
    base, d1 = lp_stream(tmp_path)
    results = {}
    for mode in ("worker", "in-process"):
        st = tmp_path / mode
        init_state(worker, base, st)
        if mode == "worker":
            worker.ensure()
        results[mode] = worker.cli("step", d1, "--state", st, "--json", off=mode == "in-process",
                                   env={"COPTER_FAULT_INJECT": "sigint_during_save"})
        assert StateStore(st, reuse=False).load().round == 0
    assert results["worker"][3]
    assert results["worker"][:3] == results["in-process"][:3]
    assert results["worker"][0] == exit_codes.INTERRUPTED


@pytest.mark.parametrize("fault", ["sigint_before_solve", "sigterm_before_solve"])
def test_the_state_lock_is_free_when_an_interrupted_client_exits(worker, tmp_path, fault):
    """An interrupt while the round solves (lock held): the command tells its client the exit code just before it
    ends, and the client exited while the command still held the state's lock; a script's next step met
    StateBusyError (helper-229). The client now exits after the command's process has ended, as in-process."""
    import fcntl

    base, d1 = lp_stream(tmp_path)
    st = tmp_path / "state"
    init_state(worker, base, st)
    worker.ensure()
    for _ in range(2):
        code, out, err, routed = worker.cli("step", d1, "--state", st, "--json", env={"COPTER_FAULT_INJECT": fault})
        assert routed and code == (130 if fault.startswith("sigint") else 143), (out, err)
        fd = os.open(st / ".lock", os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # raises BlockingIOError while the command holds it
        finally:
            os.close(fd)


def test_child_killed_mid_round_exits_7_state_intact(worker, tmp_path):
    """The worker's child SIGKILLed (by someone, while it waits for the lock; and by the fault injection
    inside the commit, before the new generation is renamed): exit 7 naming the signal and the atomic
    checkpoint, on stdout as JSON too; the state is unchanged and the next step stores the round."""
    base, d1 = lp_stream(tmp_path)
    st = tmp_path / "state"
    init_state(worker, base, st)
    before = snapshot(st)
    with StateStore(st).lock():
        proc, child = _start_waiting_step(worker, st, d1)
        os.kill(child, signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    out, err = out.decode(), err.decode()
    assert proc.returncode == exit_codes.ENVIRONMENT, (out, err)
    error = json.loads(out)["error"]
    assert error["code"] == 7 and error["kind"] == "environment"
    assert "killed by signal 9 (SIGKILL)" in error["message"] and "stored atomically" in error["message"]
    assert "error (environment, exit 7)" in err
    assert snapshot(st) == before

    worker.ensure()
    code, out, err, routed = worker.cli("step", d1, "--state", st, "--json",
                                        env={"COPTER_FAULT_INJECT": "before_rename"})
    assert routed and code == exit_codes.ENVIRONMENT, err
    assert "killed by signal 9" in json.loads(out)["error"]["message"]
    assert StateStore(st, reuse=False).load().round == 0
    code, out, err, _ = worker.cli("step", d1, "--state", st, "--json", off=True)
    assert code == 0 and json.loads(out)["round"] == 1, err
    assert not [p for p in os.listdir(st) if p.startswith((".tmp-", ".trash-"))]


# ------------------------------------------------------------------------------------ in-process fallbacks


def test_stale_socket_file_runs_in_process(tmp_path, monkeypatch):
    """A socket file nobody listens on (a worker killed without clean-up): the command runs in-process,
    with the same result, and says why only under COPTER_WORKER_DEBUG."""
    folder = tempfile.mkdtemp(prefix="cw-", dir="/tmp")
    try:
        w = Worker(folder)
        monkeypatch.setenv("COPTER_WORKER_DIR", folder)
        path = wc.paths(_client_identity())["socket"]
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(path)
        s.close()  # the file stays, nothing listens
        base, d1 = lp_stream(tmp_path)
        st = tmp_path / "state"
        init_state(w, base, st)
        code, out, err, routed = w.cli("step", d1, "--state", st, "--json")
        assert code == 0 and not routed and json.loads(out)["round"] == 1
        quiet = w.cli("step", d1, "--state", st, "--json", env={"COPTER_WORKER_DEBUG": "0"})
        assert quiet[0] == 0 and quiet[2] == "" and json.loads(quiet[1])["no_op"]
        proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(d1), "--state", str(st)],
                              env=w.env, capture_output=True, text=True)
        assert f"in-process (no worker at {path}: Connection refused)" in proc.stderr
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _client_identity(executable: str | None = None) -> str:
    """The identity a ``python -m copter_cli`` client started with ``executable`` computes."""
    exe = executable or sys.executable
    code = "from copter_cli import worker_client as wc; print(wc.install_identity(), end='')"
    return subprocess.run([exe, "-c", code], env=worker_env("/nonexistent"), capture_output=True, text=True,
                          check=True).stdout


def test_another_identity_or_environment_runs_in_process(worker, tmp_path):
    """The worker refuses another install's identity (another sys.executable of the same venv here), even at
    its own socket path, and another import-time environment (a NUMBA_* variable); the client then runs the
    command itself, and the worker served nothing."""
    served = worker.status()["served"]
    sock = wc.connect(worker.status()["socket"])
    wc.send(sock, {**json.loads(json.dumps(_request_as_client())), "identity": "another\ninstall"})
    assert "another install" in wc.Reader(sock).read()["refused"]
    sock.close()

    base, d1 = lp_stream(tmp_path)
    st = tmp_path / "state"
    init_state(worker, base, st)
    name = "python3" if Path(sys.executable).name != "python3" else "python"
    other = Path(sys.executable).with_name(name)
    if not other.exists():
        pytest.skip(f"no {other} beside {sys.executable}")
    other_paths = _paths_for(worker, _client_identity(str(other)))
    worker.ensure()
    code, out, err, routed = worker.cli("step", d1, "--state", st, "--json", executable=str(other))
    assert code == 0 and not routed and json.loads(out)["round"] == 1
    os.symlink(worker.status()["socket"], other_paths["socket"])  # another identity at this worker's socket
    try:
        proc = subprocess.run([str(other), "-m", "copter_cli", "step", str(d1), "--state", str(st)],
                              env=worker.env, capture_output=True, text=True)
    finally:
        os.unlink(other_paths["socket"])
    assert proc.returncode == 0 and "the worker refused: another install" in proc.stderr, proc.stderr

    worker.ensure()
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(d1), "--state", str(st)],
                          env=dict(worker.env, NUMBA_COPTER_TEST_VARIABLE="1"), capture_output=True, text=True)
    assert proc.returncode == 0 and "import-time environment differs" in proc.stderr, proc.stderr
    assert "NUMBA_COPTER_TEST_VARIABLE" in proc.stderr
    assert worker.status()["served"] == served


def _request_as_client() -> dict:
    """A run request as this test's clients make it (their identity, sources and environment)."""
    code = "import json; from copter_cli import worker_client as wc; print(json.dumps(wc.identity_request('run')))"
    return json.loads(subprocess.run([sys.executable, "-c", code], env=worker_env("/nonexistent"), capture_output=True,
                                     text=True, check=True).stdout)


def _paths_for(worker: Worker, identity: str) -> dict:
    old = os.environ.get("COPTER_WORKER_DIR")
    os.environ["COPTER_WORKER_DIR"] = worker.folder
    try:
        return wc.paths(identity)
    finally:
        os.environ["COPTER_WORKER_DIR"] = old


def test_client_imports_only_the_standard_library(worker, tmp_path):
    """Before it decides, the client imports nothing of typer, rich or the numerical stack
    (``python -X importtime``, a command the worker then runs)."""
    base, d1 = lp_stream(tmp_path)
    st = tmp_path / "state"
    init_state(worker, base, st)
    worker.ensure()
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "copter_cli", "step", str(d1), "--state",
                           str(st)], env=worker.env, capture_output=True, text=True)
    assert proc.returncode == 0 and ROUTED in proc.stderr, proc.stderr[-2000:]
    names = {ln.rsplit("|", 1)[1].strip().split(".")[0] for ln in proc.stderr.splitlines()
             if ln.startswith("import time:") and ln.count("|") == 2}
    heavy = {"typer", "click", "rich", "numpy", "scipy", "numba", "llvmlite", "pyarrow", "highspy", "formats"}
    assert names and not names & heavy, sorted(names & heavy)
    assert {n for n in names if n in ("copter_cli", "solver")} == {"copter_cli", "solver"}


# ---------------------------------------------------------------------------------------- life cycle


def test_a_worker_finishing_a_command_after_stop_is_shown_stopping_with_its_pid(worker, tmp_path):
    """``worker stop`` returned at its --timeout while the worker finished a step: ``worker status`` said the
    lock's holder was starting or stopping, without a pid. The worker records its phase in its lock file."""
    base, d1 = lp_stream(tmp_path)
    st = tmp_path / "state"
    init_state(worker, base, st)
    worker.ensure()
    pid = worker.status()["pid"]
    with StateStore(st).lock():
        proc, _ = _start_waiting_step(worker, st, d1)
        code, out, err, _ = worker.cli("worker", "stop", "--timeout", "0.5", "--json")
        assert code == 0 and json.loads(out) == {"stopped": False, "stopping": True, "pid": pid, "active": 1}, err
        res = worker.status()
        assert res["running"] is False and res["stopping"] is True and res["starting"] is False, res
        assert res["pid"] == pid and res["active"] == 1, res
        code, out, err, _ = worker.cli("worker", "stop", "--timeout", "0.5", "--json")
        assert json.loads(out) == {"stopped": False, "stopping": True, "pid": pid, "active": 1}, err
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    deadline = time.monotonic() + 60
    while worker.status().get("stopping") and time.monotonic() < deadline:
        time.sleep(0.2)
    res = worker.status()
    assert res["running"] is False and res["starting"] is False and res["stopping"] is False and res["pid"] is None


def test_status_stop_and_idle_timeout(worker, tmp_path):
    """status names the running worker; stop ends it (socket removed; the next command runs in-process; a
    second stop finds none); a worker started with --idle-timeout 1 exits by itself and removes its socket."""
    worker.ensure()
    st = worker.status()
    assert st["running"] and st["socket"].startswith(worker.folder) and not st["stale"]
    assert st["kernels_loaded"] > 0  # solver.prepare.load_cached: the install is prepared by `worker start`
    assert "left to first use: solver.lp.kernels.run_block_parallel" in Path(st["log"]).read_text()
    assert os.stat(st["socket"]).st_mode & 0o777 == 0o600 and os.stat(worker.folder).st_mode & 0o777 == 0o700
    code, out, err, _ = worker.cli("worker", "stop", "--json")
    assert code == 0 and json.loads(out) == {"stopped": True, "pid": st["pid"]}, err
    assert not os.path.exists(st["socket"]) and not worker.status()["running"]
    code, out, err, _ = worker.cli("worker", "stop", "--json")
    assert code == 0 and json.loads(out) == {"stopped": False, "running": False}
    base, d1 = lp_stream(tmp_path)
    init_state(worker, base, tmp_path / "state")
    code, _, _, routed = worker.cli("step", d1, "--state", tmp_path / "state")
    assert code == 0 and not routed

    res = worker.start("--idle-timeout", "1")
    assert res["idle_timeout_seconds"] == 1.0
    deadline = time.monotonic() + 120
    while worker.status()["running"] and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not worker.status()["running"] and not os.path.exists(res["socket"])
    assert "stopping: idle for 1 s" in Path(res["log"]).read_text()


def test_exit_code_of_a_killed_command_is_the_environment_code():
    assert wc.ENVIRONMENT == exit_codes.ENVIRONMENT
