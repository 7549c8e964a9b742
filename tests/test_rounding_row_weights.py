"""The rounding model's row weights (``rounding.build_model``: 1 / max(1, max_j |a_ij|)) come from one
reduceat over the structure's CSR copy; they equal the ``np.maximum.at`` scatter over the CSC indices they
replaced, empty rows included (issue #15: 18 ms of a Sia 10,240 round)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from solver.integer.rounding import build_model
from solver.integer.structure import detect_structure
from solver.model.problem import Problem


def test_row_weights_equal_the_scatter_maximum_with_empty_rows():
    rng = np.random.default_rng(5)
    for seed in range(5):
        m, n = 40, 90
        a = sp.random(m, n, density=0.05, random_state=seed, format="lil")
        a[: 3 + seed, :] = 0.0  # empty rows
        a = sp.csc_array(a.tocsc())
        a.eliminate_zeros()
        a.data = rng.normal(scale=10.0, size=a.data.size)
        p = Problem.from_arrays(cost=rng.normal(size=n), col_lower=np.zeros(n), col_upper=np.ones(n),
                                row_lower=np.full(m, -np.inf), row_upper=np.ones(m), matrix=a,
                                integrality=rng.random(n) < 0.5)
        want = np.zeros(m)
        np.maximum.at(want, p.a_indices, np.abs(p.a_data))
        w = build_model(p, detect_structure(p))[9]
        assert np.array_equal(w, 1.0 / np.maximum(1.0, want))
