"""Values of magnitude in [1e20, 1e30). A bound there is no bound, for copter (every reader) as for HiGHS
(infinite_bound) and other MPS readers (tests/test_huge_bounds.py). A cost there is finite for copter (a cost is
infinite from 1e30) but infinite at HiGHS's default infinite_cost (1e20): copter's own HiGHS runs must solve
copter's model (a cost of 5e20 made HiGHS presolve fail and copter end at half the optimum), and an MPS file
written with such a cost is read as another model by HiGHS at its defaults: export/convert say so (fresh-install
hunter)."""

from __future__ import annotations

import json

import highspy
import numpy as np
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import write_delta
from solver.model.delta import Delta


def _big(path, cost_y: float = 5e20):
    """max x + cost_y y s.t. r: x + y <= 9e19, x in [0, 5e19], y in [0, 1]: optimum 5e19 + cost_y (x = 5e19,
    y = 1). Its bounds are finite (below 1e20); a cost_y of 5e20 is a cost HiGHS's default infinite_cost reads as
    infinite. (Before bounds of 1e20 and more meant no bound, this model had x <= 5e20 and r <= 2e21.)"""
    d = Delta.concat([Delta.vars(["x"], cost=[1.0], upper=[5e19]), Delta.vars(["y"], cost=[cost_y], upper=[1.0]),
                      Delta.cons(["r"], upper=[9e19]), Delta.coefs(["x", "y"], ["r", "r"], [1.0, 1.0])])
    d.format, d.sense = "problem", -1
    write_delta(d, path)
    return path


def test_copter_and_the_highs_baselines_agree_on_a_model_with_values_beyond_1e20(tmp_path):
    state = tmp_path / "S"
    res = CliRunner().invoke(app, ["init", str(_big(tmp_path / "p.parquet")), "--state", str(state)])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["compare", "--state", str(state), "-b", "highs", "-b", "highs-warm", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["copter"]["objective"] == pytest.approx(5.5e20, rel=1e-6)
    assert [b["objective"] for b in out["baselines"]] == pytest.approx([5.5e20, 5.5e20], rel=1e-6)


def test_new_highs_uses_copters_infinity_for_bounds_and_costs():
    from solver.highs_bridge import new_highs
    h = new_highs()
    assert h.getOptionValue("infinite_bound")[1] == 1e20 and h.getOptionValue("infinite_cost")[1] == 1e30


@pytest.mark.parametrize("json_out", [False, True])
def test_export_to_mps_warns_about_a_cost_highs_reads_as_infinite(tmp_path, json_out):
    state = tmp_path / "S"
    assert CliRunner().invoke(app, ["init", str(_big(tmp_path / "p.parquet")), "--state", str(state)]).exit_code == 0
    out = tmp_path / "x.mps"
    res = CliRunner().invoke(app, ["export", "--state", str(state), "-o", str(out)] + (["--json"] if json_out else []))
    assert res.exit_code == 0, res.output
    line = [ln for ln in res.stderr.splitlines() if ln.startswith("warning:")]
    assert len(line) == 1 and "the cost of variable 'y' is 5e+20" in line[0] and "1e20" in line[0], res.stderr
    if json_out:
        assert json.loads(res.stdout)["warnings"] == [line[0].removeprefix("warning: ")]
    h = highspy.Highs()  # the reason for the warning: HiGHS at its defaults reads y's cost 5e20 as infinite
    h.setOptionValue("output_flag", False)
    h.readModel(str(out))
    assert h.getLp().col_cost_[1] == highspy.kHighsInf and h.getLp().col_upper_[0] == 5e19


def test_export_to_parquet_and_of_a_model_below_1e20_do_not_warn(tmp_path):
    state = tmp_path / "S"
    assert CliRunner().invoke(app, ["init", str(_big(tmp_path / "p.parquet")), "--state", str(state)]).exit_code == 0
    res = CliRunner().invoke(app, ["export", "--state", str(state), "-o", str(tmp_path / "x.parquet"), "--json"])
    assert res.exit_code == 0 and "warnings" not in json.loads(res.stdout) and "warning" not in res.stderr
    d = Delta.concat([Delta.vars(["x"], cost=[1.0], upper=[9.9e19]), Delta.cons(["r"], upper=[2.0]),
                      Delta.coefs(["x"], ["r"], [1.0])])
    d.format = "problem"
    write_delta(d, tmp_path / "small.parquet")
    res = CliRunner().invoke(app, ["convert", str(tmp_path / "small.parquet"), str(tmp_path / "s.mps"), "--json"])
    assert res.exit_code == 0 and "warnings" not in json.loads(res.stdout) and "warning" not in res.stderr


def test_convert_to_mps_warns_naming_the_first_such_value(tmp_path):
    res = CliRunner().invoke(app, ["convert", str(_big(tmp_path / "p.parquet")), str(tmp_path / "y.mps"), "--json"])
    assert res.exit_code == 0, res.output
    (w,) = json.loads(res.stdout)["warnings"]
    assert w.startswith("the cost of variable 'y' is 5e+20:") and w in res.stderr


@pytest.mark.parametrize("args", [["--presolve", "off"], ["--presolve", "off", "--engine", "alm"], []])
def test_a_point_5e19_short_of_the_optimum_is_never_optimal(tmp_path, args):
    """max x + 5e20 y, x <= 5e20, without presolve ended OPTIMAL at 5e20 (x = 0) after 0 iterations: PDHG's check
    keeps the reduced cost of a column inside its box as dual residual, 1 against ||c|| = 5e20 (2e-21), while x
    sat 5e20 below its bound. Since a bound of 5e20 means no bound, the same model a tenth the size: max x +
    5e19 y, x <= 5e19. The direct run's point must also have its reach (solver.lp.reach) within tol: it is the
    optimum 1e20 or an honest NUMERICAL_ERROR (exit 5) naming x; presolve solves it (1e20)."""
    res = CliRunner().invoke(app, ["solve", str(_big(tmp_path / "p.parquet", 5e19)), "--json", *args])
    out = json.loads(res.stdout.strip().splitlines()[0])
    if out["status"] == "OPTIMAL":
        assert res.exit_code == 0 and out["objective"] == pytest.approx(1e20, rel=1e-6)
    else:
        assert res.exit_code == 5 and out["status"] == "NUMERICAL_ERROR", res.output
        assert "variable 'x' is 5e+19 from its bound with reduced cost 1" in out["message"], out["message"]
        # the measures count the reach the message names: it carried PDHG's gap, 7e-16, and a dual objective of
        # 5e19, the point's own, as if the check had not just refuted it
        assert out["gap_rel"] > 0.3 and out["dual_objective"] == pytest.approx(1e20, rel=1e-6), out
    assert args or out["status"] == "OPTIMAL"  # with presolve (the default) the answer is right


@pytest.mark.data
def test_a_finite_no_bound_sentinel_is_named_when_the_reach_check_fails(tmp_path):
    """adlittle with every upper bound capped at 1e12 (a finite stand-in for 'no bound') without presolve met
    PDHG's measures at the point the uncapped model ends OPTIMAL at, then ended NUMERICAL_ERROR (exit 5) after
    7,693 iterations because a column 1e12 below its cap kept a reduced cost of -0.004 (reach 1.1e10): the
    target schedule's 'does not follow' rule stopped tightening after two rejections, though the reach, a
    thresholded measure, drops at once (OPTIMAL at 8,464, 2e-6 from HiGHS). Should it still miss, the message
    says the bound may stand for 'no bound' and how to write one, not only to rescale the costs."""
    from formats.io import write_problem
    from formats.mps import read_mps
    from solver.baselines.highs import solve_highs
    from tests.helpers import require_data

    p = read_mps(require_data("mps/adlittle.mps"))
    p = p.replace(col_upper=np.minimum(p.col_upper, 1e12))
    write_problem(p, tmp_path / "p.parquet")
    res = CliRunner().invoke(app, ["solve", str(tmp_path / "p.parquet"), "--json", "--presolve", "off"])
    out = json.loads(res.stdout.strip().splitlines()[0])
    assert res.exit_code == 0 and out["status"] == "OPTIMAL", res.output
    assert out["objective"] == pytest.approx(solve_highs(p).objective, rel=1e-4)


def test_the_reach_checks_sentence_names_a_far_bound_as_a_possible_no_bound_sentinel():
    from solver.differential import apply_delta
    from solver.lp.pdhg import _ReachCheck
    from solver.lp.reach import Reach
    from solver.model.problem import Problem

    p, _ = apply_delta(Problem.empty(), Delta.vars(["x", "y"], cost=[1.0, 1.0], upper=[1e12, 5.0]))
    judge = _ReachCheck(p, 1e-4)
    judge.missed, judge.x_scale = Reach(reach=4e9, rel=2e4, column=0, reduced_cost=-0.004, distance=1e12), 313.0
    assert "if that bound, 1e+12 away while the other variables stay within 313, only stands for 'no bound'" \
        in judge.sentence()
    judge.missed, judge.x_scale = Reach(reach=5.0, rel=2.0, column=0, reduced_cost=-1.0, distance=5.0), 3.0
    assert "no bound" not in judge.sentence()  # a bound near the point's values is no sentinel


def test_refuted_kkt_lowers_the_dual_objective_by_the_reach_and_never_the_gap():
    from solver.lp.reach import Reach, refuted_kkt
    from solver.lp.termination import KKT

    kkt = KKT(primal_objective=-5e20, dual_objective=-5e20, primal_residual=0.0, dual_residual=1.0,
              primal_residual_rel=0.0, dual_residual_rel=2e-21, gap_rel=7e-16)
    out = refuted_kkt(kkt, Reach(reach=5e20, rel=0.5, column=0, reduced_cost=1.0, distance=5e20))
    assert out.dual_objective == -1e21 and out.gap_rel == pytest.approx(1 / 3)
    assert (out.primal_residual_rel, out.dual_residual_rel, out.primal_objective) == (0.0, 2e-21, -5e20)
    tiny = refuted_kkt(kkt, Reach(reach=1e-30, rel=1e-51, column=0, reduced_cost=1.0, distance=1.0))
    assert tiny.gap_rel == 7e-16  # never below the gap PDHG measured
