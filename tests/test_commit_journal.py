"""A step killed between its generation's rename and CURRENT leaves the state as it was (helper-194).

On a rolled-back state (CURRENT 1, the undone round 2 kept), ``COPTER_FAULT_INJECT=after_rename`` (a SIGKILL just
after the new round 2 was renamed into place, the undone one moved into ``abandoned/``) left the killed step's round
where the undone one had been: history called it "undone", and ``rollback --to 2`` made that never-reported round
current. The commit now keeps a journal (``formats.checkpoint.StateStore.open_commit``); the next writer's lock undoes
the commit: the undone round comes back, the killed step's round is kept aside in ``abandoned/``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from formats.checkpoint import StateStore
from formats.io import write_delta, write_problem
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp

REPO = Path(__file__).resolve().parents[1]


def _killed_step(delta, state, point: str):
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_FAULT_INJECT=point, COPTER_WORKER="off")
    p = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(delta), "--state", str(state)], env=env,
                       capture_output=True, timeout=300)
    assert p.returncode == -9, p.stderr


def _delta(tmp_path, name: str, cost: float, base_round=None) -> Path:
    d = tmp_path / name
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[cost])], base_round=base_round), d)
    return d


@pytest.mark.parametrize("point", ["after_rename", "before_current"])
def test_a_step_killed_after_a_rollback_leaves_the_undone_round_restorable(tmp_path, capsys, point):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    rounds.step(_delta(tmp_path, "d1.parquet", 5.0), st)
    real = rounds.step(_delta(tmp_path, "d2.parquet", 6.0), st)
    code, out, _ = run_main(capsys, "rollback", "--state", st, "--json")
    assert code == 0 and (st / "CURRENT").read_text().strip() == "1"
    real_id = StateStore(st).manifest(2)["id"]
    _killed_step(_delta(tmp_path, "d2b.parquet", 9.0), st, point)
    assert (st / "CURRENT").read_text().strip() == "1"
    assert list(st.glob(".commit-*.json"))  # the journal of the killed commit
    # a reader before any writer: the killed step's round is no undone round
    code, out, _ = run_main(capsys, "history", "--state", st, "--json")
    rows = json.loads(out)["rounds"]
    assert all(r["objective"] == real["objective"] for r in rows if r["round"] == 2 and r["kind"] != "failed"), rows
    code, out, err = run_main(capsys, "rollback", "--to", "2", "--state", st, "--json")
    assert code == 0, out + err
    assert any("ended before its commit finished" in w and "(a rollback's branch) are back in place" in w
               for w in json.loads(out)["warnings"]), out
    assert StateStore(st).manifest(2)["id"] == real_id  # the round that was undone, not the killed step's
    code, out, _ = run_main(capsys, "show", "--state", st, "--json")
    assert json.loads(out)["objective"] == real["objective"]
    assert not list(st.glob(".commit-*.json"))
    kept = [p for p in (st / "abandoned").glob("*/gen-000002") if json.loads((p / "generation.json").read_text())[
        "id"] != real_id]
    assert len(kept) == 1  # the killed step's round, kept aside


def test_a_step_killed_before_current_is_undone_by_the_next_step_which_says_so(tmp_path, capsys):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    d = _delta(tmp_path, "d1.parquet", 5.0, base_round=0)
    _killed_step(d, st, "before_current")
    code, out, err = run_main(capsys, "step", d, "--state", st, "--json")
    assert code == 0, out + err
    rep = json.loads(out)
    assert rep["round"] == 1 and "abandoned_rounds" not in rep
    assert any("ended before its commit finished" in w and "its round 1, never made current, is kept in" in w
               for w in rep["warnings"]), rep["warnings"]
    assert not list(st.glob(".commit-*.json"))


def test_a_finished_commit_leaves_no_journal(tmp_path):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    rounds.step(_delta(tmp_path, "d1.parquet", 5.0), st)
    rounds.rollback(st)
    rounds.step(_delta(tmp_path, "d1b.parquet", 7.0), st)  # a commit that moves a branch aside
    assert not [p.name for p in st.iterdir() if p.name.startswith((".commit-", "..commit-"))]
