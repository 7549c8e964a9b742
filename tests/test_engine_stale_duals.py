"""A warm round whose start is worse than a cold one is solved cold by itself (issue #17, point 2;
solver.lp.engine_choice rule 3a).

afiro with every cost x 1e-5, then a delta multiplying the costs by 1e6: the old x stays optimal, the old duals
are 1e-6 of the new ones, so PDHG warm started from (x*, ~0): 324 iterations against a cold solve's 194 at tol
1e-4 (777 = the WARM_OVER cap against 259 at 1e-6), reported as a warm round. Rule 3a now sees that the warm
duals do no better than y = 0 and solves the round cold: the cold solve's iterations, ``warm_started`` false and
the reason in ``engine_reason``.
"""

from __future__ import annotations

import json
import math

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import read_problem, write_problem
from solver.lp import engine_choice
from solver.lp.dispatch import solve
from solver.lp.engine_choice import EngineRecord, stale_duals
from solver.model.settings import Settings
from solver.model.status import Status
from tests.helpers import manifest, require_data

runner = CliRunner()


def _scaled(name: str):
    """(model with every cost x 1e-5, the same with every cost x 1e-5 x 1e6, the latter's optimum)."""
    p = read_problem(require_data("mps") / name)
    opt = float(next(r for r in manifest("mps") if r["file"] == name)["optimal_objective"])
    small = p.replace(cost=p.cost * 1e-5)
    return small, small.replace(cost=small.cost * 1e6), opt * 1e-5 * 1e6


def _close(value: float, optimum: float, rel: float = 1e-3) -> bool:
    return abs(value - optimum) <= rel * abs(optimum)


@pytest.mark.data
@pytest.mark.parametrize("tol", [1e-4, 1e-6])
def test_a_cost_change_by_orders_of_magnitude_is_solved_cold(tol):
    small, big, opt = _scaled("afiro.mps")
    r0 = solve(small, Settings(tol=tol))
    warm = solve(big, Settings(tol=tol), r0.state)
    cold = solve(big, Settings(tol=tol))
    assert warm.status == Status.OPTIMAL and _close(warm.objective, opt), (warm.objective, opt)
    assert not warm.warm_started and warm.engine == "pdhg"
    assert "the warm duals carry nothing" in warm.engine_reason and "solved cold by PDHG" in warm.engine_reason
    assert warm.iterations == cold.iterations  # the round costs what a cold solve does (before: 324 / 777)
    rec = EngineRecord.from_state(warm.state)
    assert rec.cold_passes == engine_choice.PDHG_ITERATION_PASSES * cold.iterations  # the next round's yardstick
    assert math.isnan(rec.pdhg_warm_passes)  # no PDHG warm round ran


@pytest.mark.data
def test_the_round_report_says_it_ran_cold_and_why(tmp_path):
    """Through the CLI, one process per command as a user runs it: init, a delta from ``copter diff``, step."""
    small, big, opt = _scaled("afiro.mps")
    write_problem(small, tmp_path / "small.parquet")
    write_problem(big, tmp_path / "big.parquet")
    st = tmp_path / "st"
    assert runner.invoke(app, ["init", str(tmp_path / "small.parquet"), "--state", str(st)]).exit_code == 0
    d = tmp_path / "d.parquet"
    made = runner.invoke(app, ["diff", str(tmp_path / "small.parquet"), str(tmp_path / "big.parquet"), "-o", str(d),
                               "--base-round", "0"])
    assert made.exit_code == 0, made.output
    res = runner.invoke(app, ["step", str(d), "--state", str(st), "--json"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    cold = json.loads(runner.invoke(app, ["solve", str(tmp_path / "big.parquet"), "--json"]).stdout.splitlines()[0])
    assert rep["status"] == "OPTIMAL" and _close(rep["objective"], opt)
    assert rep["warm_started"] is False and "the warm duals carry nothing" in rep["engine_reason"]
    assert rep["iterations"] == cold["iterations"]
    shown = json.loads(runner.invoke(app, ["show", "--state", str(st), "--json"]).stdout)
    assert shown["warm_started"] is False and shown["iterations"] == cold["iterations"]


def test_stale_duals_needs_a_dual_residual_that_y_zero_leaves_and_the_warm_duals_do_not_halve():
    cold = (0.05, 0.091, 0.0)
    assert stale_duals((1e-6, 0.091 * (1 - 1e-6), 1.0), cold)  # afiro after x 1e6: duals 1e-6 of the new ones
    assert not stale_duals((1e-6, 0.04, 1.0), cold)  # the warm duals halve it: they carry something
    assert not stale_duals((6e-3, 6.6e-5, 4e-4), (0.0, 0.97, 0.0))  # a TE ring round: its duals are close
    assert not stale_duals((3e-16, 0.0, 1.0), (0.67, 0.0, 0.0))  # LB: y = 0 is dual feasible, nothing to tell
    assert not stale_duals((1e-6, 0.091, 0.0), (0.05, 0.091, 0.1))  # a better gap: the start carries something
