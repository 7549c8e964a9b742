"""Bounds no finite point can meet (lower = +inf, upper = -inf) through the CLI: exit 3 naming the entity,
never a NUMERICAL_ERROR round (H7 finding F7)."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.exit_codes import BAD_INPUT
from formats.io import write_delta
from solver.model.delta import Delta
from tests.helpers import runner_error


def _problem(path, extra: Delta | None = None):
    """min x1 + x2 s.t. c1: x2 >= 2, plus ``extra`` (x1's bounds, or another constraint)."""
    d = Delta.concat([extra if extra is not None else Delta.vars(["x1"], cost=[1.0]),
                      Delta.vars(["x2"], cost=[1.0]), Delta.cons(["c1"], lower=[2.0]),
                      Delta.coefs(["x2"], ["c1"], [1.0])])
    d.format = "problem"
    write_delta(d, path)
    return path


@pytest.mark.parametrize("extra,entity,what", [
    (Delta.vars(["x1"], cost=[1.0], lower=[1e30], upper=[1e30]), "x1", "lower bound is +inf"),
    (Delta.vars(["x1"], cost=[1.0], lower=[-1e30], upper=[-1e30]), "x1", "upper bound is -inf"),
    (Delta.cons(["c2"], lower=[float("inf")]), "c2", "lower bound is +inf"),
], ids=["var-lower-inf", "var-upper-minus-inf", "con-lower-inf"])
def test_solve_of_a_problem_file_with_an_infinite_wrong_side_bound_exits_3(tmp_path, extra, entity, what):
    path = _problem(tmp_path / "p.parquet", extra)
    res = CliRunner().invoke(app, ["solve", str(path), "--json"])
    err = runner_error(res)
    assert res.exit_code == BAD_INPUT == err["code"] and err["kind"] == "validation"
    assert err["entity"] == entity and what in err["message"] and err["file"] == str(path)


def test_step_with_a_delta_setting_lower_plus_inf_exits_3_and_keeps_the_round(tmp_path):
    base = _problem(tmp_path / "base.parquet")
    state = tmp_path / "S"
    assert CliRunner().invoke(app, ["init", str(base), "--state", str(state)]).exit_code == 0
    d = Delta.vars(["x1"], lower=[1e30], upper=[1e30])
    d.base_round = 0
    write_delta(d, tmp_path / "d.parquet")
    res = CliRunner().invoke(app, ["step", str(tmp_path / "d.parquet"), "--state", str(state), "--json"])
    err = runner_error(res)
    assert res.exit_code == BAD_INPUT == err["code"] and err["entity"] == "x1" and err["row"] == 0
    assert "lower bound is +inf" in err["message"] and (state / "CURRENT").read_text().strip() == "0"


@pytest.mark.parametrize("bounds,entity,line", [(" LO bnd x 1e30\n", "x", 11),
                                                (" MI bnd x\n UP bnd x -1e30\n", "x", 12)])
def test_mps_with_an_infinite_wrong_side_bound_is_refused_at_read_time(tmp_path, bounds, entity, line):
    path = tmp_path / "b.mps"
    path.write_text("NAME t\nROWS\n N obj\n G c1\nCOLUMNS\n    x obj 1 c1 1\n    y obj 1 c1 1\nRHS\n"
                    f"    rhs c1 2\nBOUNDS\n{bounds}ENDATA\n")
    res = CliRunner().invoke(app, ["solve", str(path), "--json"])
    err = runner_error(res)  # HiGHS's reader refuses |bound| >= 1e20 on the wrong side; copter names column, line
    assert res.exit_code == BAD_INPUT == err["code"] and err["entity"] == entity and err["line"] == line


def test_step_with_an_empty_name_exits_3_naming_the_row(tmp_path):
    base = _problem(tmp_path / "base.parquet")
    state = tmp_path / "S"
    assert CliRunner().invoke(app, ["init", str(base), "--state", str(state)]).exit_code == 0
    d = Delta.concat([Delta.vars(["x1"], cost=[2.0]), Delta.vars([""], cost=[1.0], upper=[1.0])])
    d.base_round = 0
    write_delta(d, tmp_path / "d.parquet")
    res = CliRunner().invoke(app, ["step", str(tmp_path / "d.parquet"), "--state", str(state), "--json"])
    err = runner_error(res)
    assert res.exit_code == BAD_INPUT == err["code"] and err["row"] == 1 and "name is empty" in err["message"]
