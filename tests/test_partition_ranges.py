"""A partitioned round's merge passes in column / row ranges side by side (``solver.partition.ranges``; the kernels
``bound_kernels.terms_range`` and ``assignment_duals_range``): the ranges cover the items once, in order, fixed by
the count alone; a pass split into ranges writes bitwise the reduced costs and assignment duals of the single pass,
and its sums equal the single pass's to rounding; the threads really run, and an error in one is raised."""

from __future__ import annotations

import threading

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.model.problem import Problem
from solver.partition import bound_kernels as K
from solver.partition import ranges as R
from solver.partition.bound import LagrangianBound, assignment_rows_of, assignment_step, implied_upper


@given(st.integers(0, 10_000), st.integers(1, 3_000))
def test_ranges_cover_every_item_once_in_order(count, size):
    spans = R.ranges(count, size)
    if count == 0:
        assert spans == [(0, 0)]
        return
    assert spans[0][0] == 0 and spans[-1][1] == count
    assert all(b - a == size for a, b in spans[:-1]) and 0 < spans[-1][1] - spans[-1][0] <= size
    assert all(spans[i][1] == spans[i + 1][0] for i in range(len(spans) - 1))


def test_the_default_range_size_is_read_at_the_call(monkeypatch):
    monkeypatch.setattr(R, "RANGE_SIZE", 4)
    assert R.ranges(10) == [(0, 4), (4, 8), (8, 10)]


@pytest.mark.parametrize("count, size", [(-1, 4), (4, 0)])
def test_bad_ranges_raise(count, size):
    with pytest.raises(ValueError, match="ranges"):
        R.ranges(count, size)


def test_run_ranges_keeps_the_order_and_uses_threads(monkeypatch):
    monkeypatch.setattr(R, "usable_cores", lambda: 2)
    names = set()
    barrier = threading.Barrier(2, timeout=10)  # two calls must be running at once, else this times out

    def fn(a, b):
        names.add(threading.current_thread().name)
        if a < 2:
            barrier.wait()
        return (a, b)

    spans = R.ranges(7, 1)
    assert R.run_ranges(fn, spans) == spans
    assert all(n.startswith("copter-merge") for n in names)
    assert R.run_ranges(lambda a, b: threading.current_thread().name, spans, threads=1) == \
        [threading.current_thread().name] * len(spans)  # one thread: in the caller's


def test_an_error_in_a_range_is_raised_by_run_ranges(monkeypatch):
    monkeypatch.setattr(R, "usable_cores", lambda: 2)

    def fn(a, b):
        if a == 3:
            raise MemoryError("range 3 failed")
        return a

    with pytest.raises(MemoryError, match="range 3"):
        R.run_ranges(fn, R.ranges(6, 1))


def _problem(m: int, n: int, seed: int) -> Problem:
    rng = np.random.default_rng(seed)
    A = sp.random_array((m, n), density=0.3, format="csc", rng=rng,
                        data_sampler=lambda size: rng.choice([-1.0, 1.0], size, p=[0.15, 0.85]) * rng.uniform(0.1, 3, size))
    A.sort_indices()
    lo = np.where(rng.random(n) < 0.5, 0.0, rng.uniform(-0.5, 1.0, n))
    up = np.where(rng.random(n) < 0.3, np.inf, lo + rng.uniform(0, 5, n))
    rl = np.where(rng.random(m) < 0.5, -np.inf, rng.uniform(-5, 0, m))
    ru = np.where(rng.random(m) < 0.2, np.inf, rng.uniform(0, 10, m))
    return Problem(col_names=np.array([f"c{j}" for j in range(n)], dtype=object),
                   row_names=np.array([f"r{i}" for i in range(m)], dtype=object), cost=rng.standard_normal(n),
                   col_lower=lo, col_upper=up, row_lower=rl, row_upper=ru, integrality=np.zeros(n, dtype=np.uint8),
                   a_indptr=A.indptr.astype(np.int64), a_indices=A.indices.astype(np.int32), a_data=A.data.copy())


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 25), st.integers(2, 60), st.integers(0, 2**31 - 1), st.integers(1, 7),
       st.sampled_from([1, 3]), st.booleans())
def test_the_bound_pass_in_ranges_is_the_single_pass(m, n, seed, size, k, with_base):
    p = _problem(m, n, seed)
    rng = np.random.default_rng(seed + 1)
    shared = np.flatnonzero(rng.random(m) < 0.4).astype(np.int64)
    y_base = rng.standard_normal(m)
    up = implied_upper(p)
    cands = [rng.standard_normal(shared.size) for _ in range(k)]

    def run(range_size):
        saved = R.RANGE_SIZE
        R.RANGE_SIZE = range_size
        try:
            lb = LagrangianBound(p, y_base, shared, up)
            if not with_base:
                _ = lb.r_base  # the column_terms path: base reduced costs computed first
            red = np.empty((n, k))
            vals = lb.evaluate_many(cands, red)
            return vals, red, lb.r_base
        finally:
            R.RANGE_SIZE = saved

    v1, red1, rb1 = run(10**9)
    v2, red2, rb2 = run(size)
    np.testing.assert_array_equal(red1, red2)  # each column's values do not depend on the range
    np.testing.assert_array_equal(rb1, rb2)
    for a, b in zip(v1, v2, strict=True):
        if np.isfinite(a):
            assert abs(a - b) <= 1e-12 * (1 + abs(a))
        else:
            assert a == b


def _disjoint_problem(n_rows: int, n_link: int, seed: int) -> Problem:
    """TE-like: each 'demand' row owns its columns (>= 1), each column also on 1-3 'link' rows."""
    rng = np.random.default_rng(seed)
    owner = np.r_[np.arange(n_rows), rng.integers(0, n_rows, 2 * n_rows)]
    n = owner.size
    rows, cols = [owner], [np.arange(n)]
    for j in range(n):
        links = rng.choice(n_link, rng.integers(1, 4), replace=False) + n_rows
        rows.append(links)
        cols.append(np.full(links.size, j))
    r, c = np.concatenate(rows), np.concatenate(cols)
    A = sp.csc_array((np.ones(r.size), (r, c)), shape=(n_rows + n_link, n))
    A.sort_indices()
    m = n_rows + n_link
    return Problem(col_names=np.array([f"c{j}" for j in range(n)], dtype=object),
                   row_names=np.array([f"r{i}" for i in range(m)], dtype=object), cost=-rng.uniform(0.5, 2, n),
                   col_lower=np.zeros(n), col_upper=np.full(n, np.inf),
                   row_lower=np.r_[np.zeros(n_rows), np.full(n_link, -np.inf)],
                   row_upper=np.r_[rng.uniform(1, 5, n_rows), rng.uniform(2, 8, n_link)],
                   integrality=np.zeros(n, dtype=np.uint8), a_indptr=A.indptr.astype(np.int64),
                   a_indices=A.indices.astype(np.int32), a_data=A.data.copy())


@pytest.mark.parametrize("seed", range(6))
def test_the_assignment_step_in_row_ranges_is_the_single_pass(seed, monkeypatch):
    p = _disjoint_problem(40, 9, seed)
    arows = assignment_rows_of(p)
    assert arows is not None and arows.rows.size >= 40
    y = -np.random.default_rng(seed).uniform(0, 1, p.n_rows)
    v1, y1, s1 = assignment_step(p, y, arows)
    monkeypatch.setattr(R, "RANGE_SIZE", 3)
    monkeypatch.setattr(R, "usable_cores", lambda: 2)
    v2, y2, s2 = assignment_step(p, y, arows)
    np.testing.assert_array_equal(y1, y2)
    assert s1 == s2 and s1 > 0
    assert (v1 is None and v2 is None) or abs(v1 - v2) <= 1e-12 * (1 + abs(v1))
    # and the range kernel alone is the whole kernel's rows (the twin tests cover the whole kernel)
    r0 = np.random.default_rng(seed).standard_normal(p.n_cols)
    y_min = np.where(y < 0, y, 0.0)
    want, n_want = K.assignment_duals(arows.rp, arows.rc, arows.coef, arows.rows, r0, p.col_lower, p.col_upper,
                                      p.row_lower, p.row_upper, y_min)
    got = y_min.copy()
    n_got = sum(K.assignment_duals_range(arows.rp, arows.rc, arows.coef, arows.rows, a, b, r0, p.col_lower,
                                         p.col_upper, p.row_lower, p.row_upper, got)
                for a, b in R.ranges(arows.rows.size, 5))
    np.testing.assert_array_equal(got, want)
    assert n_got == n_want


def test_a_partitioned_round_merges_the_same_in_ranges_and_in_one_pass(monkeypatch):
    """A whole partitioned LP round (TE, K = 2, inline parts) whose merge makes its bound passes in ranges of 7
    columns / rows in two threads gives the merged point of the single pass and its bound to rounding."""
    from solver.model.settings import Settings
    from solver.partition import round as pround
    from solver.workloads import make_scenario

    te = make_scenario("te", 24, seed=5).base()
    st = Settings(tol=1e-6)
    cfg = pround.PartitionConfig(executor="inline", k=2, update_every=0)
    one = pround.solve_round(te, st, cfg)
    monkeypatch.setattr(R, "RANGE_SIZE", 7)
    monkeypatch.setattr(R, "usable_cores", lambda: 2)
    assert len(R.ranges(te.n_cols)) > 2
    split = pround.solve_round(te, st, cfg)
    b1, b2 = one.report["fallback"]["merged_bound"], split.report["fallback"]["merged_bound"]
    assert b1 is not None and abs(b1 - b2) <= 1e-12 * (1 + abs(b1))
    assert one.report["fallback"]["merged_objective"] == split.report["fallback"]["merged_objective"]
    np.testing.assert_array_equal(one.result.x, split.result.x)
