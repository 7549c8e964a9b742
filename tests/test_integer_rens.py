"""RENS (solver/integer/submip.py): HiGHS on the sub-MIP of the LP point's roundings.

Load balancing is the case it exists for: a heavy shard must be split over several servers, and which
servers get a piece depends on all other shards, so rounding each column on its own leaves the band rows
infeasible (seed 0 at 256 x 32 below), while the joint choice inside the LP point's support is feasible.
"""

from __future__ import annotations

import numpy as np
import pytest

from solver.integer import solve_milp
from solver.integer.submip import rens_bounds, without_fixed_columns
from solver.model.errors import UsageError
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.status import Status
from solver.workloads.lb import LBScenario
from tests.helpers import assert_exactly_feasible, assignment_milp

# RENS's own mechanics, one relaxation solved to tol (the settings before the defaults became staged at a
# 0.5% target, #15: the default round is tested in test_integer_defaults.py)
HEURISTICS_ONLY = dict(integer_fallback="none", integer_dive_max=0, relaxation_round_iterations=0,
                       mip_gap_tol=1e-4)


@pytest.fixture(scope="module")
def lb_split():
    return LBScenario(256, 32, seed=0).problem()


def _problem(lower, upper, integrality):
    n = len(lower)
    return Problem.from_arrays(cost=np.zeros(n), col_lower=np.array(lower, float), col_upper=np.array(upper, float),
                               integrality=np.array(integrality, bool), row_lower=np.zeros(0), row_upper=np.zeros(0),
                               matrix=np.zeros((0, n)))


def test_rens_bounds_fix_integral_values_keep_floor_and_ceil_of_fractional_ones_and_leave_continuous_alone():
    p = _problem([0, 0, -5, 0, 0, 1], [1, 10, 5, 4, 2.5, 3], [True, True, True, True, False, True])
    x = np.array([0.00005, 3.4, -2.99995, 7.0, 1.3, 0.2])
    lo, hi = rens_bounds(p, x, 1e-4)
    assert lo.tolist() == [0, 3, -3, 4, 0, 1]  # 7 clipped to its upper bound 4; 0.2 clipped to its lower bound 1
    assert hi.tolist() == [0, 4, -3, 4, 2.5, 1]
    lo0, hi0 = rens_bounds(p, x, 0.0)  # only exact integers fixed
    assert (lo0[:3].tolist(), hi0[:3].tolist()) == ([0, 3, -3], [1, 4, -2])
    x[1] = np.nan  # a broken LP value never gives NaN bounds: the column is fixed at its lower bound
    lo1, hi1 = rens_bounds(p, x, 1e-4)
    assert (lo1[1], hi1[1]) == (0.0, 0.0) and np.isfinite(lo1).all() and not np.isnan(hi1).any()


def test_rounding_alone_finds_no_load_balancing_point_where_rens_finds_an_exact_one(lb_split):
    alone = solve_milp(lb_split, Settings(**HEURISTICS_ONLY, integer_submip_seconds=0), None)
    assert alone.status == Status.NO_INTEGER_SOLUTION
    assert all(s["step"] != "rens" for s in alone.mip["steps"])
    r = solve_milp(lb_split, Settings(**HEURISTICS_ONLY), None)
    assert r.status in (Status.OPTIMAL, Status.FEASIBLE) and r.point_feasible
    assert r.mip["source"] == "heuristic" and not r.mip["fallback_used"]
    rens_steps = [s for s in r.mip["steps"] if s["step"] == "rens"]
    assert len(rens_steps) == 1  # no second, identical sub-MIP as an "improvement"
    step = rens_steps[0]
    assert step["highs_status"] in ("Optimal", "Time limit reached") and step["changed"] > 0
    assert 0 < step["free_integers"] < int(lb_split.integrality.sum()) // 10  # a small sub-MIP
    assert_exactly_feasible(lb_split, r.x)
    assert r.objective >= r.mip["lp_bound"] - 1e-9  # minimisation: the LP bound stays below the point


def test_rens_as_improvement_never_returns_a_worse_point_and_runs_by_default_on_a_large_gap():
    p = LBScenario(256, 32, seed=1).problem()
    base = solve_milp(p, Settings(**HEURISTICS_ONLY, integer_submip_gap=float("inf")), None)
    assert base.point_feasible and all(s["step"] != "rens" for s in base.mip["steps"])
    r = solve_milp(p, Settings(**HEURISTICS_ONLY, integer_submip_gap=0.0), None)
    step = next(s for s in r.mip["steps"] if s["step"] == "rens")
    assert step["reason"] == "gap above integer_submip_gap"
    assert r.point_feasible and r.objective <= base.objective
    assert_exactly_feasible(p, r.x)
    default = solve_milp(p, Settings(**HEURISTICS_ONLY), None)  # the LB bound is weak: gap far above 1%
    assert any(s.get("reason") == "gap above integer_submip_gap" for s in default.mip["steps"])
    assert default.objective <= base.objective


@pytest.mark.parametrize("bad", [-1.0, float("nan")])
def test_negative_or_nan_submip_seconds_is_a_usage_error(lb_split, bad):
    with pytest.raises(UsageError, match="integer_submip_seconds"):
        solve_milp(lb_split, Settings(integer_submip_seconds=bad), None)


def test_rens_runs_on_each_staged_relaxation_point_at_most_three_times_and_keeps_points_exact():
    from solver.integer.pipeline import RENS_MAX_PER_ROUND
    from solver.workloads.sia import SiaScenario

    p = SiaScenario(total_gpus=128, seed=0).base()
    r = solve_milp(p, Settings(relaxation_round_iterations=32, mip_gap_tol=0.0, integer_submip_gap=0.0,
                               integer_fallback="none"), None)
    rens_steps = [s for s in r.mip["steps"] if s["step"] == "rens"]
    stages = r.mip["relaxation_stages"]
    assert len(stages) > RENS_MAX_PER_ROUND  # enough stages to hit the cap
    assert len(rens_steps) == RENS_MAX_PER_ROUND == sum(s["rens"] for s in stages)
    assert [s["stage"] for s in rens_steps] == [0, 1, 2]
    assert r.point_feasible
    assert_exactly_feasible(p, r.x)


def test_sub_mip_without_fixed_columns_has_the_same_objective_and_row_activities_once_mapped_back():
    rng = np.random.default_rng(7)
    m, n = 6, 12
    A = rng.integers(-3, 4, size=(m, n)).astype(float) * (rng.random((m, n)) < 0.5)
    lo = rng.integers(-2, 1, n).astype(float)
    hi = lo + rng.integers(0, 3, n)  # a third or so fixed (lo == hi)
    integ = rng.random(n) < 0.7
    p = Problem.from_arrays(cost=rng.normal(size=n), col_lower=np.full(n, -5.0), col_upper=np.full(n, 5.0),
                            row_lower=np.full(m, -np.inf), row_upper=np.full(m, 50.0), matrix=A,
                            integrality=integ, sense=-1, offset=1.5)
    sub, keep = without_fixed_columns(p, lo, hi)
    assert np.array_equal(keep, np.flatnonzero(lo < hi)) and sub.n_cols == keep.size and sub.n_rows == m
    for _ in range(5):
        x_sub = rng.uniform(lo[keep], hi[keep])
        x = lo.copy()
        x[keep] = x_sub
        assert sub.objective(x_sub) == pytest.approx(p.objective(x), rel=1e-12, abs=1e-12)
        # the shifted row bounds move by exactly the fixed columns' activity
        np.testing.assert_allclose(p.row_upper - p.row_activity(x), sub.row_upper - sub.row_activity(x_sub),
                                   rtol=1e-12, atol=1e-12)


def test_rens_hands_highs_only_the_free_columns_and_its_stopping_gap(lb_split, monkeypatch):
    import solver.integer.fallback as fallback
    from solver.integer.relaxation import solve_relaxation
    from solver.integer.structure import detect_structure
    from solver.integer.submip import rens

    st = detect_structure(lb_split)
    lp, _ = solve_relaxation(lb_split, Settings(iteration_limit=2000), None, st.lower, st.upper)
    seen = []
    real = fallback.highs_mip

    def spy(sub, seconds, seed=None, mip_rel_gap=None, **kw):
        seen.append((sub.n_cols, int(np.count_nonzero(sub.col_lower == sub.col_upper)), mip_rel_gap))
        return real(sub, seconds, seed, mip_rel_gap=mip_rel_gap, **kw)

    monkeypatch.setattr(fallback, "highs_mip", spy)
    x, info = rens(lb_split, lp.x, 30.0, mip_rel_gap=2.5e-3)
    assert seen and all(fixed == 0 and mip_gap == 2.5e-3 for _, fixed, mip_gap in seen)
    lo, hi = rens_bounds(lb_split, lp.x, 1e-4)
    assert seen[0][0] == int(np.count_nonzero(lo < hi)) < lb_split.n_cols  # the LP point fixes many binaries
    if x is not None:
        assert_exactly_feasible(lb_split, x)


def test_the_lagrangian_core_finds_a_point_where_every_rens_neighbourhood_is_infeasible():
    from solver.integer.bound import ChoiceLagrangian
    from solver.integer.structure import detect_structure
    from solver.integer.submip import core_bounds, rens

    p = assignment_milp(8, 4)
    st = detect_structure(p)
    lag = ChoiceLagrangian(p, st.lower, st.upper, st.choice_rows, st.choice_kind, st.csr_indptr, st.csr_indices)
    x_bad = np.zeros(p.n_cols)
    x_bad[0::4] = 1.0  # an integral "LP point" with every item in bin 0: over capacity, and RENS fixes it all
    x, info = rens(p, x_bad, 20.0)
    assert x is None and info["highs_status"] == "Infeasible"
    core = core_bounds(p, x_bad, lag, np.zeros(p.n_rows))
    free = core[1] > core[0]
    assert free.sum() == 3 * 8  # the 3 cheapest bins of every item (bin 0 among them or not)
    x, info = rens(p, x_bad, 20.0, core=lambda: core)
    assert x is not None and info["attempts"][-1]["neighbourhood"] == "core"
    assert_exactly_feasible(p, x)


def test_core_outside_choice_rows_frees_the_integers_cheapest_to_move_off_their_rens_value(monkeypatch):
    import solver.integer.submip as submip
    from solver.integer.bound import ChoiceLagrangian
    from solver.integer.structure import detect_structure

    # min c'x over 6 binaries with one knapsack row (no choice rows); LP point integral: x = (1,1,0,0,0,0)
    c = np.array([-5.0, -1.0, 2.0, 0.5, 3.0, 1.0])
    p = Problem.from_arrays(cost=c, col_lower=np.zeros(6), col_upper=np.ones(6), row_lower=[-np.inf],
                            row_upper=[10.0], matrix=np.ones((1, 6)), integrality=np.ones(6, dtype=bool))
    st = detect_structure(p)
    lag = ChoiceLagrangian(p, st.lower, st.upper, st.choice_rows, st.choice_kind, st.csr_indptr, st.csr_indices)
    x_lp = np.array([1.0, 1.0, 0.0, 0.0, 0.0, 0.0])
    monkeypatch.setattr(submip, "CORE_MIN_EXTRA", 3)
    lo, hi = submip.core_bounds(p, x_lp, lag, np.zeros(1))
    # leaving cost at y = 0: x0 at 1 -> 5, x1 at 1 -> 1, x2..x5 at 0 -> 2, 0.5, 3, 1: the three cheapest are
    # x3 (0.5), then x1 and x5 (1, ties kept in column order)
    assert (hi > lo).tolist() == [False, True, False, True, False, True]
    assert lo[0] == hi[0] == 1.0 and lo[2] == hi[2] == 0.0


def test_rens_bounds_never_fix_a_column_at_an_infinite_value():
    # a NaN LP value on an integer column with no lower bound: its upper bound, or 0 when both are infinite
    p = _problem([-np.inf, -np.inf], [3, np.inf], [True, True])
    lo, hi = rens_bounds(p, np.array([np.nan, np.inf]), 1e-4)
    assert lo.tolist() == [3.0, 0.0] and hi.tolist() == [3.0, 0.0]


def test_fallback_seed_values_out_of_bounds_or_huge_are_left_out_and_highs_still_solves():
    # HiGHS 1.16 answered "Solve error" to a seed of 1e18 here (and segfaulted on a larger model)
    from solver.integer.fallback import highs_mip

    p = Problem.from_arrays(cost=[1.0, 1.0], col_lower=[-np.inf, -np.inf], col_upper=[np.inf, np.inf],
                            row_lower=[2.5], row_upper=[np.inf], matrix=np.ones((1, 2)),
                            integrality=np.ones(2, bool))
    x, info = highs_mip(p, 10.0, seed=np.array([1e18, np.nan]))
    assert not info["seeded"] and x is not None and p.objective(x) == 3.0
    x, info = highs_mip(p, 10.0, seed=np.array([2.0, 1.0]))
    assert info["seeded"] and p.objective(x) == 3.0


def test_a_diverged_relaxation_never_crashes_the_process_in_the_highs_fallback():
    # a break-it pass found an unbounded MILP whose relaxation ran to the iteration limit with |x| ~ 1e17;
    # the rounded point seeded HiGHS with 1e18..3e304 and HiGHS 1.16 segfaulted. Run it in a child process.
    import subprocess
    import sys

    code = """
import numpy as np
from solver.model.problem import Problem
from solver.integer import solve_milp
from solver.model.settings import Settings
INF = np.inf
A = np.array([[-3.0, -2.0, 0.0, 1.0, 3.0, 3.0, -2.0, 0.0, 0.0],
              [0.0, 0.0, 702.580977, 0.0, 0.0, 0.0, -0.026475, 11.241174, 0.0],
              [0.0, 0.0, 4.423484, 0.0, 0.014948, 0.767295, 3.698249, -21343.883567, -49.380392],
              [1.0, -4.0, -1.0, 0.0, 4.0, -2.0, 0.0, -4.0, 1.0],
              [2.0, -3.0, 3.0, 0.0, 0.0, 3.0, 0.0, -3.0, 0.0],
              [-1208.594523, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1586.889262, -1885.333167]])
p = Problem.from_arrays(cost=[3.0, 4.0, -4.0, -3.0, 4.0, 3.0, -3.0, 0.0, 3.0],
        col_lower=[-INF, -INF, -3.0, -INF, -3.0, -1.0, -INF, -INF, -INF],
        col_upper=[INF, INF, -2.0, INF, INF, 2.0, INF, INF, INF],
        row_lower=[18.0, -INF, 21385.184286, -992.0, 0.0, 7098.005998],
        row_upper=[INF, -1415.403128, 21385.184286, INF, 0.0, 7098.005998],
        matrix=A, integrality=[True]*5 + [False] + [True]*3, sense=-1, offset=12.5)
r = solve_milp(p, Settings(integer_fallback_seconds=5), None)
print(r.status.name)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    # HiGHS classifies the MILP INFEASIBLE_OR_UNBOUNDED; since a1d710f a round that also finds an integer-feasible
    # point (HiGHS with the costs set to 0, within the budget: load-dependent) proves it unbounded (rational data
    # with an unbounded relaxation), so either verdict is right; the test is about the child not crashing
    assert out.stdout.split()[-1] in ("INFEASIBLE_OR_UNBOUNDED", "DUAL_INFEASIBLE")
