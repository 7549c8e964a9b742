"""The Schur complement solved by a single-precision factor refined in double (``alm_schur.refined_single_solve``,
TE Kdl's order-1,790 systems): it reaches REFINE_TOL, reads one triangle of S, refuses what it cannot solve to that
accuracy (leaving its output alone, so the caller's double factor takes over), and the ALM reaches the same point
through it as through the double factor."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from solver.lp import alm_schur as K
from solver.lp.alm import ALMParameters, solve_alm
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.status import Status


def _spd(k: int, cond: float, seed: int) -> np.ndarray:
    """A symmetric positive definite (k, k) with condition number ``cond`` (eigenvalues log-spaced)."""
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((k, k)))
    return (Q * np.logspace(0, np.log10(cond), k)) @ Q.T


def _halves(S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(S with nan below the diagonal, S rounded to float32 with nan below it): what schur_finish leaves."""
    lower = np.tril_indices(S.shape[0], -1)
    half = S.copy()
    half[lower] = np.nan
    single = half.astype(np.float32)
    return half, single


@pytest.mark.parametrize("k,cond", [(1, 1.0), (7, 1e2), (64, 1e4), (300, 1e5)])
def test_refined_solve_reaches_its_tolerance_from_one_triangle(k, cond):
    S = _spd(k, cond, k)
    half, single = _halves(S)
    t = np.random.default_rng(1).standard_normal(k)
    out = np.full(k, np.nan)
    assert K.refined_single_solve(half, single, t, out)
    assert np.linalg.norm(S @ out - t) <= K.REFINE_TOL * np.linalg.norm(t)
    np.testing.assert_allclose(out, np.linalg.solve(S, t), rtol=1e-7, atol=0)
    lower = np.tril_indices(k, -1)
    assert np.isnan(half[lower]).all()  # S is read, never written
    np.testing.assert_array_equal(half[np.triu_indices(k)], S[np.triu_indices(k)])


def test_a_zero_right_hand_side_gives_zero():
    half, single = _halves(_spd(5, 10.0, 0))
    out = np.full(5, np.nan)
    assert K.refined_single_solve(half, single, np.zeros(5), out)
    assert (out == 0.0).all()


@pytest.mark.parametrize("case", ["indefinite", "single precision too coarse", "not finite"])
def test_what_it_cannot_solve_is_refused_and_out_left_alone(case):
    k = 40
    S = _spd(k, 1e3, 2)
    t = np.random.default_rng(3).standard_normal(k)
    if case == "indefinite":
        S[k // 2, k // 2] = -1.0
    elif case == "single precision too coarse":  # kappa x 6e-8 > 1: the float32 factor is no preconditioner
        S = _spd(k, 1e12, 4)
    else:
        t[0] = np.inf
    half, single = _halves(S)
    out = np.full(k, 7.0)
    assert not K.refined_single_solve(half, single, t, out)
    assert (out == 7.0).all()


def _paths(rng, m1: int, m2: int, n: int, ones: bool) -> sp.csc_array:
    """(m1 + m2, n): each column ("path") in one of m1 demand rows and 3 of m2 link rows; entries 1, or in [0.5, 2]."""
    rows, cols = [], []
    for j in range(n):
        rows += [rng.integers(m1)] + list(m1 + rng.choice(m2, size=3, replace=False))
        cols += [j] * 4
    vals = np.ones(len(rows)) if ones else rng.uniform(0.5, 2.0, len(rows))
    A = sp.csc_array((vals, (rows, cols)), shape=(m1 + m2, n))
    A.sum_duplicates()
    A.sort_indices()
    return A


def _coupled_system(seed: int):
    """A Newton system whose Schur complement has 30 coupling rows (links), the rest assignment rows."""
    rng = np.random.default_rng(seed)
    m1, m2, n = 60, 30, 240
    A = _paths(rng, m1, m2, n, ones=False)
    csc = (A.indptr.astype(np.int64), A.indices.astype(np.int32), A.data.copy())
    act = (rng.random(n) < 0.7).astype(np.uint8)
    tau, m = 3.0, m1 + m2
    diag = rng.uniform(0.1, 1.0, m)
    Aj = A.toarray() * act
    V = tau * Aj @ Aj.T + np.diag(diag)
    return csc, m, act, tau, diag, np.diag(V).copy(), V, rng.standard_normal(m)


def test_schur_system_takes_the_single_factor_from_its_order_and_falls_back_when_refused(monkeypatch):
    csc, m, act, tau, diag, prec, V, g = _coupled_system(0)
    calls = []
    real = K.refined_single_solve

    def counted(*args):
        calls.append(real(*args))
        return calls[-1]

    monkeypatch.setattr(K, "refined_single_solve", counted)
    for order, refuse in ((K.SINGLE_MIN_ORDER, False), (0, False), (0, True)):
        monkeypatch.setattr(K, "SINGLE_MIN_ORDER", order)
        if refuse:  # the double factor takes over: the same direction
            monkeypatch.setattr(K, "refined_single_solve", lambda *a: calls.append(False) or False)
        calls.clear()
        d = np.empty(m)
        system = K.SchurSystem(*csc, m)
        assert system.m2 == 30
        assert system.solve(*csc, act, tau, diag, prec, g, d)
        np.testing.assert_allclose(V @ d, g, rtol=0, atol=1e-8 * (1 + np.abs(g).max()) * np.abs(V).max())
        assert calls == ([] if order else [not refuse]), (order, refuse, calls)


def _te_like(seed: int) -> Problem:
    rng = np.random.default_rng(seed)
    m1, m2, n = 40, 25, 200
    A = _paths(rng, m1, m2, n, ones=True)
    m = m1 + m2
    return Problem.from_arrays(cost=-rng.uniform(0.5, 1.5, n), col_lower=np.zeros(n), col_upper=np.full(n, np.inf),
                               row_lower=np.full(m, -np.inf), row_upper=rng.uniform(0.5, 2.0, m), matrix=A)


def _recording(real, into: list):
    """``real`` with each of its results appended to ``into``."""
    def call(*args):
        into.append(real(*args))
        return into[-1]
    return call


def test_the_alm_reaches_the_same_point_through_the_single_factor(monkeypatch):
    from solver.baselines.highs import solve_highs

    for seed in range(3):
        p = _te_like(seed)
        s = Settings(tol=1e-6)
        K.forget()
        double = solve_alm(p, s, params=ALMParameters(handover=False))
        monkeypatch.setattr(K, "SINGLE_MIN_ORDER", 0)
        solved: list[bool] = []
        monkeypatch.setattr(K, "refined_single_solve", _recording(K.refined_single_solve, solved))
        K.forget()
        single = solve_alm(p, s, params=ALMParameters(handover=False))
        assert solved and all(solved), solved  # every direction through the single factor
        monkeypatch.undo()
        K.forget()
        assert double.status == single.status == Status.OPTIMAL
        assert ", 0 of them direct" not in single.message
        ref = solve_highs(p, solver="simplex")
        assert abs(single.objective - ref.objective) <= 1e-5 * (1 + abs(ref.objective))
        assert abs(single.objective - double.objective) <= 1e-6 * (1 + abs(ref.objective))


# netlib LPs through the direct Newton path with every Schur complement on the single factor (their orders are far
# below SINGLE_MIN_ORDER, so this is forced): the manifest's optimum, certified; boeing1 (ranged rows) also has a
# complement that float32 refuses and the double factor solves
SINGLE_NETLIB = ["afiro.mps", "adlittle.mps", "bandm.mps.gz", "boeing1.mps.gz", "brandy.mps.gz"]


@pytest.mark.data
@pytest.mark.parametrize("name", SINGLE_NETLIB)
def test_netlib_lps_reach_their_optimum_through_the_single_factor(name, monkeypatch):
    from formats.io import read_problem
    from tests.helpers import assert_certified_optimal, manifest, require_data

    p = read_problem(require_data("mps") / name)
    opt = float({r["file"]: r for r in manifest("mps")}[name]["optimal_objective"])
    monkeypatch.setattr(K, "SINGLE_MIN_ORDER", 0)
    solved: list[bool] = []
    monkeypatch.setattr(K, "refined_single_solve", _recording(K.refined_single_solve, solved))
    K.forget()
    try:
        res = solve_alm(p, Settings(tol=1e-6, time_limit_seconds=60), params=ALMParameters(handover=False))
    finally:
        K.forget()
    assert sum(solved) > 0, name  # the single factor solved directions of this LP
    assert_certified_optimal(p, res, 1e-6)
    assert abs(res.objective - opt) <= 1e-5 * max(1.0, abs(opt)), (res.objective, opt)


def test_after_a_refusal_the_same_tau_goes_straight_to_the_double_factor(monkeypatch):
    csc, m, act, tau, diag, _, V, g = _coupled_system(1)
    monkeypatch.setattr(K, "SINGLE_MIN_ORDER", 0)
    answers = iter([False, True, True])  # refuse once, then solve
    calls: list[float] = []

    def scripted(S, S32, t, out):
        calls.append(1.0)
        if next(answers):
            out[:] = np.linalg.solve(np.triu(S) + np.triu(S, 1).T, t)
            return True
        return False

    monkeypatch.setattr(K, "refined_single_solve", scripted)
    system = K.SchurSystem(*csc, m)
    for step_tau, expect_calls in ((tau, 1), (tau, 1), (2 * tau, 2), (2 * tau, 3)):
        Vs = (V - np.diag(diag)) * (step_tau / tau) + np.diag(diag)  # tau A_J A_J' + diag at this step's tau
        d = np.empty(m)
        assert system.solve(*csc, act, step_tau, diag, np.diag(Vs).copy(), g, d)
        np.testing.assert_allclose(Vs @ d, g, rtol=0, atol=1e-8 * (1 + np.abs(g).max()) * np.abs(Vs).max())
        assert len(calls) == expect_calls, (step_tau, calls)


def test_a_system_without_coupling_rows_never_takes_the_single_factor(monkeypatch):
    """Order 0 (every row an assignment row): nothing to factor, so neither the single factor nor scipy.linalg's
    import (review: ``S32.shape[0] == m2`` held at 0 == 0 and called it)."""
    n = 12
    A = sp.csc_array((np.ones(n), (np.arange(n) % 4, np.arange(n))), shape=(4, n))
    A.sort_indices()
    csc = (A.indptr.astype(np.int64), A.indices.astype(np.int32), A.data.copy())
    monkeypatch.setattr(K, "SINGLE_MIN_ORDER", 0)
    calls: list[bool] = []
    monkeypatch.setattr(K, "refined_single_solve", _recording(K.refined_single_solve, calls))
    system = K.SchurSystem(*csc, 4)
    assert system.m2 == 0
    act, diag, tau = np.ones(n, np.uint8), np.full(4, 0.5), 2.0
    V = tau * (A.toarray() @ A.toarray().T) + np.diag(diag)
    g, d = np.arange(1.0, 5.0), np.empty(4)
    assert system.solve(*csc, act, tau, diag, np.diag(V).copy(), g, d)
    np.testing.assert_allclose(V @ d, g, rtol=1e-12)
    assert calls == []
