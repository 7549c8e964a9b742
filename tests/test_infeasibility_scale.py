"""Infeasibility certificates must not depend on the magnitude of the data (H7 finding F9)."""

import numpy as np
import pytest
import scipy.sparse as sp

from solver.lp.dispatch import solve
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.status import Status


@pytest.mark.parametrize("rhs", [1e4, 1e8, 1e12])
def test_feasible_lp_with_large_right_hand_side_is_optimal_not_infeasible(rhs):
    # min x  s.t.  x >= rhs, x >= 0: optimum rhs; a false dual-ray certificate once appeared at rhs >= 1e8
    p = Problem.from_arrays(cost=[1.0], col_lower=[0.0], col_upper=[np.inf], row_lower=[rhs],
                            row_upper=[np.inf], matrix=sp.csc_array(np.array([[1.0]])))
    r = solve(p, Settings(tol=1e-6, iteration_limit=20000))
    assert r.status == Status.OPTIMAL
    assert abs(r.objective - rhs) <= 1e-5 * rhs


@pytest.mark.parametrize("scale", [1.0, 1e8])
def test_infeasible_lp_is_certified_at_any_data_scale(scale):
    # x >= 2*scale and x <= scale: infeasible whatever the scale
    p = Problem.from_arrays(cost=[1.0], col_lower=[0.0], col_upper=[np.inf], row_lower=[2 * scale, -np.inf],
                            row_upper=[np.inf, scale], matrix=sp.csc_array(np.array([[1.0], [1.0]])))
    r = solve(p, Settings(tol=1e-6, iteration_limit=200000))
    assert r.status == Status.PRIMAL_INFEASIBLE


@pytest.mark.parametrize("cost_scale", [1.0, 1e8])
def test_unbounded_lp_is_certified_at_any_cost_scale(cost_scale):
    # min -c*x1 s.t. x1 - x2 <= 1, x >= 0: unbounded along x1 = x2 -> inf
    p = Problem.from_arrays(cost=[-cost_scale, 0.0], col_lower=[0.0, 0.0], col_upper=[np.inf, np.inf],
                            row_lower=[-np.inf], row_upper=[1.0], matrix=sp.csc_array(np.array([[1.0, -1.0]])))
    r = solve(p, Settings(tol=1e-6, iteration_limit=200000))
    assert r.status == Status.DUAL_INFEASIBLE


def test_highs_infeasibility_proof_is_true_only_for_an_infeasible_lp_within_its_budget():
    from solver.lp.infeasibility import highs_proves_infeasible
    from solver.model.problem import Problem

    def lp(rhs):  # x1 + x2 >= rhs with 0 <= x <= 1: infeasible for rhs > 2
        return Problem.from_arrays(cost=[1.0, 1.0], matrix=[[1.0, 1.0]], row_lower=[rhs], row_upper=[np.inf],
                                   col_lower=[0.0, 0.0], col_upper=[1.0, 1.0])

    assert highs_proves_infeasible(lp(3.0), 5.0)
    assert not highs_proves_infeasible(lp(1.5), 5.0)  # feasible (optimal)
    assert not highs_proves_infeasible(lp(3.0), 0.0)  # no budget: no question asked



@pytest.mark.parametrize("col,cost", [("X02", 1e12), ("X02", 1e10), ("X07", 1e8)])
def test_feasible_lp_with_one_huge_cost_is_never_certified_unbounded(col, cost):
    """afiro with one cost raised (fresh-install hunter): X02 at 1e12 was "certified" DUAL_INFEASIBLE at
    iteration 64, the row violation of an iterate difference divided by a cost-inflated |c'dx|; HiGHS solves
    it (-455.96). The dual ray test now also holds the violation against the ray's own size."""
    import dataclasses

    import highspy

    from formats.io import read_problem
    from solver.highs_bridge import to_highs_lp
    from tests.helpers import require_data

    p = read_problem(require_data("mps") / "afiro.mps")
    c = p.cost.copy()
    c[list(p.col_names).index(col)] = cost
    p = dataclasses.replace(p, cost=c)
    h = highspy.Highs()
    h.silent()
    h.passModel(to_highs_lp(p))
    h.run()
    assert h.getModelStatus() == highspy.HighsModelStatus.kOptimal  # a feasible, bounded LP
    r = solve(p, Settings(tol=1e-6, iteration_limit=100000))
    assert not r.status.is_model_failure, r.status
