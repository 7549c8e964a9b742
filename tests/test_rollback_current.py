"""``copter rollback --to N`` where round N is already current: it says so, exits 0 and writes nothing (the
state's files byte-identical, CURRENT's modification time included)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from copter_cli.app import app
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import small_lp, snapshot


def _state(tmp_path):
    st = tmp_path / "st"
    rounds.init(small_lp(), state_dir=st)
    rounds.step(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), state_dir=st)
    return st


def test_rollback_to_the_current_round_says_so_and_writes_nothing(tmp_path):
    st = _state(tmp_path)
    before, mtime = snapshot(st), (st / "CURRENT").stat().st_mtime_ns
    res = CliRunner().invoke(app, ["rollback", "--to", "1", "--state", str(st), "--json"])
    assert res.exit_code == 0, res.stdout + res.stderr
    out = json.loads(res.stdout)
    assert out["round"] == out["previous_round"] == 1 and out["unchanged"] is True
    assert out["message"] == "round 1 is already current; nothing changed"
    assert "moved" not in out["message"]
    assert snapshot(st) == before and (st / "CURRENT").stat().st_mtime_ns == mtime
    human = CliRunner().invoke(app, ["rollback", "--to", "1", "--state", str(st)])
    assert human.exit_code == 0 and human.stdout.strip() == "round 1 is already current; nothing changed"
    assert snapshot(st) == before and (st / "CURRENT").stat().st_mtime_ns == mtime


def test_rollback_to_a_round_behind_a_damaged_current_still_rewrites_it(tmp_path):
    """CURRENT naming a missing generation: the fallback round is "current" only by recovery; --to it
    writes CURRENT (that repairs the state), so it is no no-op."""
    st = _state(tmp_path)
    (st / "CURRENT").write_text("7\n")
    res = CliRunner().invoke(app, ["rollback", "--to", "1", "--state", str(st), "--json"])
    assert res.exit_code == 0, res.stdout + res.stderr
    out = json.loads(res.stdout)
    assert "unchanged" not in out and out["warnings"]
    assert (st / "CURRENT").read_text() == "1\n"
