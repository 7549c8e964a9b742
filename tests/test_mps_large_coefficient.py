"""An MPS coefficient of magnitude >= 1e15, which HiGHS's reader refuses (its ``large_matrix_value``), is a format
error naming the COLUMNS line, the column and the row (entity ``row/column``, as the MPS writer names the same
refusal). It was HiGHS's message alone, no line or entity, where every other refused MPS named both (helper-190)."""

from __future__ import annotations

import pytest

from formats.mps import read_mps
from solver.model.errors import FormatError

_MPS = """NAME          BIG
ROWS
 N  obj
 L  c1
 G  c2
COLUMNS
    x         obj       {cost}          c1        1.0
    y         obj       2.0          c1        1.0
    y         c2        {value}
RHS
    rhs       c1        10.0
BOUNDS
 UP bnd       x         5.0
ENDATA
"""


@pytest.mark.parametrize("value", ["1e20", "-3e15", "1e15"])
def test_a_huge_coefficient_names_its_line_column_and_row(tmp_path, value):
    f = tmp_path / "big.mps"
    f.write_text(_MPS.format(cost="1e16", value=value))  # a huge cost comes first: not the one refused
    with pytest.raises(FormatError) as err:
        read_mps(f)
    e = err.value
    assert e.line == 9 and e.entity == "c2/y"
    assert f"coefficient {float(value):g} in row 'c2'" in str(e) and "1e+15" in str(e)


def test_a_coefficient_below_the_limit_reads():
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "ok.mps"
        f.write_text(_MPS.format(cost="1.0", value="9.99e14"))
        p = read_mps(f)
    assert p.nnz == 3 and abs(p.a_data).max() == pytest.approx(9.99e14)


def test_init_from_such_a_file_exits_3_naming_it_and_makes_no_state(tmp_path, capsys):
    import json

    from tests.helpers import run_main

    f = tmp_path / "big.mps"
    f.write_text(_MPS.format(cost="1.0", value="1e20"))
    code, out, _ = run_main(capsys, "init", f, "--state", tmp_path / "st", "--json")
    err = json.loads(out)["error"]
    assert code == 3 and err["kind"] == "format" and err["line"] == 9 and err["entity"] == "c2/y"
    assert "HiGHS's reader refuses a coefficient of magnitude >= 1e+15" in err["message"]
    assert not (tmp_path / "st").exists()


def test_a_huge_coefficient_in_a_fixed_format_file_names_its_line_column_and_row(tmp_path):
    """helper-235: a row name with a space (HiGHS's fixed-format parser) left the line, column and row unnamed: the
    lines were split at whitespace, so ``c 1`` read as two fields."""
    p = tmp_path / "fixed.mps"
    p.write_text("NAME          FIXBIG\nROWS\n N  obj\n L  c 1\n L  c2\nCOLUMNS\n"
                 "    x         obj                 -1   c 1                  1\n"
                 "    y         c2                   1   c 1               2e15\n"
                 "RHS\n    RHS       c 1                  4\nENDATA\n")
    with pytest.raises(FormatError) as e:
        read_mps(p)
    assert e.value.line == 8 and e.value.entity == "c 1/y", str(e.value)
    assert "column 'y' the coefficient 2e+15 in row 'c 1'" in str(e.value)
