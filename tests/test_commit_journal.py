"""A step killed between its generation's rename and CURRENT leaves the state as it was (helper-194).

On a rolled-back state (CURRENT 1, the undone round 2 kept), ``COPTER_FAULT_INJECT=after_rename`` (a SIGKILL just
after the new round 2 was renamed into place, the undone one moved into ``abandoned/``) left the killed step's round
where the undone one had been: history called it "undone", and ``rollback --to 2`` made that never-reported round
current. The commit now keeps a journal (``formats.checkpoint.StateStore.open_commit``); the next writer's lock undoes
the commit: the undone round comes back, the killed step's round is kept aside in ``abandoned/``."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from formats.checkpoint import StateStore
from formats.faults import reset_io_faults
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
    assert any("ended before its commit finished" in w and "its round 1, never made current, was moved into" in w
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


def _rolled_back_and_killed(tmp_path, capsys):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    rounds.step(_delta(tmp_path, "d1.parquet", 5.0), st)
    real = rounds.step(_delta(tmp_path, "d2.parquet", 6.0), st)
    rounds.step(_delta(tmp_path, "d3.parquet", 7.0), st)
    code, _, _ = run_main(capsys, "rollback", "--to", "1", "--state", st, "--json")
    assert code == 0
    _killed_step(_delta(tmp_path, "d2b.parquet", 9.0), st, "after_rename")
    return st, real


def test_readers_before_the_next_writer_say_so_and_refuse_the_killed_round(tmp_path, capsys):
    """helper-195: before any writer, show --round 2 and export --round 2 gave the never-reported round, exit 0."""
    st, real = _rolled_back_and_killed(tmp_path, capsys)
    code, out, _ = run_main(capsys, "show", "--round", "2", "--state", st, "--json")
    assert code == 3 and "round 2 is no round of this state: a command on this state ended before its commit of round 2" \
        in json.loads(out)["error"]["message"], out
    code, out, _ = run_main(capsys, "export", "--round", "2", "-o", tmp_path / "x.mps", "--state", st, "--json")
    assert code == 3 and not (tmp_path / "x.mps").exists(), out
    code, out, _ = run_main(capsys, "show", "--round", "3", "--state", st, "--json")
    assert code == 2 and "until the next command that writes to the state" in json.loads(out)["error"]["message"]
    for args in (("history",), ("show",)):
        code, out, _ = run_main(capsys, *args, "--state", st, "--json")
        assert code == 0 and any("ended before its commit of round 2 finished" in w
                                 for w in json.loads(out)["warnings"]), (args, out)
    code, out, err = run_main(capsys, "compare", "--baseline", "highs", "--state", st, "--json")  # a writer of rows
    assert code == 0, out + err
    assert any("ended before its commit finished" in w for w in json.loads(out)["warnings"]), out
    code, out, _ = run_main(capsys, "show", "--round", "2", "--state", st, "--json")
    assert code == 0 and json.loads(out)["objective"] == real["objective"]  # the undone round 2 is back


@pytest.mark.parametrize("what", ["overflow", "folder", "fifo"])
def test_a_journal_copter_did_not_write_never_ends_a_command_with_an_internal_error(tmp_path, capsys, what):
    """helper-195: {"round": 1e999}, a folder or a FIFO at .commit-000004.json made every step and rollback exit 1."""
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    rounds.step(_delta(tmp_path, "d1.parquet", 5.0), st)
    j = st / ".commit-000004.json"
    if what == "overflow":
        j.write_text('{"round": 1e999, "id": "x", "batch": ""}')
    elif what == "folder":
        j.mkdir()
    else:
        os.mkfifo(j)
    code, out, _ = run_main(capsys, "step", _delta(tmp_path, "d2.parquet", 6.0), "--state", st, "--json")
    if what == "overflow":  # garbled: not a commit of copter's, dropped
        assert code == 0 and not j.exists(), out
    else:
        err = json.loads(out)["error"]
        assert code == 3 and err["file"] == str(j) and "remove it" in err["message"], out
        assert (st / "CURRENT").read_text().strip() == "1"


def test_a_journal_of_a_finished_commit_or_of_nothing_is_dropped_without_a_warning(tmp_path, capsys):
    """helper-195: a journal naming the round CURRENT names, or a batch that does not exist, warned of an undo."""
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    rounds.step(_delta(tmp_path, "d1.parquet", 5.0), st)
    (st / ".commit-000001.json").write_text('{"round": 1, "id": "x", "batch": ""}')
    (st / ".commit-000007.json").write_text('{"round": 7, "id": "y", "batch": "20260101T000000.000000000Z-abcdef01"}')
    code, out, _ = run_main(capsys, "step", _delta(tmp_path, "d2.parquet", 6.0), "--state", st, "--json")
    assert code == 0 and not any("commit" in w for w in json.loads(out).get("warnings", [])), out
    assert not list(st.glob(".commit-*"))


def test_a_batch_a_no_op_and_a_refused_delta_say_what_the_lock_undid(tmp_path, capsys):
    """helper-196: the undo was said only by a single-delta step that made a round: a batch, a no-op re-apply and a
    refused delta (exit 3, "unchanged") said nothing."""
    st, _ = _rolled_back_and_killed(tmp_path, capsys)
    d2, d3 = tmp_path / "d2.parquet", tmp_path / "d3.parquet"
    code, out, err = run_main(capsys, "step", d2, d3, "--state", st, "--json")
    assert code == 0, out + err
    doc = json.loads(out)
    said = [w for r in doc["rounds"] for w in r.get("warnings", []) if "ended before its commit finished" in w]
    assert len(said) == 1 and "back in place" in said[0], doc  # once, in the batch's first report
    _killed_step(tmp_path / "d1.parquet", st, "after_rename")  # round 4 killed
    code, out, _ = run_main(capsys, "step", d3, "--state", st, "--json")  # produced the current round: a no-op
    doc = json.loads(out)
    assert code == 0 and doc.get("no_op") and any("ended before its commit finished" in w for w in doc["warnings"])
    _killed_step(tmp_path / "d1.parquet", st, "after_rename")
    bad = _delta(tmp_path, "old.parquet", 4.0, base_round=0)  # written for another round: refused
    code, out, _ = run_main(capsys, "step", bad, "--state", st, "--json")
    msg = json.loads(out)["error"]["message"]
    assert code == 3 and "(before that, a command on this state ended before its commit finished" in msg, msg


def test_a_reader_beside_a_live_writer_mid_commit_gives_no_warning(tmp_path, capsys):
    """helper-196: a reader that met the journal of a commit under way warned of a killed command (a false alarm for
    cron jobs that watch warnings); the journal names its writer's pid, alive here."""
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    store = StateStore(st)
    store.open_commit(1, "someid", None)  # this process: a writer mid-commit
    assert store.pending_warning() is None
    doc = json.loads((st / ".commit-000001.json").read_text())
    doc["pid"] = 2 ** 22 + 12345  # no such process
    (st / ".commit-000001.json").write_text(json.dumps(doc))
    assert "ended before its commit of round 1" in store.pending_warning()


def test_a_failed_write_leaves_no_empty_abandoned_batch(tmp_path, capsys, monkeypatch):
    """helper-196: ENOSPC at the batch's fsync or the first move left empty abandoned/ batches, which counted toward
    --keep and pruned a real one away."""
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    rounds.step(_delta(tmp_path, "d1.parquet", 5.0), st)
    rounds.rollback(st)
    before = sorted(p.relative_to(st).as_posix() for p in st.rglob("*") if p.name != ".lock")
    trace = tmp_path / "trace"
    d = _delta(tmp_path, "d1b.parquet", 7.0)
    probe = tmp_path / "copy"
    shutil.copytree(st, probe)
    monkeypatch.setenv("COPTER_FAULT_TRACE", str(trace))  # the step's write points, numbered as the faults count
    reset_io_faults()
    code, _, _ = run_main(capsys, "step", d, "--state", probe, "--json")
    monkeypatch.delenv("COPTER_FAULT_TRACE")
    reset_io_faults()
    assert code == 0
    points = [ln.split("\t") for ln in trace.read_text().splitlines()]
    batch = [int(k) for k, op, path in points if "abandoned" in path]
    assert batch, points
    for k in range(min(batch), max(batch) + 2):  # each fault in this process (the trace's numbering is a step's)
        monkeypatch.setenv("COPTER_FAULT_ERRNO", f"ENOSPC@{k}")
        reset_io_faults()
        code, out, _ = run_main(capsys, "step", d, "--state", st, "--json")
        monkeypatch.delenv("COPTER_FAULT_ERRNO")
        reset_io_faults()
        assert code == 7 and json.loads(out)["error"]["reason"] == "no_space", (k, out)
        after = sorted(q.relative_to(st).as_posix() for q in st.rglob("*") if q.name != ".lock")
        assert after == before, (k, set(after) ^ set(before))


@pytest.mark.parametrize("point", ["after_rename", "before_current"])
def test_an_init_killed_before_current_can_be_run_again(tmp_path, capsys, point):
    """helper-196: a killed init's round 0 was shown as current, a second init said "already initialised, use step",
    and step said "not initialised" after moving round 0 aside: a dead end."""
    base = tmp_path / "base.parquet"
    write_problem(small_lp(), base)
    st = tmp_path / "st"
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_FAULT_INJECT=point, COPTER_WORKER="off")
    p = subprocess.run([sys.executable, "-m", "copter_cli", "init", str(base), "--state", str(st)], env=env,
                       capture_output=True, timeout=300)
    assert p.returncode == -9 and (st / "gen-000000").is_dir() and not (st / "CURRENT").exists()
    code, out, _ = run_main(capsys, "show", "--state", st, "--json")
    assert code == 3 and "not an initialised" in json.loads(out)["error"]["message"], out
    code, out, err = run_main(capsys, "init", base, "--state", st, "--json")
    assert code == 0, out + err
    rep = json.loads(out)
    assert rep["round"] == 0 and any("its round 0, never made current, was moved into" in w for w in rep["warnings"])
    assert not list(st.glob(".commit-*"))


@pytest.mark.parametrize("point", ["after_abandon", "after_rename"])
def test_a_step_killed_while_it_replaces_a_damaged_current_round_is_undone(tmp_path, capsys, point):
    """helper-197: CURRENT names a damaged round 2 and the step builds round 2 again; a kill before its commit
    finished was taken for a finished commit (CURRENT named 2 all along): after_abandon lost the damaged round and the
    undone round 3 in abandoned/ without a word, after_rename made the never-reported round current."""
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    for i, c in enumerate((5.0, 6.0, 7.0), 1):
        rounds.step(_delta(tmp_path, f"d{i}.parquet", c), st)
    rounds.rollback(st, to=2)
    (st / "gen-000002" / "duals.parquet").unlink()  # damaged: the step falls back to round 1 and makes round 2
    ids = {r: StateStore(st).manifest(r)["id"] for r in (2, 3)}
    _killed_step(_delta(tmp_path, "d2b.parquet", 9.0), st, point)
    code, out, _ = run_main(capsys, "history", "--state", st, "--json")
    assert any("ended before its commit of round 2" in w for w in json.loads(out)["warnings"]), out
    code, out, err = run_main(capsys, "rollback", "--to", "1", "--state", st, "--json")  # a writer: it undoes
    assert code == 0, out + err
    assert any("back in place" in w for w in json.loads(out)["warnings"]), out
    # the damaged round 2 (repairable: its file can be put back) and the undone round 3 are where they were
    assert {r: StateStore(st).manifest(r)["id"] for r in (2, 3)} == ids
    assert not (st / "gen-000002" / "duals.parquet").exists() and not list(st.glob(".commit-*"))


def test_a_reused_pid_is_not_the_writer(tmp_path, capsys):
    """helper-197: a journal whose pid was reused (after a power loss) silenced the readers' warning."""
    st, _ = _rolled_back_and_killed(tmp_path, capsys)
    j = next(st.glob(".commit-*.json"))
    doc = json.loads(j.read_text())
    doc["pid"] = os.getpid()  # alive, but not the process that wrote the journal (another start time)
    j.write_text(json.dumps(doc))
    code, out, _ = run_main(capsys, "history", "--state", st, "--json")
    assert any("ended before its commit of round 2" in w for w in json.loads(out)["warnings"]), out
    code, out, _ = run_main(capsys, "show", "--round", "2", "--state", st, "--json")
    assert code == 3, out


def _damaged_current_and_killed(tmp_path):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    reps = [rounds.step(_delta(tmp_path, f"d{i}.parquet", 4.0 + i), st) for i in (1, 2, 3)]
    import shutil

    shutil.rmtree(st / "gen-000003")  # CURRENT names a missing round: readers use round 2
    _killed_step(tmp_path / "d3.parquet", st, "after_rename")  # the step makes round 3 again, killed
    return st, reps


def test_readers_never_take_an_unfinished_commits_round_for_the_current_one(tmp_path, capsys):
    """helper-198: CURRENT named the missing round 3 all along; the killed step's new round 3 was shown, exported
    and compared as the current round, and history was empty."""
    st, reps = _damaged_current_and_killed(tmp_path)
    code, out, _ = run_main(capsys, "show", "--state", st, "--json")
    doc = json.loads(out)
    assert code == 0 and doc["round"] == 2 and doc["objective"] == reps[1]["objective"], out
    assert any("round 3, whose generation is that of an unfinished commit" in w for w in doc["warnings"]), doc
    code, out, _ = run_main(capsys, "export", "-o", tmp_path / "m.mps", "--state", st, "--json")
    assert code == 0 and json.loads(out)["round"] == 2, out
    code, out, _ = run_main(capsys, "history", "--state", st, "--json")
    assert [r["round"] for r in json.loads(out)["rounds"]] == [0, 1, 2], out


def test_a_round_said_stored_after_a_failed_folder_sync_stays_stored(tmp_path, capsys):
    """helper-198: ENOSPC at the folder's fsync after CURRENT's rename said "nevertheless stored and current" but
    left the journal, and the next step undid that round (CURRENT had named its number before)."""
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    for i in (1, 2, 3):
        rounds.step(_delta(tmp_path, f"d{i}.parquet", 4.0 + i), st)
    import shutil

    shutil.rmtree(st / "gen-000003")
    probe = tmp_path / "probe"
    shutil.copytree(st, probe)
    trace = tmp_path / "trace"
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_WORKER="off", COPTER_FAULT_TRACE=str(trace))
    subprocess.run([sys.executable, "-m", "copter_cli", "step", str(tmp_path / "d3.parquet"), "--state", str(probe)],
                   env=env, capture_output=True, timeout=300, check=True)
    lines = [ln.split("\t") for ln in trace.read_text().splitlines()]
    k = max(int(i) for i, op, path in lines if op == "fsync" and path.rstrip("/") == str(probe))  # after CURRENT
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_WORKER="off", COPTER_FAULT_ERRNO=f"ENOSPC@{k}")
    p = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(tmp_path / "d3.parquet"), "--state", str(st),
                        "--json"], env=env, capture_output=True, timeout=300, text=True)
    assert p.returncode == 7 and "nevertheless" in p.stdout, (k, p.stdout)
    stored = StateStore(st).manifest(3)["id"]
    assert not list(st.glob(".commit-*"))
    code, out, err = run_main(capsys, "step", tmp_path / "d1.parquet", "--state", st, "--json")
    assert code == 0 and json.loads(out)["round"] == 4, out + err
    assert StateStore(st).manifest(3)["id"] == stored


def test_a_refused_rollback_says_what_its_lock_undid(tmp_path, capsys):
    """helper-198: rollback has no report on exit 2; what its lock had undone was said nowhere."""
    st, _ = _damaged_current_and_killed(tmp_path)
    code, out, _ = run_main(capsys, "rollback", "--to", "7", "--state", st, "--json")
    msg = json.loads(out)["error"]["message"]
    assert code == 2 and "(before that, a command on this state ended before its commit finished" in msg, msg


def test_a_step_that_fails_after_its_lock_undid_a_commit_says_so(tmp_path, capsys):
    """helper-199: ENOSPC early in a step whose lock had just undone a killed commit said "the state directory is
    unchanged": the report that held the undo's warning was never printed."""
    st, _ = _rolled_back_and_killed(tmp_path, capsys)
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_WORKER="off", COPTER_FAULT_ERRNO="ENOSPC@6")
    p = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(tmp_path / "d2.parquet"), "--state", str(st),
                        "--json"], env=env, capture_output=True, timeout=300, text=True)
    msg = json.loads(p.stdout)["error"]["message"]
    assert p.returncode == 7 and "(before that, a command on this state ended before its commit finished" in msg, msg


def test_only_copters_entries_come_back_from_the_batch(tmp_path, capsys):
    """helper-199: a user's file named gen-000009 (or failed-notes.txt) in the batch was moved into the state."""
    st, _ = _rolled_back_and_killed(tmp_path, capsys)
    batch = json.loads(next(st.glob(".commit-*.json")).read_text())["batch"]
    dest = st / "abandoned" / batch
    (dest / "gen-000009").write_text("mine\n")
    (dest / "failed-notes.txt").write_text("mine\n")
    code, out, err = run_main(capsys, "step", tmp_path / "d2.parquet", "--state", st, "--json")
    assert code == 0, out + err
    assert (dest / "gen-000009").is_file() and (dest / "failed-notes.txt").is_file()
    assert not (st / "gen-000009").exists() and not (st / "failed" / "notes.txt").exists()


def test_the_readers_warning_names_the_batch_only_while_it_holds_the_moved_rounds(tmp_path, capsys):
    """helper-199: a kill with nothing moved aside still said the rollback's rounds were in abandoned/."""
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    _killed_step(_delta(tmp_path, "d1.parquet", 5.0), st, "after_rename")
    warning = StateStore(st).pending_warning()
    assert "ended before its commit of round 1" in warning and "abandoned" not in warning
    st2, _ = _rolled_back_and_killed(tmp_path / "b", capsys) if (tmp_path / "b").mkdir() is None else (None, None)
    assert "moved aside are in " + str(st2 / "abandoned") in StateStore(st2).pending_warning()
