"""``copter report`` on a state whose CURRENT names a missing generation: the rows are the newest complete
generation's lineage, and report says so as ``history`` does: a ``warning:`` line on stderr (human and
``--json``), the JSON result's ``warnings`` and a paragraph on the page."""

from __future__ import annotations

import json
import shutil

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import small_lp

pytest.importorskip("matplotlib")


@pytest.fixture
def damaged(tmp_path):
    st = tmp_path / "st"
    rounds.init(small_lp(), state_dir=st)
    for i, (name, cost) in enumerate((("x3", 5.0), ("x4", 6.0))):
        rounds.step(Delta.concat([Delta.vars([name], cost=[cost])], base_round=i), state_dir=st)
    shutil.rmtree(st / "gen-000002")
    return st


def test_report_carries_the_damaged_current_warning_of_history(damaged, tmp_path):
    hist = CliRunner().invoke(app, ["history", "--json", "--state", str(damaged)])
    expected = json.loads(hist.stdout)["warnings"]
    assert len(expected) == 1 and "CURRENT names round 2" in expected[0]
    res = CliRunner().invoke(app, ["report", "-o", str(tmp_path / "r.html"), "--json", "--state", str(damaged)])
    assert res.exit_code == 0, res.stdout + res.stderr
    assert json.loads(res.stdout)["warnings"] == expected
    assert f"warning: {expected[0]}" in res.stderr
    html = (tmp_path / "r.html").read_text()
    assert "CURRENT names round 2" in html and "using the newest complete generation, round 1" in html
    human = CliRunner().invoke(app, ["report", "-o", str(tmp_path / "h.html"), "--state", str(damaged)])
    assert human.exit_code == 0 and f"warning: {expected[0]}" in human.stderr


def test_an_intact_state_reports_no_warnings(damaged, tmp_path):
    (damaged / "CURRENT").write_text("1\n")
    res = CliRunner().invoke(app, ["report", "-o", str(tmp_path / "r.html"), "--json", "--state", str(damaged)])
    assert res.exit_code == 0 and "warnings" not in json.loads(res.stdout) and "warning" not in res.stderr
