"""Implied column bounds swept to a fixed point (solver.integer.bound.implied_bounds), and what they give the MILP
round's bound: dcmulti's 473 columns without an upper bound need 5 sweeps, and 3 left 190 of them infinite, so
every stage's Lagrangian bound was -inf and the early hand-over of a small model to HiGHS never happened."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from formats.io import read_problem
from solver.integer import solve_milp
from solver.integer.bound import IMPLIED_MAX_SWEEPS, ChoiceLagrangian, implied_bounds, lagrangian_bound
from solver.integer.structure import detect_structure
from solver.model.problem import Problem
from solver.model.settings import Settings
from tests.helpers import manifest, require_data


def chain(k: int) -> Problem:
    """x_0 <= 1 and x_i <= x_{i-1} (rows x_i - x_{i-1} <= 0), x_i >= 0 without upper bound for i >= 1: the bound
    of x_k comes down a chain of k rows, one link per sweep."""
    n = k + 1
    a = sp.lil_array((k, n))
    for i in range(1, n):
        a[i - 1, i], a[i - 1, i - 1] = 1.0, -1.0
    up = np.full(n, np.inf)
    up[0] = 1.0
    return Problem.from_arrays(cost=-np.ones(n), col_lower=np.zeros(n), col_upper=up, row_lower=np.full(k, -np.inf),
                               row_upper=np.zeros(k), matrix=sp.csc_array(a))


def test_a_chain_longer_than_three_rows_is_bounded_to_its_end():
    p = chain(8)  # 3 fixed passes (before) left x_4 ... x_8 unbounded
    lo, up = implied_bounds(p, p.col_lower, p.col_upper)
    assert np.all(np.isfinite(up)) and np.all(up <= 1.0 + 1e-6)
    assert np.array_equal(lo, p.col_lower)
    # and the Lagrangian bound at zero duals is finite: -(n) at best, x_i <= 1 each
    assert lagrangian_bound(p, np.zeros(p.n_rows), p.col_lower, p.col_upper) >= -p.n_cols - 1e-6


def test_the_cap_bounds_the_sweeps():
    p = chain(IMPLIED_MAX_SWEEPS + 6)
    _, up = implied_bounds(p, p.col_lower, p.col_upper)
    assert np.isfinite(up[IMPLIED_MAX_SWEEPS]) and not np.isfinite(up[-1])
    _, up2 = implied_bounds(p, p.col_lower, p.col_upper, max_sweeps=2)
    assert np.isfinite(up2[2]) and not np.isfinite(up2[3])


def test_a_geometric_creep_stops_before_the_cap():
    """x <= y/2 + 1, y <= x/2 + 1 from [0, 100]: the bounds creep towards 2; sweeps stop once a move is
    below 1e-3 relative (a valid, slightly loose bound), well within the cap."""
    a = sp.csc_array(np.array([[1.0, -0.5], [-0.5, 1.0]]))
    p = Problem.from_arrays(cost=np.zeros(2), col_lower=np.zeros(2), col_upper=np.full(2, 100.0),
                            row_lower=np.full(2, -np.inf), row_upper=np.ones(2), matrix=a)
    _, up = implied_bounds(p, p.col_lower, p.col_upper)
    assert np.all(up >= 2.0) and np.all(up <= 2.01)
    _, up_cap = implied_bounds(p, p.col_lower, p.col_upper, max_sweeps=IMPLIED_MAX_SWEEPS)
    assert np.array_equal(up, up_cap)


def test_dcmulti_every_column_bounded_and_kernel_matches_numpy():
    p = read_problem(require_data("mps") / "dcmulti.mps")
    st = detect_structure(p)
    assert np.count_nonzero(~np.isfinite(st.upper)) == 473
    lo, up = implied_bounds(p, st.lower, st.upper)
    assert np.all(np.isfinite(lo)) and np.all(np.isfinite(up))
    lag = ChoiceLagrangian(p, st.lower, st.upper, st.choice_rows, st.choice_kind, st.csr_indptr, st.csr_indices)
    assert np.all(np.isfinite(lag.box_upper))
    rng = np.random.default_rng(3)
    for _ in range(5):  # the numba kernel (now on a finite box) and its numpy twin agree
        y = rng.normal(scale=50.0, size=p.n_rows)
        b, x, _ = lag.evaluate(y)
        b_ref, x_ref, _ = lag.evaluate_ref(y)
        assert math.isfinite(b) and b == pytest.approx(b_ref, rel=1e-12, abs=1e-9)
        assert np.array_equal(x, x_ref)


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_dcmulti_round_has_a_finite_proven_bound_from_its_first_stage():
    """Known answer: dcmulti's optimum is 188182 (MANIFEST); the first relaxation stage's bound is finite and
    below it (it was -inf in every stage, 4 stages and 3 RENS runs before HiGHS)."""
    p = read_problem(require_data("mps") / "dcmulti.mps")  # skips (or fails under COPTER_REQUIRE_DATA) first
    opt = {r["file"]: float(r["optimal_objective"]) for r in manifest("mps") if r["kind"] == "MILP"}["dcmulti.mps"]
    # without HiGHS MIP steps, so that the relaxation's own stages decide the bound
    res = solve_milp(p, Settings(integer_fallback="none"), None)
    stages = res.mip["relaxation_stages"]
    first = float(stages[0]["lp_bound"])
    assert math.isfinite(first) and first <= opt + 1e-6
    assert math.isfinite(res.mip["lp_bound"]) and res.mip["lp_bound"] <= opt + 1e-6
    assert math.isfinite(res.mip["gap_rel"])
    default = solve_milp(p, Settings(), None)
    assert math.isfinite(default.mip["lp_bound"]) and default.mip["lp_bound"] <= opt + 1e-6
