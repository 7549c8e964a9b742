"""A repeated RHS/RANGES value or bound side in a fixed-format MPS file is refused, as in a free-format one.

HiGHS's fixed-format parser (every file with a name holding a space) keeps the last of two values and says
nothing, where its free-format parser keeps the first and warns: `RHS  C 1  10` then `RHS  C 1  4` was read as
C 1 <= 4 without a word (and the same lines in free format are refused naming both lines)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.mps import read_mps
from solver.model.errors import FormatError


def _fixed(name: str, row: str, value: str, row2: str = "", value2: str = "", kind: str = "") -> str:
    """A fixed-format data line: type in columns 2-3, name 5-12, row 15-22, value 25-36, row 40-47, value 50-61."""
    line = f" {kind:<2} {name:<8}  {row:<8}  {value:>12}"
    return (line + f"   {row2:<8}  {value2:>12}" if row2 else line) + "\n"


_HEAD = ("NAME          T\nROWS\n N  OBJ\n L  C 1\n G  C2\nCOLUMNS\n" + _fixed("X 1", "OBJ", "-1", "C 1", "1")
         + _fixed("X 1", "C2", "1") + _fixed("Y", "OBJ", "-2", "C 1", "1") + "RHS\n"
         + _fixed("RHS", "C 1", "10", "C2", "1"))  # line 11

CASES = {
    "rhs": (_HEAD + _fixed("RHS", "C 1", "4") + "ENDATA\n", 12, "C 1", "RHS gives row 'C 1' a duplicate value"),
    "rhs-one-line": (_HEAD.replace(_fixed("RHS", "C 1", "10", "C2", "1"), _fixed("RHS", "C 1", "10", "C 1", "4"))
                     + "ENDATA\n", 11, "C 1", "line 11)"),
    "ranges": (_HEAD + "RANGES\n" + _fixed("RNG", "C 1", "2") + _fixed("RNG", "C 1", "3") + "ENDATA\n", 14, "C 1",
               "RANGES gives row 'C 1' a duplicate value"),
    "upper": (_HEAD + "BOUNDS\n" + _fixed("BND", "X 1", "4", kind="UP") + _fixed("BND", "Y", "1", kind="LO")
              + _fixed("BND", "X 1", "5", kind="UP") + "ENDATA\n", 15, "X 1", "duplicate upper bound"),
    "fx-then-lo": (_HEAD + "BOUNDS\n" + _fixed("BND", "Y", "4", kind="FX") + _fixed("BND", "Y", "1", kind="LO")
                   + "ENDATA\n", 14, "Y", "duplicate lower bound"),
    # helper-235: a second cost was kept as the last one, an entry of 0 dropped before HiGHS looks for a repeat
    "cost": (_HEAD.replace(_fixed("Y", "OBJ", "-2", "C 1", "1"), _fixed("Y", "OBJ", "-2", "C 1", "1")
                           + _fixed("Y", "OBJ", "-3")) + "ENDATA\n", 10, "Y", "column 'Y' two entries in row 'OBJ'"),
    "cost-zero": (_HEAD.replace(_fixed("Y", "OBJ", "-2", "C 1", "1"), _fixed("Y", "OBJ", "-2", "C 1", "1")
                                + _fixed("Y", "OBJ", "0")) + "ENDATA\n", 10, "Y", "two entries in row 'OBJ'"),
    "cost-one-line": (_HEAD.replace(_fixed("X 1", "C2", "1"), _fixed("X 1", "C2", "1", "OBJ", "-4")) + "ENDATA\n",
                      8, "X 1", "column 'X 1' two entries in row 'OBJ' (lines 7 and 8)"),
    "coefficient-zero": (_HEAD.replace(_fixed("X 1", "C2", "1"), _fixed("X 1", "C2", "1") + _fixed("X 1", "C 1", "0"))
                         + "ENDATA\n", 9, "X 1", "two entries in row 'C 1'"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_repeated_value_is_refused_naming_both_lines(tmp_path, case):
    text, line, entity, words = CASES[case]
    p = tmp_path / "m.mps"
    p.write_text(text)
    with pytest.raises(FormatError) as e:
        read_mps(p)
    assert e.value.line == line and e.value.entity == entity, str(e.value)
    assert words in str(e.value) and "fixed-format" in str(e.value)


def test_an_integer_columns_repeated_cost_between_markers_is_refused(tmp_path):
    p = tmp_path / "m.mps"
    marker = "    MARKER    'MARKER'                 'INTORG'\n"
    p.write_text(_HEAD.replace(_fixed("Y", "OBJ", "-2", "C 1", "1"), marker + _fixed("Y", "OBJ", "-2", "C 1", "1")
                               + _fixed("Y", "OBJ", "5") + marker.replace("INTORG", "INTEND")) + "ENDATA\n")
    with pytest.raises(FormatError, match="column 'Y' two entries in row 'OBJ'"):
        read_mps(p)


def test_distinct_rows_and_both_sides_of_one_column_still_read(tmp_path):
    p = tmp_path / "m.mps"
    p.write_text(_HEAD + "RANGES\n" + _fixed("RNG", "C 1", "2") + "BOUNDS\n" + _fixed("BND", "X 1", "4", kind="UP")
                 + _fixed("BND", "X 1", "-1", kind="LO") + _fixed("BND", "Y", "3", kind="UP") + "ENDATA\n")
    problem = read_mps(p)
    assert problem.row_lower.tolist() == [8.0, 1.0] and problem.row_upper.tolist() == [10.0, float("inf")]
    assert problem.col_lower.tolist() == [-1.0, 0.0] and problem.col_upper.tolist() == [4.0, 3.0]


def test_the_cli_refuses_it_with_exit_3(tmp_path):
    p = tmp_path / "m.mps"
    p.write_text(CASES["rhs"][0])
    res = CliRunner().invoke(app, ["solve", str(p), "--json"])
    assert res.exit_code == 3, res.output
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert err["line"] == 12 and err["entity"] == "C 1", err
