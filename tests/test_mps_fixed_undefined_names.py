"""An entry naming an undefined row or column, a row defined twice or a repeated coefficient, in a fixed-format MPS
file is refused naming its line and name.

HiGHS's fixed-format parser (a name holds a space) says only `COLUMNS section entries contain 1 with row not in
ROWS section: ignored`, and copter quoted that: no line, no name. A second N row, which the free-format parser
drops with its entries, is dropped by the fixed parser without its entries and failed the same way; the error now
says so. A row ROWS defines twice was `'C 1': duplicate constraint name`, with no line, and a
repeated coefficient HiGHS's `... (col X 1), has duplicate entries for index 0 (row C 1)`."""

from __future__ import annotations

import pytest

from formats.mps import read_mps
from solver.model.errors import FormatError


def _fixed(name: str, row: str, value: str, row2: str = "", value2: str = "", kind: str = "") -> str:
    """A fixed-format data line: type in columns 2-3, name 5-12, row 15-22, value 25-36, row 40-47, value 50-61."""
    line = f" {kind:<2} {name:<8}  {row:<8}  {value:>12}"
    return (line + f"   {row2:<8}  {value2:>12}" if row2 else line) + "\n"


def _model(rows: str = "", columns: str = "", rhs: str = "", bounds: str = "") -> str:
    return ("NAME          T\nROWS\n N  OBJ\n L  C 1\n G  C2\n" + rows + "COLUMNS\n"  # lines 1-5 (+ rows)
            + _fixed("X 1", "OBJ", "-1", "C 1", "1") + _fixed("X 1", "C2", "1") + columns
            + _fixed("Y", "OBJ", "-2", "C 1", "1") + "RHS\n" + _fixed("RHS", "C 1", "10", "C2", "1") + rhs
            + ("BOUNDS\n" + bounds if bounds else "") + "ENDATA\n")


@pytest.mark.parametrize(("text", "line", "entity", "words"), [
    (_model(columns=_fixed("X 1", "C3", "2")), 9, "C3", "COLUMNS entry names row 'C3', which is not defined"),
    (_model(rhs=_fixed("RHS", "OBJ", "1", "C 9", "4")), 12, "C 9", "RHS entry names row 'C 9'"),
    (_model(bounds=_fixed("BND", "Z 9", "3", kind="UP")), 13, "Z 9", "BOUNDS entry names column 'Z 9'"),
    (_model(rows=" N  FREE\n", columns=_fixed("X 1", "FREE", "3")), 10, "FREE", "a second N (free) row"),
    (_model(bounds="").replace("ENDATA", "RANGES\n" + _fixed("RNG", "OBJ", "2").rstrip("\n") + "\nENDATA"), 13, "OBJ",
     "RANGES names the objective (N) row 'OBJ'"),
], ids=["columns", "rhs-second-pair", "bounds", "second-n-row", "range-on-objective"])
def test_the_entry_is_named_with_its_line(tmp_path, text, line, entity, words):
    p = tmp_path / "m.mps"
    p.write_text(text)
    with pytest.raises(FormatError) as e:
        read_mps(p)
    assert e.value.line == line and e.value.entity == entity and words in str(e.value), str(e.value)


def test_a_row_defined_twice_is_named_with_both_lines(tmp_path):
    p = tmp_path / "m.mps"
    p.write_text(_model(rows=" E  C 1\n"))
    with pytest.raises(FormatError) as e:
        read_mps(p)
    assert e.value.line == 6 and e.value.entity == "C 1" and "lines 4 and 6" in str(e.value), str(e.value)


def test_a_repeated_coefficient_is_named_with_both_lines(tmp_path):
    p = tmp_path / "m.mps"
    p.write_text(_model(columns=_fixed("X 1", "C 1", "3")))
    with pytest.raises(FormatError) as e:
        read_mps(p)
    assert e.value.line == 9 and e.value.entity == "X 1" and "lines 7 and 9" in str(e.value), str(e.value)
    assert "duplicate coefficient in row 'C 1'" in str(e.value)
