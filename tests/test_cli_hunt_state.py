"""Defects a fresh-install user and a bad-input hunter found in the CLI and the round library: a failed
init, NaN in history, the state format version, CURRENT parsing, --out inside the state, option checks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formats.io import write_problem
from solver import rounds
from tests.helpers import lp, run_main, small_lp


def _infeasible_base(tmp_path: Path) -> Path:
    """x0 in [0, 1] and a row x0 >= 5: infeasible (exit 4)."""
    path = tmp_path / "bad.parquet"
    write_problem(lp([1.0], [[1.0]], [5.0], [float("inf")], [0.0], [1.0]), path)
    return path


@pytest.fixture
def st(tmp_path) -> Path:
    write_problem(small_lp(), tmp_path / "base.parquet")
    rounds.init(tmp_path / "base.parquet", tmp_path / "st")
    return tmp_path / "st"


# ------------------------------------------------------------------------------ item 1: failed init


def test_failed_init_initialises_nothing_and_can_run_again(tmp_path, capsys):
    base, state = _infeasible_base(tmp_path), tmp_path / "s"
    code, out, _ = run_main(capsys, "init", base, "--state", state, "--json")
    assert code == 4
    rep = json.loads(out)
    assert rep["accepted"] is False and rep["current_round"] is None
    assert rep["failure_record"].startswith("failed/round-000000-")
    assert (state / rep["failure_record"] / "report.json").is_file()
    assert not (state / "CURRENT").exists() and not (state / "config.json").exists()
    assert not list(state.glob("gen-*"))
    code, _, err = run_main(capsys, "show", "--state", state)
    assert code == 3 and "not an initialised" in err
    # a re-run is not refused as "already initialised": the fixed base initialises the state
    write_problem(small_lp(), tmp_path / "good.parquet")
    code, out, err = run_main(capsys, "init", tmp_path / "good.parquet", "--state", state, "--json")
    assert code == 0, err
    assert json.loads(out)["accepted"] is True and (state / "CURRENT").read_text().strip() == "0"


def test_failed_init_with_accept_failed_is_stored(tmp_path, capsys):
    state = tmp_path / "s"
    code, out, _ = run_main(capsys, "init", _infeasible_base(tmp_path), "--state", state, "--accept-failed",
                            "--json")
    assert code == 4
    rep = json.loads(out)
    assert rep["accepted"] is True and any("--accept-failed" in w for w in rep["warnings"])
    assert (state / "CURRENT").read_text().strip() == "0"


# ------------------------------------------------------------------------------ item 3: NaN in history


def test_history_not_applicable_compare_row_has_no_nan(st, capsys, monkeypatch):
    rounds.compare(st, ["pop"], pop_workers=0)  # small_lp's names carry no client: POP is NOT_APPLICABLE
    row = rounds.history(st)[-1]
    assert row["compare"]["pop-4"]["status"] == "NOT_APPLICABLE"
    assert row["compare"]["pop-4"]["time_ratio"] is None
    code, out, _ = run_main(capsys, "history", "--state", st, "--csv")
    assert code == 0 and "nan" not in out.lower()
    from copter_cli import cmd_state

    monkeypatch.setattr(cmd_state, "_wide", lambda: None)
    from io import StringIO

    from rich.console import Console

    buf = StringIO()
    cmd_state._print_history(rounds.history(st), out=Console(file=buf, width=300), terminal=False)
    assert "nan" not in buf.getvalue() and "pop-4 -" in buf.getvalue()
