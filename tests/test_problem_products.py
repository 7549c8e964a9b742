"""Problem.row_activity / Problem.rmatvec and the structure's CSR copy run copter's kernels instead of scipy
(issue #15: no ``scipy.sparse`` import on the round path) and give bitwise scipy's results, so the rounds'
points are unchanged."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from solver.integer.structure import detect_structure
from solver.model.problem import Problem


def _dense_random_problem(rng: np.random.Generator, m: int, n: int, density: float) -> Problem:
    """Full-precision coefficients and many nonzeros per row and column: the summation order shows in the
    last bits."""
    A = sp.random(m, n, density=density, random_state=rng, data_rvs=lambda k: rng.normal(size=k) * 10.0 ** rng.integers(-3, 4, k))
    return Problem.from_arrays(cost=rng.normal(size=n), col_lower=np.zeros(n), col_upper=np.ones(n),
                               row_lower=np.full(m, -np.inf), row_upper=np.ones(m), matrix=A,
                               integrality=rng.random(n) < 0.5)


@pytest.mark.parametrize("m, n, density", [(40, 70, 0.4), (200, 30, 0.5), (1, 1, 1.0), (5, 0, 0.0), (0, 4, 0.0)])
def test_products_equal_scipys_bitwise(m, n, density):
    rng = np.random.default_rng(m * 1000 + n)
    p = _dense_random_problem(rng, m, n, density)
    A = p.matrix()
    x = rng.normal(size=n) * 1e3
    y = rng.normal(size=m) * 1e-2
    assert np.array_equal(p.row_activity(x), A @ x)
    assert np.array_equal(p.rmatvec(y), A.T @ y)
    assert np.array_equal(p.rmatvec(y, absolute=True), abs(A).T @ y)
    assert p.row_activity(x).dtype == np.float64 and p.rmatvec(y).shape == (n,)


def test_products_take_any_1d_vector():
    """Integer, boolean and strided vectors: converted to contiguous float64 as scipy's product converts."""
    rng = np.random.default_rng(7)
    p = _dense_random_problem(rng, 30, 50, 0.3)
    A = p.matrix()
    xi = rng.integers(-3, 4, 50)
    xb = rng.random(50) < 0.5
    xs = rng.normal(size=100)[::2]
    for x in (xi, xb, xs, list(xs)):
        assert np.array_equal(p.row_activity(x), A @ np.asarray(x, dtype=np.float64))
    ys = rng.normal(size=60)[::2]
    assert np.array_equal(p.rmatvec(ys), A.T @ ys)


def test_structure_csr_is_scipys_conversion():
    rng = np.random.default_rng(3)
    p = _dense_random_problem(rng, 60, 90, 0.2)
    R = sp.csr_array(p.matrix())
    R.sort_indices()
    s = detect_structure(p)
    assert s.csr_indptr.dtype == np.int64 and s.csr_indices.dtype == np.int64 and s.csr_data.dtype == np.float64
    assert np.array_equal(s.csr_indptr, R.indptr) and np.array_equal(s.csr_indices, R.indices)
    assert np.array_equal(s.csr_data, R.data)
