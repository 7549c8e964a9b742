"""`copter solve -o sol.parquet` whose duals file cannot be written says that sol.parquet is written.

The solution file is written first and complete; a disk that fills before `sol.duals.parquet` ended the command
with exit 7 naming only the duals file, so a pipeline saw a new sol.parquet beside a failed command (and possibly an
older sol.duals.parquet) with no word about it. The error now says so, as a failed stdout does after `-o`."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import write_problem
from tests.helpers import small_lp

ENVIRONMENT = 7


def _run(tmp_path, monkeypatch, fault: str):
    base = tmp_path / "base.parquet"
    write_problem(small_lp(), base)
    monkeypatch.setenv("COPTER_FAULT_TRACE", str(tmp_path / "trace.tsv"))
    res = CliRunner().invoke(app, ["solve", str(base), "-o", str(tmp_path / "sol.parquet"), "--json"])
    assert res.exit_code == 0, res.output
    points = [line.split("\t") for line in (tmp_path / "trace.tsv").read_text().splitlines()]
    k = next(int(n) for n, point, path in points if point == fault and path.endswith("sol.duals.parquet"))
    monkeypatch.delenv("COPTER_FAULT_TRACE")
    (tmp_path / "sol.parquet").unlink()
    (tmp_path / "sol.duals.parquet").unlink()
    monkeypatch.setenv("COPTER_FAULT_ERRNO", f"ENOSPC@{k}")
    return CliRunner().invoke(app, ["solve", str(base), "-o", str(tmp_path / "sol.parquet"), "--json"])


def test_a_failed_duals_write_says_the_solution_is_written(tmp_path, monkeypatch):
    res = _run(tmp_path, monkeypatch, "create")
    assert res.exit_code == ENVIRONMENT, res.output
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert err["file"].endswith("sol.duals.parquet") and err["reason"] == "no_space"
    assert "sol.parquet is written" in err["message"] and err["written"] == [str(tmp_path / "sol.parquet")]
    assert (tmp_path / "sol.parquet").exists() and not (tmp_path / "sol.duals.parquet").exists()
