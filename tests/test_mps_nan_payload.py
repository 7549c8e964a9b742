"""``nan(123)`` (C's NaN with a payload, which HiGHS's strtod reads as NaN) as a right-hand side or bound of
a free-format MPS file is refused naming the line, the field and the entity, as in COLUMNS: it was HiGHS's
"Row 0 (Row c1) has upper bound of nan <= -1e+30", without a line, never saying the file holds a NaN."""

from __future__ import annotations

import pytest

from formats.mps import read_mps
from solver.model.errors import FormatError

_FILE = ("NAME          T\nROWS\n N  obj\n L  c1\nCOLUMNS\n    x  obj  -1  c1  1\n    y  obj  -1  c1  1\n"
         "RHS\n    rhs  c1  {rhs}\nBOUNDS\n UP bnd  x  {ub}\nENDATA\n")


@pytest.mark.parametrize("rhs,ub,line,entity", [("nan(123)", "3", 9, "c1"), ("4", "nan(1)", 11, "x")])
def test_a_nan_with_payload_names_its_line_and_entity(tmp_path, rhs, ub, line, entity):
    path = tmp_path / "t.mps"
    path.write_text(_FILE.format(rhs=rhs, ub=ub))
    with pytest.raises(FormatError) as err:
        read_mps(path)
    assert err.value.line == line and err.value.entity == entity, err.value
    assert "nan(1" in str(err.value), err.value


def test_the_same_file_with_numbers_reads(tmp_path):
    path = tmp_path / "t.mps"
    path.write_text(_FILE.format(rhs="4", ub="3"))
    assert read_mps(path).n_cols == 2
