"""The ALM's extrapolated Newton start (ALMParameters.extrapolate): every outer step after the first starts its
Newton solve from y + extrapolate (y - y_prev) while its problem keeps the multiplier y, and the run reaches the
same optimum as with the plain start."""

from __future__ import annotations

import numpy as np
import pytest

from solver.lp import alm
from solver.lp.alm import ALMParameters, solve_alm
from solver.model.settings import Settings
from solver.model.status import Status
from tests.helpers import assert_certified_optimal, te_warm_round

TOL = 1e-6


@pytest.fixture(scope="module")
def te_round():
    """A TE ring round: (problem of round 1, round 0's state mapped onto it)."""
    return te_warm_round(TOL)


def _recorded(monkeypatch, q, warm, theta):
    """Run the ALM with ``extrapolate`` theta; return (result, [(the step's multiplier, the Newton start)] per
    outer step)."""
    seen = []
    real = alm.newton_solve

    def spy(sub, w, *a, **k):
        seen.append((sub.y.copy(), w.copy()))
        return real(sub, w, *a, **k)

    monkeypatch.setattr(alm, "newton_solve", spy)
    return solve_alm(q, Settings(tol=TOL), warm, ALMParameters(extrapolate=theta)), seen


@pytest.mark.parametrize("theta", [0.5, 1.0])
def test_later_outer_steps_start_newton_from_the_extrapolated_multiplier(te_round, monkeypatch, theta):
    q, warm = te_round
    res, seen = _recorded(monkeypatch, q, warm, theta)
    assert res.status == Status.OPTIMAL and len(seen) >= 3  # several outer steps: the rule is exercised
    y0, start0 = seen[0]
    np.testing.assert_array_equal(start0, y0)  # the first step starts from its multiplier
    for (y_prev, _), (y, start) in zip(seen[:-1], seen[1:], strict=True):
        assert not np.array_equal(y, y_prev)
        np.testing.assert_allclose(start, y + theta * (y - y_prev), rtol=0, atol=1e-12 * (1 + np.abs(y).max()))


def test_no_extrapolation_starts_every_step_from_its_multiplier(te_round, monkeypatch):
    q, warm = te_round
    res, seen = _recorded(monkeypatch, q, warm, 0.0)
    assert res.status == Status.OPTIMAL and len(seen) >= 2
    for y, start in seen:
        np.testing.assert_array_equal(start, y)


def test_the_extrapolated_start_reaches_the_same_optimum(te_round):
    q, warm = te_round
    plain = solve_alm(q, Settings(tol=TOL), warm, ALMParameters(extrapolate=0.0))
    for theta in (0.5, 1.0):
        res = solve_alm(q, Settings(tol=TOL), warm, ALMParameters(extrapolate=theta))
        assert_certified_optimal(q, res, TOL)
        assert abs(res.objective - plain.objective) <= 10 * TOL * (1 + abs(plain.objective))
