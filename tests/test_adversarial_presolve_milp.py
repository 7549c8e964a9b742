"""Adversarial regression tests (helper A): presolve and the staged MILP relaxation against HiGHS.

Locks in behaviour that held under adversarial inputs: presolve/postsolve stays certified in the
original space on LPs built to stress postsolve (chains of doubleton equalities with small pivots, which
HiGHS substitutes out and postsolve amplifies errors through), and early-rounded MILP points never claim
OPTIMAL beyond ``mip_gap_tol`` of HiGHS's optimum, with an LP bound that never passes that optimum.
Every claim is recomputed here from the raw arrays (``independent_kkt``) or compared with highspy.
"""

from __future__ import annotations

import numpy as np
import pytest

from solver.api import solve_problem
from solver.highs_bridge import new_highs, to_highs_lp
from solver.lp.dispatch import solve
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.status import Status
from tests.helpers import highs_solution, independent_kkt, lp

INF = np.inf


def doubleton_chain_lp(seed: int) -> Problem:
    """A feasible LP whose extra columns are tied to earlier ones by equality doubletons with pivots in
    [1e-5, 1] (presolve substitutes them out; postsolve multiplies the reduced error by 1/pivot)."""
    rng = np.random.default_rng(seed)
    n_core, n_chain, m_core = int(rng.integers(3, 10)), int(rng.integers(1, 6)), int(rng.integers(2, 8))
    n = n_core + n_chain
    x0 = rng.uniform(0, 2, n)
    rows, rl, ru = [], [], []
    core = rng.uniform(-2, 2, (m_core, n)) * (rng.random((m_core, n)) < 0.5)
    for a in core:
        v = a @ x0
        rows.append(a)
        rl.append(v - rng.uniform(0, 1))
        ru.append(v + rng.uniform(0, 1) if rng.random() < 0.5 else INF)
    for k in range(n_chain):
        j = n_core + k
        a = np.zeros(n)
        a[j] = 10.0 ** rng.uniform(-5, 0) * rng.choice([-1, 1])
        a[int(rng.integers(0, j))] = rng.uniform(-3, 3)
        rows.append(a)
        rl.append(a @ x0)
        ru.append(a @ x0)
    c = rng.standard_normal(n) * 10 ** rng.uniform(-2, 2, n)
    lo = np.where(rng.random(n) < 0.3, -INF, 0.0)
    hi = np.where(rng.random(n) < 0.5, 10.0, INF)
    return lp(c, np.array(rows), rl, ru, lo, hi, sense=int(rng.choice([1, -1])))


@pytest.mark.parametrize("seed", [0, 3, 8, 13, 21, 34])
@pytest.mark.parametrize("tol", [1e-4, 1e-7])
def test_presolved_doubleton_chains_are_certified_in_the_original_space_or_match_highs_status(seed, tol):
    p = doubleton_chain_lp(seed)
    hstatus, hobj, _ = highs_solution(p)
    res = solve(p, Settings(tol=tol, presolve="on", time_limit_seconds=20))
    if hstatus == "kOptimal":
        assert res.status == Status.OPTIMAL, res.message
        k = independent_kkt(p, res.x, res.y)
        assert k["in_bounds"] and k["dual_signs_ok"]
        assert k["primal"] <= tol * (1 + 1e-9) and k["dual"] <= tol * (1 + 1e-9)
        np.testing.assert_allclose(res.row_activity, k["activity"], rtol=1e-9, atol=1e-9)
        assert res.objective == pytest.approx(p.cost @ res.x + p.offset, rel=1e-12, abs=1e-12)
        assert abs(res.objective - hobj) <= 1e-3 * (1 + abs(hobj))
    elif hstatus == "kUnbounded":
        assert res.status == Status.DUAL_INFEASIBLE, res.message
    else:
        assert res.status != Status.OPTIMAL


def random_milp(seed: int) -> Problem:
    rng = np.random.default_rng(seed)
    m, n = int(rng.integers(1, 8)), int(rng.integers(2, 12))
    A = np.round(rng.uniform(-5, 9, (m, n)) * (rng.random((m, n)) < 0.6), int(rng.integers(0, 2)))
    integ = rng.random(n) < 0.7
    lo = np.where(rng.random(n) < 0.8, 0.0, -np.round(rng.uniform(0, 4, n)))
    hi = lo + np.where(rng.random(n) < 0.8, np.round(rng.uniform(1, 6, n)), INF)
    top = np.minimum(hi, lo + 5)
    x0 = np.where(integ, np.round(rng.uniform(lo, top)), rng.uniform(lo, top))
    act = A @ x0
    kind = rng.integers(0, 4, m)
    rl = np.where((kind == 1) | (kind == 2), act - np.round(rng.uniform(0, 3, m)), -INF)
    ru = np.where((kind == 0) | (kind == 2), act + np.round(rng.uniform(0, 3, m)), INF)
    rl = np.where(kind == 3, act, rl)
    ru = np.where(kind == 3, act, ru)
    return Problem.from_arrays(cost=np.round(rng.uniform(-10, 10, n), 1), matrix=A, row_lower=rl, row_upper=ru,
                               col_lower=lo, col_upper=hi, integrality=integ, sense=int(rng.choice([1, -1])),
                               offset=float(np.round(rng.normal() * 10, 2)))


def highs_mip_optimum(p: Problem) -> tuple[str, float]:
    h = new_highs(time_limit_seconds=20)
    h.setOptionValue("mip_rel_gap", 1e-9)
    h.setOptionValue("mip_abs_gap", 1e-9)
    h.passModel(to_highs_lp(p, with_names=False))
    h.run()
    return h.modelStatusToString(h.getModelStatus()), float(h.getInfo().objective_function_value)


STAGED = [{"relaxation_round_iterations": 64, "mip_gap_tol": 1e-2},
          {"relaxation_tol": 1e-1, "integer_fallback": "none"},
          {"relaxation_round_iterations": 64, "presolve": "off", "mip_gap_tol": 1e-3}]


@pytest.mark.parametrize("seed", [1, 2, 5, 7, 11, 17, 23, 29, 31, 37])
@pytest.mark.parametrize("kw", STAGED, ids=["round64_gap1e-2", "reltol0.1_nofallback", "round64_nopresolve"])
def test_early_rounded_milp_point_is_exact_within_the_gap_it_claims_and_its_bound_is_valid(seed, kw):
    p = random_milp(seed)
    hstatus, hopt = highs_mip_optimum(p)
    s = Settings(time_limit_seconds=20, **kw)
    res = solve_problem(p, s)
    if hstatus == "Infeasible":
        assert res.status in (Status.PRIMAL_INFEASIBLE, Status.NO_INTEGER_SOLUTION)
        return
    if hstatus != "Optimal":  # unbounded, or "infeasible or unbounded": never a point claimed optimal
        assert res.status in (Status.INFEASIBLE_OR_UNBOUNDED, Status.DUAL_INFEASIBLE, Status.PRIMAL_INFEASIBLE)
        return
    bound = res.mip["lp_bound"]
    if np.isfinite(bound):  # a valid bound never passes the true optimum
        assert p.sense * (bound - hopt) <= 1e-7 * max(1.0, abs(hopt))
    if res.status in (Status.OPTIMAL, Status.FEASIBLE):
        x = res.x
        assert np.all(x >= p.col_lower) and np.all(x <= p.col_upper)
        assert np.all(x[p.integrality] == np.round(x[p.integrality]))
        ax = p.matrix() @ x
        scale = np.maximum(1.0, np.abs(np.where(np.isfinite(p.row_lower), p.row_lower, 0.0)))
        assert np.all(ax >= p.row_lower - 1e-9 * scale)
        scale = np.maximum(1.0, np.abs(np.where(np.isfinite(p.row_upper), p.row_upper, 0.0)))
        assert np.all(ax <= p.row_upper + 1e-9 * scale)
        assert res.objective == pytest.approx(p.cost @ x + p.offset, rel=1e-12, abs=1e-12)
        # HiGHS's mip_gap: |p - d| / |p|, closed within an absolute 1e-6 (its mip_abs_gap)
        true_diff = p.sense * (res.objective - hopt)
        assert true_diff >= -1e-9 * max(1.0, abs(hopt))  # never better than the optimum
        if res.status == Status.OPTIMAL:
            assert true_diff <= max(s.mip_gap_tol * abs(res.objective) * (1 + 1e-9), 1e-6)
        if np.isfinite(bound):
            diff = max(0.0, p.sense * (res.objective - bound))
            gap = 0.0 if diff <= 1e-6 else diff / abs(res.objective)
            assert res.mip["gap_rel"] == pytest.approx(gap, rel=1e-9, abs=1e-12)
