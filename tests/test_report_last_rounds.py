"""``copter report --last N`` takes the newest N round numbers, every row of each (helper-241, session 60): a round
that failed twice is two rows of one round number, and ``--last 2`` drew those two rows alone, "2 rounds (2 failed)",
leaving the current round off the page."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from solver import rounds
from solver.model.delta import Delta
from solver.model.settings import Settings
from solver.rounds.report import newest_rounds
from tests.helpers import infeasible_delta, small_lp
from tests.report_helpers import table_rows


def test_newest_rounds_keeps_every_row_of_the_newest_round_numbers():
    rows = [{"round": r, "i": i} for i, r in enumerate([0, 1, 2, 3, 4, 4])]
    assert [r["i"] for r in newest_rounds(rows, 2)] == [3, 4, 5]
    assert [r["i"] for r in newest_rounds(rows, 1)] == [4, 5]
    assert newest_rounds(rows, 9) == rows and newest_rounds(rows, None) == rows
    assert newest_rounds([], 3) == []


def test_report_last_shows_the_current_round_beside_a_round_that_failed_twice(tmp_path, capfd):
    pytest.importorskip("matplotlib", reason="copter report needs the optional extra plot (matplotlib)")
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    for i in range(3):
        rounds.step(Delta.vars([f"x{i}"], cost=[3.0 + i]), st)
    for _ in range(2):  # round 4 fails twice: two rows of round number 4
        rounds.step(infeasible_delta(), st, Settings(tol=1e-6, iteration_limit=20000), force=True)
    out = tmp_path / "r.html"
    res = CliRunner().invoke(app, ["report", "--state", str(st), "-o", str(out), "--last", "2", "--json"])
    assert res.exit_code == 0, res.stderr
    got = json.loads(res.stdout)
    assert (got["rounds"], got["rows"], got["failed"]) == (2, 3, 2)
    page = table_rows(out.read_text())
    assert sorted(int(r["round"]) for r in page) == [3, 4, 4]  # the current round 3 is on the page
    from copter_cli.cmd_report import _say

    _say(got)
    assert ": 2 rounds in 3 rows (2 failed) in " in capfd.readouterr().err
