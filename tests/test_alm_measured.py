"""The ALM hands its final ``original_kkt`` measure to the dispatcher's judge instead of a second pass over the
matrix (``solver.lp.alm.solve_alm_measured``): the measure it hands over is, bit for bit, what measuring the
returned point again gives, on every way a run ends, and a dispatched ALM round measures its point once less."""

from __future__ import annotations

import numpy as np
import pytest

from solver.differential import apply_delta, map_state
from solver.lp import dispatch
from solver.lp import original_kkt as okkt
from solver.lp.alm import ALMParameters, solve_alm, solve_alm_measured
from solver.model.settings import Settings
from solver.model.status import Status
from solver.workloads.te import TEScenario
from tests.helpers import lp


def _same_measure(problem, res, measured, tol):
    """``measured`` is original_kkt's output for (res.x, res.y) at ``tol``: every field, every array, bitwise."""
    again = okkt.original_kkt(problem, res.x, res.y, tol)
    assert measured[0] == again[0]  # the KKT dataclass: every measure and the worst row
    for a, b in zip(measured[1:], again[1:], strict=True):
        np.testing.assert_array_equal(a, b)
    assert measured[1] is res.x and measured[2] is res.y  # the result's own arrays, not copies


def _te_rounds():
    sc = TEScenario(nodes=16, seed=4)
    p0 = sc.base()
    r0 = solve_alm(p0, Settings(tol=1e-6))
    return sc, p0, r0


@pytest.mark.parametrize("case", ["cold", "warm", "solved start", "iteration limit", "time limit", "stopped"])
def test_the_handed_measure_is_the_returned_points_own(case):
    sc, p0, r0 = _te_rounds()
    q, s, warm, prm = p0, Settings(tol=1e-6), None, None
    if case == "warm":
        q, info = apply_delta(p0, sc.next_delta(1, None))
        warm = map_state(r0.state, info, q)
    elif case == "solved start":
        warm = r0.state
    elif case == "iteration limit":
        s = Settings(tol=1e-9, iteration_limit=1)
    elif case == "time limit":
        s = Settings(tol=1e-9, time_limit_seconds=0.0)
    elif case == "stopped":
        s, prm = Settings(tol=1e-12, iteration_limit=3), ALMParameters(handover=False, stall_outer=1)
    res, measured = solve_alm_measured(q, s, warm, prm)
    assert measured is not None
    _same_measure(q, res, measured, s.tol)
    if case in ("cold", "warm", "solved start"):
        assert res.status == Status.OPTIMAL, res.message


def test_an_empty_box_and_a_stopped_run_hand_their_measure_too():
    p = lp([1.0, 1.0], [[1, 1]], [1.0], [np.inf], [0.0, 2.0], [np.inf, 1.0])  # an empty box
    res, measured = solve_alm_measured(p)
    assert res.status == Status.PRIMAL_INFEASIBLE
    _same_measure(p, res, measured, Settings().tol)
    p = lp([1.0, -1.0], [[1, 0]], [1.0], [2.0], [0.0, 0.0], [np.inf, np.inf])  # an empty column, cost unbounded
    res, measured = solve_alm_measured(p, params=ALMParameters(handover=False))
    assert res.status == Status.NUMERICAL_ERROR and res.message.startswith("ALM stopped")  # the run's own end
    _same_measure(p, res, measured, Settings().tol)


def test_a_run_handed_over_to_pdhg_hands_no_measure():
    """PDHG's point is not the one the ALM measured: the judge measures it itself."""
    p = lp([1.0, -1.0], [[1, 0]], [1.0], [2.0], [0.0, 0.0], [np.inf, np.inf])
    res, measured = solve_alm_measured(p)
    assert res.message.startswith("ALM handed over to PDHG") and measured is None


def test_a_dispatched_alm_round_hands_the_judge_its_measure(monkeypatch):
    """Through the dispatcher (engine "alm"), the judge gets the ALM's measure of the point it rules on, and rules
    as it would after measuring the point itself."""
    sc, p0, r0 = _te_rounds()
    q, info = apply_delta(p0, sc.next_delta(1, None))
    s = Settings(tol=1e-6, engine="alm")
    seen = []
    real = dispatch.judged

    def spy(problem, tol, res, whose, t0, time_limit, measured=None, limit_asks=True):
        seen.append((res, measured, real(problem, tol, res, whose, t0, time_limit, None, limit_asks)))
        return real(problem, tol, res, whose, t0, time_limit, measured, limit_asks)

    monkeypatch.setattr(dispatch, "judged", spy)
    out = dispatch.solve(q, s, map_state(r0.state, info, q))
    assert out.engine == "alm" and out.status == Status.OPTIMAL and len(seen) == 1
    res, measured, by_itself = seen[0]
    assert measured is not None
    _same_measure(q, res, measured, s.tol)
    assert by_itself[1] is False and by_itself[0] is res  # measured again: the same ruling, nothing replaced
    assert out.message == res.message


def _warm_round():
    sc, p0, r0 = _te_rounds()
    q, info = apply_delta(p0, sc.next_delta(1, None))
    return q, map_state(r0.state, info, q)


def test_a_warm_run_given_its_starts_measure_takes_it_instead_of_a_pass(monkeypatch):
    """``start_kkt`` (the engine choice's measure of the same warm point): the run makes one ``original_kkt`` pass
    fewer, and ends where it ends measuring the start itself (the scaled round trip moves the start by an ulp)."""
    from solver.lp import alm as alm_mod

    q, warm = _warm_round()
    s = Settings(tol=1e-6)
    x0, y0 = warm.x, warm.y
    start = okkt.original_kkt(q, x0, y0, s.tol)[0]
    calls = []
    real = alm_mod.original_kkt
    monkeypatch.setattr(alm_mod, "original_kkt", lambda *a, **k: calls.append(1) or real(*a, **k))
    res1, m1 = solve_alm_measured(q, s, warm)
    n_own = len(calls)
    calls.clear()
    res2, m2 = solve_alm_measured(q, s, warm, start_kkt=start)
    assert len(calls) == n_own - 1
    assert res1.status == res2.status == Status.OPTIMAL
    assert res1.iterations == res2.iterations
    assert abs(res1.objective - res2.objective) <= 1e-9 * (1 + abs(res1.objective))
    _same_measure(q, res2, m2, s.tol)  # the measure handed on is still the returned point's own


def test_a_start_measure_is_not_taken_when_the_reductions_change_the_start(monkeypatch):
    """A model whose trivial reductions drop a column (here an empty one, set to its best bound) starts from another
    point than the one measured: the run measures its own start."""
    from solver.lp import alm as alm_mod

    p = lp([1.0, 1.0, -1.0], [[1, 1, 0]], [1.0], [np.inf], [0.0, 0.0, 0.0], [np.inf, np.inf, 3.0])
    warm = (np.array([5.0, 5.0, 0.0]), np.array([0.0]))  # far from the optimum -2 at (0.5, 0.5, 3), y = 1
    s = Settings()
    wrong = okkt.original_kkt(p, np.array([0.5, 0.5, 3.0]), np.array([1.0]), s.tol)[0]  # of another point: converged
    assert wrong.converged(s.tol)
    calls = []
    real = alm_mod.original_kkt
    monkeypatch.setattr(alm_mod, "original_kkt", lambda *a, **k: calls.append(1) or real(*a, **k))
    res, measured = solve_alm_measured(p, s, warm, start_kkt=wrong)
    assert res.status == Status.OPTIMAL and abs(res.objective - (1.0 - 3.0)) <= 1e-3, res.message
    assert "already meets" not in res.message  # taken, the converged measure would have ended the run at (5, 5, 3)
    assert calls  # the start was measured here
    _same_measure(p, res, measured, s.tol)


def test_a_dispatched_warm_alm_round_measures_its_start_once(monkeypatch):
    """Through the dispatcher (engine auto, a warm TE round that the ALM runs): the warm point is measured by the
    engine choice only."""
    from solver.lp import alm as alm_mod
    from solver.lp import engine_choice

    sc = TEScenario(nodes=16, seed=4)
    p0 = sc.base()
    s = Settings(tol=1e-6)
    r0 = dispatch.solve(p0, s)  # a stream's round 0: its state carries the engine record the choice reads
    q, info = apply_delta(p0, sc.next_delta(1, None))
    warm = map_state(r0.state, info, q)
    choice = engine_choice.choose_engine(q, s, warm)
    assert choice.engine == "alm" and choice.warm_point_kkt is not None, choice.reason
    seen = []
    real = alm_mod.solve_alm_measured
    monkeypatch.setattr(alm_mod, "solve_alm_measured",
                        lambda *a, **k: seen.append(k.get("start_kkt")) or real(*a, **k))
    out = dispatch.solve(q, s, warm)
    assert out.engine == "alm" and out.status == Status.OPTIMAL
    assert len(seen) == 1 and seen[0] == choice.warm_point_kkt
