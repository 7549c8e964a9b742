"""A warm round whose ALM run gives up (issue #17 point 2): the round is charged against the cold cost, not the
budget burnt twice. Measured on TE UsCarrier (every demand +-10%): the ALM gave up at its budget of 0.5 x the cold
passes with its point 3-4x closer than the start, PDHG then started again from the start, the ALM was locked out
for ALM_BACKOFF rounds, and the PDHG warm rounds of the lock-out took 0.4-3.4x the cold passes.

Rules tested (solver.lp.dispatch._hand_over_start, solver.lp.engine_choice): PDHG finishes from the ALM's point
when it is closer than the start; cold when the ALM's whole outer steps moved away from the start; from the start
otherwise (a cut first step). A stream whose ALM has finished a warm round gives it ALM_BUDGET_PROVEN x the cold
passes. A lost round within the last cold solve's passes does not back the ALM off; a PDHG warm round of the
back-off that makes more than ALM_VS_PDHG x the stream's last ALM round's passes ends it.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

import solver.lp.alm as alm_module
from solver.lp import engine_choice
from solver.lp.dispatch import _hand_over_start, solve
from solver.lp.engine_choice import ALM_BACKOFF, EngineRecord, choose_engine, cold_point, next_record
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status
from tests.helpers import te_warm_round

TOL = 1e-6


@pytest.fixture(scope="module")
def te_round():
    """(round-1 problem of a TE ring, round 0's state mapped onto it, the ALM's own OPTIMAL run from it)."""
    q, warm = te_warm_round(TOL)
    done = solve(q, Settings(tol=TOL, engine="alm"), warm)
    assert done.status == Status.OPTIMAL and done.engine == "alm"
    return q, warm, done


def _gave_up(res, x=None, y=None, measures=None, outer=2):
    """An ALM result that ran out of its budget at (x, y) (default: res's point) after ``outer`` outer steps."""
    p, d, g = measures if measures is not None else (res.primal_residual_rel, res.dual_residual_rel, res.gap_rel)
    return replace(res, status=Status.NUMERICAL_ERROR, iterations=outer,
                   state=replace(res.state, engine={"engine": "alm", "passes": 10.0}),
                   message="ALM stopped: it used its work budget of 10 matrix passes (2 outer steps) (...)",
                   x=res.x if x is None else x, y=res.y if y is None else y,
                   primal_residual_rel=p, dual_residual_rel=d, gap_rel=g)


def test_the_hand_over_starts_from_the_closer_point_or_cold(te_round):
    q, warm, done = te_round
    ch = choose_engine(q, Settings(tol=TOL), warm)
    assert ch.engine == "alm"
    start, why = _hand_over_start(q, Settings(tol=TOL), warm, _gave_up(done), ch)
    assert start[0] is done.x and start[1] is done.y and "the ALM's point" in why
    x0, y0 = cold_point(q)
    far = _gave_up(done, x0, y0, (1.0, 1.0, 1.0))
    start, why = _hand_over_start(q, Settings(tol=TOL), warm, far, ch)
    assert start is None and "cold" in why and "worse than a cold one" in why
    cut = _gave_up(done, x0, y0, (1.0, 1.0, 1.0), outer=1)  # the budget cut its first Newton solve
    start, why = _hand_over_start(q, Settings(tol=TOL), warm, cut, ch)
    assert start is warm and "round's start point" in why
    nan = _gave_up(done, np.full_like(done.x, np.nan), None, (np.nan, np.nan, np.nan))
    assert _hand_over_start(q, Settings(tol=TOL), warm, nan, ch)[0] is warm


def test_pdhg_finishes_a_lost_round_from_the_alms_point_and_is_not_charged(te_round, monkeypatch):
    """The ALM gives up at a point that meets tol but for its status: PDHG ends at its first check from there
    (before: PDHG ran from the round's start, as many iterations as a PDHG warm round, and the ALM backed off)."""
    q, warm, done = te_round
    from_start = solve(q, Settings(tol=TOL, engine="pdhg"), warm)
    near = _gave_up(done)
    monkeypatch.setattr(alm_module, "solve_alm_measured", lambda *a, **k: (near, None))
    stream = {**warm.engine, "cold_passes": 4.0 * from_start.state.engine["passes"]}  # the last cold solve
    res = solve(q, Settings(tol=TOL), SolverState(x=warm.x, y=warm.y, engine=stream))
    assert res.status == Status.OPTIMAL and res.engine == "pdhg" and res.warm_started
    assert "warm from the ALM's point" in res.message and "warm from the ALM's point" in res.engine_reason
    assert res.iterations < from_start.iterations
    rec = EngineRecord.from_state(res.state)
    assert rec.lost and rec.passes == 10.0 + engine_choice.PDHG_ITERATION_PASSES * res.iterations
    assert rec.skip_alm == 0  # the round cost less than the last cold solve: the ALM stays
    nxt = SolverState(x=warm.x, y=warm.y, engine=res.state.engine)  # a next round from a start as close
    assert choose_engine(q, Settings(tol=TOL), nxt).engine == "alm"


def test_a_lost_round_moved_away_from_its_start_is_solved_cold(te_round, monkeypatch):
    q, warm, done = te_round
    x0, y0 = cold_point(q)
    away = _gave_up(done, x0, y0, (1.0, 1.0, 1.0))
    monkeypatch.setattr(alm_module, "solve_alm_measured", lambda *a, **k: (away, None))
    res = solve(q, Settings(tol=TOL), SolverState(x=warm.x, y=warm.y, engine={**warm.engine, "cold_passes": 20.0}))
    assert res.status == Status.OPTIMAL and res.engine == "pdhg" and not res.warm_started
    assert "cold: the ALM's point after 2 outer steps is further off" in res.engine_reason
    assert abs(res.objective - done.objective) <= 1e-4 * max(1.0, abs(done.objective))
    rec = EngineRecord.from_state(res.state)
    assert rec.lost and rec.skip_alm == ALM_BACKOFF  # past the last cold solve's 20 passes: charged
    assert rec.cold_passes == engine_choice.PDHG_ITERATION_PASSES * res.iterations  # the next base


def test_a_stream_whose_alm_finished_a_round_gives_it_the_larger_budget(te_round, monkeypatch):
    q, warm, _ = te_round
    monkeypatch.setattr(engine_choice, "ALM_MIN_NONZEROS", 0.0)  # the floor out of the way
    first = SolverState(x=warm.x, y=warm.y, engine={**warm.engine, "cold_passes": 1000.0, "alm_passes": float("nan")})
    assert choose_engine(q, Settings(tol=TOL), first).alm_passes == engine_choice.ALM_BUDGET * 1000.0
    won = SolverState(x=warm.x, y=warm.y, engine={**warm.engine, "cold_passes": 1000.0, "alm_passes": 300.0})
    ch = choose_engine(q, Settings(tol=TOL), won)
    assert ch.alm_passes == engine_choice.ALM_BUDGET_PROVEN * 1000.0 > engine_choice.ALM_BUDGET * 1000.0
    assert "the ALM finished a warm round of this stream" in ch.reason


def test_the_back_off_is_charged_against_the_cold_cost_and_ends_when_pdhg_warm_loses(te_round):
    q, warm, _ = te_round
    rec = {**warm.engine, "cold_passes": 1000.0, "alm_passes": 400.0, "skip_alm": 0}
    ch = choose_engine(q, Settings(tol=TOL), SolverState(x=warm.x, y=warm.y, engine=rec))
    assert ch.engine == "alm"
    assert next_record(ch, True, True, None, passes=900.0).skip_alm == 0  # lost within the cold cost
    assert next_record(ch, True, True, None, passes=1100.0).skip_alm == ALM_BACKOFF  # past it
    backing = {**rec, "skip_alm": 5}
    ch = choose_engine(q, Settings(tol=TOL), SolverState(x=warm.x, y=warm.y, engine=backing))
    assert ch.engine == "pdhg" and ch.use_warm
    assert next_record(ch, True, False, None, passes=500.0).skip_alm == 4  # PDHG warm within 1.5 x the ALM's 400
    assert next_record(ch, True, False, None, passes=700.0).skip_alm == 0  # past it: the ALM comes back
    assert next_record(ch, True, False, None, passes=500.0, warm_lost=True).skip_alm == 0  # capped and solved cold
