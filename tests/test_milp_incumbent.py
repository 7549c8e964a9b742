"""The previous round's integer point is a candidate incumbent of the next MILP round.

A round used to throw the previous point away and start integerization from scratch: p0201 with an EMPTY
delta and ``--time-limit 1.5`` ended FEASIBLE 7735 (or with no point) instead of keeping 7615. Here the
rounds run without the HiGHS fallback (``integer_fallback="none"``): what the round returns is then what
its own heuristics and the previous point give, with no timing involved (before the fix: egout 689.45
instead of 568.10, flugpl no point at all).
"""

from __future__ import annotations

import math

import numpy as np
import pyarrow.parquet as pq
import pytest

from solver import rounds
from solver.integer import solve_milp
from solver.integer.check import check_point
from solver.integer.incumbent import map_previous_point
from solver.integer.submip import rens
from solver.model.delta import Delta
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.state import SolverState
from tests.helpers import require_data

NO_FALLBACK = Settings(integer_fallback="none")
INF = np.inf


def _init(name: str, tmp_path):
    state = tmp_path / "state"
    r0 = rounds.init(str(require_data("mps") / name), state_dir=state)
    assert r0["status"] == "OPTIMAL" and r0["point_feasible"]
    sol = pq.read_table(state / r0["solution_path"])
    return state, r0, sol.column("name").to_pylist(), np.asarray(sol.column("value").to_numpy(), dtype=float)


def _problem(state) -> Problem:
    from formats.checkpoint import StateStore

    return StateStore(state, reuse=False).load().problem


@pytest.mark.parametrize("name", ["egout.mps", "flugpl.mps"])
def test_empty_delta_keeps_the_previous_point(name, tmp_path):
    # egout has continuous columns (completed exactly), flugpl general integers
    state, r0, names, x0 = _init(name, tmp_path)
    r1 = rounds.step(Delta.concat([], base_round=0), state_dir=state, settings=NO_FALLBACK)
    assert r1["accepted"] and r1["point_feasible"]
    assert r1["objective"] == pytest.approx(r0["objective"], rel=1e-12, abs=1e-9)
    assert r1["mip"]["incumbent"] == "previous" and r1["mip"]["previous_point"]["feasible"]
    assert r1["changed_variables"] == 0 or r1["mip"]["previous_point"]["resolved"]


def test_empty_delta_keeps_status_and_objective_with_the_default_settings(tmp_path):
    state, r0, _, _ = _init("egout.mps", tmp_path)
    r1 = rounds.step(Delta.concat([], base_round=0), state_dir=state)
    assert r1["status"] == r0["status"] == "OPTIMAL"
    assert r1["objective"] == pytest.approx(r0["objective"], rel=1e-12, abs=1e-9)
    assert r1["mip"]["incumbent"] == "previous"


@pytest.mark.parametrize("name", ["egout.mps", "flugpl.mps"])
def test_cost_change_on_a_zero_variable_keeps_a_point_as_good_as_the_previous_one(name, tmp_path):
    state, r0, names, x0 = _init(name, tmp_path)
    p = _problem(state)
    j = int(np.flatnonzero((x0 == 0) & p.integrality)[0]) if np.any((x0 == 0) & p.integrality) \
        else int(np.flatnonzero(x0 == 0)[0])
    d = Delta.concat([Delta.vars([names[j]], cost=[p.cost[j] * 0.5 - 1.0])], base_round=0)
    r1 = rounds.step(d, state_dir=state, settings=NO_FALLBACK)
    p1 = _problem(state)
    again = p1.objective(x0)  # the previous point re-evaluated on the new costs (x0[j] = 0: unchanged)
    assert check_point(p1, x0)["ok"]
    assert r1["point_feasible"]
    assert p1.sense * (r1["objective"] - again) <= 1e-9 * max(1.0, abs(again))


@pytest.mark.parametrize("lower, kept", [(0.0, True), (1.0, False)])
def test_a_new_column_takes_0_when_its_bounds_allow_it_else_the_previous_point_is_left_out(lower, kept, tmp_path):
    # a new integer column in [lower, 3] with a positive cost (0 is its best value when allowed)
    state, r0, names, x0 = _init("egout.mps", tmp_path)
    # in no row: a coef of 0 adds it without coefficients on purpose (a delta refuses a new column no coef names)
    d = Delta.concat([Delta.vars(["new"], cost=[1.0], lower=[lower], upper=[3.0], integer=[True]),
                      Delta.coefs(["new"], [_problem(state).row_names[0]], [0.0])], base_round=0)
    r1 = rounds.step(d, state_dir=state, settings=NO_FALLBACK)
    pp = r1["mip"]["previous_point"]
    assert pp["feasible"] is kept
    if kept:
        assert r1["mip"]["incumbent"] == "previous"
        assert r1["objective"] == pytest.approx(r0["objective"], rel=1e-12, abs=1e-9)
    else:  # 1 would be feasible too, but a value the previous round never chose is not invented
        assert "no previous value" in pp["reason"]


def test_a_delta_that_cuts_off_the_previous_point_does_not_return_it(tmp_path):
    # a no-good cut on the previous point's binaries that are 1: sum of them <= count - 1
    state, r0, names, x0 = _init("p0033.mps.gz", tmp_path)
    p = _problem(state)
    ones = [names[j] for j in np.flatnonzero(p.integrality & (x0 == 1))]
    d = Delta.concat([Delta.cons(["cut"], upper=[len(ones) - 1.0]),
                      Delta.coefs(var=ones, con=["cut"] * len(ones), value=[1.0] * len(ones))], base_round=0)
    r1 = rounds.step(d, state_dir=state, settings=NO_FALLBACK, accept_failed=True)
    pp = r1["mip"]["previous_point"]
    assert not pp["feasible"] and "row" in pp["reason"]
    assert r1["mip"]["incumbent"] != "previous"
    if r1["point_feasible"]:
        sol = pq.read_table(state / r1["solution_path"])
        x1 = np.asarray(sol.column("value").to_numpy(), dtype=float)
        assert not np.array_equal(x1, x0) and check_point(_problem(state), x1)["ok"]


def test_warm_round_on_an_unchanged_model_is_as_good_as_a_cold_solve(tmp_path):
    # the same model solved cold (with HiGHS) and then warm with an empty delta (heuristics only)
    state, r0, _, x0 = _init("egout.mps", tmp_path)
    cold = solve_milp(_problem(state), Settings(), None)
    r1 = rounds.step(Delta.concat([], base_round=0), state_dir=state, settings=NO_FALLBACK)
    assert cold.point_feasible and r1["point_feasible"]
    assert r1["objective"] <= cold.objective + 1e-9 * max(1.0, abs(cold.objective))


def knapsack() -> Problem:
    """max 5a + 4b + 3c + y, 2a + 2b + 2c + y <= 4.5, y <= 0.5 + 2c (binaries a, b, c; y continuous in [0, 3])."""
    A = np.array([[2.0, 2, 2, 1], [0, 0, -2, 1]])
    return Problem.from_arrays(cost=[5, 4, 3, 1], col_lower=[0, 0, 0, 0], col_upper=[1, 1, 1, 3],
                               row_lower=[-INF, -INF], row_upper=[4.5, 0.5], matrix=A,
                               integrality=[True, True, True, False], sense=-1,
                               col_names=["a", "b", "c", "y"], row_names=["cap", "link"])


def test_previous_point_is_the_incumbent_and_its_continuous_part_is_completed():
    p = knapsack()
    # previous point: a = b = 1, c = 0 and y = 2 (feasible before; now cap allows y <= 0.5 only)
    ws = SolverState(x=np.array([1.0, 1, 0.25, 0.5]), y=np.zeros(2), integer_x=np.array([1.0, 1, 0, 2]))
    r = solve_milp(p, NO_FALLBACK, ws)
    pp = r.mip["previous_point"]
    assert pp["feasible"] and pp["resolved"] and pp["objective"] == pytest.approx(9.5)
    assert r.point_feasible and r.objective >= 9.5 - 1e-9
    assert r.mip["steps"][0]["step"] == "previous"


def test_an_infeasible_previous_point_is_left_out():
    p = knapsack()
    ws = SolverState(x=np.zeros(4), y=np.zeros(2), integer_x=np.array([1.0, 1, 1, 0]))  # 6 > 4.5
    r = solve_milp(p, NO_FALLBACK, ws)
    assert not r.mip["previous_point"]["feasible"] and r.mip["incumbent"] != "previous"
    ws_nan = SolverState(x=np.zeros(4), y=np.zeros(2), integer_x=np.array([1.0, np.nan, 0, 0]))
    r2 = solve_milp(p, NO_FALLBACK, ws_nan)
    assert "no previous value" in r2.mip["previous_point"]["reason"]


def test_map_previous_point_by_name():
    # new columns: 0 when within bounds, else no value; a survivor outside its new bounds: no value
    p = Problem.from_arrays(cost=[1, 1, 1, 1], col_lower=[0, 0, 0, 1], col_upper=[1, 1, 5, 3],
                            row_lower=[-INF], row_upper=[10], matrix=np.ones((1, 4)),
                            integrality=[True] * 4)
    prev = np.array([1.0, 7.0])  # old columns 0 and 1
    got = map_previous_point(prev, np.array([1, 0, -1, -1]), p)
    assert math.isnan(got[0]) and got[1] == 1.0 and got[2] == 0.0 and math.isnan(got[3])
    assert map_previous_point(None, np.array([0, 1, -1, -1]), p) is None


def test_rens_starts_highs_from_a_seed_inside_its_neighbourhood():
    p = knapsack()
    x_lp = np.array([1.0, 0.5, 0.5, 0.5])
    seed = np.array([1.0, 1, 0, 0.5])
    x, info = rens(p, x_lp, 5.0, seed=seed)
    assert x is not None and info["attempts"][0]["seeded"]
    _, info2 = rens(p, x_lp, 5.0, seed=np.array([0.0, 1, 0, 0.5]))  # a = 0 is outside (a is fixed at 1)
    assert not info2["attempts"][0]["seeded"]


def test_fill_reads_a_nan_previous_value_as_unknown():
    # max a + b + y, a + b <= 1: fill raises one of a, b; a previous value NaN (no value) must break the
    # tie as no previous value does, not as a previous 1 (NaN != 0 read as "the previous value differs")
    from solver.integer.rounding import fill_pinned
    from solver.integer.structure import detect_structure

    p = Problem.from_arrays(cost=[1, 1, 1], col_lower=[0, 0, 0], col_upper=[1, 1, 1], row_lower=[-INF],
                            row_upper=[1], matrix=np.array([[1.0, 1, 0]]), integrality=[True, True, False],
                            sense=-1)
    st = detect_structure(p)
    x = np.array([0.0, 0, 1])
    unknown, _ = fill_pinned(p, st, x, None)
    assert np.array_equal(fill_pinned(p, st, x, np.array([0.0, np.nan, 1]))[0], unknown)
    assert not np.array_equal(fill_pinned(p, st, x, np.array([0.0, 1, 1]))[0], unknown)  # the tie-break matters
