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


@pytest.mark.parametrize("what", ["cost", "offset", "coefficient"])
def test_a_magnitude_of_1e30_is_infinity_so_no_cost_offset_or_coefficient(what):
    """Magnitudes >= 1e30 mean infinity (MPS/HiGHS convention): the MPS reader refused such costs and
    coefficients, but a Parquet problem or a delta could carry them (and an offset of 1e30) into a model
    (fresh-install user)."""
    a = sp.csc_matrix(np.array([[1.0, 2.0]]))
    kw = dict(cost=np.array([1.0, 1.0]), offset=0.0)
    if what == "cost":
        kw["cost"] = np.array([1e30, 1.0])
    elif what == "offset":
        kw["offset"] = -1e30
    else:
        a = sp.csc_matrix(np.array([[1.0, 1e31]]))
    with pytest.raises(ValidationError, match="1e30"):
        Problem.from_arrays(col_lower=np.zeros(2), col_upper=np.ones(2), row_lower=np.array([-np.inf]),
                            row_upper=np.array([1.0]), matrix=a, **kw)
