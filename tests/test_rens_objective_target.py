"""RENS stops its sub-MIP at the first point that the round's own bound proves within ``--mip-gap``
(HiGHS's ``objective_target`` = ``solver.integer.gap.objective_within`` of the round's bound).

The sub-MIP's own bound proves nothing about the round; the Lagrangian bound does. On Sia 10,240 (seed 9377,
round 2) HiGHS's root LP point was already 0.32% from the round's bound, and its root cuts, which proved the
sub-MIP within 0.25% of its own bound, doubled the sub-MIP's time (0.15 -> 0.27 s) for a round gap of 0.28%."""

from __future__ import annotations

import math

import numpy as np
import pytest

from solver.integer import solve_milp
from solver.integer.fallback import highs_mip
from solver.integer.gap import MIP_ABS_GAP, gap_rel, objective_within
from solver.model.settings import Settings
from solver.workloads.sia import SiaScenario
from tests.helpers import assert_exactly_feasible, assignment_milp


@pytest.mark.parametrize("seed", range(6))
def test_objective_within_is_the_worst_objective_the_bound_proves_within_the_gap(seed):
    rng = np.random.default_rng(seed)
    for _ in range(400):
        sense = int(rng.choice([-1, 1]))
        bound = float(rng.choice([-1.0, 1.0]) * 10.0 ** rng.uniform(-8, 9)) if rng.random() > 0.05 else 0.0
        g = float(rng.choice([0.0, 1e-4, 5e-3, 0.3, 0.99, 1.5]))
        p = objective_within(sense, bound, g)
        if math.isnan(p):  # only where every objective on the bound's side is within the gap
            assert g >= 1
            continue
        assert sense * (p - bound) >= 0  # on the side of the bound a feasible point lies on
        assert gap_rel(sense, p, bound) <= g  # proven within the gap, round-off included
        worse = p + sense * max(1e-6 * abs(p), 2 * MIP_ABS_GAP)
        if g < 1:  # and tight: a little worse is not (from a gap of 1 on, past 0 every point is within)
            assert gap_rel(sense, worse, bound) > g


def test_objective_within_has_no_target_without_a_finite_bound_or_gap():
    assert math.isnan(objective_within(1, math.inf, 5e-3)) and math.isnan(objective_within(-1, math.nan, 5e-3))
    assert math.isnan(objective_within(1, 100.0, math.nan)) and math.isnan(objective_within(1, 100.0, -1e-3))
    assert objective_within(1, 100.0, 5e-3) == pytest.approx(100.0 / 0.995)
    assert objective_within(-1, 100.0, 5e-3) == pytest.approx(100.0 / 1.005)


@pytest.mark.parametrize("sense", [1, -1])
def test_highs_mip_stops_at_its_first_point_that_reaches_the_objective_target(sense):
    p = assignment_milp(120, 10, weight_high=9, cost_high=50, sense=sense)
    x_opt, info = highs_mip(p, 30.0, mip_rel_gap=0.0, threads=1)
    assert info["highs_status"] == "Optimal"
    opt = p.objective(x_opt)
    # a target every feasible point reaches: HiGHS stops at the first one it finds
    loose = opt + sense * 1e6
    x, info = highs_mip(p, 30.0, mip_rel_gap=0.0, threads=1, objective_target=loose, presolve=False)
    assert info["highs_status"] == "Target for objective reached"  # (at 30 x 6 its first point is optimal)
    assert_exactly_feasible(p, x)
    assert sense * (p.objective(x) - loose) <= 0
    # a target no point reaches: the target never stops it, the gap does
    x, info = highs_mip(p, 30.0, mip_rel_gap=0.0, threads=1, objective_target=opt - sense * 1.0)
    assert info["highs_status"] == "Optimal" and p.objective(x) == pytest.approx(opt)
    # no target (None or nan): as before
    for none in (None, math.nan):
        x, info = highs_mip(p, 30.0, mip_rel_gap=0.0, threads=1, objective_target=none)
        assert info["highs_status"] == "Optimal" and p.objective(x) == pytest.approx(opt)


def test_a_round_hands_rens_the_objective_its_own_bound_proves_within_the_target(monkeypatch):
    import solver.integer.submip as submip

    problem = SiaScenario(total_gpus=128, seed=0).base()
    seen = []
    real = submip.rens

    def spy(prob, x_lp, seconds, **kw):
        x, info = real(prob, x_lp, seconds, **kw)
        seen.append((kw.get("objective_target"), None if x is None else prob.objective(x), info))
        return x, info

    monkeypatch.setattr(submip, "rens", spy)
    tol = 1e-3
    s = Settings(relaxation_round_iterations=32, mip_gap_tol=tol, integer_fallback="none",
                 integer_submip_gap=0.0)  # RENS at any gap above the target
    r = solve_milp(problem, s, None)
    steps = r.mip["steps"]
    i = next(k for k, x in enumerate(steps) if x["step"] == "rens")
    bound = next(x["bound_after"] for x in reversed(steps[:i]) if x["step"] == "dual_ascent")
    target, obj, info = seen[0]
    assert target == pytest.approx(objective_within(problem.sense, bound, tol), rel=1e-12)
    if info["highs_status"] == "Target for objective reached":
        assert problem.sense * (obj - target) <= 0  # a point the bound proves within the target
    assert_exactly_feasible(problem, r.x)
    assert r.mip["gap_rel"] <= tol or r.status.name != "OPTIMAL"
