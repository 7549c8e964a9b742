"""Staged LP relaxation of MILP rounds (``Settings.relaxation_tol``) and the round-to-round warm start.

A loose first relaxation stage must still give an exactly feasible integer point whose reported gap is a
valid bound on its distance to the true optimum (checked against HiGHS MIP on a small Sia instance), and
the next round's relaxation must start from this round's relaxation iterate (not from the integer point),
also through the round loop's state directory (solver.rounds).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from solver.integer import solve_milp
from solver.integer.relaxation import relaxation_tolerances
from solver.model.errors import UsageError
from solver.model.settings import Settings
from solver.model.status import Status
from solver.workloads.sia import SiaScenario
from tests.helpers import assert_exactly_feasible, highs_mip_objective

GPUS = 128  #: about 1,900 binaries: HiGHS proves the optimum in well under a second


@pytest.fixture(scope="module")
def sia_small():
    return SiaScenario(total_gpus=GPUS, seed=0).base()


@pytest.fixture(scope="module")
def sia_optimum(sia_small):
    return highs_mip_objective(sia_small)


def test_relaxation_tolerances_step_down_by_ten_and_end_at_tol():
    assert relaxation_tolerances(Settings(tol=1e-4)) == [1e-4]
    tols = relaxation_tolerances(Settings(tol=1e-4, relaxation_tol=1e-2))
    assert tols == pytest.approx([1e-2, 1e-3, 1e-4], rel=1e-12)
    assert tols[-1] == 1e-4
    assert relaxation_tolerances(Settings(tol=1e-4, relaxation_tol=1e-5)) == [1e-4]
    assert relaxation_tolerances(Settings(tol=1e-4, relaxation_tol=float("inf"))) == [1e-4]
    assert relaxation_tolerances(Settings(tol=1e-4, relaxation_tol=3e-4)) == pytest.approx([3e-4, 1e-4])


@pytest.mark.parametrize("bad", [0.0, -1e-3, float("nan")])
def test_relaxation_tol_that_is_not_positive_is_a_usage_error(bad):
    with pytest.raises(UsageError, match="relaxation_tol"):
        relaxation_tolerances(Settings(relaxation_tol=bad))


@pytest.mark.parametrize("relaxation_tol", [1e-2, 3e-3])
def test_loose_relaxation_gives_an_exact_point_whose_gap_bounds_its_distance_to_the_highs_optimum(
        sia_small, sia_optimum, relaxation_tol):
    p = sia_small
    r = solve_milp(p, Settings(relaxation_tol=relaxation_tol, mip_gap_tol=5e-3, integer_fallback="none"), None)
    assert r.status in (Status.OPTIMAL, Status.FEASIBLE) and r.point_feasible
    assert_exactly_feasible(p, r.x)
    assert r.mip["relaxation_stages"][0]["tol"] == relaxation_tol
    bound, obj = r.mip["lp_bound"], r.objective
    assert p.sense == -1  # maximisation: bound >= optimum >= integer objective
    assert bound >= sia_optimum - 1e-9 * abs(sia_optimum)
    assert obj <= sia_optimum + 1e-9 * abs(sia_optimum)
    assert r.mip["gap_rel"] == pytest.approx((bound - obj) / max(1.0, abs(obj)), rel=1e-9, abs=1e-15)
    assert (sia_optimum - obj) / max(1.0, abs(obj)) <= r.mip["gap_rel"] + 1e-12


def test_first_stage_whose_point_meets_the_gap_ends_the_round(sia_small):
    r = solve_milp(sia_small, Settings(relaxation_tol=1e-2, mip_gap_tol=1.0, integer_fallback="none"), None)
    assert [s["tol"] for s in r.mip["relaxation_stages"]] == [1e-2]
    assert r.status == Status.OPTIMAL and r.mip["gap_rel"] <= 1.0


def test_stages_tighten_down_to_tol_while_the_gap_is_not_met(sia_small):
    s = Settings(tol=1e-4, relaxation_tol=1e-2, mip_gap_tol=0.0, integer_fallback="none",
                 relaxation_round_iterations=0)  # stages end at their tolerance only
    r = solve_milp(sia_small, s, None)
    st = r.mip["relaxation_stages"]
    assert [x["tol"] for x in st] == pytest.approx(relaxation_tolerances(s), rel=1e-12)
    assert r.iterations == sum(x["iterations"] for x in st)
    # the reported bound is the tightest of the stage bounds and the dual ascents' bounds (all are valid), the
    # point at least the best stage's rounded point (RENS may improve on it: staged, the gap is above 0)
    ascent = [x["bound_after"] for x in r.mip["steps"] if x["step"] == "dual_ascent"]
    assert r.mip["lp_bound"] == pytest.approx(min([x["lp_bound"] for x in st] + ascent), rel=1e-15)
    assert r.objective >= max(x["integer_objective"] for x in st) - 1e-12 * abs(r.objective)
    assert_exactly_feasible(sia_small, r.x)


def _record_relaxations(monkeypatch):
    import solver.integer.pipeline as integer

    calls = []
    real = integer.solve_relaxation

    def spy(problem, settings, warm_start, lower, upper):
        res, engine = real(problem, settings, warm_start, lower, upper)
        calls.append((warm_start, res))
        return res, engine

    monkeypatch.setattr(integer, "solve_relaxation", spy)
    return calls


def _assert_warm_from_relaxation(last_relaxation, ws, info, problem1):
    """``ws`` (the warm start of round 1's first relaxation) is round 0's last relaxation iterate mapped."""
    from solver.differential import map_state

    assert ws is not None, "the second round's relaxation ran cold"
    expect = map_state(last_relaxation.state, info, problem1)
    np.testing.assert_array_equal(ws.x, expect.x)
    np.testing.assert_array_equal(ws.y, expect.y)
    assert ws.primal_weight == last_relaxation.state.primal_weight
    it = problem1.integrality
    assert np.any(np.abs(ws.x[it] - np.round(ws.x[it])) > 1e-6), "an integer point, not the relaxation iterate"


def test_next_round_relaxation_starts_from_this_rounds_relaxation_iterate(monkeypatch):
    from solver.api import solve_problem
    from solver.differential import apply_delta, map_state

    sc = SiaScenario(total_gpus=GPUS, seed=1)
    p0 = sc.base()
    calls = _record_relaxations(monkeypatch)
    s = Settings(relaxation_tol=1e-2, mip_gap_tol=0.0, integer_fallback="none")
    r0 = solve_problem(p0, s, None)
    n0 = len(calls)
    p1, info = apply_delta(p0, sc.next_delta(1, r0.x))
    r1 = solve_problem(p1, s, map_state(r0.state, info, p1))
    assert r1.warm_started and r1.point_feasible
    _assert_warm_from_relaxation(calls[n0 - 1][1], calls[n0][0], info, p1)


def test_engine_step_warm_starts_the_relaxation_from_the_saved_relaxation_iterate(monkeypatch, tmp_path):
    from solver.differential import apply_delta
    from solver.rounds import init as init_state
    from solver.rounds import step as step_state

    sc = SiaScenario(total_gpus=GPUS, seed=1)
    p0 = sc.base()
    calls = _record_relaxations(monkeypatch)
    init_state(p0, tmp_path / "state", Settings(relaxation_tol=1e-2, mip_gap_tol=0.0, integer_fallback="none"))
    n0 = len(calls)
    delta = sc.next_delta(1, None)
    p1, info = apply_delta(p0, delta)
    step_state(delta, tmp_path / "state")
    assert len(calls) > n0
    _assert_warm_from_relaxation(calls[n0 - 1][1], calls[n0][0], info, p1)


def test_round_every_rounds_at_doubling_iteration_budgets_and_stops_once_the_gap_is_met(sia_small, sia_optimum):
    p = sia_small
    r = solve_milp(p, Settings(relaxation_round_iterations=64, mip_gap_tol=5e-3, integer_fallback="none"), None)
    st = r.mip["relaxation_stages"]
    assert [s["iteration_budget"] for s in st] == [64 * 2 ** k for k in range(len(st))]
    assert all(s["iterations"] <= s["iteration_budget"] for s in st)
    assert all(s["gap_rel"] > 5e-3 for s in st[:-1])  # no stage before the last met the gap
    assert r.point_feasible
    assert_exactly_feasible(p, r.x)
    assert r.mip["lp_bound"] >= sia_optimum - 1e-9 * abs(sia_optimum)
    assert (sia_optimum - r.objective) / max(1.0, abs(r.objective)) <= r.mip["gap_rel"] + 1e-12
    assert r.status == (Status.OPTIMAL if r.mip["gap_rel"] <= 5e-3 else Status.FEASIBLE)


def test_round_every_with_an_unreachable_gap_runs_the_relaxation_to_tol(sia_small):
    r = solve_milp(sia_small, Settings(relaxation_round_iterations=64, mip_gap_tol=0.0, integer_fallback="none"),
                   None)
    st = r.mip["relaxation_stages"]
    assert st[-1]["lp_status"] == "OPTIMAL" and st[-1]["tol"] == Settings().tol
    assert all(s["lp_status"] == "ITERATION_LIMIT" for s in st[:-1])
    assert r.iterations == sum(s["iterations"] for s in st)


def test_round_every_keeps_the_callers_iteration_limit_for_the_whole_round(sia_small):
    r = solve_milp(sia_small, Settings(relaxation_round_iterations=64, mip_gap_tol=0.0, iteration_limit=200,
                                       integer_fallback="none"), None)
    assert r.iterations == 200
    assert [s["iteration_budget"] for s in r.mip["relaxation_stages"]] == [64, 128, 8]


@pytest.mark.parametrize("bad", [-1, 1.5])
def test_round_every_that_is_not_a_non_negative_integer_is_a_usage_error(sia_small, bad):
    with pytest.raises(UsageError, match="relaxation_round_iterations"):
        solve_milp(sia_small, Settings(relaxation_round_iterations=bad), None)


def test_vub_thresholds_try_sparser_parents_first_only_when_vub_links_exist(sia_small):
    from solver.integer.rounding import VUB_MIN, vub_thresholds
    from solver.integer.structure import detect_structure
    from solver.workloads.lb import LBScenario

    assert vub_thresholds(detect_structure(sia_small)) == (VUB_MIN,)
    th = vub_thresholds(detect_structure(LBScenario(64, 8, seed=0).base()))
    assert th[-1] == VUB_MIN and list(th) == sorted(th, reverse=True) and len(th) > 1


def test_sparse_vub_rounding_places_no_more_shards_than_dense_rounding_over_load_balancing_rounds(monkeypatch):
    """Load balancing 64 x 8, rounds 1-2 of three seeds: the threshold ladder's points (exactly feasible)
    move in total no more shards than rounding every parent of a positive LP child."""
    import solver.integer.rounding as rounding
    from solver.differential import apply_delta
    from solver.workloads.lb import LBScenario

    problems = []
    for seed in range(3):
        sc = LBScenario(64, 8, seed=seed)
        p1, _ = apply_delta(sc.base(), sc.next_delta(1, None))
        p2, _ = apply_delta(p1, sc.next_delta(2, None))
        problems += [p1, p2]
    s = Settings(integer_fallback="none")
    ladder = [solve_milp(p, s, None) for p in problems]
    monkeypatch.setattr(rounding, "VUB_LADDER", ())
    dense = [solve_milp(p, s, None) for p in problems]
    assert all(r.point_feasible for r in ladder + dense)
    for p, r in zip(problems, ladder, strict=True):
        assert_exactly_feasible(p, r.x)
    assert sum(r.objective for r in ladder) <= sum(r.objective for r in dense)


def test_dual_ascent_tightens_the_reported_bound_and_zero_steps_turn_it_off(sia_small):
    s = Settings(relaxation_round_iterations=32, mip_gap_tol=0.0, integer_fallback="none")
    on = solve_milp(sia_small, s, None)
    off = solve_milp(sia_small, replace(s, integer_dual_ascent_steps=0), None)
    asc = [x for x in on.mip["steps"] if x["step"] == "dual_ascent"]
    assert asc and not any(x["step"] == "dual_ascent" for x in off.mip["steps"])
    assert all(x["bound_after"] <= x["bound_before"] for x in asc)  # max problem: never looser
    assert on.mip["lp_bound"] <= off.mip["lp_bound"] + 1e-9 * abs(off.mip["lp_bound"])
    assert on.mip["lp_bound"] >= on.objective  # still a valid bound on the point found
    assert_exactly_feasible(sia_small, on.x)


@pytest.mark.parametrize("bad", [-1, 2.5, True])
def test_negative_or_fractional_dual_ascent_steps_is_a_usage_error(sia_small, bad):
    with pytest.raises(UsageError, match="integer_dual_ascent_steps"):
        solve_milp(sia_small, Settings(integer_dual_ascent_steps=bad), None)
