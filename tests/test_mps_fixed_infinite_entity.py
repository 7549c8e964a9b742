"""An infinite cost or coefficient (``1e400``) in a fixed-format MPS file (names with spaces) names the
column as the file holds it: the line's first whitespace-separated word (``'x'`` of ``'x y'``) was
reported as the entity, a column that does not exist."""

from __future__ import annotations

import pytest

from formats.mps import read_mps
from solver.model.errors import ValidationError


def _fixed(cost: str, coef: str = "1") -> str:
    return ("NAME          FIX\nROWS\n N  obj\n L  c 1\nCOLUMNS\n"
            f"    x y       obj       {cost:<12}   c 1       {coef}\n"
            "    z         obj       -1             c 1       1\n"
            "RHS\n    rhs       c 1       4\nBOUNDS\n UP bnd       x y       3\nENDATA\n")


@pytest.mark.parametrize("cost,coef", [("1e400", "1"), ("-1", "1e400")])
def test_an_infinite_number_in_fixed_format_names_the_column_with_its_space(tmp_path, cost, coef):
    path = tmp_path / "fixed.mps"
    path.write_text(_fixed(cost, coef))
    with pytest.raises(ValidationError) as err:
        read_mps(path)
    assert err.value.entity == "x y", err.value
    assert err.value.line == 6, err.value


def test_the_same_file_with_finite_numbers_reads(tmp_path):
    path = tmp_path / "fixed.mps"
    path.write_text(_fixed("-1"))
    assert list(read_mps(path).col_names) == ["x y", "z"]
