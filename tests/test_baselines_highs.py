"""HiGHS cold baseline: statuses, known answers, limits, threads, and the shared violation ruler."""

from __future__ import annotations

import numpy as np
import pytest

from solver.baselines import point_quality, solve_highs
from solver.highs_bridge import from_highs_lp, new_highs
from solver.model.errors import UsageError
from solver.model.problem import Problem
from solver.model.status import Status
from tests.helpers import manifest, require_data


def _knapsack(integer: bool) -> Problem:
    # max 5a + 4b + 3c  s.t.  2a + 3b + c <= 5 (cap),  4a + b + 2c <= 11,  0 <= a,b,c <= 1
    A = np.array([[2.0, 3.0, 1.0], [4.0, 1.0, 2.0]])
    return Problem.from_arrays(cost=[5.0, 4.0, 3.0], col_lower=[0, 0, 0], col_upper=[1, 1, 1],
                               row_lower=[-np.inf, -np.inf], row_upper=[5.0, 11.0], matrix=A,
                               integrality=[integer] * 3, sense=-1, col_names=["a", "b", "c"],
                               row_names=["cap", "cap2"])


def _read(path) -> Problem:
    h = new_highs()
    h.readModel(str(path))
    h.ensureColwise()
    return from_highs_lp(h.getLp())


def test_point_quality_measures_row_bound_and_integrality_violations():
    p = _knapsack(True)
    q = point_quality(p, np.array([1.0, 1.0, 0.5]))  # cap activity 5.5 > 5 by 0.5; c = 0.5 fractional
    assert q.max_row_violation == pytest.approx(0.5)
    assert q.max_row_violation_rel == pytest.approx(0.5 / 5.0)
    assert q.integrality_violation == pytest.approx(0.5)
    assert q.max_bound_violation == 0.0
    assert q.objective == pytest.approx(5 + 4 + 1.5)
    assert point_quality(p, np.array([1.0, 0.0, 2.0])).max_bound_violation == pytest.approx(1.0)


@pytest.mark.parametrize("solver", ["choose", "simplex", "ipm", "pdlp"])
def test_highs_solvers_reach_the_known_optimum_of_afiro(solver):
    path = require_data("mps/afiro.mps")
    expected = float(next(r for r in manifest("mps") if r["file"] == "afiro.mps")["optimal_objective"])
    r = solve_highs(_read(path), solver=solver, threads=1)
    assert r.status == Status.OPTIMAL
    tol = 1e-3 if solver == "pdlp" else 1e-8
    assert abs(r.objective - expected) <= tol * (1 + abs(expected))
    # PDLP stops on a norm-relative KKT test, so single rows may be off by more than 1e-4
    assert r.max_row_violation_rel <= (1e-2 if solver == "pdlp" else 1e-7)
    assert r.x.shape == (32,)


def test_mip_problem_is_solved_as_mip_and_relaxation_bounds_it():
    p = _knapsack(True)
    mip = solve_highs(p, solver="simplex")
    lp = solve_highs(p, relax=True)
    assert mip.status == Status.OPTIMAL and mip.extra["solver"] == "mip"
    assert mip.integrality_violation == 0.0
    assert lp.integrality_violation > 0  # the relaxation's optimum is fractional here
    assert lp.objective >= mip.objective - 1e-9  # maximisation: relaxation is an upper bound
    assert mip.objective == pytest.approx(9.0)  # brute force: a + c (8) vs a + b (9, cap 5) vs b + c (7)


def test_infeasible_model_reports_primal_infeasible():
    p = Problem.from_arrays(cost=[1.0], col_lower=[0], col_upper=[1], row_lower=[2.0], row_upper=[3.0],
                            matrix=np.array([[1.0]]))
    r = solve_highs(p, solver="simplex")
    assert r.status in (Status.PRIMAL_INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED)


def test_zero_time_limit_is_reported_as_hit():
    path = require_data("mps/25fv47.mps")
    r = solve_highs(_read(path), solver="simplex", time_limit_seconds=0.0)
    assert r.hit_limit and r.status == Status.TIME_LIMIT
    assert "time limit" in r.message


def test_changing_thread_count_between_solves_keeps_working():
    p = _knapsack(False)
    statuses = [solve_highs(p, solver="simplex", threads=t).status for t in (1, 2, 1)]
    assert statuses == [Status.OPTIMAL] * 3
    assert solve_highs(p).status == Status.OPTIMAL  # default threads reuse the running scheduler


def test_unknown_solver_name_is_a_usage_error():
    with pytest.raises(UsageError, match="unknown HiGHS solver"):
        solve_highs(_knapsack(False), solver="barrier")


def test_mip_time_limit_holds_even_when_highs_overruns_it():
    from solver.workloads.sia import SiaScenario

    p = SiaScenario(total_gpus=256, seed=0).base()  # HiGHS needs several seconds for this MILP
    r = solve_highs(p, time_limit_seconds=0.3, grace_seconds=1.0)
    assert r.hit_limit and r.status in (Status.FEASIBLE, Status.TIME_LIMIT)
    assert r.extra["hard_limit"]
    assert r.seconds < 0.3 + 1.0 + 2.0  # killed at the deadline at the latest (+ slack for a busy box)
    if r.x is not None:
        assert r.integrality_violation <= 1e-6 and r.max_row_violation_rel <= 1e-6


def test_in_process_mip_limit_is_enforced_by_the_interrupt_callback():
    from solver.workloads.sia import SiaScenario

    p = SiaScenario(total_gpus=256, seed=0).base()
    r = solve_highs(p, time_limit_seconds=0.3, hard_limit=False)
    assert r.hit_limit and "hard_limit" not in r.extra


def test_highs_choose_says_which_algorithm_it_picked():
    from solver.baselines.highs import solve_highs
    from tests.helpers import small_lp

    r = solve_highs(small_lp(), solver="choose")
    assert r.status.name == "OPTIMAL" and r.extra["solver_picked"] in ("simplex", "ipm", "pdlp")
    assert f"HiGHS choose -> {r.extra['solver_picked']}: Optimal" == r.message
    assert "solver_picked" not in solve_highs(small_lp(), solver="ipm").extra


def test_mip_rel_gap_reaches_highs_and_the_point_stays_feasible(monkeypatch):
    import solver.baselines.highs as hb

    made = []
    real = hb.new_highs

    def spy(*a, **k):
        made.append(real(*a, **k))
        return made[-1]

    monkeypatch.setattr(hb, "new_highs", spy)
    res = solve_highs(_knapsack(True), solver="mip", mip_rel_gap=0.25, hard_limit=False)
    assert made[-1].getOptionValue("mip_rel_gap")[1] == 0.25
    assert res.status == Status.OPTIMAL and res.integrality_violation == 0.0
    assert res.objective >= 9.0 * (1 - 0.25) - 1e-9  # within the gap of the optimum 9
