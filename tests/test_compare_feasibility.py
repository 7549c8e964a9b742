"""``copter compare`` never ranks as best a point that violates the exact model beyond its stated tolerance
(issue #16): copter's saved point is replaced (the reader of solution.parquet is patched: the state checks its
files' sizes) by one that breaks a row by 2e-3 (relative to max(1, |bound|)) while beating HiGHS's exact
optimum."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp
from typer.testing import CliRunner

from copter_cli.app import app
from solver import rounds
from solver.model.problem import Problem
from solver.rounds import comparison
from solver.rounds.comparison import feasibility

runner = CliRunner()


def _two_jobs() -> Problem:
    """max x1 + x2 s.t. cap: x1 + x2 <= 4, 0 <= x <= 10 (optimum 4)."""
    A = sp.csc_array(np.array([[1.0, 1.0]]))
    return Problem.from_arrays(cost=[1.0, 1.0], col_lower=[0.0, 0.0], col_upper=[10.0, 10.0],
                               row_lower=[-np.inf], row_upper=[4.0], matrix=A, col_names=["j1", "j2"],
                               row_names=["cap"], sense=-1)


@pytest.fixture
def cheating_state(tmp_path, monkeypatch):
    """A state whose round 0 point reads as (2.004, 2.004): cap is violated by 8e-3 = 2e-3 * |4|, the
    objective 4.008 beats the optimum 4."""
    from formats.io import write_problem

    write_problem(_two_jobs(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", state_dir=st)
    real = comparison.copter_point(rounds_gen(st), _two_jobs())
    assert real is not None and real.sum() == pytest.approx(4.0, rel=1e-3)  # the patch replaces a real read
    monkeypatch.setattr(comparison, "copter_point", lambda gen, problem: np.array([2.004, 2.004]))
    return st


def rounds_gen(st):
    from formats.checkpoint import StateStore

    return StateStore(st).load(with_state=False)


def test_a_point_violating_a_row_by_2e_3_is_flagged_and_never_the_best(cheating_state):
    res = rounds.compare(cheating_state, ["highs"])
    assert res["feasibility_tol"] == 1e-4  # the state's solve tolerance
    cop, highs = res["copter"], res["baselines"][0]
    assert cop["max_violation_rel"] == pytest.approx(2e-3)
    assert cop["violates_tol"] is True and highs["violates_tol"] is False
    assert highs["objective"] == pytest.approx(4.0) and highs["objective_diff_rel"] == 0.0
    assert cop["objective"] == pytest.approx(4.008)
    assert cop["objective_diff_rel"] == pytest.approx(-0.008 / 4.0)  # better only by breaking cap


def test_a_looser_stated_tolerance_accepts_the_same_point_as_best(cheating_state):
    res = rounds.compare(cheating_state, ["highs"], feasibility_tol=1e-2)
    cop, highs = res["copter"], res["baselines"][0]
    assert cop["violates_tol"] is False and cop["objective_diff_rel"] == 0.0
    assert highs["objective_diff_rel"] == pytest.approx(0.008 / 4.008)


def test_cli_table_and_json_show_the_flag(cheating_state):
    res = runner.invoke(app, ["compare", "-b", "highs", "--state", str(cheating_state), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["copter"]["violates_tol"] is True and out["baselines"][0]["objective_diff_rel"] == 0.0
    table = runner.invoke(app, ["compare", "-b", "highs", "--state", str(cheating_state)]).stderr
    assert "violates tol" in table
    bad = runner.invoke(app, ["compare", "-b", "highs", "--feasibility-tol", "nan", "--state",
                              str(cheating_state), "--json"])
    assert bad.exit_code == 2 and "--feasibility-tol" in json.loads(bad.stdout)["error"]["message"]


def test_feasibility_ruler_counts_bounds_integrality_and_nan():
    p = _two_jobs()
    assert feasibility(p, None, 1e-4) == {"max_violation_rel": pytest.approx(np.nan, nan_ok=True),
                                          "violates_tol": None}
    assert feasibility(p, np.array([2.0, 2.0]), 1e-4) == {"max_violation_rel": 0.0, "violates_tol": False}
    # column bound 10 exceeded by 0.01: 1e-3 relative
    f = feasibility(p, np.array([10.01, -6.01]), 1e-4)
    assert f["max_violation_rel"] == pytest.approx(6.01) and f["violates_tol"]
    f = feasibility(p, np.array([-0.5, 0.0]), 1.0)  # lower bound 0: divided by max(1, 0)
    assert f["max_violation_rel"] == pytest.approx(0.5) and not f["violates_tol"]
    assert feasibility(p, np.array([np.nan, 0.0]), 1e-4)["violates_tol"] is True
    mip = Problem.from_arrays(cost=[1.0, 1.0], col_lower=[0.0, 0.0], col_upper=[10.0, 10.0], row_lower=[-np.inf],
                              row_upper=[4.0], matrix=sp.csc_array(np.array([[1.0, 1.0]])), col_names=["a", "b"],
                              row_names=["cap"], sense=-1, integrality=[True, False])
    assert feasibility(mip, np.array([1.5, 2.5]), 1e-4)["violates_tol"] is True
    assert feasibility(mip, np.array([1.0, 2.5]), 1e-4)["violates_tol"] is False
