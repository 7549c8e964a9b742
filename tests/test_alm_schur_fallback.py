"""A failed dense factorisation in the ALM's direct Newton solve (solver.lp.alm_schur): the run falls back to
PCG and reaches the same point, the failed attempt's work is charged as matrix passes (the pass budget is
the engine's work measure), and it is not repeated at every Newton step of the same inner solve (the same
tau and sigma, where the same round-off would defeat it again)."""

from __future__ import annotations

import re

import numpy as np
import pytest
import scipy.sparse as sp

from solver.lp.alm import ALMParameters, solve_alm
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.status import Status


def _te_like(seed: int = 0) -> Problem:
    """max total flow: 20 demand rows (each path in one), 6 link rows (each path on 2 of them), 60 paths."""
    rng = np.random.default_rng(seed)
    m1, m2, n = 20, 6, 60
    rows = np.concatenate([[rng.integers(m1), *(m1 + rng.choice(m2, 2, replace=False))] for _ in range(n)])
    A = sp.csc_array((np.ones(3 * n), (rows, np.repeat(np.arange(n), 3))), shape=(m1 + m2, n))
    return Problem.from_arrays(cost=-rng.uniform(0.5, 1.5, n), col_lower=np.zeros(n), col_upper=np.ones(n),
                               row_lower=np.full(m1 + m2, -np.inf), row_upper=rng.uniform(0.5, 2.0, m1 + m2),
                               matrix=A)


def _counts(message: str) -> dict:
    m = re.search(r"\((\d+) outer steps, (\d+) Newton steps, .* (\d+) of them direct, (\d+) CG iterations, "
                  r"(\d+) matrix passes", message)
    assert m, message
    return dict(zip(("outer", "newton", "direct", "cg", "passes"), map(int, m.groups()), strict=True))


@pytest.mark.parametrize("failure", ["raises", "not finite"])
def test_failed_factorisation_falls_back_once_per_inner_solve_and_is_charged(monkeypatch, failure):
    p = _te_like()
    s = Settings(tol=1e-6)
    cg = solve_alm(p, s, params=ALMParameters(handover=False, direct_max=0))
    assert cg.status == Status.OPTIMAL
    calls = []
    real = np.linalg.cholesky

    def broken(a):
        calls.append(a.shape[0])
        if failure == "raises":
            raise np.linalg.LinAlgError("Matrix is not positive definite")
        return np.full_like(real(a), np.nan)

    monkeypatch.setattr(np.linalg, "cholesky", broken)
    res = solve_alm(p, s, params=ALMParameters(handover=False))
    assert res.status == Status.OPTIMAL and np.isfinite(res.x).all()
    got, ref = _counts(res.message), _counts(cg.message)
    assert got["direct"] == 0
    # PCG starts from d = 0 whatever the failed attempt left: the same run as the CG-only one
    assert (got["outer"], got["newton"], got["cg"]) == (ref["outer"], ref["newton"], ref["cg"])
    assert res.objective == cg.objective
    assert 1 <= len(calls) <= got["outer"] < got["newton"]  # one attempt per inner solve, not per Newton step
    assert got["passes"] > ref["passes"]  # the attempts' assembly and factorisation were charged
