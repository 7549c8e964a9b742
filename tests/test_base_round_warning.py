"""A delta without ``copter.base_round`` applies to whatever round is current; the round says so (issue #16):
a ``warnings`` entry in the report (JSON) and a stderr line."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import write_problem
from formats.parquet import write_delta
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import small_lp

runner = CliRunner()


def _bump(base_round):
    return Delta.concat([Delta.vars(["x0"], cost=[2.0])], base_round=base_round)


def _no_base_round_warnings(report):
    return [w for w in report.get("warnings") or [] if "no copter.base_round" in w]


def test_library_step_warns_only_without_base_round(tmp_path):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", state_dir=st)
    rep = rounds.step(_bump(0), state_dir=st)
    assert rep["round"] == 1 and not _no_base_round_warnings(rep)
    rep = rounds.step(Delta.concat([Delta.vars(["x1"], cost=[3.0])]), state_dir=st)
    assert rep["round"] == 2
    (w,) = _no_base_round_warnings(rep)
    assert "current round 1" in w
    assert _no_base_round_warnings(rounds.show(st))  # kept in the stored report.json


def test_cli_step_json_has_the_warning_and_stderr_has_a_line(tmp_path):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = str(tmp_path / "st")
    assert runner.invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", st]).exit_code == 0
    write_delta(_bump(None), tmp_path / "d1.parquet")
    res = runner.invoke(app, ["step", str(tmp_path / "d1.parquet"), "--state", st, "--json"])
    assert res.exit_code == 0, res.output
    (w,) = _no_base_round_warnings(json.loads(res.stdout))
    assert str(tmp_path / "d1.parquet") in w
    assert "warning: " in res.stderr and "no copter.base_round" in res.stderr
    write_delta(_bump(1), tmp_path / "d2.parquet")
    res = runner.invoke(app, ["step", str(tmp_path / "d2.parquet"), "--state", st, "--json"])
    assert res.exit_code == 0 and "base_round" not in res.stderr
    assert not _no_base_round_warnings(json.loads(res.stdout))
