import numpy as np
import pytest
import scipy.sparse as sp

from solver.model.errors import ValidationError
from solver.model.problem import Problem


def test_from_arrays_normalizes_huge_bounds_to_infinity_and_canonicalizes_matrix():
    A = sp.coo_array(([2.0, 1.0, 0.0], ([1, 0, 0], [0, 0, 1])), shape=(2, 2))
    p = Problem.from_arrays(cost=[1, 2], col_lower=[-1e30, 0], col_upper=[1e31, 3], row_lower=[0, 1],
                            row_upper=[np.inf, 1e30], matrix=A)
    assert p.col_lower[0] == -np.inf and p.col_upper[0] == np.inf and p.row_upper[1] == np.inf
    assert p.nnz == 2 and p.a_indices.tolist() == [0, 1]  # zero dropped, rows sorted


def test_check_rejects_nan_bound_naming_the_variable():
    with pytest.raises(ValidationError, match="'y'"):
        Problem.from_arrays(cost=[1, 2], col_lower=[0, np.nan], col_upper=[1, 1], row_lower=[],
                            row_upper=[], matrix=sp.csc_array((0, 2)), col_names=["x", "y"])


def test_check_rejects_duplicate_names():
    with pytest.raises(ValidationError, match="duplicate variable name"):
        Problem.from_arrays(cost=[1, 2], col_lower=[0, 0], col_upper=[1, 1], row_lower=[],
                            row_upper=[], matrix=sp.csc_array((0, 2)), col_names=["x", "x"])
