"""An LP whose run reached its iteration limit with every measure met but the gap asks HiGHS, as a NUMERICAL_ERROR
missing only the gap does (``solver.lp.bound_gap.GAP_ONLY_STATUSES``).

helper-209: ``min x + c y, x + y = 2, x - y <= 5, 0 <= x <= 4, 0 <= y <= 3`` with c = 1e16 (costs over 16 decades).
PDHG held the optimum (x = 2, y = 0, objective 2) and residuals of 1e-16 relative to ||c||, but its duals were too
coarse at x's scale to close the gap (dual objective 7.2), so it ran 1,000,000 iterations and `copter solve` exited 5
with ITERATION_LIMIT where HiGHS gives Optimal 2 at once; c = 1e14 was solved."""

from __future__ import annotations

import json

import numpy as np
import pytest

from solver.api import solve_problem
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.status import Status
from tests.helpers import run_main


def _lp(c: float) -> Problem:
    return Problem.from_arrays(cost=[1.0, c], col_lower=[0.0, 0.0], col_upper=[4.0, 3.0], row_lower=[2.0, -np.inf],
                               row_upper=[2.0, 5.0], matrix=np.array([[1.0, 1.0], [1.0, -1.0]]),
                               col_names=["x", "y"], row_names=["c1", "c2"])


@pytest.mark.parametrize("c", [1e16, 1e19])
def test_a_run_that_misses_only_the_gap_at_its_iteration_limit_asks_highs(c):
    res = solve_problem(_lp(c), Settings())  # the default limit: 1,000,000 iterations (0.4-1 s on this 2 x 2 LP)
    assert res.status == Status.OPTIMAL, (res.status, res.message)
    assert res.objective == pytest.approx(2.0, abs=1e-9) and res.x.tolist() == pytest.approx([2.0, 0.0])
    assert "reached its iteration limit" in res.message and "HiGHS (simplex) was asked" in res.message, res.message
    assert res.gap_rel <= 1e-4


def test_a_limit_the_user_set_is_kept():
    """``--iteration-limit`` is the run's budget: the same LP stopped by it stays ITERATION_LIMIT (exit 5), HiGHS not
    asked; so does a run stopped after one iteration from x = 0, y = 0, which meets every measure but the gap."""
    from tests.helpers import small_lp

    for problem, limit in ((_lp(1e16), 20_000), (small_lp(), 1)):
        res = solve_problem(problem, Settings(iteration_limit=limit, tol=1e-9 if limit == 1 else 1e-4))
        assert res.status == Status.ITERATION_LIMIT, (res.status, res.message)
        assert "HiGHS" not in res.message, res.message


def test_through_the_cli_the_solve_exits_0(tmp_path, capsys):
    from formats.io import write_problem

    write_problem(_lp(1e16), tmp_path / "big_cost.parquet")
    code, out, err = run_main(capsys, "solve", tmp_path / "big_cost.parquet", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["status"] == "OPTIMAL" and report["objective"] == pytest.approx(2.0), report
