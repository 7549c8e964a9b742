"""A damaged current round after a rollback (docs/statuses-and-exit-codes.md "A damaged current round"): the fall-back is the newest complete
round BEFORE the one CURRENT names, never a round the rollback undid (helper-158: a byte flipped in round 0's
state after ``rollback --to 0`` made ``step`` build round 3 on round 2, quietly undoing the rollback). Only when no
round before it is complete does a command use a later one, and its warning says which rollback that undoes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from formats.checkpoint import StateStore
from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from solver.model.settings import Settings
from tests.helpers import run_main, small_lp


def _state(tmp_path: Path, n_steps: int) -> Path:
    st = tmp_path / "st"
    rounds.init(small_lp(), st, Settings())
    for i in range(n_steps):
        d = tmp_path / f"d{i + 1}.parquet"
        write_delta(Delta.concat([Delta.vars(["x1"], cost=[1.0 + i])], base_round=i), d)
        rounds.step(d, st)
    return st


def _damage(st: Path, r: int) -> None:
    """Round r's solution.parquet replaced by one a byte longer (the sizes differ: damage every command sees)."""
    sol = st / f"gen-{r:06d}" / "solution.parquet"
    data = sol.read_bytes()
    sol.unlink()  # a hard link shared with another round: break it first
    sol.write_bytes(data + b"\0")
    assert StateStore(st).damage(r)


def _shown_after(tmp_path: Path, capsys, steps: int, to: int) -> tuple[Path, dict, str]:
    """A state of ``steps`` rounds after init, rolled back to round ``to``, whose round ``to`` is then damaged:
    the state, ``show --json``'s answer and its stderr."""
    st = _state(tmp_path, steps)
    rounds.rollback(st, to=to)
    _damage(st, to)
    code, out, err = run_main(capsys, "show", "--state", st, "--json")
    assert code == 0, err
    return st, json.loads(out), err


def test_the_fallback_is_a_round_before_the_rolled_back_one(tmp_path, capsys):
    st, res, _ = _shown_after(tmp_path, capsys, 3, 2)
    assert res["round"] == 1  # not 3, the round the rollback undid
    assert "CURRENT names round 2" in res["warnings"][0]
    assert "using the newest complete generation, round 1" in res["warnings"][0]
    # a step builds on round 1 (a delta for round 1), and round 3 is not brought back
    d = tmp_path / "next.parquet"
    write_delta(Delta.concat([Delta.vars(["x2"], cost=[2.0])], base_round=1), d)
    code, out, err = run_main(capsys, "step", d, "--state", st, "--json")
    assert code == 0, err
    assert json.loads(out)["round"] == 2
    assert (st / "CURRENT").read_text() == "2\n" and not StateStore(st).damage(2)


def test_with_no_complete_round_before_it_a_later_one_is_used_and_the_warning_says_so(tmp_path, capsys):
    _, res, err = _shown_after(tmp_path, capsys, 2, 0)
    assert res["round"] == 2
    assert "no round before it is complete" in res["warnings"][0]
    assert "which a rollback to round 0 had undone" in res["warnings"][0]
    assert "which a rollback to round 0 had undone" in err


def test_a_missing_current_still_uses_the_newest_complete_generation(tmp_path):
    st = _state(tmp_path, 2)
    rounds.rollback(st, to=0)
    (st / "CURRENT").unlink()
    r, why = StateStore(st).current()
    assert r == 2 and "CURRENT is missing; using the newest complete generation, round 2" == why
    shutil.rmtree(st / "gen-000002")
    assert StateStore(st).current()[0] == 1
