"""A change that comes back (a capacity toggled day/night) is applied again, not skipped as a re-applied
delta: ``copter diff`` writes the same bytes for the same change, so a delta without ``copter.base_round``
that produced an older kept round is a new round (with a warning), while a retry of the delta that produced
the current round, a batch run again, and a delta that names its base round stay no-ops (bad-input hunter,
session 13: the third toggle was dropped and the stored model kept the old bound)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formats.checkpoint import StateStore
from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp


@pytest.fixture
def st(tmp_path) -> Path:
    rounds.init(small_lp(), tmp_path / "st")
    return tmp_path / "st"


def toggle(tmp_path: Path, cap: float, name: str, base_round: int | None = None) -> Path:
    """A delta setting row cap0's upper bound to ``cap`` (no base round unless given)."""
    p = tmp_path / name
    meta = {} if base_round is None else {"base_round": base_round}
    write_delta(Delta.concat([Delta.cons(["cap0"], upper=[cap])], **meta), p)
    return p


def cap0_upper(st: Path) -> float:
    """Row cap0's upper bound in the current round's stored problem."""
    prob = StateStore(st).load(with_state=False).problem
    return float(prob.row_upper[list(prob.row_names).index("cap0")])


def step_json(capsys, *args) -> tuple[int, dict]:
    code, out, _ = run_main(capsys, "step", *args, "--json")
    return code, json.loads(out)


def test_a_toggle_back_without_base_round_is_applied_with_a_warning(capsys, tmp_path, st):
    up = toggle(tmp_path, 0.5, "up.parquet")
    down = toggle(tmp_path, 0.25, "down.parquet")
    assert step_json(capsys, up, "--state", st)[1]["round"] == 1
    assert step_json(capsys, down, "--state", st)[1]["round"] == 2
    again = tmp_path / "up-again.parquet"
    again.write_bytes(up.read_bytes())  # what `copter diff` writes for the same change: the same bytes
    code, rep = step_json(capsys, again, "--state", st)
    assert code == 0 and not rep.get("no_op") and rep["round"] == 3
    assert cap0_upper(st) == 0.5  # the stored model has the bound the user set, not round 2's
    assert any("already produced round 1" in w and "applied again" in w for w in rep["warnings"])


def test_a_retry_of_the_current_rounds_delta_is_still_a_no_op(capsys, tmp_path, st):
    up = toggle(tmp_path, 0.5, "up.parquet")
    step_json(capsys, up, "--state", st)
    code, rep = step_json(capsys, up, "--state", st)
    assert code == 0 and rep["no_op"] is True and rep["round"] == 1 and rep["current_round"] == 1


def test_a_batch_without_base_rounds_run_again_is_all_no_ops(capsys, tmp_path, st):
    ds = [toggle(tmp_path, 0.5, "a.parquet"), toggle(tmp_path, 0.25, "b.parquet"), toggle(tmp_path, 0.75, "c.parquet")]
    code, obj = step_json(capsys, *ds, "--state", st)
    assert code == 0 and obj["current_round"] == 3
    code, obj = step_json(capsys, *ds, "--state", st)
    assert code == 0 and all(r["no_op"] for r in obj["rounds"]) and obj["current_round"] == 3
    assert cap0_upper(st) == 0.75


def test_a_partly_applied_batch_without_base_rounds_catches_up(capsys, tmp_path, st):
    ds = [toggle(tmp_path, 0.5, "a.parquet"), toggle(tmp_path, 0.25, "b.parquet"), toggle(tmp_path, 0.75, "c.parquet")]
    step_json(capsys, ds[0], "--state", st)
    step_json(capsys, ds[1], "--state", st)
    code, obj = step_json(capsys, *ds, "--state", st)
    assert code == 0 and [r.get("no_op", False) for r in obj["rounds"]] == [True, True, False]
    assert obj["current_round"] == 3 and cap0_upper(st) == 0.75


def test_a_batch_that_toggles_back_applies_every_delta(capsys, tmp_path, st):
    up, down = toggle(tmp_path, 0.5, "up.parquet"), toggle(tmp_path, 0.25, "down.parquet")
    code, obj = step_json(capsys, up, down, up, "--state", st)
    assert code == 0 and [r["round"] for r in obj["rounds"]] == [1, 2, 3]
    assert not any(r.get("no_op") for r in obj["rounds"]) and cap0_upper(st) == 0.5


def test_a_delta_naming_its_base_round_stays_a_no_op_after_later_rounds(capsys, tmp_path, st):
    first = toggle(tmp_path, 0.5, "d1.parquet", base_round=0)
    step_json(capsys, first, "--state", st)
    step_json(capsys, toggle(tmp_path, 0.25, "d2.parquet", base_round=1), "--state", st)
    code, rep = step_json(capsys, first, "--state", st)
    assert code == 0 and rep["no_op"] is True and rep["round"] == 1 and rep["current_round"] == 2
    assert cap0_upper(st) == 0.25


def test_a_batch_without_base_rounds_longer_than_keep_run_again_is_all_no_ops(capsys, tmp_path):
    """Rounds pruned since (``--keep 1``): the round log shows the batch made them in order, so each delta is a
    no-op; the run made three new rounds before (helper-233, session 58: a six-delta batch at the default keep 5).
    The same deltas in another order are no rerun and apply."""
    rounds.init(small_lp(), tmp_path / "st", keep=1)
    st = tmp_path / "st"
    ds = [toggle(tmp_path, 0.5, "a.parquet"), toggle(tmp_path, 0.25, "b.parquet"), toggle(tmp_path, 0.75, "c.parquet")]
    code, obj = step_json(capsys, *ds, "--state", st)
    assert code == 0 and obj["current_round"] == 3 and sorted(p.name for p in st.glob("gen-*")) == ["gen-000003"]
    code, obj = step_json(capsys, *ds, "--state", st)
    assert code == 0 and [(r["round"], r["no_op"]) for r in obj["rounds"]] == [(1, True), (2, True), (3, True)]
    assert obj["current_round"] == 3 and "no longer kept" in obj["rounds"][0]["message"]
    code, obj = step_json(capsys, ds[1], ds[0], ds[2], "--state", st)
    assert code == 0 and [r["round"] for r in obj["rounds"]] == [4, 5, 6] and cap0_upper(st) == 0.75
