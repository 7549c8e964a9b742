"""A cold round HiGHS presolve solved (0 PDHG iterations, so a record with cold_passes 0) gives the next warm
round's ALM the budget's floor (ALM_MIN_NONZEROS / nnz passes) and never counts a run as lost against 0:
it gave "budget 0 matrix passes", the ALM gave up at once and PDHG was pinned for ALM_BACKOFF rounds
(fresh-install hunter, session 13)."""

from __future__ import annotations

import math

import pytest

from solver.lp import engine_choice
from solver.lp.dispatch import solve
from solver.lp.engine_choice import EngineRecord, choose_engine
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status
from tests.helpers import te_warm_round

TOL = 1e-6


@pytest.fixture(scope="module")
def te_round():
    q, warm = te_warm_round(TOL)
    return q, warm


def test_zero_cold_passes_give_the_floor_budget_not_zero(te_round):
    q, warm = te_round
    zero = {**warm.engine, "cold_passes": 0.0}
    ch = choose_engine(q, Settings(tol=TOL), SolverState(x=warm.x, y=warm.y, engine=zero))
    assert ch.engine == "alm" and ch.alm_passes == math.ceil(engine_choice.ALM_MIN_NONZEROS / q.nnz) > 0
    assert "HiGHS presolve solved it" in ch.reason and "budget 0 " not in ch.reason


def test_an_alm_round_after_a_presolved_cold_round_is_not_lost(te_round):
    q, warm = te_round
    res = solve(q, Settings(tol=TOL), SolverState(x=warm.x, y=warm.y, engine={**warm.engine, "cold_passes": 0.0}))
    rec = EngineRecord.from_state(res.state)
    assert res.status == Status.OPTIMAL and res.engine == "alm" and rec.passes > 0
    assert not rec.lost and rec.skip_alm == 0


def test_an_alm_record_after_zero_cold_passes_does_not_force_the_probe(te_round):
    q, warm = te_round
    prev = {**warm.engine, "cold_passes": 0.0, "engine": "alm", "lost": False, "alm_passes": 500.0,
            "pdhg_warm_passes": math.nan}
    ch = choose_engine(q, Settings(tol=TOL), SolverState(x=warm.x, y=warm.y, engine=prev))
    assert ch.engine == "alm" and not ch.probe
