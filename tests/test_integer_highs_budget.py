"""The HiGHS MIP steps of one MILP round (HiGHS first, the fallback, the improvement) share one
``integer_fallback_seconds`` budget (``solver.integer.pipeline._highs_budget``).

Before, HiGHS first that stopped at its budget above the target was followed by the relaxation stages and then by
the improvement step, seeded with their point, with a second full budget: up to 2x ``--integer-fallback-seconds``
of HiGHS MIP in one round. ``highs_mip`` is replaced by a stand-in that reports it used a given share of the budget
it was handed (deterministic, no timing)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from solver.integer import solve_milp
from solver.integer.check import check_point
from solver.model.problem import Problem
from solver.model.settings import Settings
from tests.helpers import binary_knapsack

BUDGET = 60.0


def _fake_highs(model: Problem, calls: list, first_share: float, first_point: bool):
    """highs_mip stand-in on ``model`` (RENS's sub-MIPs, another budget, go to the real one): call 1 (HiGHS first)
    stops at its time budget after ``first_share`` of the seconds it was given, with the all-zero point when
    ``first_point``; later calls use all their seconds and find nothing."""
    from solver.integer.fallback import highs_mip

    def fake(problem, seconds, seed=None, **kw):
        if problem is not model:
            return highs_mip(problem, seconds, seed, **kw)
        calls.append(seconds)
        first = len(calls) == 1
        info = {"highs_status": "Time limit reached", "seconds": seconds * (first_share if first else 1.0),
                "mip_dual_bound": math.nan, "mip_gap": math.inf, "seeded": seed is not None, "stalled": False}
        return (np.zeros(problem.n_cols) if first and first_point else None), info
    return fake


def test_highs_first_at_its_budget_leaves_no_second_budget_to_the_improvement(monkeypatch):
    from solver.integer import fallback

    calls: list = []
    p = binary_knapsack()
    monkeypatch.setattr(fallback, "highs_mip", _fake_highs(p, calls, 1.0, first_point=True))
    res = solve_milp(p, Settings(integer_fallback_seconds=BUDGET), None)
    assert "relaxation stages follow" in res.mip["highs_first"]
    assert len(res.mip["relaxation_stages"]) >= 1
    # one budget for the round: HiGHS first spent it, so no other HiGHS MIP step ran
    assert calls == [BUDGET]
    assert res.mip["highs_mip_seconds"] == pytest.approx(BUDGET)
    if res.mip["gap_rel"] > Settings().mip_gap_tol:  # the improvement would have run: the report says why not
        assert "improvement" in res.mip["fallback_skipped"] and "integer_fallback_seconds" in \
            res.mip["fallback_skipped"]
    assert res.point_feasible and check_point(p, res.x)["ok"] and res.objective > 0.0


def test_a_later_highs_mip_step_gets_what_highs_first_left(monkeypatch):
    # HiGHS first used 40% of the budget and found no point: the stages run, and any HiGHS MIP step after them
    # (fallback or improvement) is handed at most the 60% left
    from solver.integer import fallback

    calls: list = []
    p = binary_knapsack()
    monkeypatch.setattr(fallback, "highs_mip", _fake_highs(p, calls, 0.4, first_point=False))
    res = solve_milp(p, Settings(integer_fallback_seconds=BUDGET, mip_gap_tol=0.0), None)
    assert calls[0] == BUDGET and len(calls) >= 2  # mip_gap_tol 0: a point above it goes to the improvement
    assert calls[1] == pytest.approx(0.6 * BUDGET)
    assert sum(calls[1:]) <= 0.6 * BUDGET + 1e-9
    assert res.mip["highs_mip_seconds"] == pytest.approx(BUDGET)
