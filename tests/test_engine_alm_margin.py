"""Rule 4 / 6a's margin (solver.lp.engine_choice.ALM_VS_PDHG): the ALM is judged against another round's PDHG
warm passes, so it loses only when it made clearly more (TE ring: a stale PDHG round backed the ALM off for 8
rounds at a margin of 1.0 although the ALM had beaten PDHG on its own round)."""

from __future__ import annotations

import pytest

from solver.lp import engine_choice
from solver.lp.dispatch import solve
from solver.lp.engine_choice import ALM_BACKOFF, EngineRecord, choose_engine
from solver.model.settings import Settings
from solver.model.state import SolverState
from tests.helpers import te_warm_round

TOL = 1e-4


@pytest.fixture(scope="module")
def te_round():
    """A TE ring round: (problem of round 1, round 0's state mapped onto it)."""
    return te_warm_round(TOL)


def _alm(q, warm, **engine):
    res = solve(q, Settings(tol=TOL), SolverState(x=warm.x, y=warm.y, engine={**warm.engine, **engine}))
    assert res.engine == "alm", res.engine_reason
    return res, EngineRecord.from_state(res.state)


def test_an_alm_run_a_little_past_another_rounds_pdhg_warm_passes_keeps_the_alm(te_round):
    q, warm = te_round
    _, free = _alm(q, warm, pdhg_warm_passes=1e12)
    passes = free.passes
    _, near = _alm(q, warm, pdhg_warm_passes=passes / 1.2)  # 1.2x a PDHG round of another LP: within the margin
    assert near.passes == passes and near.skip_alm == 0
    _, far = _alm(q, warm, pdhg_warm_passes=passes / (engine_choice.ALM_VS_PDHG + 0.5))
    assert far.skip_alm == ALM_BACKOFF


def test_a_probe_backs_the_alm_off_only_when_pdhg_did_clearly_less(te_round):
    q, warm = te_round
    pdhg = solve(q, Settings(tol=TOL, engine="pdhg"), warm).state.engine["passes"]
    base = {**warm.engine, "engine": "alm", "cold_passes": pdhg}
    for alm_passes, backs_off in ((1.2 * pdhg, False), ((engine_choice.ALM_VS_PDHG + 0.5) * pdhg, True)):
        st = SolverState(x=warm.x, y=warm.y, engine={**base, "alm_passes": alm_passes})
        assert choose_engine(q, Settings(tol=TOL), st).probe
        rec = EngineRecord.from_state(solve(q, Settings(tol=TOL), st).state)
        assert rec.passes == pdhg and (rec.skip_alm == ALM_BACKOFF) == backs_off
