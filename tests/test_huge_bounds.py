"""A bound of magnitude >= 1e20 means no bound, in every way a model comes in (solver.model.problem.INF_BOUND).

HiGHS (infinite_bound), CPLEX, Gurobi and Xpress read a bound of 1e20 or more as infinite, and MPS files write
'no bound' as 1e20 as often as 1e30. copter's cut was 1e30, so such a bound stayed a finite number some 1e20
away from the rest of the model, which PDHG cannot resolve in double precision: adlittle with its open upper
bounds written as 1e20 ended ITERATION_LIMIT (exit 5) where the same model with inf is OPTIMAL. Costs and
coefficients are unchanged: finite below 1e30, refused at and above it (a cost has no 'no cost' meaning).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import read_problem, write_delta, write_problem
from solver.differential import apply_delta
from solver.model.delta import Delta
from solver.model.errors import ValidationError
from solver.model.problem import INF_BOUND, INF_VALUE, Problem, normalize_infinite
from tests.helpers import lp, manifest, require_data, runner_error

runner = CliRunner()
MPS = """NAME t
ROWS
 N obj
 L c1
COLUMNS
    x obj -1 c1 1
    y obj -1 c1 1
RHS
    rhs c1 {rhs}
BOUNDS
 UP bnd x {up}
 UP bnd y 1
ENDATA
"""


def test_the_cuts():
    assert (INF_BOUND, INF_VALUE) == (1e20, 1e30)
    np.testing.assert_array_equal(normalize_infinite([1e20, -1e20, 9.99e19, -5e25, 1e30, 3.0]),
                                  [np.inf, -np.inf, 9.99e19, -np.inf, np.inf, 3.0])


def test_problem_from_arrays_reads_a_bound_of_1e20_as_no_bound():
    p = lp([1.0, 1.0], [[1.0, 1.0]], [-1e20], [2e20], [-1e20, 0.0], [5e20, 9.99e19])
    np.testing.assert_array_equal(p.col_lower, [-np.inf, 0.0])
    np.testing.assert_array_equal(p.col_upper, [np.inf, 9.99e19])
    assert np.isneginf(p.row_lower[0]) and np.isposinf(p.row_upper[0])
    with pytest.raises(ValidationError, match=r"lower bound is \+inf"):
        lp([1.0], [[1.0]], [0.0], [1.0], [1e20], [np.inf])  # x >= 1e20: no finite point, as x >= inf
    q = lp([1e25], [[1.0]], [0.0], [1.0], [0.0], [1.0])  # a cost of 1e25 stays finite
    assert q.cost[0] == 1e25
    with pytest.raises(ValidationError, match="cost is not finite"):
        lp([1e30], [[1.0]], [0.0], [1.0], [0.0], [1.0])


@pytest.mark.parametrize("up,rhs", [("1e20", "1e20"), ("5e20", "1e30"), ("1e30", "inf"), ("1e19", "3")])
def test_the_mps_reader_draws_the_same_line(tmp_path, up, rhs):
    path = tmp_path / "t.mps"
    path.write_text(MPS.format(up=up, rhs=rhs))
    p = read_problem(path)
    want = float(up) if float(up) < 1e20 else np.inf
    assert p.col_upper[0] == want and p.row_upper[0] == (float(rhs) if float(rhs) < 1e20 else np.inf)


def test_a_delta_bound_of_1e20_is_no_bound_and_a_lower_one_is_refused():
    p, _ = apply_delta(Problem.empty(), Delta.concat([
        Delta.vars(["x", "y"], cost=[1.0, 1.0], lower=[-2e20, 0.0], upper=[1e20, 9e19]),
        Delta.cons(["r"], lower=[-1e20], upper=[5.0]), Delta.coefs(["x"], ["r"], [1.0])]))
    np.testing.assert_array_equal(p.col_lower, [-np.inf, 0.0])
    np.testing.assert_array_equal(p.col_upper, [np.inf, 9e19])
    assert np.isneginf(p.row_lower[0])
    with pytest.raises(ValidationError, match=r"lower bound is \+inf \(\|value\| >= 1e20 means no bound") as e:
        apply_delta(p, Delta.vars(["y"], lower=[1e20]))
    assert e.value.entity == "y"


@pytest.mark.data
@pytest.mark.parametrize("presolve", ["off", "auto"])
def test_adlittle_with_its_open_bounds_written_as_1e20_is_solved(tmp_path, presolve):
    """Before: finite 1e20 upper bounds, ITERATION_LIMIT (exit 5) without presolve; now the model read back is
    the one with inf, OPTIMAL at the known optimum, through the CLI from Parquet and from MPS alike."""
    p = read_problem(require_data("mps") / "adlittle.mps")
    opt = float(next(r for r in manifest("mps") if r["file"] == "adlittle.mps")["optimal_objective"])
    capped = p.replace(col_upper=np.where(np.isinf(p.col_upper), 1e20, p.col_upper))
    write_problem(capped, tmp_path / "a.parquet")
    text = (require_data("mps") / "adlittle.mps").read_text().replace("ENDATA", "")
    bounds = "".join(f" UP BND {n} 1e20\n" for n in p.col_names[np.isinf(p.col_upper)])
    (tmp_path / "a.mps").write_text(text + ("" if "BOUNDS" in text else "BOUNDS\n") + bounds + "ENDATA\n")
    for path in (tmp_path / "a.parquet", tmp_path / "a.mps"):
        assert np.isposinf(read_problem(path).col_upper).sum() == np.isposinf(p.col_upper).sum()
        res = runner.invoke(app, ["solve", str(path), "--json", "--presolve", presolve, "--time-limit", "120"])
        out = json.loads(res.stdout.strip().splitlines()[0])
        assert res.exit_code == 0 and out["status"] == "OPTIMAL", res.output
        assert out["objective"] == pytest.approx(opt, rel=1e-3)


def test_a_model_open_only_through_a_1e20_bound_is_unbounded(tmp_path):
    """max x, x <= 5e20: no bound, so the LP is unbounded (exit 4), as HiGHS at its defaults says; before, copter
    iterated towards 5e20."""
    d = Delta.concat([Delta.vars(["x"], cost=[1.0], upper=[5e20]), Delta.cons(["r"], lower=[0.0]),
                      Delta.coefs(["x"], ["r"], [1.0])])
    d.format, d.sense = "problem", -1
    write_delta(d, tmp_path / "p.parquet")
    res = runner.invoke(app, ["solve", str(tmp_path / "p.parquet"), "--json"])
    assert res.exit_code == 4, res.output
    assert json.loads(res.stdout.strip().splitlines()[0])["status"] in ("DUAL_INFEASIBLE", "INFEASIBLE_OR_UNBOUNDED")


def test_a_parquet_lower_bound_of_1e20_exits_3_naming_the_variable(tmp_path):
    d = Delta.concat([Delta.vars(["x"], cost=[1.0], lower=[1e20])])
    d.format = "problem"
    write_delta(d, tmp_path / "p.parquet")
    res = runner.invoke(app, ["solve", str(tmp_path / "p.parquet"), "--json"])
    err = runner_error(res)
    assert res.exit_code == 3 and err["entity"] == "x" and "lower bound is +inf" in err["message"]


@pytest.mark.parametrize("bounds, rows, rhs, entity, line, side", [
    (" LO BND x 1e20\n", " L c1", "4", "x", 11, "lower"),
    (" UP BND y -1e20\n", " L c1", "4", "y", 11, "upper"),
    (" UP BND x 5\n LO BND x 1e21\n", " L c1", "4", "x", 12, "lower"),
    ("", " L c1", "-1e20", "c1", 9, "upper"),
    ("", " G c1", "1e20", "c1", 9, "lower"),
])
def test_an_mps_bound_with_no_finite_side_names_the_column_or_row_and_line(tmp_path, bounds, rows, rhs, entity,
                                                                            line, side):
    """HiGHS refuses a lower bound >= 1e20 (an upper one <= -1e20) with a padded message and no line
    (`Col 0 (Col x)  has lower bound of 1e+20 >= 1e+20`); the error names the column or row and its line."""
    text = (f"NAME t\nROWS\n N obj\n{rows}\nCOLUMNS\n x obj 1 c1 1\n y obj 1 c1 1\nRHS\n rhs c1 {rhs}\n"
            f"BOUNDS\n{bounds}ENDATA\n")
    (tmp_path / "b.mps").write_text(text)
    res = runner.invoke(app, ["solve", str(tmp_path / "b.mps"), "--json"])
    err = runner_error(res)
    assert res.exit_code == 3, res.output
    assert err["entity"] == entity and err["line"] == line, err
    assert f"the {side} bound" in err["message"] and "Col " not in err["message"]
