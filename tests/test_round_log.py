"""The round log (issue #19): an append-only Arrow IPC table in STATE/log/ that outlives pruning, written by
init/step/failed rounds/compare under the writer lock, read by ``copter history`` (all rounds, --last,
--json, --csv), reconciled with the generations after a crash, and the old generation-based history for a
state written before the log existed."""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats import round_log
from formats.io import write_delta
from formats.round_log import RoundLog
from solver import rounds
from solver.model.delta import Delta
from solver.model.settings import Settings
from tests.helpers import REPO, infeasible_delta, small_lp

runner = CliRunner()
FAIL = Settings(tol=1e-6, iteration_limit=20000)


def cli(*args):
    res = runner.invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout, res.stderr


def cost(i: int, base_round: int | None = None) -> Delta:
    return Delta.concat([Delta.vars([f"x{i % 30}"], cost=[2.0 + i])], base_round=base_round)


@pytest.fixture
def state(tmp_path):
    root = tmp_path / "st"
    rounds.init(small_lp(), root, keep=2)
    return root


def _stored_ids(root) -> set:
    return {json.loads(p.read_text())["id"] for p in root.glob("gen-*/generation.json")}


def test_the_log_outlives_pruning_and_lists_failed_rounds(state):
    reps = [rounds.step(cost(i), state) for i in range(4)]
    failed = rounds.step(infeasible_delta(), state, FAIL, force=True)
    assert not failed["accepted"] and sorted(p.name for p in state.glob("gen-*")) == ["gen-000003", "gen-000004"]
    rows = rounds.history(state)
    assert [(r["round"], r["kind"]) for r in rows] == [(0, "generation"), (1, "generation"), (2, "generation"),
                                                       (3, "generation"), (4, "generation"), (5, "failed")]
    assert [r["kept"] for r in rows] == [False, False, False, True, True, False]
    assert [r["current"] for r in rows] == [False] * 4 + [True, False]
    for row, rep in zip(rows[1:5], reps, strict=True):  # the log's numbers are the reports' numbers
        assert row["objective"] == rep["objective"] and row["iterations"] == rep["iterations"]
        assert row["seconds"] == {k: rep["seconds"][k] for k in round_log.PHASES}
        assert row["delta_sha256"] == rep["delta_sha256"] and row["warm_started"] is True
        assert (row["vars_added"], row["cons_added"], row["changed_variables"]) == (0, 0, rep["changed_variables"])
        assert not row["recovered"] and row["gap_rel"] is not None and row["lp_bound"] is not None
        # an LP round's report.json has no lp_bound/gap_rel; the log's are its dual objective and duality
        # gap (docs/usage.md "The round log"), not a MILP bound
        assert "lp_bound" not in rep and row["lp_bound"] == rep["dual_objective"]
        assert row["gap_rel"] == pytest.approx(abs(rep["objective"] - rep["dual_objective"])
                                               / (1 + abs(rep["objective"]) + abs(rep["dual_objective"])))
    last = rows[-1]
    assert last["status"] == "PRIMAL_INFEASIBLE" and last["objective"] is None and last["cons_added"] == 1
    assert last["record_id"] == failed["failure_record"].split("/")[-1] and "CURRENT stays" in last["message"]
    assert rounds.history(state, last=2) == rows[-2:]


def test_history_cli_last_json_and_csv(state):
    for i in range(3):
        rounds.step(cost(i), state)
    code, out, _ = cli("history", "--state", state, "--json", "--last", "2")
    assert code == 0 and [r["round"] for r in json.loads(out)["rounds"]] == [2, 3]
    code, out, _ = cli("history", "--state", state, "--csv")
    table = list(csv.DictReader(io.StringIO(out)))
    assert code == 0 and [int(r["round"]) for r in table] == [0, 1, 2, 3]
    assert float(table[3]["seconds_solve"]) == rounds.history(state)[3]["seconds"]["solve"]
    code, human, _ = cli("history", "--state", state)  # the table is the answer: stdout
    assert code == 0 and "OPTIMAL" in human and "gap" in human
    for bad in (("--csv",), ("--last", "0")):
        code, out, _ = cli("history", "--state", state, "--json", *bad)
        assert code == 2 and json.loads(out)["error"]["kind"] == "usage", bad


def test_history_csv_no_header_appends_one_file_round_after_round(state):
    """User trial 37: every `history --csv --last 1` repeated the header, so a cron append needed tail -n +2."""
    code, text, _ = cli("history", "--state", state, "--csv")
    assert code == 0
    for i in range(3):
        rounds.step(cost(i), state)
        code, out, _ = cli("history", "--state", state, "--csv", "--last", "1", "--no-header")
        assert code == 0 and out.count("\n") == 1 and not out.startswith("seq,")
        text += out
    table = list(csv.DictReader(io.StringIO(text)))
    assert [int(r["round"]) for r in table] == [0, 1, 2, 3]
    assert float(table[3]["objective"]) == rounds.history(state)[3]["objective"]
    for other in ((), ("--json",)):
        code, out, err = cli("history", "--state", state, "--no-header", *other)
        assert code == 2 and "--no-header applies to --csv only" in out + err


def test_a_damaged_segment_is_said_not_skipped_silently(state):
    """Hunt 37b: an emptied old segment made history drop its rounds (and the pruned ones before them) with
    warnings null."""
    for i in range(2):
        rounds.step(cost(i), state)
    seg = sorted((state / "log" / "rounds").glob("seg-*.arrow"))[0]
    seg.write_bytes(b"")
    code, out, _ = cli("history", "--state", state, "--json")
    assert code == 0
    warnings = json.loads(out)["warnings"]
    assert any(f"the round log's {seg.name} cannot be read (damaged) and was skipped" in w for w in warnings), warnings


def test_a_state_written_before_the_log_gives_the_generation_history_and_starts_the_log(state):
    for i in range(3):
        rounds.step(cost(i), state)
    rounds.step(infeasible_delta(), state, FAIL, force=True)
    shutil.rmtree(state / "log")  # as a state written by an earlier version
    rows = rounds.history(state)
    assert [(r["round"], r["kind"], r["recovered"]) for r in rows] == [
        (2, "generation", True), (3, "generation", True), (4, "failed", True)]
    assert rows[1]["current"] and rows[1]["objective"] is not None
    rounds.step(cost(9), state)  # the first round of this version starts the log with what is on disk
    logged = RoundLog(state).read().to_pylist()
    assert [(r["round"], r["recovered"]) for r in logged] == [(2, True), (3, True), (4, True), (4, False)]
    assert [r["round"] for r in rounds.history(state)] == [2, 3, 4, 4]


def test_rounds_of_an_abandoned_branch_stay_in_the_log_but_not_in_history(state):
    for i in range(3):
        rounds.step(cost(i), state)
    rounds.rollback(state, to=2)
    assert [r["round"] for r in rounds.history(state)] == [0, 1, 2, 3]  # round 3 can be rolled forward to
    new = rounds.step(cost(7), state)
    rows = rounds.history(state)
    assert [r["round"] for r in rows] == [0, 1, 2, 3] and rows[-1]["delta_sha256"] == new["delta_sha256"]
    assert [r["round"] for r in RoundLog(state).read().to_pylist()] == [0, 1, 2, 3, 3]


def test_compare_results_are_logged_with_their_round(state):
    rounds.step(cost(1), state)
    res = rounds.compare(state, ["highs"])
    row = rounds.history(state)[-1]
    assert set(row["compare"]) == {"copter", "highs"} and rounds.history(state)[0]["compare"] == {}
    assert row["compare"]["highs"]["seconds"] == res["baselines"][0]["seconds"]
    assert row["compare"]["highs"]["status"] == res["baselines"][0]["status"]
    assert row["compare"]["copter"]["seconds"] == res["copter"]["seconds"]
    code, out, _ = cli("history", "--state", state, "--csv", "--last", "1")
    assert float(next(csv.DictReader(io.StringIO(out)))["compare_highs_seconds"]) == res["baselines"][0]["seconds"]


def test_a_failed_append_only_warns_and_the_next_round_adds_the_row(state, monkeypatch):
    real = RoundLog.append

    def broken(self, rows):
        raise OSError(28, "No space left on device", str(self.folder))

    monkeypatch.setattr(RoundLog, "append", broken)
    rep = rounds.step(cost(1), state)
    assert rep["round"] == 1 and any("round log" in w for w in rep["warnings"])
    assert [(r["round"], r["recovered"]) for r in rounds.history(state)] == [(0, False), (1, True)]
    monkeypatch.setattr(RoundLog, "append", real)
    rounds.step(cost(2), state)
    logged = RoundLog(state).read().to_pylist()
    assert [(r["round"], r["recovered"]) for r in logged] == [(0, False), (1, True), (2, False)]


@pytest.mark.parametrize("point", ["log_before_fsync", "log_before_rename", "log_after_rename"])
def test_a_kill_during_the_log_write_leaves_a_readable_log_consistent_with_current(state, tmp_path, point):
    rounds.step(cost(1), state)
    before = RoundLog(state).read()
    d = tmp_path / "d.parquet"
    write_delta(cost(2, base_round=1), d)
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_FAULT_INJECT=point)
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(d), "--state", str(state)], env=env,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert (state / "CURRENT").read_text() == "2\n"  # the round was committed before its row was written
    logged = RoundLog(state).read()  # readable, no torn file
    assert logged.slice(0, before.num_rows).equals(before)
    assert logged.num_rows == before.num_rows + (point == "log_after_rename")
    assert set(logged.column("generation_id").to_pylist()) <= _stored_ids(state)  # claims nothing unstored
    rows = rounds.history(state)
    assert [(r["round"], r["current"]) for r in rows] == [(0, False), (1, False), (2, True)]
    assert rows[-1]["recovered"] == (point != "log_after_rename")
    rounds.step(cost(3), state)  # the next writer reconciles: one row per round, none lost
    assert [r["round"] for r in RoundLog(state).read().to_pylist()] == [0, 1, 2, 3]
    assert not list((state / "log" / "rounds").glob(".tmp-*"))


def test_compaction_keeps_every_row_once_whatever_files_a_crash_leaves(tmp_path, monkeypatch):
    monkeypatch.setattr(round_log, "COMPACT_EVERY", 4)
    log = RoundLog(tmp_path, "rounds")
    for i in range(10):
        log.append([{"round": i, "status": "OPTIMAL"}])
    files = sorted(p.name for p in log.folder.iterdir())
    assert [f[:-15] for f in files] == ["base-000000000008", "seg-000000000009", "seg-000000000010"]
    assert all(re.fullmatch(r"-[0-9a-f]{8}\.arrow", f[-15:]) for f in files), files  # each file's CRC-32
    assert log.read().column("round").to_pylist() == list(range(10))
    assert log.read().column("seq").to_pylist() == list(range(1, 11))
    # a crash after the new base's rename but before the old files were removed, plus a torn temp file
    shutil.copy(log.folder / files[0], log.folder / files[0].replace("-000000000008-", "-000000000004-"))
    shutil.copy(log.folder / files[1], log.folder / files[1].replace("-000000000009-", "-000000000003-"))
    (log.folder / ".tmp-seg-000000000011.arrow-1-x").write_bytes(b"ARROW1\x00torn")
    assert log.read().column("round").to_pylist() == list(range(10))
    assert log.last_row()["round"] == 9 and log.next_seq() == 11
    log.compact()
    assert [p.name[:-15] for p in log.folder.iterdir()] == ["base-000000000010"]
    assert log.read().column("round").to_pylist() == list(range(10))


def test_a_segment_emptied_by_a_power_loss_is_skipped_and_its_row_rebuilt(state):
    """Segments are not fsynced (the generations are): after a power loss the newest one may be empty.
    Readers skip it, history rebuilds the round from its report.json, the next writer appends it again."""
    rounds.step(cost(1), state)
    rep = rounds.step(cost(2), state)
    newest = max((state / "log" / "rounds").glob("seg-*.arrow"))
    newest.write_bytes(b"")
    assert RoundLog(state).read().column("round").to_pylist() == [0, 1]
    rows = rounds.history(state)
    assert [(r["round"], r["recovered"]) for r in rows] == [(0, False), (1, False), (2, True)]
    assert rows[-1]["objective"] == rep["objective"] and rows[-1]["current"]
    rounds.step(cost(3), state)
    assert [(r["round"], r["recovered"]) for r in RoundLog(state).rows()] == [(0, False), (1, False), (2, True),
                                                                              (3, False)]


def test_a_file_written_before_a_column_was_added_reads_with_nulls(tmp_path):
    """The log's schema only gains columns: a segment of an older version (here without violates_tol and
    max_violation_rel) reads with those columns null, next to rows that have them."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    log = RoundLog(tmp_path, "compare")
    old = round_log.schema("compare")
    old = pa.schema([f for f in old if f.name not in ("violates_tol", "max_violation_rel")])
    log.folder.mkdir(parents=True)
    with ipc.new_file(str(log.folder / "seg-000000000001.arrow"), old) as w:
        w.write_table(pa.Table.from_pylist([{"seq": 1, "round": 3, "method": "highs"}], schema=old))
    log.append([{"round": 4, "method": "highs", "violates_tol": True, "max_violation_rel": 2e-3}])
    rows = log.rows()
    assert [(r["round"], r["violates_tol"], r["max_violation_rel"]) for r in rows] == [(3, None, None),
                                                                                       (4, True, 2e-3)]


def test_a_stray_file_with_other_scripts_digits_is_no_log_file_and_is_left_alone(tmp_path):
    log = RoundLog(tmp_path)
    log.append([{"round": 0}])
    stray = log.folder / "seg-\uff10\uff10\uff10\uff10\uff10\uff10\uff10\uff10\uff10\uff10\uff19\uff19.arrow"  # fullwidth 000000000099
    shutil.copy(next(log.folder.glob("*.arrow")), stray)
    assert log.next_seq() == 2  # not 100: the stray name is not read as a sequence number
    assert [r["round"] for r in log.read().to_pylist()] == [0]
    log.compact()
    assert stray.exists()  # compaction removes the log's own files only


def test_a_compacted_base_is_one_record_batch(tmp_path, monkeypatch):
    """The compaction wrote the concatenated files back as they were, one record batch each, so a log of one row a
    round held one batch a row for ever: 2.5 kB a row (4x) and 0.175 s against 0.002 s to read 3,000 rows
    (helper-233, session 58). Now the base is one batch, and an old base of many batches is merged at the next
    compaction; the rows are the same."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    monkeypatch.setattr(round_log, "COMPACT_EVERY", 4)
    log = RoundLog(tmp_path)
    cols = [c for c in round_log.TABLES["rounds"] if c != "seq"]
    for i in range(11):  # two compactions (4 segments each), then 3 segments
        log.append([{"round": i, **({"status": "OPTIMAL"} if "status" in cols else {})}])
    bases = sorted(tmp_path.rglob("base-*.arrow"))
    assert len(bases) == 1, bases
    with ipc.open_file(pa.py_buffer(bases[0].read_bytes())) as f:
        assert f.num_record_batches == 1 and f.read_all().num_rows == 8
    assert log.read().column("round").to_pylist() == list(range(11))
