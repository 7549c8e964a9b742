"""A coefficient of magnitude <= 1e-9 (HiGHS's zero, ``small_matrix_value``) is refused where copter reads
one (exit 3 naming the row/column), as a magnitude >= 1e30 is: 1e-300 next to 1e29 in a row made PDHG's
column scaling factor inf, theta_c 0 and check_measures divide by zero (exit 1, internal error) through
solve, init and step (fresh-install hunter, session 13)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.exit_codes import BAD_INPUT
from formats.io import write_delta
from solver.model.delta import Delta
from solver.model.errors import ValidationError
from solver.model.problem import Problem
from tests.helpers import runner_error, snapshot


def _problem(path, tiny: float, big: float = 1e29):
    """max x + y s.t. r: tiny x + big y <= 1/7 (r >= -big), x in [0, 1], y in [-big, 3 big] (a bound of 1e20 or more
    means no bound: with big = 1e29, y and r's lower side are free)."""
    d = Delta.concat([Delta.vars(["x"], cost=[-1.0], upper=[1.0]),
                      Delta.vars(["y"], cost=[-1.0], lower=[-big], upper=[3 * big]),
                      Delta.cons(["r"], lower=[-big], upper=[1 / 7]),
                      Delta.coefs(["x", "y"], ["r", "r"], [tiny, big])])
    d.format = "problem"
    write_delta(d, path)
    return path


@pytest.mark.parametrize("cmd", ["solve", "init"])
@pytest.mark.parametrize("tiny", [1e-300, -1e-9])
def test_a_problem_file_with_a_tiny_coefficient_exits_3_naming_it(tmp_path, cmd, tiny):
    path = _problem(tmp_path / "p.parquet", tiny)
    args = [cmd, str(path), "--json"] + (["--state", str(tmp_path / "S")] if cmd == "init" else [])
    res = CliRunner().invoke(app, args)
    err = runner_error(res)
    assert res.exit_code == BAD_INPUT == err["code"] and err["kind"] == "validation"
    assert err["entity"] == "r/x" and "at most 1e-9" in err["message"] and "HiGHS" in err["message"]
    assert not (tmp_path / "S" / "CURRENT").exists()


def test_a_coefficient_just_above_1e_9_is_accepted_and_ends_in_a_documented_status(tmp_path):
    path = _problem(tmp_path / "p.parquet", 2e-9)  # 2e-9 next to 1e29: PDHG may not converge, never crashes
    res = CliRunner().invoke(app, ["solve", str(path), "--json", "--iteration-limit", "20000"])
    assert "Traceback" not in res.output and res.exit_code in (0, 5), res.output
    assert json.loads(res.stdout.strip().splitlines()[0])["n_cols"] == 2


def test_step_with_a_tiny_coefficient_exits_3_and_keeps_the_round(tmp_path):
    state = tmp_path / "S"
    base = _problem(tmp_path / "base.parquet", 1.0, big=1.0)  # a base round that solves
    assert CliRunner().invoke(app, ["init", str(base), "--state", str(state)]).exit_code == 0
    d = Delta.coefs(["x"], ["r"], [1e-300])
    d.base_round = 0
    write_delta(d, tmp_path / "d.parquet")
    before = snapshot(state)
    res = CliRunner().invoke(app, ["step", str(tmp_path / "d.parquet"), "--state", str(state), "--json"])
    err = runner_error(res)
    assert res.exit_code == BAD_INPUT == err["code"] and err["entity"] == "r/x" and err["row"] == 0
    assert "at most 1e-9" in err["message"] and (state / "CURRENT").read_text().strip() == "0"
    assert snapshot(state) == before  # the checkpoint, byte for byte


def test_a_zero_coefficient_in_a_delta_still_removes_the_entry(tmp_path):
    state = tmp_path / "S"
    base = _problem(tmp_path / "base.parquet", 1.0, big=1.0)
    assert CliRunner().invoke(app, ["init", str(base), "--state", str(state)]).exit_code == 0
    d = Delta.coefs(["x"], ["r"], [0.0])
    d.base_round = 0
    write_delta(d, tmp_path / "d.parquet")
    res = CliRunner().invoke(app, ["step", str(tmp_path / "d.parquet"), "--state", str(state), "--json"])
    assert res.exit_code == 0, res.output


def test_from_arrays_refuses_a_tiny_coefficient_naming_it():
    with pytest.raises(ValidationError, match="at most 1e-9") as e:
        Problem.from_arrays(cost=[1.0, 1.0], col_lower=[0, 0], col_upper=[1, 1], row_lower=[0], row_upper=[1],
                            matrix=np.array([[1e-12, 1.0]]), col_names=["a", "b"], row_names=["r"])
    assert e.value.entity == "r/a"


def test_pdhg_on_a_problem_built_without_check_reports_numerical_trouble_not_a_crash():
    """A Problem holding 1e-300 next to 1e29 that skipped Problem.check (a state written before the rule):
    PDHG's scaling overflows, and the run ends NUMERICAL_ERROR naming the coefficient range."""
    from solver.lp.dispatch import solve
    from solver.model.settings import Settings
    from solver.model.status import Status

    p = Problem(col_names=np.array(["a", "b"], dtype=object), row_names=np.array(["r"], dtype=object),
                cost=np.array([-1.0, -1.0]), col_lower=np.zeros(2), col_upper=np.array([1.0, 3e29]),
                row_lower=np.array([-np.inf]), row_upper=np.array([1 / 7]), integrality=np.zeros(2, bool),
                a_indptr=np.array([0, 1, 2]), a_indices=np.array([0, 0], dtype=np.int32),
                a_data=np.array([1e-300, 1e29]))
    res = solve(p, Settings(presolve="off"))
    assert res.status == Status.NUMERICAL_ERROR and "1e-300 to 1e+29" in res.message


@pytest.mark.parametrize("handover", [False, True])
def test_alm_on_a_problem_built_without_check_reports_numerical_trouble_without_numpy_warnings(handover):
    """The ALM engine on the same Problem printed numpy's RuntimeWarnings (invalid value in multiply, in
    divide) on the user's stderr before handing over: its scaling now runs under errstate and is checked
    by PDHG's scaling_trouble, so the run ends NUMERICAL_ERROR naming the coefficient range, silently."""
    import warnings

    from solver.lp.alm import ALMParameters, solve_alm
    from solver.lp.dispatch import solve
    from solver.model.settings import Settings
    from solver.model.status import Status

    p = Problem(col_names=np.array(["a", "b"], dtype=object), row_names=np.array(["r"], dtype=object),
                cost=np.array([-1.0, -1.0]), col_lower=np.zeros(2), col_upper=np.array([1.0, 3e29]),
                row_lower=np.array([-np.inf]), row_upper=np.array([1 / 7]), integrality=np.zeros(2, bool),
                a_indptr=np.array([0, 1, 2]), a_indices=np.array([0, 0], dtype=np.int32),
                a_data=np.array([1e-300, 1e29]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning becomes an exception
        if handover:
            res = solve(p, Settings(presolve="off", engine="alm"))
        else:
            res = solve_alm(p, Settings(presolve="off"), params=ALMParameters(handover=False))
    assert res.status == Status.NUMERICAL_ERROR and "1e-300 to 1e+29" in res.message
    # one sentence: the hand-over said "because scaling failed: ... PDHG's equilibration ...: scaling failed: ..."
    # (the ALM's own failure named PDHG's equilibration, then PDHG's repeated it)
    assert res.message.count("scaling failed") == 1 and res.message.count("1e-300") == 1, res.message
    assert ("in both LP engines" in res.message) == handover and ("the ALM's" in res.message) == (not handover)
