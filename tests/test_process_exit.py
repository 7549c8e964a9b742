"""The console script ends without the interpreter's teardown (copter_cli.process_exit, issue #15), and
nothing a user can see changes: outputs complete, files written, the same exit codes (success, usage error,
bad input, closed stdout), atexit handlers and non-daemon threads still run. Real subprocesses
(``python -m copter_cli``, the console script's code path) without the long-running worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from copter_cli import process_exit
from formats.io import write_delta, write_problem
from solver.workloads import make_scenario
from tests.helpers import REPO

ENV = {**os.environ, "PYTHONPATH": str(REPO), "COPTER_WORKER": "off"}


def _copter(*args: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "copter_cli", *args], env=ENV, stdout=stdout,
                          stderr=subprocess.PIPE, text=True, timeout=600)


@pytest.fixture(scope="module")
def stream(tmp_path_factory):
    root = tmp_path_factory.mktemp("exit")
    sc = make_scenario("sia", 16, seed=3)
    write_problem(sc.base(), root / "base.parquet")
    write_delta(sc.next_delta(1), root / "d1.parquet")
    (root / "bad.parquet").write_bytes(b"not a parquet file")
    return root


def test_init_and_step_print_their_whole_answer_and_write_their_files(stream, tmp_path):
    state = tmp_path / "st"
    init = _copter("init", str(stream / "base.parquet"), "--state", str(state), "--json")
    assert init.returncode == 0, init.stderr
    step = _copter("step", str(stream / "d1.parquet"), "--state", str(state), "--json")
    assert step.returncode == 0, step.stderr
    for proc, round_ in ((init, 0), (step, 1)):
        rep = json.loads(proc.stdout)  # one complete JSON object
        assert rep["round"] == round_ and rep["accepted"] is not False
        for key in ("solution_path", "duals_path"):
            assert (state / rep[key]).stat().st_size > 0
    history = _copter("history", "--state", str(state), "--json")
    assert history.returncode == 0
    assert [r["round"] for r in json.loads(history.stdout)["rounds"]] == [0, 1]


def test_usage_error_and_bad_input_keep_their_exit_codes(stream, tmp_path):
    usage = _copter("step", "--bogus", "--json")
    assert usage.returncode == 2
    assert json.loads(usage.stdout)["error"]["kind"] == "usage"
    bad = _copter("init", str(stream / "bad.parquet"), "--state", str(tmp_path / "st"), "--json")
    assert bad.returncode == 3
    assert json.loads(bad.stdout)["error"]["file"] == str(stream / "bad.parquet")
    assert not (tmp_path / "st").exists()


def test_a_closed_stdout_still_ends_with_141_and_no_message(stream, tmp_path):
    state = tmp_path / "st"
    assert _copter("init", str(stream / "base.parquet"), "--state", str(state)).returncode == 0
    read, write = os.pipe()
    os.close(read)  # the reader is gone before the command writes: `copter history --json | true`
    try:
        proc = _copter("history", "--state", str(state), "--json", stdout=write)
    finally:
        os.close(write)
    assert proc.returncode == 141
    assert proc.stderr == ""


EXIT_PROBE = r"""
import atexit, os, sys, threading, time
out = sys.argv[1]
sys.argv = ["copter", "version", "--json"]

class Teardown:  # collected by the interpreter's teardown, never by os._exit
    def __del__(self):
        os.write(2, b"teardown ran\n")

keep = Teardown()
atexit.register(lambda: open(os.path.join(out, "atexit"), "w").close())

def late():
    time.sleep(0.3)
    open(os.path.join(out, "thread"), "w").close()

threading.Thread(target=late).start()  # a non-daemon thread: the exit waits for it
if os.path.basename(out) == "console":
    from copter_cli.entry import main
    main()
"""


@pytest.mark.parametrize("how", ["console", "interpreter"])
def test_the_console_exit_runs_atexit_and_threads_and_skips_only_the_teardown(tmp_path, how):
    out = tmp_path / how
    out.mkdir()
    proc = subprocess.run([sys.executable, "-c", EXIT_PROBE, str(out)], env=ENV, capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert (out / "atexit").exists() and (out / "thread").exists()
    if how == "console":
        assert "copter" in json.loads(proc.stdout)  # printed and flushed
        assert "teardown ran" not in proc.stderr
    else:  # the control: the same script without the console's exit tears down
        assert "teardown ran" in proc.stderr


def test_exit_status_is_the_interpreters(capsys):
    assert process_exit.exit_status(None) == 0
    assert process_exit.exit_status(3) == 3
    assert process_exit.exit_status(256 + 5) == 5
    assert process_exit.exit_status("no such thing") == 1
    assert capsys.readouterr().err == "no such thing\n"


HUNG_EXIT = r"""
import sys, threading
sys.argv = ["copter", *sys.argv[1:]]
from copter_cli import process_exit
process_exit.EXIT_GRACE_SECONDS = 1.0
threading.Thread(target=threading.Event().wait, name="never-ends").start()  # non-daemon: the exit joins it
process_exit.exit_now(143)
"""


@pytest.mark.parametrize("debug", [False, True], ids=["plain", "debug"])
def test_an_exit_that_waits_for_a_thread_forever_ends_after_the_grace(debug):
    """A non-daemon thread (a pool's manager thread, a queue feeder) that never ends must not hold the process:
    it ends with its status and a line naming the wait (``--debug``: the threads' stacks too). The timeout is a
    hang guard, not a timed assertion."""
    args = ["step", "--debug"] if debug else ["step"]
    proc = subprocess.run([sys.executable, "-c", HUNG_EXIT, *args], env=ENV, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 143, proc.stderr
    assert "copter: the exit waited 1 s for its threads and worker processes to end" in proc.stderr
    assert ("never-ends" in proc.stderr or 'File "' in proc.stderr) == debug, proc.stderr


ORPHAN_CHILD = r"""
import multiprocessing as mp, sys, time
from copter_cli import process_exit
process_exit.EXIT_GRACE_SECONDS = 60.0
# a non-daemon child that never ends, as a part worker spawned while the interrupt landed (outside its pool's
# bookkeeping, so the pool's kill missed it): multiprocessing's exit handler joins it
child = mp.get_context("spawn").Process(target=time.sleep, args=(600,))
child.start()
print(child.pid, flush=True)
process_exit.exit_now(int(sys.argv[1]))
"""


def test_an_interrupted_exit_kills_the_children_it_would_otherwise_join():
    """helper-164: an interrupted partitioned MILP step waited out the exit's 60 s grace, twice in about 230
    interrupts. The timeout is a hang guard, not a timed assertion: the child sleeps 600 s."""
    proc = subprocess.run([sys.executable, "-c", ORPHAN_CHILD, "130"], env=ENV, capture_output=True, text=True,
                          timeout=50)
    assert proc.returncode == 130, proc.stderr
    assert "the exit waited" not in proc.stderr
    pid = int(proc.stdout.split()[0])
    try:
        with open(f"/proc/{pid}/stat") as f:
            assert f.read().rsplit(")", 1)[1].split()[0] == "Z", "the child outlived the exit"
    except FileNotFoundError:
        pass  # gone: killed and reaped
