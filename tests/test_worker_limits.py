"""Through the worker, a command runs at its caller's nice value and under its caller's resource limits, as it
does in-process (session 33, helper-160: a cron line's ``ulimit -t 1`` killed the in-process step, exit 137, but
the worker's child ran it to the end, exit 0; ``ulimit -f 1`` made the in-process step exit 7, the worker's child
wrote past it; ``nice -n 19`` left the child at nice 0). ``copter_cli.worker_limits``: the child takes them on,
and a worker that could not (the caller asks for a higher priority or a higher hard limit) refuses, so the
command runs in-process."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile

import pytest

from copter_cli import worker_limits as wl
from tests.helpers import small_lp
from tests.worker_helpers import ROUTED, Worker, init_state, lp_stream, running_worker

pytestmark = pytest.mark.slow  # a worker start and a few commands in their own processes


@pytest.fixture(scope="module")
def worker():
    with running_worker("cwl-") as w:
        yield w


def _run(worker: Worker, args, *, limits=(), nice: int = 0, off: bool = False, stdout=None):
    """(returncode, stderr, routed) of ``python -m copter_cli ARGS`` under these limits and nice increment."""
    env = dict(worker.env, **({"COPTER_WORKER": "off"} if off else {}))

    def pre():
        if nice:
            os.nice(nice)
        for res, value in limits:
            resource.setrlimit(res, (value, value))

    proc = subprocess.run([sys.executable, "-m", "copter_cli", *map(str, args)], env=env, preexec_fn=pre,
                          stdout=stdout if stdout is not None else subprocess.PIPE, stderr=subprocess.PIPE,
                          stdin=subprocess.DEVNULL, timeout=600)
    err = proc.stderr.decode()
    return proc.returncode, err, ROUTED in err


def test_a_cpu_limit_ends_the_command_through_the_worker_as_in_process(worker, tmp_path):
    worker.ensure()
    codes = []
    for off in (True, False):
        # far more than 2 s of CPU; --dir in the test's folder: a demo killed at the hard limit cannot remove its
        # temporary folder, which each run of this test used to leave in /tmp (2 a run)
        args = ["demo", "--rounds", "200", "--dir", tmp_path / f"demo-{off}", "--json"]
        code, err, routed = _run(worker, args, limits=[(resource.RLIMIT_CPU, 2)], off=off)
        assert routed is not off, err
        codes.append(code)
    assert codes[0] == codes[1] == -9, codes  # killed at the hard limit (a shell says 137), both ways


def test_a_file_size_limit_applies_to_the_workers_output_as_in_process(worker, tmp_path):
    worker.ensure()
    base, delta = lp_stream(tmp_path)
    results = []
    for off in (True, False):
        st = tmp_path / f"st-{off}"
        init_state(worker, base, st)
        with open(tmp_path / f"out-{off}.json", "wb") as out:
            code, err, routed = _run(worker, ["step", delta, "--state", st, "--json"],
                                     limits=[(resource.RLIMIT_FSIZE, 200)], off=off, stdout=out)
        assert routed is not off, err
        results.append((code, (tmp_path / f"out-{off}.json").stat().st_size <= 200))
        assert "File too large" in err or "too large" in err.lower(), err
    assert results[0] == results[1] == (7, True), results


def test_a_caller_nicer_than_the_worker_is_served_and_a_less_nice_one_runs_in_process(tmp_path):
    base = os.getpriority(os.PRIO_PROCESS, 0)  # the suite may itself run under nice
    if base + 4 > 19:
        pytest.skip(f"this process runs at nice {base}: no room for a nicer worker and caller")
    w = Worker(tempfile.mkdtemp(prefix="cwn-", dir="/tmp"))
    try:
        code, out, err = _start_niced(w, 3)
        assert code == 0, (out, err)
        p = tmp_path / "m.parquet"
        from formats.io import write_problem

        write_problem(small_lp(), p)
        code, err, routed = _run(w, ["solve", p, "--json"], nice=0)
        assert code == 0 and not routed, err
        assert f"nice value {base} is below the worker's ({base + 3})" in err, err
        code, err, routed = _run(w, ["solve", p, "--json"], nice=4)
        assert code == 0 and routed, err
    finally:
        w.shutdown()


def _start_niced(w: Worker, nice: int):
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "worker", "start", "--json"], env=w.env,
                          preexec_fn=lambda: os.nice(nice), capture_output=True, timeout=600)
    if proc.returncode == 0:
        w.pids.add(json.loads(proc.stdout)["pid"])
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


def test_adopt_takes_on_the_nice_value_and_limits_in_a_child_process():
    code = ("import os, resource, json\n"
            "from copter_cli import worker_limits as wl\n"
            "me = wl.current()\n"
            "want = {'nice': me['nice'] + 3, 'rlimits': {'RLIMIT_FSIZE': [5000, 6000], 'RLIMIT_CPU': [50, 60]}}\n"
            "assert wl.unadoptable(want) is None\n"
            "wl.adopt(want)\n"
            "now = wl.current()\n"
            "print(json.dumps([now['nice'] - me['nice'], now['rlimits']['RLIMIT_FSIZE'], now['rlimits']['RLIMIT_CPU'],"
            " wl.limited_cpu(now)]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(out.stdout) == [3, [5000, 6000], [50, 60], True]


def test_unadoptable_names_a_higher_priority_or_hard_limit():
    me = wl.current()
    assert "nice value" in wl.unadoptable({"nice": me["nice"] - 1, "rlimits": {}})
    hard = me["rlimits"]["RLIMIT_NOFILE"][1]
    assert "nofile limit" in wl.unadoptable({"nice": me["nice"], "rlimits": {"RLIMIT_NOFILE": [hard + 1, hard + 1]}})
    assert wl.unadoptable(None) is None and wl.unadoptable(me) is None


def test_a_memory_limit_runs_the_command_in_process(worker, tmp_path):
    # the worker's child starts with the worker's address space (the stack and every kernel loaded, ~590 MB): under
    # the caller's `ulimit -v 400000` it failed with MemoryError and then hung at its exit, where the command alone
    # exits 0 (helper-162). A command under a memory limit now runs in its own process.
    worker.ensure()
    from formats.io import write_problem

    write_problem(small_lp(), tmp_path / "m.parquet")
    code, err, routed = _run(worker, ["solve", tmp_path / "m.parquet", "--json"],
                             limits=[(resource.RLIMIT_AS, 2 << 30)])
    assert code == 0 and not routed and "memory limit (as)" in err, err
    assert wl.unadoptable({"nice": os.getpriority(os.PRIO_PROCESS, 0),
                           "rlimits": {"RLIMIT_DATA": [1 << 30, resource.RLIM_INFINITY]}}).startswith(
        "the command runs under a memory limit (data)")
