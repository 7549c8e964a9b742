"""``copter report`` marks the rounds a rollback undid (helper-193: the page said "current round 0" while its table
and charts showed rounds 1 and 2 like live rounds, and the compare table was of undone round 2), and its objective
chart does not call an LP round's dual objective a proven bound."""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from solver import rounds
from solver.model.delta import Delta
from solver.rounds.log_history import current_round, is_undone
from solver.rounds.report import charts
from tests.helpers import small_lp
from tests.report_helpers import table_rows

pytest.importorskip("matplotlib", reason="copter report needs the optional extra plot (matplotlib)")

runner = CliRunner()


def test_rounds_a_rollback_undid_are_marked_in_the_table_the_cards_and_the_charts(tmp_path):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    for i in range(2):
        rounds.step(Delta.vars([f"x{i}"], cost=[3.0 + i]), st)
    rounds.rollback(st, to=0)
    out = tmp_path / "r.html"
    res = runner.invoke(app, ["report", "--state", str(st), "-o", str(out)])
    assert res.exit_code == 0, res.stdout + res.stderr
    page = out.read_text()
    assert [r["round"] for r in table_rows(page)] == ["0", "1", "2"]
    classes = re.findall(r'<tr class="([^"]*)" data-kind="generation" data-round="(\d+)"', page)
    assert {rnd: cls.split() for cls, rnd in classes} == {"0": ["current"], "1": ["undone"], "2": ["undone"]}
    assert page.count("OPTIMAL (undone)") == 2
    assert "<b>1, 2</b><span>undone by a rollback</span>" in page
    history = rounds.history(st)
    assert [is_undone(r, current_round(history)) for r in history] == [False, True, True]
    fig = charts.objective(history)
    labels = [h.get_label() for ax in fig.axes for h in ax.collections]
    assert "undone (rolled back)" in labels
    assert "not a proven bound" in page  # the objective chart's caption: an LP round's dual objective


def test_last_keeps_the_current_round_and_the_undone_marks(tmp_path):
    """helper-195: with --last 2 after a rollback the rows shown were undone rounds 2 and 3, unmarked, and the cards
    called round 3 current."""
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    reps = [rounds.step(Delta.vars([f"x{i}"], cost=[3.0 + i]), st) for i in range(3)]
    rounds.rollback(st, to=1)
    out = tmp_path / "r.html"
    res = runner.invoke(app, ["report", "--state", str(st), "-o", str(out), "--last", "2"])
    assert res.exit_code == 0, res.stdout + res.stderr
    page = out.read_text()
    assert [r["round"] for r in table_rows(page)] == ["2", "3"]
    assert page.count("OPTIMAL (undone)") == 2
    assert "<b>1</b><span>current round</span>" in page and "<b>2, 3</b><span>undone by a rollback</span>" in page
    assert f"<b>{reps[0]['objective']:.8g}</b><span>current objective</span>" in page
