"""The KKT measure of a point over column ranges (``solver.lp.original_kkt``'s ``spans``, which a partitioned round's
re-check of its merged point runs in threads, ``solver.partition.merge.whole_kkt``): the same measures as the single
pass up to rounding, exactly the single pass's with one range, the same floats however the ranges are run, and a
list of ranges that does not cover the columns in order is refused."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from solver.lp import original_kkt as ok
from solver.model.problem import Problem
from solver.partition.ranges import KKT_SPAN_BYTES, KKT_SPANS, RANGE_SIZE, kkt_spans, run_ranges

INF = np.inf


def _problem(rng, m, n, sense):
    A = rng.normal(size=(m, n)) * (rng.random((m, n)) < 0.5)
    lo = np.where(rng.random(m) < 0.3, -INF, rng.normal(size=m) - 1.0)
    up = np.where(rng.random(m) < 0.3, INF, lo + np.abs(rng.normal(size=m)))
    up = np.where(np.isfinite(lo) | np.isfinite(up), up, INF)
    cl = np.where(rng.random(n) < 0.2, -INF, -np.abs(rng.normal(size=n)))
    cu = np.where(rng.random(n) < 0.2, INF, np.abs(rng.normal(size=n)) * 3)
    return Problem.from_arrays(cost=rng.normal(size=n), matrix=A, row_lower=lo, row_upper=up, col_lower=cl,
                               col_upper=cu, sense=sense, offset=float(rng.normal()))


def _cuts(rng, n, k):
    inner = np.sort(rng.integers(0, n + 1, size=k - 1)) if k > 1 else np.array([], dtype=np.int64)
    ends = [0, *inner.tolist(), n]
    return [(int(a), int(b)) for a, b in zip(ends[:-1], ends[1:], strict=True)]


def _threads(fn, spans):
    return run_ranges(fn, spans, threads=3)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(0, 10), n=st.integers(1, 14), k=st.integers(1, 5),
       sense=st.sampled_from([1, -1]), tol=st.sampled_from([0.0, 1e-4]))
@example(seed=0, m=3, n=9, k=4, sense=1, tol=0.0)  # an empty range (2, 2) before (2, 7): one A x array for both
def test_spans_measure_what_the_single_pass_measures(seed, m, n, k, sense, tol):
    rng = np.random.default_rng(seed)
    p = _problem(rng, m, n, sense)
    x, y = rng.normal(size=n) * 2, rng.normal(size=m)
    one = ok.original_kkt(p, x, y, tol)
    spans = _cuts(rng, n, k)
    seq = ok.original_kkt(p, x, y, tol, spans=spans)
    par = ok.original_kkt(p, x, y, tol, spans=spans, run=_threads)
    for a, b in zip(seq[1:], par[1:], strict=True):  # the floats depend on the spans, not on how they ran
        np.testing.assert_array_equal(a, b)
    assert seq[0] == par[0]
    for a, b in zip(one[1:4], seq[1:4], strict=True):  # x, y, reduced costs: column by column, no sums
        np.testing.assert_array_equal(a, b)
    np.testing.assert_allclose(seq[4], one[4], rtol=1e-12, atol=1e-12)
    for f in ("primal_objective", "dual_objective", "primal_residual", "dual_residual", "gap_rel",
              "primal_residual_rel", "dual_residual_rel", "violation_worth_rel", "row_violation_rel"):
        assert getattr(seq[0], f) == pytest.approx(getattr(one[0], f), rel=1e-9, abs=1e-12), f
    ref = ok.original_kkt_ref(p, x, y, tol)  # the numpy twin
    assert seq[0].primal_residual == pytest.approx(ref[0].primal_residual, rel=1e-9, abs=1e-12)
    assert seq[0].dual_objective == pytest.approx(ref[0].dual_objective, rel=1e-9, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(0, 8), n=st.integers(1, 10), tol=st.sampled_from([0.0, 1e-4]))
def test_one_span_is_the_single_pass_exactly(seed, m, n, tol):
    rng = np.random.default_rng(seed)
    p = _problem(rng, m, n, 1)
    x, y = rng.normal(size=n), rng.normal(size=m)
    one = ok.original_kkt(p, x, y, tol)
    got = ok.original_kkt(p, x, y, tol, spans=[(0, n)], run=_threads)
    assert got[0] == one[0]
    for a, b in zip(got[1:], one[1:], strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("spans", [[], [(0, 2)], [(1, 4)], [(0, 2), (3, 4)], [(0, 3), (2, 4)], [(0, 4), (4, 3)]])
def test_spans_that_do_not_cover_the_columns_in_order_are_refused(spans):
    p = _problem(np.random.default_rng(1), 3, 4, 1)
    with pytest.raises(ValueError, match="do not cover the 4 columns"):
        ok.original_kkt(p, np.zeros(4), np.zeros(3), spans=spans)


def test_the_re_checks_spans_are_few_and_fixed_by_the_model():
    assert kkt_spans(10, 5) == [(0, 10)]
    assert kkt_spans(0, 5) == [(0, 0)]
    big = kkt_spans(1_060_000, 570_000)  # TE Kdl
    assert len(big) == KKT_SPANS and big[0][0] == 0 and big[-1][1] == 1_060_000
    assert all(b - a >= RANGE_SIZE for a, b in big[:-1])
    assert len(kkt_spans(2 * RANGE_SIZE, 5)) == 2  # at least RANGE_SIZE columns a range
    rows = KKT_SPAN_BYTES // 8  # the other ranges' A x arrays would pass the cap: one pass
    assert kkt_spans(4 * RANGE_SIZE, rows) == [(0, 4 * RANGE_SIZE)]
