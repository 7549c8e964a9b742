"""MPS mistakes whose refusal named no line, or another line than the culprit (an input hunt); each is
now refused with exit 3 naming the file and the offending line, and ``copter init`` leaves no state:

* fixed format: a name one column late (``L   c1``: the row field is columns 5-12). HiGHS's fixed-format parser
  keeps the leading space, so the entries naming ``c1`` name no row; it said only "COLUMNS section entries contain
  2 with row not in ROWS section", and copter's locator, which compared names without their leading spaces, found
  no such entry;
* a row or bound type in lower case (``l``, ``up``): HiGHS refuses it ("Entry "l  c1" in ROWS section of MPS file
  is unidentified", no line) and copter's locator read it as upper case, so a fixed-format file was blamed on a
  later line (a COLUMNS line "has 6 fields") and a free-format one on no line;
* an integer marker without its quotes (``MARKER MARKER INTORG``): HiGHS reads a column named MARKER, and copter
  named the second marker line as that column "in two separate blocks";
* fixed format: a marker keyword before column 33 (the free layout ``M  'MARKER'  'INTORG'``), which HiGHS skips
  without a word: a silent misread (the block's columns continuous), now refused naming its line.
"""

from __future__ import annotations

import json

import pytest

from formats.mps import read_mps
from solver.model.errors import FormatError
from tests.helpers import cli_json


def _fx(kind: str, a: str, b: str, c: str = "", d: str = "", e: str = "") -> str:
    """A fixed-format data line: type in columns 2-3, names in 5-12 and 15-22, value from 25, then 40-47, 50-."""
    return f" {kind:<2} {a:<8}  {b:<8}  {c:<12}   {d:<8}  {e}".rstrip()


ROWS = ["NAME          t", "ROWS", " N  obj", " L  c1"]
COLUMNS = ["COLUMNS", _fx("", "x", "obj", "1", "c1", "1"), _fx("", "y z", "obj", "2", "c1", "1")]  # "y z": fixed
TAIL = ["RHS", _fx("", "RHS", "c1", "10"), "BOUNDS", _fx("UP", "BND", "y z", "4"), "ENDATA"]


def _write(tmp_path, lines: list[str]):
    p = tmp_path / "m.mps"
    p.write_text("\n".join(lines) + "\n")
    return p


def _refused(tmp_path, lines: list[str], line: int, *words: str) -> None:
    """Refused by the reader naming ``line`` and ``words``, and by ``copter init`` (exit 3, file and line, no
    state)."""
    path = _write(tmp_path, lines)
    with pytest.raises(FormatError) as e:
        read_mps(path)
    assert e.value.line == line, e.value
    for w in words:
        assert w in str(e.value), e.value
    code, out = cli_json("init", path, "--state", tmp_path / "st", "--json")
    err = json.loads(out)["error"]
    assert code == 3 and err["line"] == line and err["file"] == str(path), err
    assert not (tmp_path / "st" / "CURRENT").exists()


def test_the_layout_reads(tmp_path):
    p = read_mps(_write(tmp_path, ROWS + COLUMNS + TAIL))
    assert list(p.col_names) == ["x", "y z"] and p.row_upper.tolist() == [10.0]
    assert p.col_upper.tolist() == [float("inf"), 4.0]


def test_a_row_name_starting_in_column_6_is_named_on_its_rows_line(tmp_path):
    lines = ROWS[:3] + [" L   c1"] + COLUMNS + TAIL
    _refused(tmp_path, lines, 4, "row name 'c1' starts in column 6, not 5", "line 6")


def test_a_column_name_starting_in_column_6_is_named_on_its_columns_line(tmp_path):
    lines = ROWS + ["COLUMNS", _fx("", " x", "obj", "1", "c1", "1")] + COLUMNS[2:] + TAIL[:3] + \
        [_fx("UP", "BND", "x", "4"), "ENDATA"]
    _refused(tmp_path, lines, 6, "column name 'x' starts in column 6, not 5", "BOUNDS entry naming 'x' on line 11")


@pytest.mark.parametrize("entry,words", [
    (_fx("", "x", "obj", "1", " c1", "1"), ("row name 'c1' starts in column 41, not 40",)),
    (_fx("", "x", " obj", "1", "c1", "1"), ("row name 'obj' starts in column 16, not 15",)),
], ids=["second-row-field", "first-row-field"])
def test_an_entry_naming_a_row_a_column_late_is_named_on_its_line(tmp_path, entry, words):
    _refused(tmp_path, ROWS + ["COLUMNS", entry] + COLUMNS[2:] + TAIL, 6, *words)


def test_names_shifted_alike_still_read(tmp_path):
    """A row defined and used a column late reads as before (HiGHS's parser keys both with the space)."""
    lines = ROWS[:3] + [" L   c1", "COLUMNS", _fx("", "x", "obj", "1", " c1", "1"),
                        _fx("", "y z", "obj", "2", " c1", "1"), "RHS", _fx("", "RHS", " c1", "10"), "ENDATA"]
    assert read_mps(_write(tmp_path, lines)).row_upper.tolist() == [10.0]


@pytest.mark.parametrize("fixed", [True, False], ids=["fixed", "free"])
@pytest.mark.parametrize("where,line,words", [
    ("rows", 4, ("row type 'l' is not N, L, G or E", "write 'L'")),
    ("objective", 3, ("row type 'n' is not N, L, G or E", "write 'N'")),
    ("bounds", 11, ("'up' is no bound type", "write 'UP'")),
])
def test_a_type_in_lower_case_is_named_on_its_line(tmp_path, fixed, where, line, words):
    lines = ROWS + COLUMNS + TAIL
    if where == "rows":
        lines[3] = " l  c1"
    elif where == "objective":
        lines[2] = " n  obj"
    else:
        lines[10] = _fx("up", "BND", "y z", "4")
    if not fixed:
        lines = [ln.replace("y z", "yz ") for ln in lines]
    _refused(tmp_path, lines, line, *words)


@pytest.mark.parametrize("fixed", [True, False], ids=["fixed", "free"])
@pytest.mark.parametrize("intorg,intend,line,words", [
    ("MARKER MARKER INTORG", "MARKER MARKER INTEND", 7,
     ("integer marker line without its quotes (MARKER MARKER INTORG)", "'MARKER' and 'INTORG' in single quotes",
      "column 'MARKER' with a coefficient in a row named 'MARKER'")),
    ("M1 'MARKER' 'INTORG'", "M2 'MARKER' INTEND", 9, ("(M2 'MARKER' INTEND)", "'MARKER' and 'INTEND'")),
    ("M1 MARKER 'INTORG'", "M2 'MARKER' 'INTEND'", 7, ("(M1 MARKER 'INTORG')",)),
])
def test_a_marker_without_its_quotes_is_named_on_its_line(tmp_path, fixed, intorg, intend, line, words):
    def marker(text: str) -> str:
        name, keyword, word = text.split()
        return _fx("", name, keyword, "", word) if fixed else f"    {name}  {keyword}  {word}"

    lines = ROWS + COLUMNS[:2] + [marker(intorg), COLUMNS[2], marker(intend)] + TAIL
    if not fixed:
        lines = [ln.replace("y z", "yz ") for ln in lines]
    _refused(tmp_path, lines, line, *words)


def test_quoted_markers_still_read_in_both_formats(tmp_path):
    for fixed in (True, False):
        marker = (lambda w: _fx("", "M", "'MARKER'", "", f"'{w}'")) if fixed else (lambda w: f" M 'MARKER' '{w}'")
        lines = ROWS + COLUMNS[:2] + [marker("INTORG"), COLUMNS[2], marker("INTEND")] + TAIL
        if not fixed:
            lines = [ln.replace("y z", "yz ") for ln in lines]
        p = read_mps(_write(tmp_path, lines))
        assert p.integrality.tolist() == [0, 1], fixed


@pytest.mark.parametrize("intorg,intend,line,words", [
    ("    M         'MARKER'  'INTORG'", _fx("", "M", "'MARKER'", "", "'INTEND'"), 7,  # the free layout
     ("keyword 'INTORG' starts in column 25", "the block's columns as continuous")),
    (_fx("", "M", "'MARKER'", "", "'INTORG'"), "    M         'MARKER'      'INTEND'", 9,
     ("keyword 'INTEND' starts in column 29", "every column after it as integer")),
], ids=["intorg-free-layout", "intend-in-value-field"])
def test_a_marker_keyword_before_column_33_is_named_not_skipped(tmp_path, intorg, intend, line, words):
    """HiGHS's fixed-format parser looks for a marker's keyword only from column 33 on: the free layout
    (``M 'MARKER' 'INTORG'``) in a fixed-format file was no marker to it, status OK, and the block's column read
    as continuous, while copter's marker checks had taken it for one (a skipped INTEND: later columns integer)."""
    _refused(tmp_path, ROWS + COLUMNS[:2] + [intorg, COLUMNS[2], intend] + TAIL, line, *words)


@pytest.mark.parametrize("column", [33, 40, 50])
def test_a_marker_keyword_from_column_33_on_still_reads(tmp_path, column):
    """From column 33 on HiGHS finds the keyword (40-47 is its field; 50 is where a second row name goes)."""
    def marker(word: str) -> str:
        return "    M         'MARKER'".ljust(column - 1) + f"'{word}'"

    lines = ROWS + COLUMNS[:2] + [marker("INTORG"), COLUMNS[2], marker("INTEND"), _fx("", "w", "obj", "1")] + TAIL
    p = read_mps(_write(tmp_path, lines))
    assert list(p.col_names) == ["x", "y z", "w"] and p.integrality.tolist() == [0, 1, 0]
