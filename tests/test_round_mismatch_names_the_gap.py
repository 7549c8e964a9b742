"""A delta for another round is refused (exit 3) with what is missing: after a failed round that was not
stored, every later cron step was refused with only ``--force`` offered, which drops the failed round's changes
(user trial 38). The refusal names the failed round's record, or the missing rounds, or that the state moved on;
its JSON carries ``base_round`` and ``current_round``; the state is unchanged."""

from __future__ import annotations

import json

from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import infeasible_delta, run_main, small_lp, snapshot


def _cost(tmp_path, base_round: int, name: str, cost: float = 7.0):
    p = tmp_path / f"{name}.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[cost + base_round])], base_round=base_round), p)
    return p


def test_after_a_failed_round_the_next_delta_names_its_record_and_the_way_on(capsys, tmp_path):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    write_delta(infeasible_delta(), tmp_path / "bad.parquet")
    code, _, _ = run_main(capsys, "step", tmp_path / "bad.parquet", "--state", st)
    assert code == 4  # round 1 failed, not stored
    record = next((st / "failed").glob("round-000001-*"))
    before = snapshot(st)
    code, out, err = run_main(capsys, "step", _cost(tmp_path, 1, "next"), "--state", st, "--json")
    e = json.loads(out)["error"]
    assert code == 3 and e["kind"] == "round_mismatch" and e["base_round"] == 1 and e["current_round"] == 0
    assert "round 1 failed (PRIMAL_INFEASIBLE) and was not stored" in e["message"]
    assert str(record / "report.json") in e["message"] and "--accept-failed" in e["message"]
    assert "--force applies this delta to round 0 without round 1's changes" in e["message"]
    assert snapshot(st) == before


def test_missing_rounds_without_a_record_and_an_old_delta_say_what_they_are(capsys, tmp_path):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    code, out, _ = run_main(capsys, "step", _cost(tmp_path, 3, "late"), "--state", st, "--json")
    e = json.loads(out)["error"]
    assert code == 3 and "rounds 1-3 are missing: step the deltas with copter.base_round 0-2 first" in e["message"]
    assert "without their changes" in e["message"] and "failed" not in e["message"]
    rounds.step(_cost(tmp_path, 0, "first"), st)
    rounds.step(_cost(tmp_path, 1, "second"), st)
    code, out, _ = run_main(capsys, "step", _cost(tmp_path, 0, "old", cost=9.5), "--state", st, "--json")
    e = json.loads(out)["error"]
    assert code == 3 and e["base_round"] == 0 and e["current_round"] == 2
    assert "the state has moved on since this delta was made" in e["message"]
    assert "copter diff --base-round 2" in e["message"]


def test_a_round_that_failed_then_was_stored_and_pruned_is_called_pruned(capsys, tmp_path):
    """show --round N of a round whose first attempt failed, stored on its retry and later pruned by --keep: it
    said "failed and was not stored" (user trial 38); now "was pruned", naming the failed attempt's record."""
    st = tmp_path / "st"
    rounds.init(small_lp(), st, keep=2)
    write_delta(infeasible_delta(), tmp_path / "bad.parquet")
    assert run_main(capsys, "step", tmp_path / "bad.parquet", "--state", st)[0] == 4
    for r in range(3):
        rounds.step(_cost(tmp_path, r, f"d{r}", cost=3.0), st)  # round 1 stored on the retry, then 2 and 3
    code, _, err = run_main(capsys, "show", "--round", "1", "--state", st)
    assert code == 2 and "round 1 was pruned" in err and "not stored" not in err
    assert "an earlier attempt at it failed (PRIMAL_INFEASIBLE)" in err


def test_after_a_rollback_the_refusal_points_at_the_kept_rounds_not_a_retry(capsys, tmp_path):
    """Rounds 1-3 made, then ``rollback --to 0``: a delta for round 3 was told round 1 failed (an old record) or
    was missing, whose retry would abandon the kept rounds (review 38); now it names them and the rollback back."""
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    write_delta(infeasible_delta(), tmp_path / "bad.parquet")
    assert run_main(capsys, "step", tmp_path / "bad.parquet", "--state", st)[0] == 4  # an old failed round 1
    for r in range(3):
        rounds.step(_cost(tmp_path, r, f"d{r}", cost=3.0), st)
    rounds.rollback(st, to=0)
    code, out, _ = run_main(capsys, "step", _cost(tmp_path, 3, "next"), "--state", st, "--json")
    e = json.loads(out)["error"]
    assert code == 3 and "rounds 1-3 are kept above the current round" in e["message"]
    assert "`copter rollback --to 3` makes round 3 current again;" in e["message"] and "failed" not in e["message"]
    code, out, _ = run_main(capsys, "step", _cost(tmp_path, 5, "later"), "--state", st, "--json")
    assert "rollback --to 3` makes round 3 current again, then step the deltas with copter.base_round 3-4" in json.loads(out)[
        "error"]["message"]


def test_a_damaged_current_round_is_made_again_as_the_refusal_says(capsys, tmp_path):
    """CURRENT names round 2, whose solution file lost a byte's content (same size): the step falls back to round 1
    and refuses round 3's delta. The refusal called round 2 "kept above the current round (a rollback moved back)"
    and sent the user to ``rollback --to 2``, which found round 2 already current: a loop (a user's trial,
    session 52). It now says to step round 2's delta again, and doing so works."""
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    rounds.step(_cost(tmp_path, 0, "d1"), st)
    rounds.step(_cost(tmp_path, 1, "d2"), st)
    sol = st / "gen-000002" / "solution.parquet"
    b = bytearray(sol.read_bytes())
    b[len(b) // 2] ^= 0xFF
    sol.write_bytes(bytes(b))
    from formats import checkpoint

    checkpoint._RECENT.clear()  # as a new process: this one wrote round 2 and would reuse it unread
    code, out, _ = run_main(capsys, "step", _cost(tmp_path, 2, "d3"), "--state", st, "--json")
    e = json.loads(out)["error"]
    assert code == 3 and e["base_round"] == 2 and e["current_round"] == 1
    assert "rollback" not in e["message"], e["message"]
    assert "round 2 cannot be made current" in e["message"]
    assert "step the delta with copter.base_round 1 again" in e["message"]
    # as it says: round 2's delta again, then round 3's
    assert run_main(capsys, "step", _cost(tmp_path, 1, "d2"), "--state", st)[0] == 0
    assert run_main(capsys, "step", _cost(tmp_path, 2, "d3"), "--state", st)[0] == 0
    assert (st / "CURRENT").read_text().strip() == "3"


def test_after_a_rollback_only_the_damaged_round_is_called_damaged(capsys, tmp_path):
    """Rounds 1-4, ``rollback --to 2``, then round 2's solution damaged: the refusal called rounds 2-4 "cannot be made
    current" (helper-206), though 3 and 4 are a rollback's, intact. Now round 2 alone is, 3-4 are named as the
    rollback's; and a delta for round 3 is sent to ``rollback --to 3``, which works."""
    from formats import checkpoint

    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    for r in range(4):
        rounds.step(_cost(tmp_path, r, f"d{r + 1}"), st)
    assert run_main(capsys, "rollback", "--to", "2", "--state", st)[0] == 0
    sol = st / "gen-000002" / "solution.parquet"
    b = bytearray(sol.read_bytes())
    b[len(b) // 2] ^= 0xFF
    sol.write_bytes(bytes(b))
    checkpoint._RECENT.clear()
    code, out, _ = run_main(capsys, "step", _cost(tmp_path, 2, "e3"), "--state", st, "--json")
    msg = json.loads(out)["error"]["message"]
    assert code == 3 and "round 2 cannot be made current" in msg and "rounds 2-4" not in msg, msg
    assert "round(s) 3, 4, kept above from a rollback" in msg, msg
    code, out, _ = run_main(capsys, "step", _cost(tmp_path, 3, "e4"), "--state", st, "--json")
    msg = json.loads(out)["error"]["message"]
    assert code == 3 and "`copter rollback --to 3` makes round 3 current again" in msg, msg
    assert run_main(capsys, "rollback", "--to", "3", "--state", st)[0] == 0
    assert run_main(capsys, "step", _cost(tmp_path, 3, "e4"), "--state", st)[0] == 0
