"""The numba kernels of the partitioned round's Lagrangian bound (solver.partition.bound_kernels) agree with their
numpy twins (solver.partition.bound_ref; the row-client kernel with clients_ref) on random sparse data with infinite and negative bounds (hypothesis), and
LagrangianBound built on them still bounds the LP optimum from below."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from solver.partition import bound_kernels as K
from solver.partition import bound_ref as R


def _case(m, n, seed):
    rng = np.random.default_rng(seed)
    A = sp.random_array((m, n), density=0.3, format="csc", rng=rng,
                        data_sampler=lambda size: rng.choice([-1.0, 1.0], size, p=[0.15, 0.85]) * rng.uniform(0.1, 3, size))
    A.sort_indices()
    csc = (A.indptr.astype(np.int64), A.indices.astype(np.int32), A.data.copy())
    lo = np.where(rng.random(n) < 0.15, -np.inf, rng.uniform(-0.5, 1.0, n))
    lo[rng.random(n) < 0.5] = 0.0
    up = np.where(rng.random(n) < 0.5, np.inf, lo + rng.uniform(0, 5, n))
    ru = np.where(rng.random(m) < 0.2, np.inf, rng.uniform(0, 10, m))
    return csc, lo, up, ru, rng


shapes = st.tuples(st.integers(1, 30), st.integers(1, 30), st.integers(0, 2**31 - 1))


@settings(max_examples=80, deadline=None)
@given(shapes)
def test_implied_upper_matches_twin(shape):
    m, n, seed = shape
    csc, lo, up, ru, _ = _case(m, n, seed)
    np.testing.assert_array_equal(K.implied_upper(*csc, lo, up, ru, m), R.implied_upper_ref(*csc, lo, up, ru, m))


@settings(max_examples=80, deadline=None)
@given(shapes)
def test_reduced_costs_and_column_term_match_twins(shape):
    m, n, seed = shape
    csc, lo, up, ru, rng = _case(m, n, seed)
    c, y = rng.standard_normal(n), rng.standard_normal(m)
    r1, r2 = np.empty(n), np.empty(n)
    K.reduced_costs(*csc, c, y, r1)
    R.reduced_costs_ref(*csc, c, y, r2)
    np.testing.assert_allclose(r1, r2, rtol=1e-12, atol=1e-12)
    is_sh = (rng.random(m) < 0.4).astype(np.uint8)
    ysh = rng.standard_normal(m)
    up_i = K.implied_upper(*csc, lo, up, ru, m)
    t1, u1 = K.column_term(*csc, is_sh, ysh, r2, lo, up_i)
    t2, u2 = R.column_term_ref(*csc, is_sh, ysh, r2, lo, up_i)
    assert u1 == u2
    if not u1:
        assert abs(t1 - t2) <= 1e-9 * (1 + abs(t2))


def test_lagrangian_bound_is_below_the_lp_optimum():
    from solver.baselines.highs import solve_highs
    from solver.model.problem import Problem
    from solver.partition.bound import LagrangianBound

    rng = np.random.default_rng(4)
    m, n = 12, 30
    A = sp.random_array((m, n), density=0.4, format="csc", rng=rng, data_sampler=lambda size: rng.uniform(0.5, 2, size))
    p = Problem.from_arrays(cost=-rng.uniform(0.5, 2, n), col_lower=np.zeros(n), col_upper=np.full(n, np.inf),
                            row_lower=np.full(m, -np.inf), row_upper=rng.uniform(1, 3, m), matrix=A)
    opt = solve_highs(p, solver="simplex")
    shared = np.arange(0, m, 3, dtype=np.int64)
    for _ in range(20):
        y = -np.abs(rng.standard_normal(m))  # <= rows: duals <= 0 in HiGHS's minimisation convention
        lb = LagrangianBound(p, y, shared)
        v = lb.evaluate(y[shared])
        assert v <= opt.objective + 1e-9 * (1 + abs(opt.objective))


@settings(max_examples=80, deadline=None)
@given(shapes, st.integers(1, 5))
def test_row_clients_matches_twin(shape, n_clients):
    from solver.partition import clients_kernels as CK
    from solver.partition import clients_ref as CR
    from solver.partition.clients import EMPTY, GLOBAL, SHARED

    m, n, seed = shape
    csc, lo, up, ru, rng = _case(m, n, seed)
    col_client = rng.integers(-1, n_clients, n).astype(np.int64)
    col_client[col_client < 0] = GLOBAL
    args = (csc[0], csc[1], col_client, m, SHARED, EMPTY, GLOBAL)
    np.testing.assert_array_equal(CK.row_clients(*args), CR.row_clients_ref(*args))


@settings(max_examples=80, deadline=None)
@given(shapes, st.integers(1, 4))
def test_presence_matches_twin(shape, k):
    from solver.partition import clients_kernels as CK
    from solver.partition import clients_ref as CR

    m, n, seed = shape
    csc, lo, up, ru, rng = _case(m, n, seed)
    cv = csc[2].copy()
    cv[rng.random(cv.size) < 0.1] = 0.0  # explicit zeros do not make a part present
    col_part = rng.integers(-1, k, n).astype(np.int64)
    rows = np.flatnonzero(rng.random(m) < 0.5)
    pos = np.full(m, -1, dtype=np.int64)
    pos[rows] = np.arange(rows.size)
    args = (csc[0], csc[1], cv, col_part, pos, k, rows.size)
    np.testing.assert_array_equal(CK.presence(*args), CR.presence_ref(*args))
