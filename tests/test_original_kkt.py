"""The one-pass original-space KKT kernel agrees with its numpy twin (solver.lp.original_kkt)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.lp.original_kkt import original_kkt, original_kkt_ref
from solver.model.problem import Problem

INF = np.inf


def _problem(rng, m, n, sense):
    A = rng.uniform(-3, 3, (m, n)) * (rng.random((m, n)) < 0.4)
    lo = rng.uniform(-2, 0, n)
    up = lo + rng.uniform(0, 3, n)
    lo[rng.random(n) < 0.25] = -INF
    up[rng.random(n) < 0.25] = INF
    rl = rng.uniform(-4, 0, m)
    ru = rl + rng.uniform(0, 5, m)
    eq = rng.random(m) < 0.2
    ru[eq] = rl[eq]
    rl[rng.random(m) < 0.2] = -INF
    ru[rng.random(m) < 0.2] = INF
    return Problem.from_arrays(cost=rng.standard_normal(n), matrix=A, row_lower=rl, row_upper=ru,
                               col_lower=lo, col_upper=up, sense=sense, offset=float(rng.standard_normal()))


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(0, 12), n=st.integers(1, 15), sense=st.sampled_from([1, -1]),
       spoil=st.booleans(), tol=st.sampled_from([0.0, 1e-4, 0.5]))
def test_original_kkt_kernel_matches_its_numpy_twin(seed, m, n, sense, spoil, tol):
    rng = np.random.default_rng(seed)
    p = _problem(rng, m, n, sense)
    x = rng.uniform(-5, 5, n)
    y = rng.uniform(-3, 3, m)
    if spoil:  # non-finite entries become 0 in both
        x[rng.integers(n)] = rng.choice([np.nan, np.inf, -np.inf])
        if m:
            y[rng.integers(m)] = rng.choice([np.nan, np.inf, -np.inf])
    got, ref = original_kkt(p, x, y, tol), original_kkt_ref(p, x, y, tol)  # tol: termination.near_bound's
    for a, b in zip(got[1:], ref[1:], strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-13)
    for field in ("primal_objective", "dual_objective", "primal_residual", "dual_residual",
                  "primal_residual_rel", "dual_residual_rel", "gap_rel", "violation_worth_rel"):
        np.testing.assert_allclose(getattr(got[0], field), getattr(ref[0], field), rtol=1e-11, atol=1e-12,
                                   err_msg=field)


def test_non_finite_primal_entries_are_projected_into_the_column_bounds():
    # a NaN/inf entry used to become 0 AFTER the clip, leaving x outside bounds such as [1, 2] while the
    # residuals (rows only) could not see it
    p = Problem.from_arrays(cost=np.array([1.0, -1.0, 2.0, 0.5]), matrix=np.array([[1.0, 1.0, 1.0, 1.0]]),
                            row_lower=np.array([-INF]), row_upper=np.array([10.0]),
                            col_lower=np.array([1.0, -INF, 3.0, -5.0]), col_upper=np.array([2.0, -4.0, INF, -1.0]))
    x = np.array([np.nan, np.inf, -np.inf, np.nan])
    for got in (original_kkt(p, x, np.zeros(1)), original_kkt_ref(p, x, np.zeros(1))):
        np.testing.assert_array_equal(got[1], [1.0, -4.0, 3.0, -1.0])
        np.testing.assert_array_equal(got[4], [-1.0])


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(0, 12), n=st.integers(1, 15), sense=st.sampled_from([1, -1]),
       tol=st.sampled_from([0.0, 1e-4]), lower_above_zero=st.booleans())
def test_the_cold_point_shortcut_gives_the_full_passs_measures(seed, m, n, sense, tol, lower_above_zero):
    """x = 0 inside the bounds and y = 0 skip the matrix (``_zero_point``): every measure and vector is the full
    pass's (the pass run here on the same arrays through the kernel directly), and a column whose lower bound is
    above 0 (x clipped to it, A x no longer 0) takes the full pass."""
    from solver.lp import original_kkt as ok

    rng = np.random.default_rng(seed)
    p = _problem(rng, m, n, sense)
    lo = np.where(np.isfinite(p.col_lower), np.minimum(p.col_lower, 0.0), -INF)
    up = np.where(np.isfinite(p.col_upper), np.maximum(p.col_upper, 0.0), INF)
    if lower_above_zero:
        lo[rng.integers(n)], up[:] = 0.5, np.maximum(up, 1.0)
    p = Problem.from_arrays(cost=p.cost, matrix=_dense(p), row_lower=p.row_lower, row_upper=p.row_upper, col_lower=lo, col_upper=up,
                            sense=sense, offset=p.offset)
    x, y = np.zeros(n), np.zeros(m)
    assert ok._zero_point(p, x, y) is (not lower_above_zero)
    got = ok.original_kkt(p, x, y, tol)
    outs = np.empty(n), np.empty(m), np.empty(n), np.empty(m)
    sums = ok.kkt_pass(p.cost, p.col_lower, p.col_upper, p.row_lower, p.row_upper, p.a_indptr, p.a_indices,
                       p.a_data, x, y, float(sense), float(tol), *outs)
    pn, dn = np.sqrt(sums[2]), np.sqrt(sums[3])
    assert (got[0].primal_residual, got[0].dual_residual) == (pn, dn)
    assert got[0].primal_objective == sums[0] + sense * p.offset and got[0].dual_objective == sums[1] + sense * p.offset
    assert got[0].violation_worth_rel == sums[6] / (1.0 + abs(got[0].primal_objective) + abs(got[0].dual_objective))
    x_out, y_out, rc_out, ax_out = got[1:]  # y and the reduced costs in the problem's sense, the kernel's in min form
    for a, b in zip((x_out, sense * y_out, sense * rc_out, ax_out), outs, strict=True):
        np.testing.assert_array_equal(a, b)


def _dense(p):
    A = np.zeros((p.n_rows, p.n_cols))
    for j in range(p.n_cols):
        for q in range(p.a_indptr[j], p.a_indptr[j + 1]):
            A[p.a_indices[q], j] = p.a_data[q]
    return A
