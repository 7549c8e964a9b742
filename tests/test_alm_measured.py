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

    def spy(problem, tol, res, whose, t0, time_limit, measured=None):
        seen.append((res, measured, real(problem, tol, res, whose, t0, time_limit, None)))
        return real(problem, tol, res, whose, t0, time_limit, measured)

    monkeypatch.setattr(dispatch, "judged", spy)
    out = dispatch.solve(q, s, map_state(r0.state, info, q))
    assert out.engine == "alm" and out.status == Status.OPTIMAL and len(seen) == 1
    res, measured, by_itself = seen[0]
    assert measured is not None
    _same_measure(q, res, measured, s.tol)
    assert by_itself[1] is False and by_itself[0] is res  # measured again: the same ruling, nothing replaced
    assert out.message == res.message
