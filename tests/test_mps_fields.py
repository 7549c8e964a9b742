"""MPS data lines with fields HiGHS would silently skip (H7 finding F10): exit 3 naming file, line, entity."""

from __future__ import annotations

import json

import highspy
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import formats.mps_fields as mf
from copter_cli.app import app
from copter_cli.exit_codes import BAD_INPUT
from formats.mps import read_mps
from solver.highs_bridge import new_highs
from solver.model.errors import FormatError

T = "NAME t\nROWS\n N obj\n{rows}COLUMNS\n{cols}RHS\n{rhs}{rest}ENDATA\n"
ROWS = " L c1\n L c2\n L c3\n"
COLS = "    x obj -1 c1 1\n    y obj -1 c2 1\n"
RHS = "    rhs c1 5\n"


def _mps(tmp_path, rows=ROWS, cols=COLS, rhs=RHS, rest="", name="t.mps"):
    path = tmp_path / name
    path.write_text(T.format(rows=rows, cols=cols, rhs=rhs, rest=rest))
    return path


@given(st.lists(st.sampled_from([b"a", b"bc", b" ", b"\t", b"\n", b"\r\n", b"\x0b", b"\x01", b"\xe9"]),
                max_size=60))
@settings(max_examples=200, deadline=None)
def test_vectorised_field_counts_match_python_split_per_line(parts):
    text = b"".join(parts)
    starts, counts = mf.line_field_counts(np.frombuffer(text, dtype=np.uint8))
    assert counts.tolist() == mf.line_field_counts_reference(text)
    assert all(s == 0 or text[s - 1:s] == b"\n" for s in starts.tolist())


# (what the line says, file text arguments, line number, entity): HiGHS 1.16 reads each with kOk
SILENTLY_TRUNCATED = [
    ("COLUMNS with 3 row/value pairs", dict(cols="    x obj -1 c1 1 c2 1\n    y obj -1 c2 1\n"), 8, "x"),
    ("COLUMNS with a trailing odd field", dict(cols="    x obj -1 c1 1 extra\n    y obj -1 c2 1\n"), 8, "x"),
    ("COLUMNS with 4 fields", dict(cols="    x obj -1\n    y obj -1 c2\n"), 9, "y"),
    ("RHS with 3 row/value pairs", dict(rhs="    rhs c1 1 c2 1 c3 1\n"), 11, "c1"),
    ("RHS with 3 pairs and no set name", dict(rhs="    c1 5 c2 6 c3 7\n"), 11, "c1"),
    ("RHS named with an odd field", dict(rhs="    rhs c1 5 c2\n"), 11, "c1"),
    ("RHS with a field after 2 pairs", dict(rhs="    rhs c1 5 c2 6 c3\n"), 11, "c1"),
    ("BOUNDS with an extra field", dict(rest="BOUNDS\n UP bnd x 3 junk\n"), 13, "x"),
    ("BOUNDS with two extra fields", dict(rest="BOUNDS\n LO bnd y 1\n UP bnd x 3 4 5\n"), 14, "x"),
]
# (RANGES lines with extra fields and ROWS lines with 3 fields already make HiGHS fail or switch to its
# fixed-format parser, whose warnings copter rejects: they are not silent.)


def test_highs_really_reads_these_lines_without_an_error_or_warning(tmp_path):
    for _, kw, _, _ in SILENTLY_TRUNCATED:  # the reason for the check: if HiGHS ever errors, drop it
        h = new_highs()
        assert h.readModel(str(_mps(tmp_path, **kw))) == highspy.HighsStatus.kOk


@pytest.mark.parametrize("what,kw,line,entity", SILENTLY_TRUNCATED, ids=[s[0] for s in SILENTLY_TRUNCATED])
def test_data_line_with_fields_highs_would_skip_is_rejected_naming_line_and_entity(tmp_path, what, kw,
                                                                                   line, entity):
    path = _mps(tmp_path, **kw)
    with pytest.raises(FormatError, match=f"{what.split()[0]} line has") as e:
        read_mps(path)
    assert (e.value.line, e.value.entity, e.value.file) == (line, entity, str(path))


def test_cli_convert_and_solve_exit_3_with_file_line_and_no_traceback(tmp_path):
    path = _mps(tmp_path, cols="    x obj -1 c1 1 c2 1\n    y obj -1 c2 1\n")
    for cmd in (["convert", str(path), str(tmp_path / "o.parquet")], ["solve", str(path)]):
        res = CliRunner().invoke(app, cmd)
        assert res.exit_code == BAD_INPUT and "Traceback" not in res.output, res.output
        assert f"{path}:8" in res.output and "COLUMNS line has 7 fields" in " ".join(res.output.split())
        res = CliRunner().invoke(app, cmd + ["--json"])
        err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
        assert res.exit_code == err["code"] == BAD_INPUT and (err["line"], err["entity"]) == (8, "x")
    assert not (tmp_path / "o.parquet").exists()


@pytest.mark.parametrize("kw", [
    dict(rhs="    c1 5\n    c2 6 c3 7\n"),                         # blank set name (as blend reads)
    dict(rhs="    rhs c1 5 c2 6\n"),
    dict(rest="RANGES\n    rng c1 2 c2 3\n    rng c3 1\n"),
    dict(rest="BOUNDS\n UP x 3\n FR bnd y\n"),
    dict(rest="BOUNDS\n BV bnd x\n BV y\n"),
    dict(rest="BOUNDS\n BV bnd x 1\n MI y\n"),
    dict(cols="    x obj -1 c1 1\n* a comment line with very many words in it\n\n    y obj -1 c2 1\n"),
    dict(cols="    MARKER 'MARKER' 'INTORG'\n    x obj -1 c1 1\n    MARKER 'MARKER' 'INTEND'\n"
              "    y obj -1 c2 1\n"),
], ids=["rhs-no-set-name", "rhs-two-pairs", "ranges", "bounds-up-fr", "bounds-bv", "bounds-bv-value-mi",
        "comments-and-blank-lines", "markers"])
def test_well_formed_variants_read_exactly_as_highs_reads_them(tmp_path, kw):
    path = _mps(tmp_path, **kw)
    p = read_mps(path)
    h = new_highs()
    assert h.readModel(str(path)) == highspy.HighsStatus.kOk
    lp = h.getLp()
    assert p.col_names.tolist() == list(lp.col_names_) and p.nnz == len(lp.a_matrix_.value_)
    assert np.array_equal(p.row_upper, np.where(np.asarray(lp.row_upper_) >= 1e30, np.inf, lp.row_upper_))


def test_check_finds_a_bad_line_across_chunk_boundaries_with_its_true_line_number(tmp_path, monkeypatch):
    monkeypatch.setattr(mf, "_CHUNK", 64)
    cols = "".join(f"    x{i} obj -1 c1 1\n" for i in range(50))
    path = _mps(tmp_path, cols=cols + "    y obj -1 c2 1 c3 1\n", name="big.mps")
    with pytest.raises(FormatError) as e:
        read_mps(path)
    assert e.value.line == 8 + 50 and e.value.entity == "y"
    assert read_mps(_mps(tmp_path, cols=cols, name="ok.mps")).n_cols == 50


def test_fixed_format_names_with_spaces_are_not_field_counted(tmp_path):
    # fixed columns: 2-3 type, 5-12 name, 15-22 row, 25-36 value, 40-47 row, 50-61 value
    text = ("NAME          fx\nROWS\n N  obj\n L  row one\nCOLUMNS\n"
            "    my col    obj       1.0            row one   2.0\n"
            "RHS\n    rhs       row one   4.0\nENDATA\n")
    path = tmp_path / "fx.mps"
    path.write_text(text)
    p = read_mps(path)
    assert p.col_names.tolist() == ["my col"] and p.row_names.tolist() == ["row one"] and p.row_upper[0] == 4


@pytest.mark.parametrize("row", ["'MARKER'x", "'MARKER'_cap"])
def test_a_row_whose_name_starts_with_the_marker_keyword_round_trips(tmp_path, row):
    """A row named ``'MARKER'x``: HiGHS's free-format writer puts it at column 15, and copter's reader took columns
    15-22 for a fixed-format integer marker and refused its own export (helper-205). HiGHS and copter read it as the
    row it is."""
    from formats.io import write_problem
    from tests.helpers import lp

    p = lp([-1.0], [[1.0]], [-np.inf], [4.0], [0.0], [np.inf])
    p = p.replace(col_names=np.array(["x"], dtype=object), row_names=np.array([row], dtype=object))
    path = tmp_path / "r.mps"
    write_problem(p, path)
    back = read_mps(path)
    assert list(back.row_names) == [row] and back.row_upper[0] == 4.0 and back.a_data.tolist() == [1.0]
    h = new_highs()
    h.readModel(str(path))
    assert h.getLp().num_row_ == 1
