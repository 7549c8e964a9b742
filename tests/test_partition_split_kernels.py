"""The part sub-matrix kernel (solver.partition.split_kernels) against its numpy twin (split_ref) on random sparse
matrices with global columns, rows of no part and empty parts (hypothesis), and against the dense restriction
it stands for; build_part_problems keeps every part's model as before (session 23)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.partition import split_kernels as K
from solver.partition import split_ref as R

shapes = st.tuples(st.integers(1, 30), st.integers(0, 30), st.integers(1, 4), st.integers(0, 2**31 - 1))


@settings(max_examples=120, deadline=None)
@given(shapes)
def test_part_matrix_matches_twin_and_the_dense_restriction(shape):
    m, n, k, seed = shape
    rng = np.random.default_rng(seed)
    A = sp.random_array((m, n), density=0.3, format="csc", rng=rng, data_sampler=lambda size: rng.uniform(-2, 2, size))
    A.sort_indices()
    cp, ci, cv = A.indptr.astype(np.int64), A.indices.astype(np.int32), A.data.copy()
    col_part = rng.integers(-1, k, n).astype(np.int64)  # -1: a global column (in every part)
    everywhere = rng.random(m) < 0.3
    row_part = rng.integers(-1, k, m).astype(np.int64)  # -1: a row of no part (only global columns reach it)
    dense = A.toarray()
    for p in range(k):
        cols = np.flatnonzero((col_part == p) | (col_part < 0)).astype(np.int64)
        args = (cp, ci, cv, cols, everywhere, row_part, p, m)
        out, ref = K.part_matrix(*args), R.part_matrix_ref(*args)
        for a, b in zip(out, ref, strict=True):
            assert a.dtype == b.dtype
            np.testing.assert_array_equal(a, b)
        sub_ptr, rows, sub_idx, sub_data = out
        held = everywhere | (row_part == p)
        expect = np.where(held[:, None], dense[:, cols], 0.0)
        expect_rows = np.flatnonzero((expect != 0).any(axis=1))
        np.testing.assert_array_equal(rows, expect_rows)
        got = sp.csc_array((sub_data, sub_idx, sub_ptr), shape=(rows.size, cols.size)).toarray()
        np.testing.assert_array_equal(got, expect[rows])
        assert all(np.all(np.diff(sub_idx[sub_ptr[t]:sub_ptr[t + 1]]) > 0) for t in range(cols.size))


def test_parts_built_in_threads_are_the_parts_built_one_after_another(monkeypatch):
    """The part kernel releases the GIL and a large model's parts are built side by side: the same parts, bitwise
    and in order, as one after another."""
    from solver.partition import round as pround
    from solver.partition import shares as sh
    from solver.partition import split
    from solver.workloads import make_scenario

    problem = make_scenario("te", 24, seed=3).base()
    r = pround._setup(problem, pround.PartitionConfig(k=4, executor="inline"), None, None, None)
    eff = sh.integral_allocations(problem, r.rows_sh, r.shares)
    used = []
    real = split.ThreadPoolExecutor

    class Recording(real):
        def __init__(self, *a, **kw):
            used.append(a)
            super().__init__(*a, **kw)

    monkeypatch.setattr(split, "ThreadPoolExecutor", Recording)
    monkeypatch.setattr(split.os, "cpu_count", lambda: 4)
    monkeypatch.setattr(split, "BUILD_THREADS_MIN_NNZ", 0)
    threaded = split.build_part_problems(problem, r.grouping, r.col_part, 4, eff)
    assert used == [(4,)]
    monkeypatch.setattr(split, "BUILD_THREADS_MIN_NNZ", 10**12)
    serial = split.build_part_problems(problem, r.grouping, r.col_part, 4, eff)
    assert used == [(4,)]
    for a, b in zip(threaded, serial, strict=True):
        np.testing.assert_array_equal(a.cols, b.cols)
        np.testing.assert_array_equal(a.rows, b.rows)
        for f in ("cost", "col_lower", "col_upper", "row_lower", "row_upper", "a_indptr", "a_indices", "a_data",
                  "col_names", "row_names"):
            np.testing.assert_array_equal(getattr(a.problem, f), getattr(b.problem, f))
        assert a.problem.name == b.problem.name
