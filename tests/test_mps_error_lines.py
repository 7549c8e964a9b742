"""Every malformed MPS file is refused naming its line, also where HiGHS's own message names none.

Before: the shared set's moi_rows_bad_sense.mps said `not a valid MPS file (Entry "X  c" in ROWS section of MPS
file is unidentified)`, moi_bounds_missing_column.mps `(Entry in BOUNDS section of MPS file is of type "BI")`
(not saying that BI is no bound type), moi_rows_duplicate_2.mps `ambiguous MPS content HiGHS would ignore: Linear
constraints 0 and 1 have the same name "c1"` and garbage.mps `(HiGHS parser error)`, none with a line."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.mps import read_mps
from solver.model.errors import FormatError
from tests.helpers import manifest, require_data

INVALID = manifest("mps-invalid")


@pytest.mark.data
@pytest.mark.parametrize("row", INVALID, ids=[r["file"] for r in INVALID])
def test_every_invalid_shared_mps_file_names_its_line(row, tmp_path):
    path = require_data("mps-invalid") / row["file"]
    res = CliRunner().invoke(app, ["convert", str(path), str(tmp_path / "out.parquet"), "--json"])
    assert res.exit_code == 3, res.output
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert isinstance(err.get("line"), int) and err["line"] >= 1, err


def _read(tmp_path, text: str):
    p = tmp_path / "m.mps"
    p.write_text(text)
    with pytest.raises(FormatError) as e:
        read_mps(p)
    return e.value


def test_an_unknown_row_type_is_named_with_its_line(tmp_path):
    err = _read(tmp_path, "NAME\nROWS\n N  obj\n L  c1\n X  c2\nCOLUMNS\n    x  obj  1  c1  1\nENDATA\n")
    assert err.line == 5 and err.entity == "c2" and "'X'" in str(err) and "N, L, G or E" in str(err)


def test_an_unknown_bound_type_is_named_with_its_line(tmp_path):
    err = _read(tmp_path, "NAME\nROWS\n N  obj\n L  c1\nCOLUMNS\n    x  obj  1  c1  1\nRHS\n    rhs  c1  4\n"
                          "BOUNDS\n UP bnd  x  3\n BI bnd  x\nENDATA\n")
    assert err.line == 11 and err.entity == "x" and "'BI'" in str(err) and "bound type" in str(err)


def test_a_row_defined_twice_is_named_with_both_lines(tmp_path):
    err = _read(tmp_path, "NAME\nROWS\n N  obj\n L  c1\n G  c2\n G  c1\nCOLUMNS\n    x  obj  1  c1  1\nENDATA\n")
    assert err.line == 6 and err.entity == "c1" and "lines 4 and 6" in str(err) and "same name" in str(err)


def test_a_text_file_that_is_no_mps_names_its_first_line(tmp_path):
    err = _read(tmp_path, "* a comment\nname,time,application\njob1,0,resnet\n")
    assert err.line == 2 and "not a valid MPS file" in str(err)


_HEAD = "NAME t\nROWS\n N  obj\n L  c1\n E  c2\nCOLUMNS\n    x  obj  1  c1  1\n    y  obj  2  c1  1\n    y  c2  1\n"


@pytest.mark.parametrize(("tail", "line", "entity", "words"), [
    ("RHS\n    rhs  c1  4\n    rhs  c2  1  c1  6\n", 12, "c1", "RHS gives row 'c1' a duplicate value"),
    ("RHS\n    rhs  c1  4\nRANGES\n    rng  c1  2\n    rng  c1  3\n", 14, "c1", "RANGES gives row 'c1' a duplicate value"),
    ("RHS\n    rhs  c1  4\nBOUNDS\n UP bnd  x  3\n LO bnd  x  1\n UP bnd  x  5\n", 15, "x",
     "duplicate upper bound"),
    ("RHS\n    rhs  c1  4\nBOUNDS\n LO bnd  x  3\n FR bnd  x\n", 14, "x", "duplicate lower bound"),
    # hunt 56: HiGHS calls UP-then-BV a duplicate *lower* bound, which no LO-type line before BV explains
    ("RHS\n    rhs  c1  4\nBOUNDS\n UP bnd  x  3\n BV bnd  x\n", 14, "x", "on two lines, the second on a side"),
], ids=["rhs", "ranges", "up-up", "lo-fr", "up-bv"])
def test_a_value_given_twice_is_named_with_both_lines(tmp_path, tail, line, entity, words):
    err = _read(tmp_path, _HEAD + tail + "ENDATA\n")
    assert err.line == line and err.entity == entity and words in str(err), str(err)


def test_a_coefficient_given_twice_is_named_with_its_line(tmp_path):
    err = _read(tmp_path, "NAME t\nROWS\n N  obj\n L  c1\nCOLUMNS\n    x  obj  1  c1  1\n    x  c1  2\n"
                          "RHS\n    rhs  c1  4\nENDATA\n")
    assert err.line == 7 and err.entity == "x" and "'c1'" in str(err) and "duplicate coefficient" in str(err)


def test_a_cost_given_twice_is_named_with_both_lines(tmp_path):
    """hunt 56: HiGHS words a second cost "duplicate nonzero ... in objective row", which the locator missed, so the
    error was HiGHS's warning without a line."""
    err = _read(tmp_path, "NAME t\nROWS\n N  obj\n L  c1\nCOLUMNS\n    x  obj  1  c1  1\n    x  obj  3\n"
                          "RHS\n    rhs  c1  4\nENDATA\n")
    assert err.line == 7 and err.entity == "x" and "'obj'" in str(err) and "lines 6 and 7" in str(err), str(err)


def test_a_range_on_the_objective_row_is_named_with_its_line(tmp_path):
    err = _read(tmp_path, _HEAD + "RHS\n    rhs  c1  4\nRANGES\n    rng  obj  2\nENDATA\n")
    assert err.line == 13 and err.entity == "obj" and "RANGES" in str(err) and "objective" in str(err)


@pytest.mark.parametrize("junk", [" G c junk\n", " G  c  1e3\n"])
def test_one_line_with_a_field_too_many_is_named_not_the_valid_line_that_fixed_format_then_fails(tmp_path, junk):
    """hunt 56: ` G c junk` in ROWS made HiGHS read the free-format file in fixed format (it took the extra field for
    a name with a space, naming no line), and copter blamed the valid ` N obj` before it (its name starts in column
    4). The error now names the line with the field too many, and what fixed format then met on the other."""
    text = ("NAME t\nROWS\n N obj\n" + junk + " L d\nCOLUMNS\n x obj 1 c 1\n x d 1\n y obj 2 c 1\nRHS\n rhs c 4\n"
            " rhs d 3\nENDATA\n")
    err = _read(tmp_path, text)
    assert err.line == 4 and "ROWS line has 3 fields" in str(err), str(err)
    assert "reads the whole file in fixed format" in str(err) and "line 3 fails" in str(err), str(err)
    assert "fix line 4" in str(err) and "fix line 3" in str(err)


@pytest.mark.parametrize("marker", ["'marker' 'intorg'", '"MARKER" "INTORG"'])
def test_a_misspelt_integer_marker_says_how_highs_reads_markers(tmp_path, marker):
    """hunt 56: a marker in lower case or double quotes was refused as "cost or coefficient ''intorg'' is not a
    number", which does not say that the line is a marker HiGHS cannot read as one."""
    end = marker.replace("intorg", "intend").replace("INTORG", "INTEND")
    text = f"NAME t\nROWS\n N obj\n L c\nCOLUMNS\n M1 {marker}\n x obj 1 c 1\n M2 {end}\nRHS\n rhs c 4\nENDATA\n"
    err = _read(tmp_path, text)
    assert err.line == 6 and "integer marker" in str(err) and "'MARKER' then 'INTORG'" in str(err), str(err)


@pytest.mark.parametrize("ranges,line,shown", [(" r1 2\n", 12, "'RNG r1 2'"), (" r1 2 r2 3\n", 12, "'RNG r1 2 r2 3'")])
def test_a_ranges_line_without_its_set_name_says_so(tmp_path, ranges, line, shown):
    """helper-235: a blank set name (as fixed-format files leave it) was refused with "HiGHS would skip the fields it
    does not expect and silently read a different model", where HiGHS refuses the line."""
    text = ("NAME t\nROWS\n N obj\n L r1\n L r2\nCOLUMNS\n x obj -1 r1 1\n x r2 1\nRHS\n r1 5 r2 3\nRANGES\n"
            + ranges + "ENDATA\n")
    err = _read(tmp_path, text)
    assert err.line == line and err.entity == "r1", str(err)
    assert "without a set name" in str(err) and shown in str(err) and "silently" not in str(err), str(err)


@pytest.mark.parametrize("line,entity", [("    x         obj       -1.2345678901234567\n", "x"),
                                         (" UP BND       x         3.0000000000000004\n", "x")])
def test_a_fixed_format_number_longer_than_its_field_is_named_as_such(tmp_path, line, entity):
    """helper-235: "COLUMNS field 6 (columns 50-): cost or coefficient value is missing", and on a BOUNDS line (no
    field 6) with the number's tail as the entity."""
    bounds = line.startswith(" UP")
    text = ("NAME          T\nROWS\n N  obj\n L  c 1\nCOLUMNS\n    x         c 1                  1\n"
            + ("" if bounds else line) + "RHS\n    RHS       c 1                  4\n"
            + ("BOUNDS\n" + line if bounds else "") + "ENDATA\n")
    err = _read(tmp_path, text)
    assert err.entity == entity and "runs on to column" in str(err) and "at most 12 characters" in str(err), str(err)
    assert "missing" not in str(err)


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_a_lower_case_marker_keyword_is_named_with_its_line(tmp_path, eol):
    """helper-235: `M 'MARKER' 'intorg'` gave "not a valid MPS file (Integrality marker error ...)", no line."""
    text = ("NAME mk\nROWS\n N obj\n L c1\nCOLUMNS\n x obj -1 c1 1\n M 'MARKER' 'intorg'\n y obj -1 c1 1\n"
            " M 'MARKER' 'INTEND'\nRHS\n rhs c1 4.5\nENDATA\n").replace("\n", eol)
    err = _read(tmp_path, text)
    assert err.line == 7 and err.entity == "'intorg'" and "upper case" in str(err), str(err)
