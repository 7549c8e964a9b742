"""The stream's first proximal step (solver.lp.alm.next_warm_scale, carried in the engine record): a warm ALM run
whose first outer step misses tol narrowly makes the next warm run start with a longer first step; runs that end
in one outer step let it decay back to the default; the record carries it between rounds, and an older record
without it means the default."""

from __future__ import annotations

import math

import pytest

from solver.lp import alm
from solver.lp.alm import ALMParameters, next_warm_scale, solve_alm, stream_warm_scale
from solver.lp.dispatch import _next_alm_scale, solve
from solver.lp.engine_choice import EngineRecord, choose_engine
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status
from tests.helpers import assert_certified_optimal, te_warm_round

TOL = 1e-6
BASE = ALMParameters.warm_scale


@pytest.fixture(scope="module")
def te_round():
    """A TE ring round: (problem of round 1, round 0's state mapped onto it)."""
    return te_warm_round(TOL)


def test_a_narrow_miss_in_two_outer_steps_doubles_the_scale_up_to_its_cap():
    assert next_warm_scale(BASE, 1.08 * TOL, TOL, 2) == BASE * alm.WARM_SCALE_GROWTH
    assert next_warm_scale(BASE, alm.WARM_NEAR_MISS * TOL, TOL, 3) == BASE * alm.WARM_SCALE_GROWTH
    assert next_warm_scale(alm.WARM_SCALE_MAX, 1.5 * TOL, TOL, 2) == alm.WARM_SCALE_MAX
    assert next_warm_scale(0.8 * alm.WARM_SCALE_MAX, 1.5 * TOL, TOL, 2) == alm.WARM_SCALE_MAX


def test_a_far_first_step_leaves_the_scale_and_one_outer_step_decays_it_to_the_default():
    assert next_warm_scale(1.0, 3.0 * TOL, TOL, 5) == 1.0  # far: the outer loop's eta rule is the remedy there
    assert next_warm_scale(1.0, math.nan, TOL, 2) == 1.0  # no first step measured
    assert next_warm_scale(1.0, 0.9 * TOL, TOL, 1) == pytest.approx(1.0 * alm.WARM_SCALE_DECAY)
    assert next_warm_scale(BASE * 1.05, 0.9 * TOL, TOL, 1) == BASE  # never below the default
    assert next_warm_scale(1.0, 1.5 * TOL, TOL, 0) == 1.0  # the warm start met tol: no step ran
    for bad in (math.nan, math.inf, 0.0, -1.0):
        assert next_warm_scale(bad, 1.5 * TOL, TOL, 2) == BASE * alm.WARM_SCALE_GROWTH


def test_a_warm_alm_run_records_its_first_step_and_scale(te_round):
    q, warm = te_round
    res = solve_alm(q, Settings(tol=TOL), warm, ALMParameters(warm_scale=0.8))
    assert res.status == Status.OPTIMAL
    rec = res.state.engine
    assert rec["warm_scale"] == 0.8 and math.isfinite(rec["first_kkt"]) and rec["first_kkt"] > 0
    # the first outer step's worst measure: within tol exactly when the run took one outer step
    assert (rec["first_kkt"] <= TOL) == (res.iterations == 1)
    assert "warm_scale" not in solve_alm(q, Settings(tol=TOL), None).state.engine  # a cold run sets nothing


def test_the_stream_scale_reaches_the_alm_and_the_next_record(te_round):
    q, warm = te_round
    raised = SolverState(x=warm.x, y=warm.y, engine={**warm.engine, "alm_warm_scale": 1.7})
    assert choose_engine(q, Settings(tol=TOL), raised).engine == "alm"
    res = solve(q, Settings(tol=TOL), raised)
    assert res.engine == "alm"
    assert_certified_optimal(q, res, TOL)
    assert "warm_scale 1.7, not 0.5" in res.engine_reason  # the run started with the stream's scale, and says so
    nxt = EngineRecord.from_state(res.state).alm_warm_scale  # next_warm_scale of this run's first step
    expected = {1.7 * alm.WARM_SCALE_DECAY} if res.iterations == 1 else {1.7, alm.WARM_SCALE_MAX}
    assert any(nxt == pytest.approx(e) for e in expected), (nxt, res.iterations)
    # a record without the field (written before it existed) is the default: the reason says nothing
    plain = solve(q, Settings(tol=TOL), warm)
    assert plain.engine == "alm" and "warm_scale" not in plain.engine_reason


def test_the_next_scale_is_read_off_the_alms_own_record():
    ok = SolverState(x=None, y=None, engine={"engine": "alm", "warm_scale": 0.5, "first_kkt": 1.2 * TOL})

    class R:
        status, iterations, state = Status.OPTIMAL, 2, ok

    assert _next_alm_scale(R, TOL) == 0.5 * alm.WARM_SCALE_GROWTH
    R.status = Status.TIME_LIMIT  # an unfinished run teaches nothing
    assert math.isnan(_next_alm_scale(R, TOL))
    R.status, R.state = Status.OPTIMAL, SolverState(x=None, y=None, engine={"engine": "alm", "passes": 3.0})
    assert math.isnan(_next_alm_scale(R, TOL))  # a cold run: no first-step record


def test_a_stored_scale_is_clipped_to_its_bounds_and_garbage_is_the_default():
    assert stream_warm_scale(1e300) == alm.WARM_SCALE_MAX and stream_warm_scale(1.3) == 1.3
    assert stream_warm_scale(0.1) == BASE  # below the default: the default
    for bad in (None, "abc", math.nan, -math.inf, 0.0):
        assert stream_warm_scale(bad) == BASE


def test_the_record_round_trips_the_scale_and_an_older_record_has_none():
    rec = EngineRecord(engine="alm", reason="r", converged=True, alm_warm_scale=1.25)
    assert EngineRecord.from_state(SolverState(x=None, y=None, engine=rec.to_dict())).alm_warm_scale == 1.25
    old = {k: v for k, v in rec.to_dict().items() if k != "alm_warm_scale"}
    assert math.isnan(EngineRecord.from_state(SolverState(x=None, y=None, engine=old)).alm_warm_scale)


@pytest.mark.parametrize("bad", [1e300, -1.0, 0.0, float("inf"), "abc"])
def test_a_tampered_scale_in_the_record_never_breaks_the_round(te_round, bad):
    """A hand-edited state: a huge scale is clipped by step_warm, a non-positive or infinite one is the default, a
    string makes the record malformed (the choice then has none): the round still ends OPTIMAL at the optimum."""
    q, warm = te_round
    res = solve(q, Settings(tol=TOL), SolverState(x=warm.x, y=warm.y, engine={**warm.engine, "alm_warm_scale": bad}))
    assert_certified_optimal(q, res, TOL)
    rec = EngineRecord.from_state(res.state)
    assert rec is not None and (math.isnan(rec.alm_warm_scale) or BASE <= rec.alm_warm_scale <= alm.WARM_SCALE_MAX)
