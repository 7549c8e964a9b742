"""Variable locks and the bulk decision of lock-free columns in the rounding's forced pass.

Deciding a column at the end of its domain in a direction without locks cannot make any row's violation
grow, so deciding all such columns at once must give exactly the point the column-by-column pass gives.
"""

from __future__ import annotations

import numpy as np
import pytest

import solver.integer.rounding as rounding
from solver.integer.relaxation import relaxed_problem
from solver.integer.structure import detect_structure
from solver.lp.dispatch import solve
from solver.model.problem import Problem
from solver.model.settings import Settings

INF = np.inf


def test_locks_count_rows_whose_violation_can_grow_per_direction():
    # row 0: x0 + x1 - x2 <= 4 (upper only); row 1: 2 <= x0 - x1 (lower only); row 2: x0 + x2 = 1 (both)
    A = np.array([[1, 1, -1], [1, -1, 0], [1, 0, 1]], float)
    p = Problem.from_arrays(cost=[1, 1, 1], col_lower=[0] * 3, col_upper=[5] * 3, row_lower=[-INF, 2, 1],
                            row_upper=[4, INF, 1], matrix=A, integrality=[True] * 3)
    down, up = rounding.locks(p)
    # x0: row0 up, row1 down, row2 both; x1: row0 up, row1 (a<0, lower) up; x2: row0 (a<0, upper) down, row2 both
    np.testing.assert_array_equal(down, [2, 0, 2])
    np.testing.assert_array_equal(up, [2, 2, 1])


def _instances():
    from solver.differential import apply_delta
    from solver.workloads.lb import LBScenario
    from solver.workloads.sia import SiaScenario

    sc = LBScenario(64, 8, seed=0)
    lb1, _ = apply_delta(sc.base(), sc.next_delta(1, None))
    return {"sia128": SiaScenario(total_gpus=128, seed=0).base(), "lb64x8": lb1}


@pytest.mark.parametrize("name", ["sia128", "lb64x8"])
@pytest.mark.parametrize("iterations", [64, 512])
def test_bulk_lock_free_decisions_give_the_same_rounding_as_the_column_by_column_pass(monkeypatch, name,
                                                                                      iterations):
    p = _instances()[name]
    st = detect_structure(p)
    x_lp = solve(relaxed_problem(p, st.lower, st.upper), Settings(iteration_limit=iterations, presolve="off")).x
    fast = rounding.run_rounding(p, st, x_lp, None)
    monkeypatch.setattr(rounding, "BULK_LOCK_FREE", False)
    slow = rounding.run_rounding(p, st, x_lp, None)
    np.testing.assert_array_equal(fast.x, slow.x)
    np.testing.assert_array_equal(fast.x_before_fill, slow.x_before_fill)
    assert fast.rows_violated == slow.rows_violated
