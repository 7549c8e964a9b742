"""Models whose costs or row bounds are uniformly far below 1 (solver.lp.model_scale).

afiro with every cost times 1e-5 ended OPTIMAL after 0 iterations at objective -2.8e-8 (optimum -4.65e-3):
the relative KKT test's "1 +" made the dual residual and the gap absolute, so presolve's postsolve of x = 0
with y = 0 passed at tol 1e-4. Row bounds times 1e-7 (presolve off) ended OPTIMAL at objective 0 (optimum
-4.65e-5). A warm round after a cost change kept the previous point unchanged as OPTIMAL.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from formats.io import read_problem
from solver.lp.dispatch import solve
from solver.lp.model_scale import (
    model_scale,
    scaled_problem,
    scaled_warm_start,
    unscaled_progress,
    unscaled_result,
)
from solver.lp.original_kkt import original_kkt
from solver.lp.scaling import combined_bound_norm
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status
from tests.helpers import manifest, require_data


def _afiro():
    p = read_problem(require_data("mps") / "afiro.mps")
    opt = float(next(r for r in manifest("mps") if r["file"] == "afiro.mps")["optimal_objective"])
    return p, opt


def _highs(p) -> float:
    import highspy

    from solver.highs_bridge import to_highs_lp

    h = highspy.Highs()
    h.silent()
    h.passModel(to_highs_lp(p))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal
    return h.getInfo().objective_function_value


def _close(value: float, optimum: float, rel: float = 1e-3) -> bool:
    return abs(value - optimum) <= rel * abs(optimum)


@pytest.mark.parametrize("presolve", ["auto", "off"])
@pytest.mark.parametrize("engine", ["auto", "alm"])
def test_tiny_costs_are_solved_to_their_own_scale(presolve, engine):
    p, opt = _afiro()
    q = replace(p, cost=p.cost * 1e-5)
    r = solve(q, Settings(presolve=presolve, engine=engine))
    assert r.status == Status.OPTIMAL
    assert _close(r.objective, opt * 1e-5), (r.objective, opt * 1e-5, r.iterations)
    assert r.iterations > 0
    assert "normalising costs by 2^-14" in r.message


@pytest.mark.parametrize("presolve", ["auto", "off"])
def test_tiny_row_bounds_are_solved_to_their_own_scale(presolve):
    p, opt = _afiro()
    q = replace(p, row_lower=p.row_lower * 1e-7, row_upper=p.row_upper * 1e-7)
    r = solve(q, Settings(presolve=presolve))
    assert r.status == Status.OPTIMAL
    assert _close(r.objective, opt * 1e-7), (r.objective, opt * 1e-7)
    # the point is the original model's: its objective and row activities are its own, exactly
    assert r.objective == float(q.cost @ r.x + q.offset)
    np.testing.assert_allclose(r.row_activity, q.row_activity(r.x), rtol=1e-12, atol=0.0)
    # within tol of the model's own bounds (its relative measure is against ||b|| in [1, 2) once normalised)
    kkt = original_kkt(q, r.x, r.y)[0]
    assert kkt.primal_residual <= 3e-4 * combined_bound_norm(q.row_lower, q.row_upper)
    assert kkt.primal_objective == pytest.approx(r.objective, rel=1e-12)


def test_a_warm_round_after_a_cost_change_is_not_kept_when_costs_are_tiny():
    """Before: the round-0 point met the absolute test for every perturbed cost vector and came back
    unchanged, OPTIMAL, 0 iterations (-2.1e-8 where HiGHS says -3.08e-3)."""
    p, _ = _afiro()
    p = replace(p, cost=p.cost * 1e-5)
    r0 = solve(p, Settings())
    rng = np.random.default_rng(1)
    q = replace(p, cost=p.cost * (1 + 0.5 * rng.uniform(-1, 1, p.n_cols)))
    r1 = solve(q, Settings(), warm_start=r0.state)
    assert r1.status == Status.OPTIMAL and r1.warm_started
    assert _close(r1.objective, _highs(q)), (r1.objective, _highs(q), r1.message)
    # the state is in original units: warm-starting the same model from it keeps the point bitwise
    r2 = solve(q, Settings(), warm_start=r1.state)
    assert r2.iterations == 0 and "returned unchanged" in r2.message
    np.testing.assert_array_equal(r2.x, r1.x)
    np.testing.assert_array_equal(r2.y, r1.y)


def test_norms_of_one_or_more_leave_the_model_alone():
    p, _ = _afiro()  # ||c|| = 10, ||b|| = 837
    assert model_scale(p).identity and scaled_problem(p, model_scale(p)) is p
    q = replace(p, cost=p.cost / np.linalg.norm(p.cost))  # ||c|| = 1 (to rounding): still left alone or 2^-1
    assert model_scale(q).cost in (1.0, 0.5)
    assert model_scale(replace(p, cost=p.cost * 0.0)).identity  # a feasibility problem: nothing to normalise


def test_scale_factors_are_powers_of_two_and_map_back_exactly():
    p, _ = _afiro()
    q = replace(p, cost=p.cost * 3e-6, row_lower=p.row_lower * 7e-4, row_upper=p.row_upper * 7e-4, offset=1.5e-3)
    sc = model_scale(q)
    for f, norm in ((sc.cost, sc.cost_norm), (sc.bound, sc.bound_norm)):
        assert math.frexp(f)[0] == 0.5 and 1.0 <= norm / f < 2.0
    s = scaled_problem(q, sc)
    rng = np.random.default_rng(0)
    x, y = rng.uniform(0, 1e-3, q.n_cols), rng.normal(size=q.n_rows) * 1e-6
    st = SolverState(x=x, y=y, step_size=0.5, primal_weight=2.0)
    ws = scaled_warm_start(st, sc)
    np.testing.assert_array_equal(ws.x * sc.bound, x)
    np.testing.assert_array_equal(ws.y * sc.cost, y)
    assert scaled_warm_start((x, y), sc)[1][0] == y[0] / sc.cost
    # the normalised model's objective of x~ times sigma_c sigma_b is the original's of x, bitwise
    r = solve(s, Settings())
    p_s = r.objective
    out = unscaled_result(r, sc)
    assert out.objective == p_s * sc.objective
    assert out.objective == pytest.approx(float(q.cost @ out.x + q.offset), rel=1e-12, abs=1e-300)
    seen = []
    unscaled_progress(seen.append, sc)({"primal_objective": 2.0, "dual_objective": 4.0, "iteration": 3})
    assert seen == [{"primal_objective": 2.0 * sc.objective, "dual_objective": 4.0 * sc.objective, "iteration": 3}]


def test_bound_scaling_that_would_make_a_column_bound_infinite_is_skipped():
    p, _ = _afiro()
    cu = p.col_upper.copy()
    cu[0] = 1e28
    q = replace(p, row_lower=p.row_lower * 1e-7, row_upper=p.row_upper * 1e-7, col_upper=cu)
    assert model_scale(q).bound == 1.0
