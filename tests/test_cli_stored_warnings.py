"""A warning is news once. A round's warnings (a delta without ``copter.base_round``, a branch moved into
``abandoned/``, ...) are printed as ``warning:`` lines by the ``step`` that made the round; afterwards they
are stored facts of that round: ``show`` gives them as output (the JSON's ``warnings``, a ``warnings`` row
of the human table), never again as a ``warning:`` line on stderr, so a cron job that alerts on stderr
warnings is not alerted on every read. A warning about the state now (a damaged CURRENT) is news on every
read: a ``warning:`` line from show, history and report alike (and in their JSON ``warnings``)."""

from __future__ import annotations

import json
import shutil

import pytest

from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp


@pytest.fixture
def st(tmp_path):
    """Round 1 made by a delta without copter.base_round (its report stores that warning), round 2 plain."""
    st = tmp_path / "st"
    rounds.init(small_lp(), state_dir=st)
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])]), tmp_path / "d1.parquet")
    rep = rounds.step(tmp_path / "d1.parquet", state_dir=st)
    assert any("no copter.base_round" in w for w in rep["warnings"])
    rounds.step(Delta.concat([Delta.vars(["x4"], cost=[6.0])], base_round=1), state_dir=st)
    return st


def _warning_lines(err: str) -> list[str]:
    return [ln for ln in err.splitlines() if ln.startswith("warning")]


def test_show_json_gives_a_rounds_stored_warning_in_the_answer_not_on_stderr(st, capsys):
    code, out, err = run_main(capsys, "show", "--round", "1", "--state", st, "--json")
    assert code == 0, err
    (w,) = json.loads(out)["warnings"]
    assert "no copter.base_round" in w
    assert _warning_lines(err) == [] and err == ""


def test_show_human_puts_a_stored_warning_in_its_table(st, capsys):
    code, out, err = run_main(capsys, "show", "--round", "1", "--state", st)
    assert code == 0
    assert _warning_lines(err) == [] and _warning_lines(out) == []
    row = next(ln for ln in out.splitlines() if "no copter.base_round" in ln)
    assert row.split()[0] == "warnings"


def test_a_damaged_current_is_news_on_every_read_beside_the_stored_warning(st, capsys):
    shutil.rmtree(st / "gen-000002")  # the fallback is round 1, whose report has its stored warning
    code, out, err = run_main(capsys, "show", "--state", st, "--json")
    assert code == 0
    stored, live = json.loads(out)["warnings"]
    assert "no copter.base_round" in stored and "CURRENT names round 2" in live
    assert _warning_lines(err) == [f"warning: {live}"]
    code, out, err = run_main(capsys, "show", "--state", st)
    assert code == 0 and _warning_lines(err) == [f"warning: {live}"]
    assert any(ln.split()[:1] == ["warnings"] and "no copter.base_round" in ln for ln in out.splitlines())
    for args in (("history",), ("history", "--json")):
        code, _, err = run_main(capsys, *args, "--state", st)
        assert code == 0 and _warning_lines(err) == [f"warning: {live}"], args


def test_the_library_keeps_its_old_answer_without_a_list(st):
    shutil.rmtree(st / "gen-000002")
    ws = rounds.show(st)["warnings"]
    assert len(ws) == 2 and "CURRENT names round 2" in ws[1]
    news: list[str] = []
    assert len(rounds.show(st, None, news)["warnings"]) == 1 and len(news) == 1
