"""A seeded HiGHS MIP whose objective for its own point is wrong is run again without the seed
(``solver.integer.fallback.highs_mip``). HiGHS 1.16 with presolve on, seeded with a point that a presolve reduction
excludes, keeps the presolved model's objective for it: lseu after a cost delta (C166 183 -> 383), seeded with the
previous round's point (C166 = 1, objective 1,320), said "Optimal" at 937 and returned that point, so the round
ended FEASIBLE at 1,320 (gap 0.29) where the optimum is 1,128, and its "Optimal" kept the stages from following."""

from __future__ import annotations

import numpy as np

from formats.io import read_problem
from solver.integer import solve_milp
from solver.integer.fallback import highs_mip
from solver.model.settings import Settings
from solver.model.state import SolverState
from tests.helpers import assert_exactly_feasible, highs_mip_objective, require_data

TARGET = Settings().mip_gap_tol


def _lseu_after_the_delta():
    """(round 0's model, round 0's HiGHS point with C166 = 1, the model with C166's cost + 200, its optimum)."""
    p = read_problem(require_data("mps") / "lseu.mps")
    x0, _ = highs_mip(p, 60.0, mip_rel_gap=TARGET)
    j = p.col_index()["C166"]
    assert x0 is not None and x0[j] == 1.0
    cost = p.cost.copy()
    cost[j] += 200.0
    q = p.replace(cost=cost)
    return p, x0, q, highs_mip_objective(q)


def test_a_seed_highs_misjudges_is_dropped_and_the_optimum_found():
    _, x0, q, opt = _lseu_after_the_delta()
    x, info = highs_mip(q, 60.0, x0, mip_rel_gap=TARGET)
    assert x is not None
    assert_exactly_feasible(q, x)
    assert abs(q.objective(x) - opt) <= TARGET * abs(opt), (q.objective(x), info)
    assert info["seed_dropped"]["point_objective"] == q.objective(x0)
    assert info["seed_dropped"]["highs_objective"] < q.objective(x0)
    assert info["mip_dual_bound"] <= opt + 1e-6


def test_the_round_after_such_a_delta_ends_at_the_optimum():
    p, x0, q, opt = _lseu_after_the_delta()
    ws = SolverState(x=x0.copy(), y=np.zeros(p.n_rows), integer_x=x0.copy())
    res = solve_milp(q, Settings(), ws)
    assert res.status.name == "OPTIMAL" and res.point_feasible, res.message
    assert abs(res.objective - opt) <= TARGET * abs(opt) and res.mip["lp_bound"] <= opt + 1e-6
