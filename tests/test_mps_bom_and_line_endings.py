"""MPS files as editors save them: a UTF-8 byte-order mark, old-Mac CR-only line endings.

* A UTF-8 byte-order mark (``EF BB BF``, "UTF-8 with BOM") before ``NAME``: copter's header scan missed the first
  line's ``NAME``, so a fixed-format file (a name holds a space) with ``OBJSENSE`` right after ``NAME`` was refused as
  if its OBJSENSE were misplaced, although HiGHS reads it (optimum -6) and the same file without the mark read fine.
  HiGHS itself takes the mark for part of the first keyword (a free-format file starting ``ROWS`` failed to read), so
  it reads a copy without the mark. The model equals the one without the mark.
* Lines ending with CR alone (carriage returns without line feeds): HiGHS and copter split lines at line feeds, so
  the file is one line, and copter said ``:1: ENDATA is missing ... (truncated or incomplete?)``. Refused naming the
  cause (exit 3 through the CLI); CRLF files read as LF files do.
* A free-format ``COLUMNS`` line holding only a column name (``    z``, an empty column): HiGHS's free parser takes it
  for a fixed-format line and reads the whole file by column positions, and copter's fixed-format checks blamed
  another, valid line (``fixed-format COLUMNS line: text '1' starts in column 13``). Still refused, naming that line.
"""

from __future__ import annotations

import gzip

import pytest

from formats.mps import read_mps
from solver.model.errors import FormatError
from tests.helpers import run_main

_BOM = b"\xef\xbb\xbf"

#: fixed format (names with spaces), OBJSENSE right after NAME: HiGHS reads it, optimum -6 (the tester's file)
_FIXED_MAX = b"""NAME          fx_objconst_max
OBJSENSE
  MAX
ROWS
 N  COST
 E  ROW 1
 L  ROW 2
COLUMNS
    X 1       COST                 1   ROW 1                1
    X 1       ROW 2                1
    Y 2       COST                 2   ROW 1                1
    Y 2       ROW 2               -1
RHS
    RHS       COST                10
    RHS       ROW 1                2   ROW 2                5
BOUNDS
 UP BND       X 1                  4
 UP BND       Y 2                  3
ENDATA
"""

#: free format without NAME: with a mark, HiGHS's free parser did not know its first keyword (ROWS)
_FREE_ROWS_FIRST = b"""ROWS
 N obj
 L c1
COLUMNS
 x obj -1 c1 1
 y obj -2 c1 1
RHS
 rhs c1 4
BOUNDS
 UP bnd x 3
ENDATA
"""


def _same_model(a, b) -> None:
    assert a.col_names.tolist() == b.col_names.tolist() and a.row_names.tolist() == b.row_names.tolist()
    for k in ("cost", "col_lower", "col_upper", "row_lower", "row_upper", "integrality", "a_indptr", "a_indices",
              "a_data"):
        assert getattr(a, k).tolist() == getattr(b, k).tolist(), k
    assert (a.sense, a.offset) == (b.sense, b.offset)


@pytest.mark.parametrize("gz", [False, True])
@pytest.mark.parametrize("text", [_FIXED_MAX, _FREE_ROWS_FIRST], ids=["fixed_objsense", "free_rows_first"])
def test_a_byte_order_mark_reads_as_the_file_without_it(tmp_path, text, gz):
    suffix = ".mps.gz" if gz else ".mps"
    plain, marked = tmp_path / f"plain{suffix}", tmp_path / f"marked{suffix}"
    for p, body in ((plain, text), (marked, _BOM + text)):
        p.write_bytes(gzip.compress(body) if gz else body)
    want, got = read_mps(plain), read_mps(marked)
    _same_model(got, want)
    if text is _FIXED_MAX:
        assert got.sense == -1 and got.col_names.tolist() == ["X 1", "Y 2"]
        assert got.cost.tolist() == [1.0, 2.0] and got.col_upper.tolist() == [4.0, 3.0]


@pytest.mark.parametrize("gz", [False, True])
def test_cr_only_line_endings_are_refused_naming_them(tmp_path, gz):
    p = tmp_path / ("cr.mps.gz" if gz else "cr.mps")
    body = _FREE_ROWS_FIRST.replace(b"\n", b"\r")
    p.write_bytes(gzip.compress(body) if gz else body)
    with pytest.raises(FormatError) as e:
        read_mps(p)
    assert e.value.line == 1 and "CR alone" in e.value.message and "LF or CRLF" in e.value.message
    assert "ENDATA" not in e.value.message


def test_cr_only_line_endings_exit_3_through_the_cli(tmp_path, capsys):
    p = tmp_path / "cr.mps"
    p.write_bytes(_FIXED_MAX.replace(b"\n", b"\r"))
    code, _, err = run_main(capsys, "solve", p)
    assert code == 3 and "cr.mps:1:" in err and "CR alone" in err


def test_a_lone_carriage_return_hiding_endata_is_named(tmp_path):
    p = tmp_path / "mixed.mps"
    p.write_bytes(_FREE_ROWS_FIRST.replace(b"\nENDATA", b"\rENDATA"))
    with pytest.raises(FormatError) as e:
        read_mps(p)
    assert "ENDATA is missing" in e.value.message and "line 10 holds a carriage return" in e.value.message


@pytest.mark.parametrize("text", [_FIXED_MAX, _FREE_ROWS_FIRST], ids=["fixed", "free"])
def test_crlf_line_endings_read_as_lf(tmp_path, text):
    lf, crlf = tmp_path / "lf.mps", tmp_path / "crlf.mps"
    lf.write_bytes(text)
    crlf.write_bytes(text.replace(b"\n", b"\r\n"))
    _same_model(read_mps(crlf), read_mps(lf))


#: the tester's file: an empty column ``z`` given by a name-only COLUMNS line (HiGHS misreads the file)
_NAME_ONLY = b"""NAME empty_col_noentry
ROWS
 N  obj
 E  c1
 L  c2
COLUMNS
    x  obj  1  c1  1
    x  c2  1
    y  obj  2  c1  1
    y  c2  -1
    z
RHS
    rhs  c1  2  c2  5
ENDATA
"""


@pytest.mark.parametrize("where", ["last", "first"])
def test_a_name_only_columns_line_is_named(tmp_path, where):
    text = _NAME_ONLY if where == "last" else _NAME_ONLY.replace(b"    z\n", b"").replace(b"COLUMNS\n",
                                                                                           b"COLUMNS\n    z\n")
    p = tmp_path / "m.mps"
    p.write_bytes(text)
    with pytest.raises(FormatError) as e:
        read_mps(p)
    assert e.value.line == text.split(b"\n").index(b"    z") + 1 and e.value.entity == "z"
    assert "no row/value pair" in e.value.message and "column 13" not in e.value.message
