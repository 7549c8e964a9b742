"""A multi-delta ``copter step`` stopped by an error (a bad delta: exit 3) keeps the reports of the rounds it
stored before: ``--json`` prints ``{"rounds": [...], "current_round", "stopped_at", "error": {...}}``, the
shape of a batch stopped by a failed round (exit 4) plus the error, and the human output lists the stored
rounds before the error line. It printed only ``{"error": ...}`` although round 1 was stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp


@pytest.fixture
def st(tmp_path) -> Path:
    rounds.init(small_lp(), tmp_path / "st")
    return tmp_path / "st"


def _good(tmp_path: Path, base_round: int, name: str = "good") -> Path:
    p = tmp_path / f"{name}{base_round}.parquet"
    write_delta(Delta.concat([Delta.vars([f"x{base_round + 3}"], cost=[5.0 + base_round])], base_round=base_round), p)
    return p


def _nan(tmp_path: Path, base_round: int) -> Path:
    p = tmp_path / "nan.parquet"
    write_delta(Delta.concat([Delta.vars(["x1"], cost=[float("nan")])], base_round=base_round), p)
    return p


def test_json_keeps_the_stored_rounds_reports_with_the_error(capsys, tmp_path, st):
    good, bad, later = _good(tmp_path, 0), _nan(tmp_path, 1), _good(tmp_path, 2)
    code, out, err = run_main(capsys, "step", good, bad, later, "--state", st, "--json")
    assert code == 3, (out, err)
    obj = json.loads(out)
    assert set(obj) == {"rounds", "current_round", "stopped_at", "error", "state_dir"}
    assert [r["round"] for r in obj["rounds"]] == [1] and obj["rounds"][0]["delta"] == str(good)
    assert obj["rounds"][0]["current_round"] == 1  # the answer's, not stored: report.json is read long after
    stored = {k: v for k, v in obj["rounds"][0].items() if k not in ("delta", "delta_index", "current_round")}
    assert stored["status"] == "OPTIMAL" and stored == rounds.show(st, 1)  # the report stored with round 1
    assert obj["current_round"] == 1 and obj["stopped_at"] == 2
    e = obj["error"]
    assert e["code"] == 3 and e["delta"] == str(bad) and e["delta_index"] == 2 and e["stored_rounds"] == [1]
    assert "round(s) 1 stored before it" in e["message"]
    assert f"error ({e['kind']}, exit 3): {e['message']}" in err
    assert (st / "CURRENT").read_text() == "1\n" and not (st / "gen-000002").exists()


def test_the_same_shape_as_a_batch_stopped_by_a_failed_round(capsys, tmp_path, st):
    from tests.helpers import infeasible_delta

    infeasible = tmp_path / "inf.parquet"
    write_delta(Delta.concat([infeasible_delta()], base_round=1), infeasible)
    _, failed, _ = run_main(capsys, "step", _good(tmp_path, 0), infeasible, "--state", st, "--json")
    _, errored, _ = run_main(capsys, "step", _good(tmp_path, 1, "again"), _nan(tmp_path, 2), "--state", st, "--json")
    assert set(json.loads(errored)) == set(json.loads(failed)) | {"error"}


def test_a_bad_first_delta_has_no_rounds_and_the_current_round(capsys, tmp_path, st):
    code, out, _ = run_main(capsys, "step", _nan(tmp_path, 0), _good(tmp_path, 1), "--state", st, "--json")
    obj = json.loads(out)
    assert code == 3 and obj["rounds"] == [] and obj["current_round"] == 0 and obj["stopped_at"] == 1
    assert obj["error"]["stored_rounds"] == []


def test_human_output_lists_the_stored_rounds_then_the_error(capsys, tmp_path, st):
    good, bad = _good(tmp_path, 0), _nan(tmp_path, 1)
    code, out, err = run_main(capsys, "step", good, bad, "--state", st)
    assert code == 3
    assert f"delta 1: {good}" in out and "copter round 1" in out and "OPTIMAL" in out
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error (") and "exit 3" in lines[0]
    assert "round(s) 1 stored before it" in lines[0] and str(bad) in lines[0]


def test_a_single_delta_error_is_unchanged(capsys, tmp_path, st):
    code, out, _ = run_main(capsys, "step", _nan(tmp_path, 0), "--state", st, "--json")
    assert code == 3 and set(json.loads(out)) == {"error"}
