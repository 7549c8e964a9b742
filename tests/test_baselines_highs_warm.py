"""HiGHS hot start: edits by name in a long-lived instance, and a stored basis mapped by name."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from solver.baselines import solve_highs
from solver.baselines.highs_warm import BASIC, StoredBasis, WarmHighs, map_basis, solve_from_basis
from solver.model.problem import Problem
from solver.model.status import Status


def _transport(supply, demand, cost, *, skip=(), extra_rows=None) -> Problem:
    """min sum c x  s.t.  sum_j x[i,j] <= supply_i (rows s{i}),  sum_i x[i,j] >= demand_j (rows d{j})."""
    S, D = len(supply), len(demand)
    cols = [(i, j) for i in range(S) for j in range(D) if (i, j) not in skip]
    names = [f"s{i}/d{j}" for i, j in cols]
    r = [i for i, _ in cols] + [S + j for _, j in cols]
    c = list(range(len(cols))) * 2
    rows = [f"s{i}" for i in range(S)] + [f"d{j}" for j in range(D)]
    lo = [-np.inf] * S + list(demand)
    hi = list(supply) + [np.inf] * D
    A = sp.csc_array((np.ones(len(r)), (r, c)), shape=(S + D, len(cols)))
    if extra_rows:  # (name, {col: coef}, lo, hi)
        for nm, coefs, rl, ru in extra_rows:
            row = np.zeros((1, len(cols)))
            for k, v in coefs.items():
                row[0, names.index(k)] = v
            A = sp.vstack([A, sp.csr_array(row)]).tocsc()
            rows.append(nm)
            lo.append(rl)
            hi.append(ru)
    return Problem.from_arrays(cost=[cost[i][j] for i, j in cols], col_lower=np.zeros(len(cols)),
                               col_upper=np.full(len(cols), np.inf), row_lower=lo, row_upper=hi, matrix=A,
                               col_names=names, row_names=rows)


@pytest.fixture
def rounds():
    rng = np.random.default_rng(4)
    cost = rng.uniform(1, 10, (6, 7))
    supply, demand = rng.uniform(20, 30, 6), rng.uniform(5, 15, 7)
    p0 = _transport(supply, demand, cost, skip={(5, 6)},
                    extra_rows=[("limit01", {"s0/d1": 1.0, "s1/d1": 1.0}, -np.inf, 6.0)])
    cost2 = cost.copy()
    cost2[2, 3] *= 0.5
    demand2 = demand.copy()
    demand2[4] += 3.0
    # round 1: s0/d0 dropped, s5/d6 added, one cost and one demand changed, limit01 dropped, limit23 added
    p1 = _transport(supply, demand2, cost2, skip={(0, 0)},
                    extra_rows=[("limit23", {"s2/d3": 2.0, "s3/d3": 1.0}, -np.inf, 9.0)])
    return p0, p1


def test_long_lived_instance_matches_a_cold_solve_after_adds_drops_and_changes(rounds):
    p0, p1 = rounds
    w = WarmHighs(solver="simplex", threads=1)
    r0 = w.solve(p0)
    assert r0.status == Status.OPTIMAL and r0.extra["cold"]
    assert r0.objective == pytest.approx(solve_highs(p0).objective, rel=1e-9)
    r1 = w.solve(p1)
    assert r1.status == Status.OPTIMAL and not r1.extra["cold"]
    assert r1.objective == pytest.approx(solve_highs(p1).objective, rel=1e-9)
    assert r1.max_row_violation <= 1e-7 and r1.x.shape == (p1.n_cols,)
    assert (r1.extra["dropped_cols"], r1.extra["added_cols"]) == (1, 1)
    assert (r1.extra["dropped_rows"], r1.extra["added_rows"]) == (1, 1)
    assert r1.extra["changed_costs"] == 1 and r1.extra["changed_row_bounds"] == 1


def test_coefficient_change_in_place_is_applied(rounds):
    p0, _ = rounds
    w = WarmHighs(solver="simplex")
    w.solve(p0)
    A = p0.matrix().tolil()
    A[p0.row_index()["limit01"], p0.col_index()["s0/d1"]] = 3.0
    p0b = Problem.from_arrays(cost=p0.cost, col_lower=p0.col_lower, col_upper=p0.col_upper,
                              row_lower=p0.row_lower, row_upper=p0.row_upper, matrix=A,
                              col_names=p0.col_names, row_names=p0.row_names)
    r = w.solve(p0b)
    assert r.extra["changed_coefficients"] == 1
    assert r.objective == pytest.approx(solve_highs(p0b).objective, rel=1e-9)


def test_basis_by_name_round_trip_survives_an_added_and_a_dropped_variable(rounds):
    p0, p1 = rounds
    r0, basis0 = solve_from_basis(p0, None, round=0)
    assert r0.status == Status.OPTIMAL and basis0.has_basis and "cold" in r0.message
    stored = StoredBasis.from_table(basis0.to_table())  # what copter compare writes and reads back
    assert stored.round == 0 and np.array_equal(stored.col_status, basis0.col_status)
    cs, rs, _ = map_basis(stored, p1)
    assert cs.shape == (p1.n_cols,) and rs.shape == (p1.n_rows,)
    assert rs[p1.row_index()["limit23"]] == BASIC  # a new row enters as a basic slack
    assert cs[p1.col_index()["s5/d6"]] != BASIC  # a new column enters nonbasic at its bound
    r1, basis1 = solve_from_basis(p1, stored, round=1)
    assert r1.status == Status.OPTIMAL and "basis from round 0" in r1.message
    assert r1.objective == pytest.approx(solve_highs(p1).objective, rel=1e-9)
    assert basis1.round == 1 and basis1.col_names.size == p1.n_cols


def test_hot_start_from_the_same_problem_needs_no_simplex_iterations(rounds):
    p0, _ = rounds
    _, b = solve_from_basis(p0, None, solver="simplex")
    r, _ = solve_from_basis(p0, b, solver="simplex")
    assert r.status == Status.OPTIMAL and r.extra["simplex_iterations"] == 0


def test_ipm_cold_start_leaves_a_basis_for_simplex_hot_starts(rounds):
    p0, p1 = rounds
    w = WarmHighs(solver="simplex", cold_solver="ipm")
    r0 = w.solve(p0)
    assert r0.extra["solver"] == "ipm" and r0.status == Status.OPTIMAL
    r1 = w.solve(p1)
    assert r1.extra["solver"] == "simplex" and r1.status == Status.OPTIMAL
    assert r1.objective == pytest.approx(solve_highs(p1).objective, rel=1e-9)
