"""solve_milp end to end: exact feasibility of every returned point, statuses, bound, tie-breaking.

Every integer result is re-checked here against the raw problem with the tests' own checker
(``tests.helpers.assert_exactly_feasible``):
bounds and integrality exactly, every row to 1e-9 relative to max(1, |bound|).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from solver.integer import solve_milp
from solver.model.errors import UsageError
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status
from tests.helpers import assert_exactly_feasible, highs_mip_objective

INF = np.inf


def check_result(p: Problem, r) -> None:
    assert r.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert r.point_feasible
    assert_exactly_feasible(p, r.x)
    assert r.objective == pytest.approx(float(p.cost @ r.x + p.offset), rel=1e-12, abs=1e-12)
    assert r.mip["integer_objective"] == r.objective
    # the bound is on the right side of the integer objective
    assert p.sense * (r.objective - r.mip["lp_bound"]) >= -1e-9 * max(1.0, abs(r.objective))
    assert r.state is not None and np.array_equal(r.state.integer_x, r.x)


def test_equality_rows_that_naive_rounding_breaks_get_a_feasible_integer_point():
    # x1 + x2 = 3, x3 + x4 = 2, x1 + x3 <= 2.5: LP optimum fractional (e.g. 1.5, 1.5, 1, 1);
    # rounding each to nearest gives x1 + x2 = 4.
    A = np.array([[1, 1, 0, 0], [0, 0, 1, 1], [1, 0, 1, 0]], float)
    p = Problem.from_arrays(cost=[1, 1, 1, 1], col_lower=[0] * 4, col_upper=[2] * 4, row_lower=[3, 2, -INF],
                            row_upper=[3, 2, 2.5], matrix=A, integrality=[True] * 4)
    r = solve_milp(p, Settings(integer_fallback="none"), None)
    check_result(p, r)
    assert r.mip["source"] == "heuristic" and not r.mip["fallback_used"]
    assert r.objective == 5.0


def sia_like(jobs: int, seed: int) -> Problem:
    """Jobs x configurations (type, 1/2/4/8 GPUs), one configuration per job, GPUs per type <= capacity;
    maximize sum sqrt(goodput) + 1.1 per allocated job (Sia/COpter max form)."""
    rng = np.random.default_rng(seed)
    caps = np.array([48.0, 32.0, 24.0])
    sizes = np.array([1, 2, 4, 8])
    T, S = caps.size, sizes.size
    speed = rng.uniform(0.5, 2.0, (jobs, T))
    scal = rng.uniform(0.6, 0.95, jobs)
    good = speed[:, :, None] * sizes[None, None, :] ** scal[:, None, None]
    val = np.sqrt(good) + 1.1
    jj, tt, ss = np.meshgrid(np.arange(jobs), np.arange(T), np.arange(S), indexing="ij")
    jj, tt, ss = jj.ravel(), tt.ravel(), ss.ravel()
    n = jj.size
    rows = np.concatenate([tt, T + jj])
    cols = np.concatenate([np.arange(n), np.arange(n)])
    vals = np.concatenate([sizes[ss].astype(float), np.ones(n)])
    import scipy.sparse as sp

    A = sp.csc_array((vals, (rows, cols)), shape=(T + jobs, n))
    return Problem.from_arrays(cost=val[jj, tt, ss], col_lower=np.zeros(n), col_upper=np.ones(n),
                               row_lower=np.full(T + jobs, -INF), row_upper=np.concatenate([caps, np.ones(jobs)]),
                               matrix=A, integrality=np.ones(n, bool), sense=-1)


@pytest.mark.parametrize("seed", [0, 1])
def test_sia_like_assignment_is_within_half_a_percent_of_highs_mip(seed):
    p = sia_like(60, seed)
    r = solve_milp(p, Settings(integer_fallback="none"), None)
    check_result(p, r)
    assert r.mip["source"] == "heuristic"
    assert r.mip["structure"]["choice_rows"] == 60 and r.mip["structure"]["capacity_rows"] == 3
    opt = highs_mip_objective(p)
    assert r.objective >= opt - 0.005 * abs(opt)
    assert r.mip["lp_bound"] >= opt - 1e-6 * abs(opt)  # a valid upper bound for this maximisation


def test_previous_integer_choice_breaks_ties():
    # two identical configurations for one job: the LP is indifferent; the previous round's choice wins
    A = np.array([[1, 1]], float)
    p = Problem.from_arrays(cost=[1, 1], col_lower=[0, 0], col_upper=[1, 1], row_lower=[-INF], row_upper=[1],
                            matrix=A, integrality=[True, True], sense=-1)
    for prev in ([1.0, 0.0], [0.0, 1.0]):
        ws = SolverState(x=np.array([0.5, 0.5]), y=np.zeros(1), integer_x=np.array(prev))
        r = solve_milp(p, Settings(integer_fallback="none"), ws)
        check_result(p, r)
        assert r.x.tolist() == prev


def lb_like() -> Problem:
    """Load-balancing shape: r[i,j] <= x[i,j], sum_i r[i,j] = 1, memory sum_j x[i,j] <= 3, loads within
    +-10% of the mean; minimise copies on servers that did not hold the shard."""
    rng = np.random.default_rng(3)
    S_, N = 6, 3
    load = rng.uniform(1, 3, S_)
    nx = S_ * N
    rows, cols, vals, rl, ru = [], [], [], [], []
    k = 0
    for i in range(N):
        for j in range(S_):
            rows += [k, k]
            cols += [i * S_ + j, nx + i * S_ + j]
            vals += [-1.0, 1.0]
            rl.append(-INF)
            ru.append(0.0)
            k += 1
    for j in range(S_):
        for i in range(N):
            rows.append(k)
            cols.append(nx + i * S_ + j)
            vals.append(1.0)
        rl.append(1.0)
        ru.append(1.0)
        k += 1
    mean = load.sum() / N
    for i in range(N):
        for j in range(S_):
            rows.append(k)
            cols.append(nx + i * S_ + j)
            vals.append(load[j])
        rl.append(0.9 * mean)
        ru.append(1.1 * mean)
        k += 1
        for j in range(S_):
            rows.append(k)
            cols.append(i * S_ + j)
            vals.append(1.0)
        rl.append(-INF)
        ru.append(3.0)
        k += 1
    import scipy.sparse as sp

    A = sp.csc_array((vals, (rows, cols)), shape=(k, 2 * nx))
    placed = np.zeros(nx)
    placed[[i * S_ + j for j in range(S_) for i in [j % N]]] = 1
    cost = np.concatenate([1.0 - placed, np.zeros(nx)])
    return Problem.from_arrays(cost=cost, col_lower=np.zeros(2 * nx), col_upper=np.ones(2 * nx), row_lower=rl,
                               row_upper=ru, matrix=A, integrality=np.r_[np.ones(nx, bool), np.zeros(nx, bool)])


def test_mixed_problem_continuous_part_is_finished_exactly():
    p = lb_like()
    nx = p.n_cols // 2
    r = solve_milp(p, Settings(integer_fallback="highs", integer_fallback_seconds=10), None)
    check_result(p, r)
    assert r.mip["structure"]["vub_rows"] == nx
    assert r.objective >= highs_mip_objective(p) - 1e-9


def test_integer_infeasible_problem_is_no_integer_solution_without_fallback_and_infeasible_with_it():
    # 2 x = 1 with x integer: the LP relaxation (x = 0.5) is feasible, no integer point exists
    p = Problem.from_arrays(cost=[1.0], col_lower=[0], col_upper=[3], row_lower=[1], row_upper=[1],
                            matrix=np.array([[2.0]]), integrality=[True])
    r = solve_milp(p, Settings(integer_fallback="none"), None)
    assert r.status == Status.NO_INTEGER_SOLUTION and not r.point_feasible
    assert r.mip["source"] == "none" and not r.mip["fallback_used"]
    assert math.isnan(r.mip["integer_objective"])
    r = solve_milp(p, Settings(integer_fallback="highs", integer_fallback_seconds=5), None)
    # branch-and-cut proves what the heuristics could only fail to find
    assert r.status == Status.PRIMAL_INFEASIBLE and r.mip["fallback_used"] and not r.point_feasible
    assert any(s["step"] == "fallback" for s in r.mip["steps"])


def test_empty_integer_range_is_primal_infeasible_without_solving():
    p = Problem.from_arrays(cost=[1.0], col_lower=[0.2], col_upper=[0.8], row_lower=[-INF], row_upper=[5],
                            matrix=np.array([[1.0]]), integrality=[True])
    r = solve_milp(p, Settings(), None)
    assert r.status == Status.PRIMAL_INFEASIBLE
    assert "no integer" in r.message


def test_infeasible_relaxation_is_primal_infeasible():
    p = Problem.from_arrays(cost=[1.0, 1.0], col_lower=[0, 0], col_upper=[1, 1], row_lower=[3], row_upper=[INF],
                            matrix=np.array([[1.0, 1.0]]), integrality=[True, True])
    r = solve_milp(p, Settings(integer_fallback="none"), None)
    assert r.status == Status.PRIMAL_INFEASIBLE and not r.point_feasible


def test_unknown_fallback_mode_is_a_usage_error():
    p = Problem.from_arrays(cost=[1.0], col_lower=[0], col_upper=[1], row_lower=[-INF], row_upper=[1],
                            matrix=np.array([[1.0]]), integrality=[True])
    with pytest.raises(UsageError, match="integer_fallback"):
        solve_milp(p, Settings(integer_fallback="cplex"), None)


def test_report_lists_steps_and_fractional_count():
    p = sia_like(20, 5)
    r = solve_milp(p, Settings(integer_fallback="none"), None)
    check_result(p, r)
    names = [s["step"] for s in r.mip["steps"]]
    assert names[:4] == ["round", "repair", "fill", "fix_and_resolve"]
    assert all(s["seconds"] >= 0 and s["changed"] >= 0 for s in r.mip["steps"])
    assert 0 <= r.mip["fractional_before"] <= p.n_cols
    assert r.mip["gap_rel"] == pytest.approx(max(0.0, -(r.objective - r.mip["lp_bound"])) / max(1, abs(r.objective)))


def test_dive_recovers_from_a_rounding_whose_continuous_lp_is_infeasible():
    from solver.integer.dive import dive
    from solver.integer.relaxation import solve_relaxation
    from solver.integer.resolve import fix_and_resolve
    from solver.integer.structure import detect_structure

    p = lb_like()
    st = detect_structure(p)
    settings = Settings()
    lp, _ = solve_relaxation(p, settings, None, st.lower, st.upper)
    bad = np.where(p.integrality, 0.0, lp.x)  # no copies at all: the shards cannot be served
    assert fix_and_resolve(p, bad, settings, lp.x, lp.y)[0] is None
    x, info = dive(p, st, lp.x, lp.y, bad, settings, None, lp.state)
    assert x is not None, info
    assert 1 <= info["dives"] <= 3
    assert_exactly_feasible(p, x)
