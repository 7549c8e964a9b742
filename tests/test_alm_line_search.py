"""The Newton solve's line search (solver.lp.alm_newton): once the unit step is cut, the first shorter trial is
Psi's minimiser along the direction (line_minimum), found without a matrix pass."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.lp import alm_kernels_ref as R
from solver.lp import alm_newton as N


def _subproblem(m, n, seed, tau, tau_s, sigma):
    rng = np.random.default_rng(seed)
    A = sp.random_array((m, n), density=0.3, format="csc", rng=rng, data_sampler=lambda size: rng.uniform(-2, 2, size))
    A.sort_indices()
    lv, uv = np.zeros(n), rng.uniform(0.1, 2.0, n)
    lc = rng.uniform(-1.0, 0.0, m)
    uc = lc + rng.uniform(0.0, 1.0, m)
    sub = N.Subproblem(A.indptr.astype(np.int64), A.indices.astype(np.int32), A.data.copy(), rng.standard_normal(n),
                       lv, uv, lc, uc, np.clip(rng.standard_normal(n), lv, uv), np.clip(rng.standard_normal(m), lc, uc),
                       rng.standard_normal(m), tau, tau_s, sigma)
    return A, sub, rng


def _phi(sub, w, ws, alpha):
    return N.psi_on_line(sub, w, ws, alpha)


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 30), st.integers(1, 30), st.integers(0, 2**31 - 1), st.floats(1e-2, 1e3), st.floats(1e-2, 1e3),
       st.floats(1e-2, 1e3), st.floats(0.1, 50.0))
def test_line_minimum_is_the_minimiser_along_a_descent_direction(m, n, seed, tau, tau_s, sigma, length):
    A, sub, rng = _subproblem(m, n, seed, tau, tau_s, sigma)
    ws = N.Workspace(n, m)
    w = rng.standard_normal(m)
    N.evaluate(sub, w, ws)
    ws.d[:] = -length * ws.grad  # a descent direction, often far past the minimiser (a cut Newton step)
    ws.gd[:] = A.T @ ws.d
    slope = float(ws.grad @ ws.d)
    if not slope < 0.0:
        return
    alpha = N.line_minimum(sub, w, ws, slope)
    if R.line_root_ref(ws.v, ws.gd, sub.xbar, sub.lv, sub.uv, sub.tau, w, ws.d, sub.sbar, sub.lc, sub.uc, sub.tau_s,
                       sub.sigma, slope) == -1.0:
        assert alpha == 0.5  # phi falls along all of [0, 1] (the twin says): the halving takes over, as before
        return
    assert 0.0 < alpha < 1.0
    psi0 = _phi(sub, w, ws, 0.0)
    grid = np.linspace(0.0, 1.0, 2001)
    values = [_phi(sub, w, ws, a) for a in grid]
    got = _phi(sub, w, ws, alpha)
    assert got < psi0
    # the minimiser: no point of a fine grid is lower (up to Psi's round-off)
    assert got <= min(values) + 1e-9 * (1.0 + abs(psi0))


def test_newton_solve_still_reaches_its_target_with_the_line_minimum():
    """An inner solve with cut steps (a large sigma: rows far off their curvature) ends at its gradient target."""
    m, n = 25, 40
    A, sub, rng = _subproblem(m, n, 7, 50.0, 50.0, 50.0)
    ws = N.Workspace(n, m)
    w = np.zeros(m)
    _, stats = N.newton_solve(sub, w, ws, lambda pres: 1e-9, max_steps=200)
    assert stats.converged and stats.reason == "target"
    assert stats.steps > stats.unit_steps  # the line search was exercised
    N.evaluate(sub, w, ws)
    assert np.linalg.norm(ws.grad) <= 1e-9
