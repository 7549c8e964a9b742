"""``--wait`` stops at ``--time-limit``: the limit is the wall time of the whole command from process start
(README), and "a budget spent before the solve starts never overruns". Waiting for another writer's lock
counted toward the limit but was not cut by it: ``step --wait 30 --time-limit 1`` beside a writer holding the
lock for 6 s waited the 6 s, then applied the delta and stored a failed round (TIME_LIMIT, exit 5, a
``failed/`` record and a log row for a round that never ran). Now the wait ends where the limit does and a lock
still held then is exit 6 (busy), nothing applied; the message says the limit cut the wait. A lock released in
time still lets the round run."""

from __future__ import annotations

import json
import re
import sys
import time

import pytest

from solver import clock
from tests.helpers import hold_lock, small_lp_state


def _copter(monkeypatch, capsys, *args) -> tuple[int, str, str]:
    """``copter ARGS`` in-process as the console script runs it (no argv: the command clock starts now)."""
    from copter_cli.app import main

    monkeypatch.setattr(clock, "process_start", time.monotonic)
    monkeypatch.setattr(sys, "argv", ["copter", *map(str, args)])
    try:
        with pytest.raises(SystemExit) as ex:
            main()
    finally:
        clock.start_command(None)
    out, err = capsys.readouterr()
    return ex.value.code, out, err


def test_the_wait_ends_at_the_time_limit_with_exit_6_and_nothing_applied(tmp_path, monkeypatch, capsys):
    st, d = small_lp_state(tmp_path)
    current = (st / "CURRENT").read_bytes()
    holder = hold_lock(st / ".lock", 6.0)
    try:
        t = time.monotonic()
        code, out, err = _copter(monkeypatch, capsys, "step", d, "--state", st, "--wait", "30",
                                 "--time-limit", "1", "--json")
        took = time.monotonic() - t
    finally:
        holder.kill()
        holder.wait()
    error = json.loads(out)["error"]
    assert code == 6 and error["kind"] == "busy", (code, out, err)
    assert "--time-limit 1" in error["message"] and "--wait 30" in error["message"], error
    assert re.search(r"\(waited \d+(\.\d{1,3})? s\)", error["message"]), error  # not 0.906621 s
    assert took < 4.0, took
    assert (st / "CURRENT").read_bytes() == current and not (st / "failed").exists()


def test_a_lock_released_within_the_limit_still_lets_the_round_run(tmp_path, monkeypatch, capsys):
    st, d = small_lp_state(tmp_path)
    holder = hold_lock(st / ".lock", 0.5)
    try:
        code, out, err = _copter(monkeypatch, capsys, "step", d, "--state", st, "--wait", "30",
                                 "--time-limit", "20", "--json")
    finally:
        holder.wait()
    report = json.loads(out)
    assert code == 0 and report["round"] == 1 and report["seconds"]["wait"] > 0.2, (code, out, err)


def test_init_waits_within_the_limit_too(tmp_path, monkeypatch, capsys):
    from formats.io import write_problem
    from tests.helpers import small_lp

    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    st.mkdir()
    holder = hold_lock(st / ".lock", 6.0)  # another init creating this state
    try:
        t = time.monotonic()
        code, out, err = _copter(monkeypatch, capsys, "init", tmp_path / "base.parquet", "--state", st, "--wait",
                                 "30", "--time-limit", "1", "--json")
        took = time.monotonic() - t
    finally:
        holder.kill()
        holder.wait()
    error = json.loads(out)["error"]
    assert code == 6 and "--time-limit 1" in error["message"] and took < 4.0, (code, out, err, took)
    assert not (st / "CURRENT").exists() and not (st / "failed").exists()


@pytest.mark.parametrize("command", ["init", "step"])
def test_help_says_the_wait_ends_at_the_time_limit(command):
    from tests.helpers import cli_json

    code, out = cli_json(command, "--help")
    assert code == 0 and "at most until --time-limit" in " ".join(out.split()), out
