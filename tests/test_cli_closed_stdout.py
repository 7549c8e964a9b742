"""A stdout closed when copter starts (``copter step d.parquet --state S >&-``) is exit 7 naming stdout, like a
stdout the machine refuses (``> /dev/full``), never exit 1: Python sets ``sys.stdout`` to None for a closed
descriptor 1, and the answer's write ended as ``internal error: AttributeError: 'NoneType' object has no
attribute 'write'`` (with ``--json`` a full traceback) although the step's round was stored. A step whose round
was stored says so in the error. A closed stderr stays silent with the answer on stdout; a closed stdin read by
``step -`` is bad input naming it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from formats.checkpoint import StateStore
from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import REPO, small_lp

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="closing descriptors in the child")

CLOSED = "error (environment, exit 7): stdout: cannot write: it was closed when copter started (>&-)"


def _env(tmp_path) -> dict:
    return dict(os.environ, PYTHONPATH=str(REPO), COPTER_WORKER_DIR=str(tmp_path / "no-worker"))


def closed(tmp_path, fd: int, *args) -> subprocess.CompletedProcess:
    """``python -m copter_cli ARGS`` with descriptor ``fd`` closed (1: ``>&-``, 2: ``2>&-``); the other of
    stdout/stderr captured."""
    pipes = {"stdout": subprocess.PIPE} if fd == 2 else {"stderr": subprocess.PIPE}
    return subprocess.run([sys.executable, "-m", "copter_cli", *map(str, args)], text=True, env=_env(tmp_path),
                          timeout=600, preexec_fn=lambda: os.close(fd), stdin=subprocess.DEVNULL, **pipes)


def _state_and_delta(tmp_path):
    st, d = tmp_path / "st", tmp_path / "d1.parquet"
    rounds.init(small_lp(), st)
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), d)
    return st, d


@pytest.mark.parametrize("args", [("version",), ("version", "--json"), ("--version",), ("show",),
                                  ("show", "--json"), ("history",), ("history", "--json")])
def test_a_closed_stdout_is_exit_7_naming_it(tmp_path, args):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    state = ("--state", st) if args[0] in ("show", "history") else ()
    proc = closed(tmp_path, 1, *args, *state)
    assert proc.returncode == 7, proc.stderr
    assert CLOSED in proc.stderr and "Traceback" not in proc.stderr and "internal" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_a_step_into_a_closed_stdout_says_its_round_is_stored(tmp_path, json_flag):
    st, d = _state_and_delta(tmp_path)
    proc = closed(tmp_path, 1, "step", d, "--state", st, *json_flag)
    assert proc.returncode == 7, proc.stderr
    assert f"{CLOSED}; round 1 is stored and current" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert StateStore(st).current()[0] == 1


def test_a_step_into_a_full_stdout_says_its_round_is_stored(tmp_path):
    st, d = _state_and_delta(tmp_path)
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(d), "--state", str(st)], stdout=full,
                              stderr=subprocess.PIPE, text=True, env=_env(tmp_path), timeout=600)
    assert proc.returncode == 7, proc.stderr
    assert ("stdout (/dev/full): cannot write: No space left on device; round 1 is stored and current"
            in proc.stderr), proc.stderr


def test_a_closed_stderr_keeps_the_answer_and_exit_0(tmp_path):
    st, d = _state_and_delta(tmp_path)
    proc = closed(tmp_path, 2, "step", d, "--state", st, "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout)["round"] == 1, proc.stdout


def test_a_step_reading_a_closed_stdin_is_bad_input_naming_it(tmp_path):
    """``copter step - --state S <&-``: Python sets ``sys.stdin`` to None, and reading the delta ended as
    ``internal error: AttributeError: 'NoneType' object has no attribute 'buffer'`` (exit 1)."""
    st, _ = _state_and_delta(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", "-", "--state", str(st)], text=True,
                          env=_env(tmp_path), timeout=600, preexec_fn=lambda: os.close(0), capture_output=True)
    assert proc.returncode == 3, proc.stderr
    assert "error (input, exit 3): -: standard input was closed when copter started (<&-)" in proc.stderr
    assert StateStore(st).current()[0] == 0


@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_a_batch_stopped_by_a_bad_delta_into_a_closed_stdout_is_exit_3_naming_the_delta(tmp_path, json_flag):
    """``copter step d1 d2 bad --state S >&-`` exited 7 with only the stdout line: the error of the bad delta,
    which is what the user must fix, was lost with the answer. The batch's own error decides (exit 3, its line),
    and a warning says that stdout refused the stored rounds' reports (README, "Exit codes")."""
    st, d = _state_and_delta(tmp_path)
    d2 = tmp_path / "d2.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[6.0])], base_round=1), d2)
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet")
    proc = closed(tmp_path, 1, "step", d, d2, bad, "--state", st, *json_flag)
    assert proc.returncode == 3, proc.stderr
    assert f"error (format, exit 3): {bad}: not a readable Parquet file" in proc.stderr, proc.stderr
    assert "[delta 3 of 3" in proc.stderr and "exit 7" not in proc.stderr and "Traceback" not in proc.stderr
    assert (f"warning: {CLOSED.removeprefix('error (environment, exit 7): ')}; round 2 is stored and current; "
            "the reports of the rounds stored before it were not printed") in proc.stderr, proc.stderr
    assert StateStore(st).current()[0] == 2


@pytest.mark.parametrize("cmd", ["export", "convert", "diff", "solve"])
def test_a_command_that_wrote_its_file_into_a_closed_stdout_says_the_file_is_written(tmp_path, cmd):
    """``copter export -o x.mps --state S >&-`` wrote x.mps completely but its exit-7 error said only that stdout
    was closed, so the user could not tell whether x.mps was usable; a step says its round is stored. Every
    command whose output file is complete says so (formats.undo.wrote): export -o, convert, diff -o, solve -o."""
    st, d = _state_and_delta(tmp_path)
    base = tmp_path / "base.parquet"
    assert closed(tmp_path, 2, "export", "--state", st, "-o", base).returncode == 0
    out = tmp_path / ("x.mps" if cmd in ("export", "convert") else "x.parquet")
    args = {"export": ("export", "--state", st, "-o", out), "convert": ("convert", base, out),
            "diff": ("diff", base, base, "-o", out), "solve": ("solve", base, "-o", out)}[cmd]
    proc = closed(tmp_path, 1, *args)
    assert proc.returncode == 7 and out.is_file(), proc.stderr
    tail = f"{out} and {tmp_path / 'x.duals.parquet'} are written" if cmd == "solve" else f"{out} is written"
    assert f"{CLOSED}; {tail}" in proc.stderr, proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def _warning_step(tmp_path):
    """A state and a delta whose step prints a warning (``--mip-gap`` on an LP): copter writes to stderr."""
    st, d = _state_and_delta(tmp_path)
    return st, d, ("--mip-gap", "0.01")


@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_a_closed_stderr_with_a_warning_to_say_keeps_the_answer_and_exit_0(tmp_path, json_flag):
    """``copter step d --mip-gap 0.01 --json 2>&-`` stored its round and exited 1, "internal error: AttributeError:
    'NoneType' object has no attribute 'write'" (helper-203): the warning was written to a None stderr."""
    st, d, warn = _warning_step(tmp_path)
    proc = closed(tmp_path, 2, "step", d, "--state", st, *warn, *json_flag)
    assert proc.returncode == 0, proc.stdout
    if json_flag:
        assert json.loads(proc.stdout)["round"] == 1
    assert StateStore(st).current()[0] == 1


@pytest.mark.parametrize("json_flag", [(), ("--json",)])
def test_a_full_stderr_drops_the_warnings_and_keeps_exit_0(tmp_path, json_flag):
    """``2>/dev/full``: the warning's write failed with ENOSPC and a stored round ended as exit 1 (with --json an
    error object of code 7 beside it): stderr's diagnostics are dropped, the answer and the report keep them."""
    st, d, warn = _warning_step(tmp_path)
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(d), "--state", str(st), *warn,
                               *json_flag], stdout=subprocess.PIPE, stderr=full, text=True, env=_env(tmp_path),
                              timeout=600, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stdout
    if json_flag:
        rep = json.loads(proc.stdout)
        assert rep["round"] == 1 and "error" not in rep and rep["warnings"], rep
    assert StateStore(st).current()[0] == 1


def test_a_usage_error_into_a_closed_stdout_is_still_the_usage_error(tmp_path):
    """``copter show --bogus --json >&-`` exited 7 naming stdout and lost the usage error (helper-203)."""
    proc = closed(tmp_path, 1, "show", "--bogus", "--json")
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().splitlines()[-1].startswith("error (usage, exit 2): No such option: --bogus")


def test_a_usage_error_whose_reader_went_away_is_141(tmp_path):
    """``copter show --bogus --json | true``: the JSON error's write hit a broken pipe and the command ended as
    exit 1 with nothing said (helper-203); a closed stdout's reader is 141, as for every command."""
    proc = subprocess.Popen([sys.executable, "-m", "copter_cli", "show", "--bogus", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=_env(tmp_path), stdin=subprocess.DEVNULL)
    proc.stdout.close()  # the reader is gone before copter writes
    _, err = proc.communicate(timeout=600)
    assert proc.returncode == 141, err
    assert b"Traceback" not in err and b"internal" not in err
