"""``copter step D1 D2 ...`` (catching up after downtime, issue #16 item 5): each delta its own round,
stored atomically, in order; the first failure stops the batch and says which delta; and ``--wait SECONDS``
on the writers (init/step/rollback) waits for another writer's lock instead of exiting 6 at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from solver.model.errors import StateBusyError, ValidationError
from tests.helpers import hold_lock, infeasible_delta, run_main, small_lp, snapshot


@pytest.fixture
def st(tmp_path) -> Path:
    rounds.init(small_lp(), tmp_path / "st")
    return tmp_path / "st"


def deltas(tmp_path: Path, n: int, start: int = 0) -> list[Path]:
    """n cost deltas for rounds start, start + 1, ... (each names its base round)."""
    out = []
    for i in range(n):
        p = tmp_path / f"d{start + i + 1}.parquet"
        write_delta(Delta.concat([Delta.vars([f"x{i + 3}"], cost=[5.0 + i])], base_round=start + i), p)
        out.append(p)
    return out


def test_several_deltas_make_one_round_each_in_order(capsys, tmp_path, st):
    ds = deltas(tmp_path, 3)
    code, js, _ = run_main(capsys, "step", *ds, "--state", st, "--json")
    obj = json.loads(js)
    assert code == 0 and obj["current_round"] == 3 and obj["stopped_at"] is None
    assert [r["round"] for r in obj["rounds"]] == [1, 2, 3]
    assert [r["delta"] for r in obj["rounds"]] == [str(d) for d in ds]
    assert [r["delta_index"] for r in obj["rounds"]] == [1, 2, 3]
    assert [r["previous_round"] for r in obj["rounds"]] == [0, 1, 2]
    assert (st / "CURRENT").read_text() == "3\n"
    for r in (1, 2, 3):  # each its own generation
        assert (st / f"gen-{r:06d}" / "generation.json").exists()
    # the same batch again (a cron job that re-runs after a crash): no-ops, nothing changes
    before = snapshot(st)
    code, js, _ = run_main(capsys, "step", *ds, "--state", st, "--json")
    obj = json.loads(js)
    assert code == 0 and all(r["no_op"] for r in obj["rounds"]) and obj["current_round"] == 3
    assert {k: v for k, v in snapshot(st).items() if not k.startswith("log/")} == \
           {k: v for k, v in before.items() if not k.startswith("log/")}


def test_a_partly_applied_batch_catches_up(capsys, tmp_path, st):
    ds = deltas(tmp_path, 4)
    assert run_main(capsys, "step", ds[0], "--state", st, "--json")[0] == 0
    code, js, _ = run_main(capsys, "step", *ds, "--state", st, "--json")
    obj = json.loads(js)
    assert code == 0 and [r.get("no_op", False) for r in obj["rounds"]] == [True, False, False, False]
    assert obj["current_round"] == 4


def test_a_bad_delta_stops_the_batch_and_is_named(capsys, tmp_path, st):
    ds = deltas(tmp_path, 3)
    ds[1].write_bytes(b"not parquet")
    code, js, _ = run_main(capsys, "step", *ds, "--state", st, "--json")
    err = json.loads(js)["error"]
    assert code == 3 and err["delta"] == str(ds[1]) and err["delta_index"] == 2 and err["deltas"] == 3
    assert err["stored_rounds"] == [1]
    assert f"delta 2 of 3: {ds[1]}" in err["message"] and "round(s) 1 stored before it" in err["message"]
    assert (st / "CURRENT").read_text() == "1\n"  # the first round stays, the third never ran
    assert not (st / "gen-000002").exists()


def test_a_name_too_long_at_a_later_delta_keeps_the_stored_rounds_reports(capsys, tmp_path, st):
    """helper-221: a second delta whose name the file system refuses (ENAMETOOLONG, exit 2) stored the first round and
    printed only {"error": ...}: the stored round's report never reached the log, and the message did not say it."""
    ds = deltas(tmp_path, 1)
    long_name = tmp_path / ("x" * 300 + ".parquet")
    code, js, err = run_main(capsys, "step", ds[0], long_name, "--state", st, "--json")
    obj = json.loads(js)
    assert code == 2 and [r["round"] for r in obj["rounds"]] == [1] and obj["current_round"] == 1, js
    assert obj["stopped_at"] == 2 and obj["error"]["stored_rounds"] == [1]
    assert "file name too long" in obj["error"]["message"] and "round(s) 1 stored before it" in obj["error"]["message"]
    assert (st / "CURRENT").read_text() == "1\n"


def test_a_failed_round_stops_the_batch(capsys, tmp_path, st):
    ds = deltas(tmp_path, 1)
    bad = tmp_path / "bad.parquet"
    write_delta(Delta.concat([infeasible_delta()], base_round=1), bad)
    later = deltas(tmp_path, 1, start=1)
    code, js, _ = run_main(capsys, "step", ds[0], bad, later[0], "--state", st, "--json")
    obj = json.loads(js)
    assert code == 4 and obj["stopped_at"] == 2 and obj["current_round"] == 1
    assert [r["round"] for r in obj["rounds"]] == [1, 2] and obj["rounds"][1]["accepted"] is False
    assert (st / "CURRENT").read_text() == "1\n" and not (st / "gen-000002").exists()


def test_human_output_names_each_delta(capsys, tmp_path, st):
    ds = deltas(tmp_path, 2)
    code, out, err = run_main(capsys, "step", *ds, "--state", st)
    assert code == 0 and err == ""  # the reports are the answer: stdout
    assert f"delta 1: {ds[0]}" in out and f"delta 2: {ds[1]}" in out and "copter round 2" in out


def test_library_step_many_and_its_error_context(tmp_path, st):
    ds = deltas(tmp_path, 2)
    reps = rounds.step_many(ds, st)
    assert [r["round"] for r in reps] == [1, 2]
    bad = tmp_path / "bad.parquet"
    write_delta(Delta.concat([Delta.vars(["x1"], lower=[2.0], upper=[1.0])], base_round=2), bad)
    with pytest.raises(ValidationError) as ex:
        rounds.step_many([*deltas(tmp_path, 0), bad], st)
    assert ex.value.context["delta_index"] == 1 and ex.value.context["stored_rounds"] == []
    assert ex.value.to_dict()["delta"] == str(bad)


# ------------------------------------------------------------------------------------------ --wait

def test_without_wait_a_held_lock_is_exit_6_at_once(capsys, tmp_path, st):
    d = deltas(tmp_path, 1)[0]
    holder = hold_lock(st / ".lock", 30)
    try:
        code, js, _ = run_main(capsys, "step", d, "--state", st, "--json")
        assert code == 6 and "--wait" in json.loads(js)["error"]["message"]
        with pytest.raises(StateBusyError):
            rounds.rollback(st, 0)
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.parametrize("command", ["step", "rollback", "init"])
def test_wait_waits_for_a_lock_released_after_one_second(capsys, tmp_path, st, command):
    d = deltas(tmp_path, 1)[0]
    rounds.step(d, st)
    target = st
    if command == "init":
        target = tmp_path / "fresh"
        target.mkdir()
    holder = hold_lock(target / ".lock", 1.0)
    try:
        args = {"step": ["step", deltas(tmp_path, 1, start=1)[0]], "rollback": ["rollback"],
                "init": ["init", tmp_path / "base.parquet"]}[command]
        if command == "init":
            from formats.io import write_problem

            write_problem(small_lp(), tmp_path / "base.parquet")
        code, js, _ = run_main(capsys, *args, "--state", target, "--wait", "60", "--json")
        # it ran only once the holder let go (the holder printed "releasing" before releasing)
        assert holder.stdout.readline().strip() == "releasing"
        assert code == 0, js
    finally:
        holder.kill()
        holder.wait()


def test_wait_that_runs_out_is_exit_6_saying_how_long(capsys, tmp_path, st):
    d = deltas(tmp_path, 1)[0]
    holder = hold_lock(st / ".lock", 60)
    try:
        code, js, _ = run_main(capsys, "step", d, "--state", st, "--wait", "0.3", "--json")
        assert code == 6 and "waited 0.3 s" in json.loads(js)["error"]["message"]
    finally:
        holder.kill()
        holder.wait()


def test_negative_wait_is_a_usage_error(capsys, tmp_path, st):
    d = deltas(tmp_path, 1)[0]
    code, js, _ = run_main(capsys, "step", d, "--state", st, "--wait", "-1", "--json")
    assert code == 2 and json.loads(js)["error"]["kind"] == "usage"


def _slow_lock(monkeypatch, seconds: float) -> None:
    """Every acquisition of a free lock takes at least ``seconds`` (as when another writer holds it that long); a
    re-entrant one (a step inside step_many) costs nothing."""
    import time

    import filelock

    real = filelock.FileLock.acquire

    def acquire(self, *a, **kw):
        if not self.is_locked:
            time.sleep(seconds)
        return real(self, *a, **kw)

    monkeypatch.setattr(filelock.FileLock, "acquire", acquire)


def test_time_waiting_for_the_lock_is_the_wait_phase_not_load(monkeypatch, tmp_path):
    _slow_lock(monkeypatch, 0.3)
    st = tmp_path / "s"
    reps = [rounds.init(small_lp(), st)]
    reps.append(rounds.step(deltas(tmp_path, 1)[0], st))
    reps += rounds.step_many(deltas(tmp_path, 2, start=1), st)  # the batch's wait goes to its first round
    for rep in reps[:3]:
        sec = rep["seconds"]
        assert sec["wait"] >= 0.3 and sec["total"] >= sec["wait"] + sec["load"]
    assert reps[3]["seconds"]["wait"] < 0.3  # the second round of the batch did not wait again
    rows = rounds.history(st)
    assert [r["seconds"]["wait"] for r in rows] == pytest.approx([r["seconds"]["wait"] for r in reps])


def test_wait_is_the_lock_itself_not_the_work_before_it(monkeypatch, tmp_path):
    """``wait`` is the time another writer held the lock: the lock library's import (50-65 ms cold) and the
    folder's checks before the acquisition are not in it (helper-182: 10-50 ms of ``wait`` on uncontended
    rounds, 6-17% of a small round, read by an operator as lock contention)."""
    import time

    from formats.state_lock import StateLocking

    real = StateLocking._check_lock_path

    def slow_check(self):
        time.sleep(0.4)
        return real(self)

    monkeypatch.setattr(StateLocking, "_check_lock_path", slow_check)
    st = tmp_path / "s"
    reps = [rounds.init(small_lp(), st), rounds.step(deltas(tmp_path, 1)[0], st)]
    reps += rounds.step_many(deltas(tmp_path, 2, start=1), st)
    for rep in reps:
        assert rep["seconds"]["wait"] < 0.2 and rep["seconds"]["total"] >= 0.4
