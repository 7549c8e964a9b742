"""The proximal ALM's step rules (solver.lp.alm, solver.lp.alm_newton; issue #17): eta grows only after a slow
outer step, and on TE ring warm rounds the semismooth Newton steps are mostly accepted at unit length."""

from __future__ import annotations

import math
import time

import numpy as np
import pytest

from solver.differential import apply_delta, map_state
from solver.lp.alm import ALMParameters, _Run, solve_alm
from solver.lp.alm_newton import NewtonStats, cg_forcing
from solver.lp.dispatch import solve
from solver.lp.termination import KKT
from solver.lp.trivial import reduce_trivial
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.workloads import make_scenario


def _run(prm: ALMParameters) -> _Run:
    """A cold-started ALM run on a 2 x 3 LP, set up as solve_alm sets it up (before its first outer step)."""
    p = Problem.from_arrays(cost=[-1.0, -2.0, 1.0], col_lower=[0, 0, 0], col_upper=[4, 4, 4], row_lower=[-np.inf, 1.0],
                            row_upper=[5.0, np.inf], matrix=np.array([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]))
    red = reduce_trivial(int(p.sense) * p.cost, p.col_lower, p.col_upper, p.row_lower, p.row_upper, p.a_indptr,
                         p.a_indices, p.col_names, p.row_names)
    run = _Run(p, Settings(), prm, red, time.perf_counter())
    run.start(None)
    return run


def _kkt(worst: float):
    return KKT(0.0, 0.0, worst, worst / 2, worst, worst / 2, worst / 4)


def _step(run: _Run, last: float, worst: float, res_p: float, res_d: float, converged: bool = True):
    """Set the previous step's error to ``last``, judge a step that reached ``worst``; (eta, omega) after."""
    run.eta, run.omega, run.last_worst = 100.0, 1.0, last
    assert not run.verdict(_kkt(worst), NewtonStats(steps=3, converged=converged, reason="target"), res_p, res_d)
    return run.eta, run.omega


def test_eta_grows_only_after_a_slow_outer_step_with_balanced_residuals():
    prm = ALMParameters()
    run = _run(prm)
    # 10x progress, balanced residuals: the step length was right, keep it (it was multiplied by 4 every step)
    assert _step(run, 1e-2, 1e-3, 1e-4, 1e-4) == (100.0, 1.0)
    # slow (0.9x), balanced: a longer step
    assert _step(run, 1e-3, 0.9e-3, 1e-4, 1e-4) == (100.0 * prm.step_growth, 1.0)
    # slow, primal residual 10x the dual one: the weight moves, eta stays
    assert _step(run, 1e-3, 0.9e-3, 1e-3, 1e-4) == (100.0, prm.weight_factor)
    # no progress at all: eta grows whatever the balance
    assert _step(run, 1e-3, 2e-3, 1e-4, 1e-3) == (100.0 * prm.step_growth, 1.0 / prm.weight_factor)
    # a stalled Newton solve: a shorter step, omega left alone
    assert _step(run, 1e-2, 1e-3, 1e-4, 1e-4, converged=False) == (100.0 / prm.step_growth, 1.0)


def test_cg_forcing_term_is_snipals_and_vanishes_with_the_gradient():
    assert cg_forcing(1.0) == 0.1 and cg_forcing(1e-3) == 0.1
    assert math.isclose(cg_forcing(1e-10), 1e-2)
    assert cg_forcing(0.0) == 1e-8


@pytest.fixture(scope="module")
def ring_round():
    """TE default ring (bench/bench_warm.py's chain, seed 0): round 1 and the map of round 0's PDHG state."""
    sc = make_scenario("te", None, seed=0)
    p = sc.base()
    r0 = solve(p, Settings(tol=1e-4))
    q, info = apply_delta(p, sc.next_delta(1, None))
    return q, map_state(r0.state, info, q)


def _count(message: str, what: str) -> int:
    return int(message.split(f" {what}")[0].rsplit(" ", 1)[-1])


def test_te_ring_warm_round_takes_mostly_unit_newton_steps(ring_round):
    q, ws = ring_round
    res = solve_alm(q, Settings(tol=1e-4), warm_start=ws)
    assert res.status.name == "OPTIMAL", res.message
    newton, unit = _count(res.message, "Newton steps"), _count(res.message, "of them unit steps")
    # measured: 26 of 31 (before the step rule: 18 of 32, the first steps cut to 2.4e-4-2e-3 at eta 331-1,324)
    assert unit >= 2 * newton / 3, res.message
