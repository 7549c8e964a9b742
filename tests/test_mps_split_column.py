"""A column whose COLUMNS entries come in two separate blocks is refused naming the column and both lines.

HiGHS reads the second block as a second column of the same name and warns `Variables 0 and 2 have the same
name "x"`; copter refused the file quoting that warning, with no line and index numbers that mean nothing to the
user: `ambiguous MPS content HiGHS would ignore: Variables 0 and 2 have the same name "x"`. Files with integer
markers already got the line (their integrality would be ambiguous); files without markers now get it too."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.mps import read_mps
from solver.model.errors import FormatError

_FREE = ("NAME t\nROWS\n N  obj\n L  c1\n G  c2\nCOLUMNS\n    x  obj  -1  c1  1\n    y  obj  -2  c1  1\n"
         "    y  c2  1\n    x  c2  1\nRHS\n    rhs  c1  10  c2  1\nENDATA\n")
def _fixed(name: str, row: str, value: str, row2: str = "", value2: str = "") -> str:
    """A fixed-format data line: name in columns 5-12, row 15-22, value 25-36, row 40-47, value 50-61."""
    line = f"    {name:<8}  {row:<8}  {value:>12}"
    return (line + f"   {row2:<8}  {value2:>12}" if row2 else line) + "\n"


_FIXED = ("NAME          T\nROWS\n N  OBJ\n L  C1\n G  C2\nCOLUMNS\n" + _fixed("X 1", "OBJ", "-1", "C1", "1")
          + _fixed("Y", "OBJ", "-2", "C1", "1") + _fixed("X 1", "C2", "1") + "RHS\n" + _fixed("RHS", "C1", "10", "C2", "1")
          + "ENDATA\n")


@pytest.mark.parametrize(("text", "name", "first", "second"), [(_FREE, "x", 7, 10), (_FIXED, "X 1", 7, 9)],
                         ids=["free", "fixed-name-with-space"])
def test_a_column_split_into_two_blocks_is_named_with_both_lines(tmp_path, text, name, first, second):
    p = tmp_path / "m.mps"
    p.write_text(text)
    with pytest.raises(FormatError) as e:
        read_mps(p)
    err = e.value
    assert err.line == second and err.entity == name, str(err)
    assert f"lines {first} and {second}" in str(err) and "separate blocks" in str(err)
    assert "Variables" not in str(err)  # not HiGHS's index-based warning


def test_the_cli_error_names_line_and_entity(tmp_path):
    p = tmp_path / "m.mps"
    p.write_text(_FREE)
    res = CliRunner().invoke(app, ["convert", str(p), str(tmp_path / "out.parquet"), "--json"])
    assert res.exit_code == 3, res.output
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert err["line"] == 10 and err["entity"] == "x", err
    assert not (tmp_path / "out.parquet").exists()


FIXED_SPACED = """NAME          T
ROWS
 N  OBJ
 L  R1
COLUMNS
    CAP A     OBJ                1.0   R1                 1.0
    M1        'MARKER'                 'INTORG'
    Y         OBJ               -1.0   R1                 1.0
    M2        'MARKER'                 'INTEND'
    {last}     OBJ               -1.0   R1                 1.0
RHS
    RHS       R1                 4.5
ENDATA
"""


def test_fixed_format_names_with_a_space_around_markers_are_two_columns(tmp_path):
    # 'CAP A' and 'CAP B' were both read as 'CAP' by the marker file's contiguity check and the valid file refused
    # ("column 'CAP' appears in two separate blocks", helper-161); HiGHS reads it (optimum -4.5)
    from formats.mps import read_mps

    p = tmp_path / "f.mps"
    p.write_text(FIXED_SPACED.format(last="CAP B"))
    q = read_mps(p)
    assert q.col_names.tolist() == ["CAP A", "Y", "CAP B"] and q.integrality.tolist() == [False, True, False]
    p.write_text(FIXED_SPACED.format(last="CAP A"))  # the same spaced name in two blocks is still refused
    with pytest.raises(FormatError, match="two separate blocks"):
        read_mps(p)


@pytest.mark.parametrize("gap", ["  ", "   ", "\t"])
def test_free_format_fields_in_columns_5_to_12_are_not_read_as_one_fixed_name(tmp_path, gap):
    """helper-228: a free-format MILP with two spaces between fields ('    x12  r10  1', then '    x12  r105  1')
    had its columns 5-12 read as a fixed-format name with a space ('x12  r10'): "column 'x12  r10' appears in two
    separate blocks", exit 3, for a file HiGHS reads and solves (-3)."""
    lines = ["    MARKER  'MARKER'  'INTORG'", "    x12  obj  -1", "    x12  r10  1", "    x12  r2  1",
             "    x12  r105  1", "    MARKER  'MARKER'  'INTEND'"]
    text = ("NAME free_names\nROWS\n N  obj\n L  r10\n L  r2\n L  r105\nCOLUMNS\n"
            + "\n".join(ln.replace("  ", gap) if not ln.lstrip().startswith("MARKER") else ln for ln in lines)
            + "\nRHS\n    rhs  r10  4.5\n    rhs  r2  3.5\n    rhs  r105  5\nBOUNDS\n UP bnd x12 10\nENDATA\n")
    path = tmp_path / "free_names.mps"
    path.write_text(text)
    p = read_mps(path)
    assert list(p.col_names) == ["x12"] and p.is_mip
    res = CliRunner().invoke(app, ["solve", str(path), "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["objective"] == pytest.approx(-3.0)
