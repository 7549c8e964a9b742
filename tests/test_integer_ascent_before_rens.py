"""A MILP round's dual ascent stops after its first steps when the rounded point is still far from the bound,
so that RENS runs first, and the same run goes on after RENS (``solver.integer.pipeline._ascend``).

On Sia 10,240 every round whose rounded point was about 1% from the bound ran 40 evaluations (0.085 s) that
moved the bound by 0.01-0.1%, and RENS followed anyway; now 10 evaluations (0.024 s) before RENS."""

from __future__ import annotations

import math

import pytest

from solver.integer import solve_milp
from solver.integer.ascent import FIRST_STEPS
from solver.model.settings import Settings
from solver.workloads.sia import SiaScenario
from tests.helpers import assert_exactly_feasible, highs_mip_objective


@pytest.fixture(scope="module")
def sia_small():
    return SiaScenario(total_gpus=128, seed=0).base()


def _ascents(result):
    return [x for x in result.mip["steps"] if x["step"] in ("dual_ascent", "rens")]


def test_far_point_stops_the_ascent_for_rens_and_the_run_goes_on_after_it(sia_small):
    s = Settings(relaxation_round_iterations=32, mip_gap_tol=1e-3, integer_fallback="none",
                 integer_submip_gap=0.0)  # RENS at any gap above the target
    r = solve_milp(sia_small, s, None)
    steps = _ascents(r)
    first, rens, after = steps[0], steps[1], steps[2]
    assert first["step"] == "dual_ascent" and first["evaluations"] == FIRST_STEPS and first["stopped_for_rens"]
    assert rens["step"] == "rens"
    assert after["step"] == "dual_ascent" and after.get("continued") and "stopped_for_rens" not in after
    # one run, one budget: the continuation has the evaluations the first steps left
    assert first["evaluations"] + after["evaluations"] <= s.integer_dual_ascent_steps
    assert after["bound_before"] <= first["bound_after"]  # max problem: RENS never loosens the bound
    assert r.mip["lp_bound"] >= highs_mip_objective(sia_small) - 1e-6  # still a valid bound
    assert_exactly_feasible(sia_small, r.x)


def test_without_rens_the_ascent_runs_its_whole_budget_in_one_go(sia_small):
    s = Settings(relaxation_round_iterations=32, mip_gap_tol=0.0, integer_fallback="none",
                 integer_submip_seconds=0.0)
    r = solve_milp(sia_small, s, None)
    asc = [x for x in r.mip["steps"] if x["step"] == "dual_ascent"]
    assert asc and not any(x.get("stopped_for_rens") or x.get("continued") for x in asc)
    assert any(x["evaluations"] > FIRST_STEPS for x in asc)


def test_a_point_the_first_steps_bring_near_the_target_keeps_ascending_before_any_rens(sia_small):
    # one relaxation stage to tol (not staged) and RENS only above a 50% gap: after its first steps the point is
    # never that far, so the run goes on
    s = Settings(relaxation_round_iterations=0, mip_gap_tol=0.0, integer_fallback="none", integer_submip_gap=0.5)
    r = solve_milp(sia_small, s, None)
    asc = [x for x in r.mip["steps"] if x["step"] == "dual_ascent"]
    assert asc and not any(x.get("stopped_for_rens") for x in asc)
    assert asc[0]["evaluations"] == s.integer_dual_ascent_steps
    assert not any(x["step"] == "rens" for x in r.mip["steps"])
    assert math.isfinite(r.mip["lp_bound"])
