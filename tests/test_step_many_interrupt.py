"""An interrupt partway through ``copter step D1 D2 D3`` prints the reports of the rounds already stored with the
interrupted error, as a batch stopped by bad input does (exit 3): it used to print only the error, although the
error said round 1 was stored. The state is as the undo machinery leaves it: the stored rounds kept, the
interrupted round rolled back.

Real subprocesses (the console script's entry point and its signal handler); the signal is a real one the
process sends itself at a fixed point (``COPTER_FAULT_INJECT=POINT@N``: the N-th time the point is reached),
so nothing depends on timing: ``sigint_before_solve`` (outside any region: the handler prints and exits at
once, as a Ctrl-C while a round solves) and ``sigint_during_save`` / ``sigterm_during_save`` (inside the
save's region: the round unwinds, the command prints).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from copter_cli.progress import ERASE, SolveProgress, silence
from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import REPO, small_lp, snapshot

RUN = {"before_solve": "sigint_before_solve", "during_save": "sigint_during_save"}


def copter(tmp_path: Path, *args, fault: str | None = None) -> tuple[int, str, str]:
    """``python -m copter_cli ARGS`` (no long-running worker): exit code, stdout, stderr."""
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_WORKER_DIR=str(tmp_path / "no-worker"))
    for k in ("COPTER_FAULT_INJECT", "COPTER_FAULT_ERRNO"):
        env.pop(k, None)
    if fault:
        env["COPTER_FAULT_INJECT"] = fault
    proc = subprocess.run([sys.executable, "-m", "copter_cli", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=600)
    return proc.returncode, proc.stdout, proc.stderr


@pytest.fixture
def batch(tmp_path) -> tuple[Path, list[Path], Path]:
    """(a state at round 0, three deltas for rounds 1-3, a copy of the state stepped with the first delta
    alone: what an interrupt in round 2 must leave)."""
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    ds = []
    for i in range(3):
        p = tmp_path / f"d{i + 1}.parquet"
        write_delta(Delta.concat([Delta.vars([f"x{i + 3}"], cost=[5.0 + i])], base_round=i), p)
        ds.append(p)
    ref = tmp_path / "ref"
    shutil.copytree(st, ref, symlinks=True)
    rounds.step(ds[0], ref)
    return st, ds, ref


def _files(root: Path) -> set[str]:
    """The state's file names (the round log's without the CRC-32 of their bytes, which differs between runs)."""
    return {re.sub(r"^(log/.*-[0-9]{12})-[0-9a-f]{8}(\.arrow)$", r"\1\2", k) for k in snapshot(root) if k != ".lock"}


def _assert_round_1_kept_and_round_2_rolled_back(st: Path, ref: Path) -> None:
    assert (st / "CURRENT").read_text() == "1\n"
    assert _files(st) == _files(ref)  # no generation 2, no temporary folder or file left


@pytest.mark.parametrize("point", ["before_solve", "during_save"])
def test_json_of_an_interrupt_in_round_2_carries_round_1s_report(tmp_path, batch, point):
    st, ds, ref = batch
    code, out, err = copter(tmp_path, "step", *ds, "--state", st, "--json", fault=f"{RUN[point]}@2")
    assert code == 130, (code, out, err)
    assert "Traceback" not in err
    obj = json.loads(out)  # one JSON document: the stored round's report and the error
    assert [r["round"] for r in obj["rounds"]] == [1] and obj["rounds"][0]["delta"] == str(ds[0])
    assert obj["current_round"] == 1 and obj["stopped_at"] == 2
    e = obj["error"]
    assert e["code"] == 130 and e["kind"] == "interrupted"
    assert "round 1 is stored and current" in e["message"] and f"delta 2 of 3: {ds[1]}" in e["message"]
    assert e["delta_index"] == 2 and e["deltas"] == 3 and e["stored_rounds"] == [1] and e["delta"] == str(ds[1])
    stored = json.loads((st / "gen-000001" / "report.json").read_text())
    assert obj["rounds"][0]["current_round"] == 1  # the answer names it; report.json does not
    assert {k: v for k, v in obj["rounds"][0].items() if k not in ("delta", "delta_index", "current_round")} == stored
    assert err.rstrip().splitlines()[-1].startswith("error (interrupted, exit 130): interrupted; round 1 is stored")
    _assert_round_1_kept_and_round_2_rolled_back(st, ref)
    code, out, _ = copter(tmp_path, "step", *ds, "--state", st, "--json")  # the same batch again: it goes on
    obj = json.loads(out)
    assert code == 0 and [r.get("no_op", False) for r in obj["rounds"]] == [True, False, False]
    assert obj["current_round"] == 3


def test_human_output_of_an_interrupt_in_round_2_prints_round_1s_report_first(tmp_path, batch):
    st, ds, ref = batch
    code, out, err = copter(tmp_path, "step", *ds, "--state", st, fault="sigint_before_solve@2")
    assert code == 130, (code, out, err)
    assert "Traceback" not in err
    assert f"delta 1: {ds[0]}" in out and "copter round 1" in out and "OPTIMAL" in out
    assert "copter round 2" not in out and "delta 2:" not in out
    assert err.count("error (interrupted, exit 130)") == 1
    assert "round 1 is stored and current [delta 2 of 3" in err
    _assert_round_1_kept_and_round_2_rolled_back(st, ref)


def test_sigterm_while_round_3_saves_reports_rounds_1_and_2(tmp_path, batch):
    st, ds, _ = batch
    code, out, err = copter(tmp_path, "step", *ds, "--state", st, "--json", fault="sigterm_during_save@3")
    assert code == 143, (code, out, err)
    obj = json.loads(out)
    assert [r["round"] for r in obj["rounds"]] == [1, 2] and obj["current_round"] == 2 and obj["stopped_at"] == 3
    assert obj["error"]["code"] == 143 and "interrupted by SIGTERM; round 2 is stored" in obj["error"]["message"]
    assert (st / "CURRENT").read_text() == "2\n" and not (st / "gen-000003").exists()


def test_an_interrupt_in_round_1_still_prints_the_plain_error(tmp_path, batch):
    """Nothing stored yet: the interrupted error alone, as before, and the state unchanged."""
    st, ds, _ = batch
    before = snapshot(st)
    code, out, err = copter(tmp_path, "step", *ds, "--state", st, "--json", fault="sigint_before_solve@1")
    assert code == 130 and json.loads(out) == {"error": {"code": 130, "kind": "interrupted",
                                                         "message": "interrupted; the state is unchanged"}}
    assert snapshot(st) == before


class _Terminal:
    """A stream that says it is a terminal and keeps what was written."""

    def __init__(self):
        self.text = ""

    def write(self, s: str) -> int:
        self.text += s
        return len(s)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return True


def test_silence_erases_the_live_line_and_stops_its_redraws():
    """The reports printed on an interrupt are not interleaved with (or printed after) a live progress line."""
    info = {"iteration": 5, "primal_objective": 1.0, "primal_residual_rel": 1e-3, "dual_residual_rel": 1e-3,
            "gap_rel": 1e-3}
    term = _Terminal()
    with SolveProgress(60.0, stream=term, delay=0.0) as p:
        p(info)
        assert term.text.startswith(ERASE + "solving")
        silence()
        assert term.text.endswith(ERASE)
        drawn = len(term.text)
        p(info)
        p._draw(p._t0 + 10.0)
        assert len(term.text) == drawn  # no redraw after it


@pytest.mark.parametrize("sig,code", [("sigint", 130), ("sigterm", 143)])
def test_a_signal_while_current_moves_stops_the_batch_with_that_rounds_report(tmp_path, batch, sig, code):
    """A signal held back while round 2's CURRENT moves is delivered once round 2 is stored: the batch stops there
    (exit 130 / 143) and its answer carries round 2's report. helper-159: a SIGINT there was dropped (the batch went
    on to round 3 and exited 0), and a SIGTERM's answer lacked round 2's report though CURRENT named it."""
    st, ds, _ = batch
    out_code, out, err = copter(tmp_path, "step", *ds, "--state", st, "--json", fault=f"{sig}_while_current_moves@2")
    assert out_code == code, (out_code, out, err)
    obj = json.loads(out)
    assert [r["round"] for r in obj["rounds"]] == [1, 2] and obj["current_round"] == 2 and obj["stopped_at"] == 3
    assert [r["delta_index"] for r in obj["rounds"]] == [1, 2] and obj["rounds"][1]["delta"] == str(ds[1])
    assert "round 2 is stored and current [delta 3 of 3" in obj["error"]["message"]
    assert "round(s) 1, 2 stored before it" in obj["error"]["message"]
    assert (st / "CURRENT").read_text() == "2\n" and not (st / "gen-000003").exists()


def test_a_sigint_while_a_single_steps_current_moves_ends_it_saying_the_round_is_stored(tmp_path, batch):
    """... and prints the stored round's report with it, as a batch does for its stored rounds (helper-189 #2: exit
    130 with an empty stdout, so a script had no objective for the round it stored)."""
    st, ds, _ = batch
    code, out, err = copter(tmp_path, "step", ds[0], "--state", st, fault="sigint_while_current_moves@1")
    assert code == 130, (code, out, err)
    assert "round 1 is stored and current" in err
    assert err.strip().splitlines()[-1].startswith("error (interrupted, exit 130): ")  # its line last
    assert "round 1" in out and "OPTIMAL" in out, out  # the report's table
    assert (st / "CURRENT").read_text() == "1\n"


@pytest.mark.parametrize("sig, code", [("sigint", 130), ("sigterm", 143)])
def test_a_single_step_interrupted_once_stored_answers_its_report_with_the_error_in_json(tmp_path, batch, sig, code):
    st, ds, ref = batch
    out_code, out, err = copter(tmp_path, "step", ds[0], "--state", st, "--json", fault=f"{sig}_while_current_moves@1")
    assert out_code == code, (out_code, out, err)
    obj = json.loads(out)  # one object: the round's report, as without the interrupt, plus the error
    assert obj["round"] == 1 and obj["status"] == "OPTIMAL" and obj["delta"] == str(ds[0])
    assert obj["error"] == {"code": code, "kind": "interrupted", "message": obj["error"]["message"]}
    assert "round 1 is stored and current" in obj["error"]["message"]
    assert obj["objective"] == json.loads((ref / "gen-000001" / "report.json").read_text())["objective"]
    assert (st / "CURRENT").read_text() == "1\n"
