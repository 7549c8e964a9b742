"""After an ``init`` whose round 0 failed (it initialises nothing and keeps its report under ``failed/``), every
command on that folder says so, naming the record and its status, instead of only "not an initialised copter
state directory (run `copter init BASE --state s`)", which hid the report the README sends the user to read.
Exit 3 as before; a folder without such a record keeps the plain advice."""

from __future__ import annotations

import json

import pytest

from formats.io import write_delta, write_problem
from tests.helpers import infeasible_delta, run_main, small_lp


@pytest.fixture
def failed_init(tmp_path, capsys):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    assert run_main(capsys, "init", tmp_path / "base.parquet", "--state", st, "--iteration-limit", "1")[0] == 5
    (record,) = (st / "failed").iterdir()
    return st, record


@pytest.mark.parametrize("args", [["show"], ["history"], ["rollback"], ["compare"], ["step", "{delta}"],
                                  ["export", "-o", "{tmp}/x.mps"], ["show", "--solution"]])
def test_every_command_names_the_failed_round_0(tmp_path, capsys, failed_init, args):
    st, record = failed_init
    write_delta(infeasible_delta(), tmp_path / "d.parquet")
    argv = [a.format(delta=tmp_path / "d.parquet", tmp=tmp_path) for a in args]
    code, out, err = run_main(capsys, *argv, "--state", st, "--json")
    msg = json.loads(out)["error"]["message"]
    assert code == 3 and "not an initialised copter state directory" in msg, (code, msg)
    assert "round 0 ended ITERATION_LIMIT" in msg and str(record / "report.json") in msg, msg


def test_a_folder_without_a_record_keeps_the_plain_advice(tmp_path, capsys):
    (tmp_path / "empty").mkdir()
    code, out, _ = run_main(capsys, "show", "--state", tmp_path / "empty", "--json")
    msg = json.loads(out)["error"]["message"]
    assert code == 3 and msg.endswith(f"(run `copter init BASE --state {tmp_path / 'empty'}`)"), msg
