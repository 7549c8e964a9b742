"""A FIFO where a state file belongs never makes a command wait for a writer (hunt 37: ``show``/``history`` hung
on a FIFO ``CURRENT``; ``step``/``history`` on a FIFO ``generation.json`` of an old round; a ``step`` with a FIFO
round-log segment stored its round, then hung holding the lock, deaf to SIGTERM). Each command runs in its own
process with a timeout, so a regression fails here instead of hanging the suite."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from formats.io import write_delta
from formats.regular import NotRegularFile, read_regular_bytes, read_regular_text
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import REPO, small_lp


def _copter(*args, timeout: float = 60) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO), "COPTER_WORKER": "off"}
    return subprocess.run([sys.executable, "-m", "copter_cli", *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=timeout)


@pytest.fixture
def state(tmp_path):
    st = tmp_path / "s"
    rounds.init(small_lp(), st)
    rounds.step(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), st)
    write_delta(Delta.concat([Delta.vars(["x4"], cost=[6.0])], base_round=1), tmp_path / "d2.parquet")
    return st


def _fifo(path) -> None:
    os.remove(path)
    os.mkfifo(path)


def test_the_reader_refuses_a_fifo_at_once(tmp_path):
    p = tmp_path / "f"
    os.mkfifo(p)
    with pytest.raises(NotRegularFile) as err:
        read_regular_text(p)
    assert str(err.value) == f"{p}: is a pipe (FIFO), not a regular file" and err.value.errno is None
    with pytest.raises(NotRegularFile):
        read_regular_bytes(p)
    with pytest.raises(NotRegularFile, match="is a folder"):
        read_regular_text(tmp_path)
    (tmp_path / "ok").write_text("1\n")
    assert read_regular_text(tmp_path / "ok") == "1\n"
    with pytest.raises(FileNotFoundError):
        read_regular_bytes(tmp_path / "missing")


def test_a_fifo_current_is_exit_3_for_every_command(state):
    _fifo(state / "CURRENT")
    for args in (["show"], ["history"], ["show", "--solution"], ["export", "-o", state.parent / "x.mps"],
                 ["step", state.parent / "d2.parquet"], ["rollback"]):
        res = _copter(*args, "--state", state)
        assert res.returncode == 3 and "CURRENT: is a pipe (FIFO), not copter's CURRENT file" in res.stderr, (args, res)


def test_a_fifo_manifest_of_an_old_round_makes_that_round_damaged_not_a_hang(state):
    _fifo(state / "gen-000000" / "generation.json")
    assert _copter("history", "--state", state).returncode == 0
    assert _copter("show", "--state", state).returncode == 0
    res = _copter("show", "--round", "0", "--state", state)
    assert res.returncode == 3 and "generation.json cannot be read (is a pipe (FIFO), not a regular file)" in res.stderr
    assert _copter("step", state.parent / "d2.parquet", "--state", state).returncode == 0
    assert (state / "CURRENT").read_text().strip() == "2"


def test_a_fifo_log_segment_is_a_damaged_segment_and_the_step_ends(state):
    seg = sorted((state / "log" / "rounds").glob("seg-*.arrow"))[0]
    _fifo(seg)
    assert _copter("history", "--state", state).returncode == 0
    res = _copter("step", state.parent / "d2.parquet", "--state", state)
    assert res.returncode == 0, res.stderr
    assert (state / "CURRENT").read_text().strip() == "2" and not _copter("show", "--state", state).returncode
    shutil.rmtree(state)


def test_a_fifo_generation_file_is_named_as_a_fifo(state):
    """helper-174: a FIFO listed in generation.json was reported as "is not a regular file (a symbolic link?)"."""
    _fifo(state / "gen-000000" / "solution.parquet")
    res = _copter("show", "--round", "0", "--state", state)
    assert res.returncode == 3 and "solution.parquet is a pipe (FIFO), not a regular file" in res.stderr, res.stderr
