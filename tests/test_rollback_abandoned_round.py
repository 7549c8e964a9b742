"""``rollback --to N`` for a round that a new branch moved into ``abandoned/`` names where it went (helper-183: after
``rollback --to 3`` and a step, ``rollback --to 5`` said only "round 5 is not kept", leaving the user to guess)."""

from __future__ import annotations

import pytest

from solver import rounds
from solver.model.errors import UsageError
from tests.helpers import snapshot, te_stream_state


def test_an_abandoned_round_is_named_with_its_folder(tmp_path):
    st, deltas = te_stream_state(tmp_path, 3)
    rounds.rollback(st, to=1)
    out = rounds.step(deltas[1], st)  # round 2 made again on a new branch: the old rounds 2 and 3 move aside
    assert out["abandoned_rounds"] == [2, 3]
    before = snapshot(st)
    with pytest.raises(UsageError) as err:
        rounds.rollback(st, to=3)
    assert snapshot(st) == before
    msg = str(err.value)
    moved = next((st / "abandoned").iterdir()) / "gen-000003"
    assert moved.is_dir() and str(moved) in msg and "a rollback left the branch" in msg, msg
    with pytest.raises(UsageError) as err:  # a round never made: no such sentence
        rounds.rollback(st, to=7)
    assert "a rollback left" not in str(err.value) and "gen-000007" not in str(err.value)
    assert "the newest round is 2: round 7 has not been made yet" in str(err.value)  # helper-184: not a lost round
    with pytest.raises(UsageError) as err:
        rounds.rollback(st, to=3)  # an abandoned round is not called "not made yet"
    assert "has not been made yet" not in str(err.value)


@pytest.mark.parametrize("argv", [["rollback", "--to", "-1"], ["show", "--round", "-1"],
                                  ["export", "--round", "-2", "-o", "x.mps"]])
def test_a_negative_round_is_the_option_s_usage_error(tmp_path, monkeypatch, capsys, argv):
    """helper-184: ``--to -1`` said "round -1 is not kept"; it is refused as a value, naming the option, like
    ``--wait -1``, before the state is read (here there is none)."""
    from tests.helpers import run_main

    monkeypatch.chdir(tmp_path)
    code, out, err = run_main(capsys, *argv, "--state", str(tmp_path / "none"))
    assert code == 2, (out, err)
    flag = argv[1]
    assert f"{flag} must be >= 0, got {argv[2]}" in err, err
    assert not (tmp_path / "none").exists() and not (tmp_path / "x.mps").exists()


def test_show_of_an_undone_round_says_it_is_not_current(tmp_path):
    """helper-184: after ``rollback --to 1``, ``show --round 2`` printed round 2's report as if it were live."""
    st = te_stream_state(tmp_path, 2)[0]
    rounds.rollback(st, to=1)
    news: list[str] = []
    rep = rounds.show(st, 2, news)
    assert rep["round"] == 2
    assert any("round 2 is not current: a rollback undid it (the current round is 1)" in w for w in news), news
    for r in (0, 1):  # an older round, the current one: nothing to say
        news = []
        rounds.show(st, r, news)
        assert not news, news
    # and with --solution (helper-211: it did not say it)
    sol = rounds.show_solution(st, round_=2)
    assert any("round 2 is not current: a rollback undid it" in w for w in sol.get("warnings", [])), sol
    assert not any("not current" in w for w in rounds.show_solution(st, round_=1).get("warnings", []))
