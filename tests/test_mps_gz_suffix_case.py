"""A gzipped MPS file named with an upper-case suffix (`x.mps.GZ`) reads like `x.mps.gz`.

copter tells a file's format by its extension in any letter case (`B.MPS`, `c.MPS.gz` read), but HiGHS takes
only a lower-case `.gz`, so `copter solve x.mps.GZ` passed the extension check and then failed with HiGHS's
`not a valid MPS file (Model file x.mps.GZ not supported)`."""

from __future__ import annotations

import gzip

import numpy as np
import pytest

from formats.mps import read_mps

_TEXT = ("NAME t\nROWS\n N  obj\n L  c1\nCOLUMNS\n    x  obj  -1  c1  1\n    y  obj  -2  c1  1\nRHS\n    rhs  c1  4\n"
         "BOUNDS\n UP bnd  x  3\nENDATA\n")


@pytest.mark.parametrize("name", ["m.mps.GZ", "m.MPS.Gz", "m.mps.gz"])
def test_the_suffix_case_does_not_matter(tmp_path, name):
    p = tmp_path / name
    p.write_bytes(gzip.compress(_TEXT.encode()))
    problem = read_mps(p)
    assert problem.col_names.tolist() == ["x", "y"] and np.array_equal(problem.col_upper, [3.0, np.inf])
    assert problem.row_upper.tolist() == [4.0]
