"""MPS section rules HiGHS applies loosely (formats/mps_sections.py) and the fixed-format gap columns and
integer markers (formats/mps_numbers.py): each input is read as written, or refused naming the line.

Base model: max x + 2y  s.t.  x + y <= 4 (c1),  x - y = 1 (c2),  x, y >= 0: optimum 5.5 (as min: 1).
"""

from __future__ import annotations

import gzip
import json

import highspy
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.exit_codes import BAD_INPUT
from formats.mps import read_mps
from solver.highs_bridge import to_highs_lp
from solver.model.errors import FormatError

ROWS = "ROWS\n N obj\n L c1\n E c2\n"
COLS = "COLUMNS\n    x obj 1 c1 1\n    x c2 1\n    y obj 2 c1 1\n    y c2 -1\n"
RHS = "RHS\n    rhs c1 4 c2 1\n"


def _model(head: str = "", tail: str = "", end: str = "ENDATA\n") -> str:
    return "NAME T\n" + head + ROWS + COLS + RHS + tail + end


def _read(tmp_path, text: str | bytes, name: str = "m.mps"):
    path = tmp_path / name
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return read_mps(path)


def _refused(tmp_path, text, line: int, *words: str, name: str = "m.mps") -> FormatError:
    with pytest.raises(FormatError) as e:
        _read(tmp_path, text, name)
    assert e.value.line == line, e.value
    for w in words:
        assert w in e.value.message, e.value.message
    return e.value


def _highs_optimum(problem) -> float:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.passModel(to_highs_lp(problem))
    h.run()
    return h.getInfo().objective_function_value


# ---- objective sense ------------------------------------------------------------------------------------

MAX_SPELLINGS = [
    ("header-maximize", "OBJSENSE MAXIMIZE\n", ""),
    ("header-maximise", "OBJSENSE MAXIMISE\n", ""),
    ("objsens-next-line", "OBJSENS\n    MAX\n", ""),
    ("objsens-header", "OBJSENS MAX\n", ""),
    ("one-line-after-rhs", "", "OBJSENSE MAX\n"),
    ("section-after-rhs", "", "OBJSENSE\n    MAX\n"),
    ("lower-case", "objsense\n    max\n", ""),
    ("column-1-value", "OBJSENSE\nMAX\n", ""),
    ("header-and-line-agree", "OBJSENSE MAX\n    MAXIMIZE\n", ""),
]


@pytest.mark.parametrize("case", MAX_SPELLINGS, ids=[c[0] for c in MAX_SPELLINGS])
def test_every_objsense_spelling_of_max_is_read_as_max_and_highs_solves_the_max(tmp_path, case):
    p = _read(tmp_path, _model(case[1], case[2]))
    assert p.sense == -1
    assert _highs_optimum(p) == pytest.approx(5.5)


@given(word=st.sampled_from(["min", "minimize", "minimise", "max", "maximize", "maximise"]),
       upper=st.lists(st.booleans(), min_size=8, max_size=8), header=st.sampled_from(["OBJSENSE", "OBJSENS"]),
       same_line=st.booleans(), after_rhs=st.booleans())
@settings(max_examples=40, deadline=None)
def test_objsense_in_any_layout_and_letter_case_reads_as_written(tmp_path_factory, word, upper, header,
                                                                 same_line, after_rhs):
    w = "".join(c.upper() if u else c for c, u in zip(word, upper[:len(word)], strict=True))
    sec = f"{header} {w}\n" if same_line else f"{header}\n    {w}\n"
    text = _model("" if after_rhs else sec, sec if after_rhs else "")
    if after_rhs and header == "OBJSENS":  # HiGHS would read it as an RHS data line
        with pytest.raises(FormatError, match="OBJSENS after ROWS") as e:
            _read(tmp_path_factory.mktemp("s"), text)
        assert e.value.line == 13
        return
    assert _read(tmp_path_factory.mktemp("s"), text).sense == (-1 if word.startswith("max") else 1)


@pytest.mark.parametrize("head,tail,line,words", [
    ("OBJSENSE MAX junk\n", "", 2, ("one value",)),
    ("OBJSENSE\n    MAX junk\n", "", 3, ("one value",)),
    ("OBJSENSE\n    MAX\n", "OBJSENSE\n    MIN\n", 16, ("different values", "line 3")),
    ("OBJSENSE MAX\n    MIN\n", "", 3, ("different values",)),
    ("OBJSENSE\n", "", 2, ("no value",)),
    ("OBJSENSE\n    MAXI\n", "", 3, ("MIN or MAX", "MAXI")),
])
def test_ambiguous_or_conflicting_objsense_is_refused_naming_the_line(tmp_path, head, tail, line, words):
    _refused(tmp_path, _model(head, tail), line, *words)


# ---- OBJNAME ---------------------------------------------------------------------------------------------

TWO_N = "NAME T\n{head}ROWS\n N obj\n N obj2\n L c1\nCOLUMNS\n    x obj -1 c1 1\n    x obj2 5\n" \
        "    y obj -2 c1 1\nRHS\n    rhs c1 4\nENDATA\n"


@pytest.mark.parametrize("head,line", [("OBJNAME\n    obj2\n", 3), ("OBJNAME obj2\n", 2)])
def test_objname_naming_another_n_row_is_refused_not_ignored(tmp_path, head, line):
    e = _refused(tmp_path, TWO_N.format(head=head), line, "'obj2'", "first N row 'obj'")
    assert e.entity == "obj2"


def test_objname_naming_the_first_n_row_is_accepted(tmp_path):
    assert _read(tmp_path, TWO_N.format(head="OBJNAME obj\n")).cost.tolist() == [-1.0, -2.0]


# ---- bound set names -------------------------------------------------------------------------------------

@pytest.mark.parametrize("line", [" UP y x 2", " LO x y 3", " MI y x", " BV y x", " FR x y"])
def test_bound_set_name_equal_to_a_column_name_is_refused(tmp_path, line):
    e = _refused(tmp_path, _model(tail=f"BOUNDS\n{line}\n"), 14, "bound set name", "also a column name")
    assert e.entity == line.split()[1]


@pytest.mark.parametrize("line,lower,upper", [(" UP bnd x 2", [0, 0], [2, float("inf")]),
                                              (" UP x 2", [0, 0], [2, float("inf")]),
                                              (" MI bnd y", [0, -float("inf")], [float("inf")] * 2),
                                              (" FR y", [0, -float("inf")], [float("inf")] * 2)])
def test_bound_lines_with_or_without_a_distinct_set_name_read_as_written(tmp_path, line, lower, upper):
    p = _read(tmp_path, _model(tail=f"BOUNDS\n{line}\n"))
    assert p.col_lower.tolist() == lower and p.col_upper.tolist() == upper


# ---- repeated sections, ENDATA, column-1 data lines ----------------------------------------------------

@pytest.mark.parametrize("tail,line,section", [
    ("RHS\n    rhs c1 1\n", 13, "RHS"),
    ("BOUNDS\n UP bnd x 3\nBOUNDS\n UP bnd x 1\n", 15, "BOUNDS"),
    ("RANGES\n    r c1 2\nRANGES\n    r c1 7\n", 15, "RANGES"),
])
def test_a_repeated_section_is_refused_naming_the_second_header(tmp_path, tail, line, section):
    _refused(tmp_path, _model(tail=tail), line, f"section {section} appears a second time")


def test_content_after_endata_is_refused(tmp_path):
    _refused(tmp_path, _model(end="ENDATA\n\n* note\n    z obj -5 c1 1\n"), 16, "after ENDATA")


def test_a_second_concatenated_gzip_member_is_refused(tmp_path):
    one = gzip.compress(_model().encode())
    _refused(tmp_path, one + one, 14, "after ENDATA", name="m.mps.gz")


def test_text_on_the_endata_line_is_refused(tmp_path):
    _refused(tmp_path, _model(end="ENDATA junk\nBOUNDS\n UP bnd x 0\n"), 13, "ENDATA line", "'junk'")


def test_missing_endata_is_named_instead_of_highs_parser_error(tmp_path):
    e = _refused(tmp_path, _model(end=""), 13, "ENDATA is missing")
    assert "parser error" not in e.message


def test_miplib3_importances_trailer_after_endata_is_ignored_with_a_warning(tmp_path, capsys):
    p = _read(tmp_path, _model(end="ENDATA\nIMPORTANCES\nx           2\n"))
    assert p.cost.tolist() == [1.0, 2.0] and "IMPORTANCES" in capsys.readouterr().err


def test_a_data_line_starting_in_column_1_is_refused_not_read_unchecked(tmp_path):
    text = _model().replace("    y obj 2 c1 1\n", "y obj 2 c1 8,75\n")
    _refused(tmp_path, text, 9, "unknown section 'y'")


def test_lower_case_section_headers_get_the_same_checks(tmp_path):
    text = _model().replace("RHS\n", "rhs\n").replace("rhs c1 4", "rhs c1 4,5")
    _refused(tmp_path, text, 12, "'4,5'", "not a number")


# ---- integer markers -------------------------------------------------------------------------------------

MARKER_ROW = "NAME T\nROWS\n N obj\n L MARKERCAP\nCOLUMNS\n{line}\nRHS\n    rhs MARKERCAP 10\nENDATA\n"


@pytest.mark.parametrize("line", ["    x MARKERCAP 2,5 obj 1", "    x obj 1 MARKERCAP 2,5"])
def test_a_name_containing_marker_does_not_switch_off_the_number_check(tmp_path, line):
    _refused(tmp_path, MARKER_ROW.format(line=line), 6, "'2,5'", "not a number")


def test_a_name_containing_marker_reads_its_numbers(tmp_path):
    p = _read(tmp_path, MARKER_ROW.format(line="    x MARKERCAP 2.5 obj 1"))
    assert p.a_data.tolist() == [2.5] and p.cost.tolist() == [1.0]


# ---- fixed format ----------------------------------------------------------------------------------------

def _fx(f1="", f2="", f3="", f4="", f5="", f6=""):
    """A fixed-format data line: fields at columns 2-3, 5-12, 15-22, 25-36, 40-47, 50-61."""
    return (" " + f1.ljust(3) + f2.ljust(10) + f3.ljust(10) + f4.ljust(15) + f5.ljust(10) + f6).rstrip()


def _fixed(rhs_line: str, col_x: str = "x var") -> str:
    return "\n".join(["NAME          T", "ROWS", " N  obj", " L  c 1", " E  c2", "COLUMNS",
                      _fx("", col_x, "obj", "1", "c 1", "1"), _fx("", col_x, "c2", "1"),
                      _fx("", "y", "obj", "2", "c 1", "1"), _fx("", "y", "c2", "-1"),
                      "RHS", rhs_line, "ENDATA", ""])


def test_fixed_format_reads_whole_numbers_in_their_columns(tmp_path):
    p = _read(tmp_path, _fixed(_fx("", "rhs", "c 1", "12345", "c2", "1")))
    assert p.row_upper.tolist() == [12345.0, 1.0]


@pytest.mark.parametrize("shift,column", [(-2, 23), (-1, 24)])
def test_fixed_format_number_starting_in_a_gap_column_is_refused_not_truncated(tmp_path, shift, column):
    line = _fx("", "rhs", "c 1", "12345", "c2", "1")
    line = line[:24 + shift] + "12345" + line[29 + shift:]
    e = _refused(tmp_path, _fixed(line), 12, f"column {column}", "must be blank")
    assert e.entity.startswith("12345"[:5 + shift] if shift > -2 else "12345")


def test_fixed_format_field_6_starting_in_column_48_is_refused(tmp_path):
    line = _fx("", "rhs", "c 1", "4", "c2").ljust(47) + "12345"
    _refused(tmp_path, _fixed(line), 12, "column 48")


def test_fixed_format_column_named_like_marker_keeps_its_number_check(tmp_path):
    text = _fixed(_fx("", "rhs", "c 1", "4", "c2", "1"), col_x="MARKER x").replace(
        _fx("", "MARKER x", "c2", "1"), _fx("", "MARKER x", "c2", "1,5"))
    _refused(tmp_path, text, 8, "'1,5'")


# ---- names -------------------------------------------------------------------------------------------------

def test_negative_up_rule_compares_utf8_names_exactly(tmp_path, capsys):
    text = ("NAME T\nROWS\n N obj\n L c1\nCOLUMNS\n    \u00e9 obj 1 c1 1\nRHS\n    rhs c1 4\nBOUNDS\n"
            " LO bnd \u00e9 0\n UP bnd \u00e9 -2\nENDATA\n")
    p = _read(tmp_path, text)
    assert p.col_lower.tolist() == [0.0] and p.col_upper.tolist() == [-2.0]
    assert "no lower bound" not in capsys.readouterr().err


def test_cli_reports_a_section_error_with_exit_3_file_and_line(tmp_path):
    path = tmp_path / "m.mps"
    path.write_text(_model(tail="RHS\n    rhs c1 1\n"))
    res = CliRunner().invoke(app, ["solve", str(path), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT == err["code"] and err["line"] == 13 and err["file"] == str(path)


# ---- messages on HiGHS's failures and warnings -----------------------------------------------------------

def test_a_model_without_an_n_row_is_named_as_such(tmp_path):
    text = _model().replace(" N obj\n", "").replace(" obj 1", "").replace(" obj 2", "")
    _refused(tmp_path, text, 2, "no objective (N) row")


@pytest.mark.parametrize("rhs", ["    c1 c1 4 c2 1", "    c1 c2 4"])
def test_rhs_set_name_equal_to_a_row_name_is_named_as_such(tmp_path, rhs):
    e = _refused(tmp_path, _model().replace("    rhs c1 4 c2 1", rhs), 12, "set name 'c1' is also a row name")
    assert e.entity == "c1"


@pytest.mark.parametrize("old,new,line,entity", [("x obj 1 c1 1", "x obj 1 c1 1e400", 7, "x"),
                                                 ("y obj 2 c1 1", "y obj 2d999 c1 1", 9, "y"),
                                                 ("rhs c1 4 c2 1", "rhs c1 4 c2 1e400", 12, "c2")])
def test_a_number_overflowing_to_infinity_is_named_with_line_and_entity(tmp_path, old, new, line, entity):
    from solver.model.errors import ValidationError

    with pytest.raises(ValidationError, match="is infinite") as e:
        _read(tmp_path, _model().replace(old, new))
    assert e.value.line == line and e.value.entity == entity


def test_an_inf_coefficient_is_named_with_line_and_entity(tmp_path):
    from solver.model.errors import ValidationError

    with pytest.raises(ValidationError, match="infinite") as e:
        _read(tmp_path, _model().replace("y c2 -1", "y c2 -inf"))
    assert e.value.line == 10 and e.value.entity == "y"


def test_rhs_set_name_equal_to_the_objective_row_name_is_named_as_such(tmp_path):
    e = _refused(tmp_path, _model().replace("    rhs c1 4 c2 1", "    obj c1 4 c2 1"), 12,
                 "set name 'obj' is also a row name")
    assert e.entity == "obj"


@pytest.mark.parametrize("sense,ok", [("OBJSENSE\n  MAX", True), ("OBJSENSE\n  MAXIMIZE", True),
                                      ("OBJSENSE MAX", False), ("OBJSENSE\n    MAX", False)])
def test_fixed_format_objsense_layout_is_read_or_explained(tmp_path, sense, ok):
    text = _fixed(_fx("", "rhs", "c 1", "4", "c2", "1")).replace("NAME          T\n", f"NAME          T\n{sense}\n")
    if ok:
        p = _read(tmp_path, text)
        assert p.sense == -1 and _highs_optimum(p) == pytest.approx(5.5)
    else:
        _refused(tmp_path, text, 2, "fixed-format parser", "column 3")


@pytest.mark.parametrize("bounds,lower", [([("LO", "0"), ("UP", "-2")], 0.0), ([("UP", "-2")], -float("inf")),
                                          ([("LI", "0"), ("UP", "-2")], 0.0), ([("MI", ""), ("UP", "-2")],
                                                                                -float("inf"))])
def test_fixed_format_negative_up_keeps_an_explicit_lower_bound_of_zero(tmp_path, bounds, lower):
    lines = [_fx(t, "bnd", "x var", v) for t, v in bounds]
    text = _fixed(_fx("", "rhs", "c 1", "4", "c2", "1")).replace("ENDATA", "BOUNDS\n" + "\n".join(lines) + "\nENDATA")
    p = _read(tmp_path, text)
    assert p.col_lower.tolist() == [lower, 0.0] and p.col_upper.tolist() == [-2.0, float("inf")]


def test_fixed_format_free_bound_with_a_space_in_the_name_is_no_value_but_a_value_is_refused(tmp_path):
    base = _fixed(_fx("", "rhs", "c 1", "4", "c2", "1"))
    p = _read(tmp_path, base.replace("ENDATA", "BOUNDS\n" + _fx("MI", "bnd", "x var") + "\nENDATA"))
    assert p.col_lower.tolist() == [-float("inf"), 0.0]
    _refused(tmp_path, base.replace("ENDATA", "BOUNDS\n" + _fx("MI", "bnd", "x var", "5") + "\nENDATA"), 14,
             "takes no value")
