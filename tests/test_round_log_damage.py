"""The round log's files carry the CRC-32 of their bytes in their names, and damage found in them is said, never read
as numbers nor dropped without a word (hunt 50, helper-194):

- one flipped bit in a segment's objective made ``history`` show another objective, exit 0, no warning;
- a compaction rebuilt the base without a damaged segment's rows and deleted the segment: the warning went with it;
- a damaged base ended ``history`` with "internal error" (exit 1), and every later ``step`` stored its round, moved
  CURRENT, and then exited 1 too.
"""

from __future__ import annotations

import json
import struct

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats import round_log
from formats.checkpoint import StateStore, forget_recent
from formats.round_log import DAMAGED_PREFIX, FILE_RE, RoundLog
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import small_lp

runner = CliRunner()


def cli(*args):
    res = runner.invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout, res.stderr


def cost(i: int) -> Delta:
    return Delta.concat([Delta.vars([f"x{i % 30}"], cost=[2.0 + i])])


@pytest.fixture
def state(tmp_path):
    root = tmp_path / "st"
    rounds.init(small_lp(), root, keep=2)
    return root


def _folder(state):
    return state / "log" / "rounds"


def _file_of_seq(state, seq: int):
    return next(p for p in _folder(state).iterdir() if (m := FILE_RE.match(p.name)) and int(m.group(2)) == seq)


def _history(state):
    code, out, err = cli("history", "--state", state, "--json")
    assert code == 0, out + err
    doc = json.loads(out)
    return doc["rounds"], doc.get("warnings", [])


def test_a_flipped_bit_in_a_segments_number_is_damage_not_a_value(state):
    reps = [rounds.step(cost(i), state) for i in range(4)]  # keep 2: rounds 0-2 live in the log alone
    seg = _file_of_seq(state, 3)  # round 2's row
    data = bytearray(seg.read_bytes())
    at = data.find(struct.pack("<d", reps[1]["objective"]))
    assert at >= 0
    data[at + 6] ^= 1  # the same size: only the bytes' checksum tells
    seg.write_bytes(bytes(data))
    rows, warnings = _history(state)
    assert all(r["objective"] != struct.unpack("<d", bytes(data[at:at + 8]))[0] for r in rows)
    assert any(f"the round log's {seg.name} cannot be read (damaged) and was skipped" in w for w in warnings), warnings
    # without the checksum in its name (a file of an older version) the same bytes read as written: unchecked
    seg.rename(seg.with_name(seg.name[:-15] + ".arrow"))
    rows, warnings = _history(state)
    assert not warnings and any(r["round"] == 2 and r["objective"] != reps[1]["objective"] for r in rows)


def test_a_compaction_keeps_a_damaged_segment_aside_and_history_goes_on_saying_so(state, monkeypatch):
    monkeypatch.setattr(round_log, "COMPACT_EVERY", 4)
    rounds.step(cost(0), state)
    rounds.step(cost(1), state)
    seg = _file_of_seq(state, 2)  # round 1's row; its generation is pruned by keep 2 below
    seg.write_bytes(b"")  # emptied, e.g. by a power loss (segments are not fsynced)
    for i in range(2, 5):
        rounds.step(cost(i), state)  # the 4th segment compacts
    names = sorted(p.name for p in _folder(state).iterdir())
    assert f"{DAMAGED_PREFIX}{seg.name}" in names and seg.name not in names
    assert any(n.startswith("base-") for n in names)
    assert (_folder(state) / f"{DAMAGED_PREFIX}{seg.name}").read_bytes() == b""  # kept as it was
    rows, warnings = _history(state)
    assert any(f"{DAMAGED_PREFIX}{seg.name} (damaged, kept aside by a compaction)" in w for w in warnings), warnings
    rounds.step(cost(5), state)  # and after more rounds too
    assert any(DAMAGED_PREFIX in w for w in _history(state)[1])
    # the folder still holds only copter's files: a damaged log is no stranger's data (init's emptiness check)
    assert StateStore(state).foreign_entries() == []


def test_a_damaged_base_is_said_and_a_step_on_it_exits_0_with_its_round_stored(state, monkeypatch):
    monkeypatch.setattr(round_log, "COMPACT_EVERY", 3)
    for i in range(4):
        rounds.step(cost(i), state)
    base = next(p for p in _folder(state).iterdir() if p.name.startswith("base-"))
    base.write_bytes(base.read_bytes()[:200])  # truncated
    rows, warnings = _history(state)
    assert any(f"the round log's {base.name} cannot be read (damaged)" in w for w in warnings), warnings
    assert [r["round"] for r in rows if r["current"]] == [4]
    delta = state.parent / "d.parquet"
    from formats.io import write_delta

    write_delta(cost(9), delta)
    code, out, err = cli("step", delta, "--state", state, "--json")
    assert code == 0, out + err
    assert json.loads(out)["round"] == 5 and (state / "CURRENT").read_text().strip().endswith("5")
    rounds.step(cost(10), state)
    rounds.step(cost(11), state)  # compacts: the damaged base is kept aside, the new base holds what was readable
    names = {p.name for p in _folder(state).iterdir()}
    assert f"{DAMAGED_PREFIX}{base.name}" in names
    rows, warnings = _history(state)
    assert [r["round"] for r in rows if r["current"]] == [7]
    assert any(f"{DAMAGED_PREFIX}{base.name}" in w for w in warnings), warnings


def test_a_damaged_compare_table_file_is_said(state):
    rounds.step(cost(0), state)
    log = RoundLog(state, "compare")
    log.append([{"round": 1, "method": "highs", "objective": 1.0}])
    f = next(log.folder.iterdir())
    data = bytearray(f.read_bytes())
    data[len(data) // 2] ^= 0x10
    f.write_bytes(bytes(data))
    _, warnings = _history(state)
    assert any(f"the round log's {f.name} cannot be read (damaged) and was skipped: the compare results" in w
               for w in warnings), warnings


def test_show_checks_the_content_of_the_report_it_prints(state):
    """helper-194: `show` checked sizes only, so a same-size edit of report.json's objective was printed, exit 0."""
    reps = [rounds.step(cost(i), state) for i in range(2)]
    path = state / "gen-000002" / "report.json"
    text = path.read_text()
    good = json.dumps(reps[1]["objective"])
    assert good in text
    bad = good[:-1] + ("1" if good[-1] != "1" else "2")  # the same length
    path.write_text(text.replace(good, bad))
    forget_recent()  # as a new process: the rounds this one stored are read again
    code, out, err = cli("show", "--state", state, "--json")
    assert code == 0, out + err
    doc = json.loads(out)
    assert doc["round"] == 1 and doc["objective"] == reps[0]["objective"]  # the newest complete round, said
    assert any("CURRENT names round 2" in w and "report.json has CRC-32" in w for w in doc["warnings"]), doc
    code, out, err = cli("show", "--round", 2, "--state", state, "--json")
    assert code == 3 and "round 2 is damaged: report.json has CRC-32" in out + err
    rows, _ = _history(state)
    assert [r["objective"] for r in rows if r["round"] == 2] == [reps[1]["objective"]]  # the log's, as written


def test_a_lost_row_whose_report_is_damaged_keeps_its_branch_and_is_said(state):
    """helper-195: a lost log row (a kill between commit and append) whose generation's report.json is damaged gave no
    row, so the lineage broke there and every earlier round left history, exit 0, no warning."""
    reps = [rounds.step(cost(i), state) for i in range(4)]  # keep 2: rounds 3 and 4 kept
    path = state / "gen-000003" / "report.json"
    good = json.dumps(reps[2]["objective"])
    path.write_text(path.read_text().replace(good, good[:-1] + ("1" if good[-1] != "1" else "2")))
    _file_of_seq(state, 4).unlink()  # round 3's row
    forget_recent()
    rows, warnings = _history(state)
    assert [r["round"] for r in rows] == [0, 1, 2, 3, 4]
    r3 = rows[3]
    assert r3["objective"] is None and r3["recovered"] and "report.json is damaged" in r3["message"]
    assert any("round 3's report.json has CRC-32" in w and "shows no numbers" in w for w in warnings), warnings


def test_a_bad_copy_beside_a_good_segment_neither_hides_nor_deletes_it(state, monkeypatch):
    """helper-195: a copy of a segment with a wrong checksum in its name sorted first; the good file was ignored, and
    the compaction deleted it, keeping only the bad one aside: rounds 0-3 left history for good."""
    monkeypatch.setattr(round_log, "COMPACT_EVERY", 6)
    for i in range(3):
        rounds.step(cost(i), state)
    good = _file_of_seq(state, 2)
    bad = good.with_name(good.name[:16] + "-00000000.arrow")
    bad.write_bytes(good.read_bytes())
    rows, warnings = _history(state)
    assert [r["round"] for r in rows] == [0, 1, 2, 3] and not warnings
    for i in range(3, 6):
        rounds.step(cost(i), state)  # compacts
    names = {p.name for p in _folder(state).iterdir()}
    assert f"{DAMAGED_PREFIX}{bad.name}" in names and good.name not in names
    rows, _ = _history(state)
    assert [r["round"] for r in rows] == list(range(7))


def test_an_uppercase_checksum_is_checked_like_a_lowercase_one(state):
    """helper-195: a name with upper-case hex matched no pattern: its rows left history without a word."""
    for i in range(3):
        rounds.step(cost(i), state)
    seg = _file_of_seq(state, 1)
    seg.rename(seg.with_name(seg.name[:17] + seg.name[17:25].upper() + ".arrow"))
    rows, warnings = _history(state)
    assert [r["round"] for r in rows] == [0, 1, 2, 3] and not warnings
    up = _file_of_seq(state, 1)
    up.write_bytes(up.read_bytes()[:-3] + b"xyz")
    rows, warnings = _history(state)
    assert any(f"the round log's {up.name} cannot be read (damaged)" in w for w in warnings), warnings
