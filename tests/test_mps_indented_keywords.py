"""Free-format lines whose first field, after blanks, is a keyword HiGHS takes for a section header (session 33's
hunt, helper-161): a column, RHS vector or bound set named ``NAME``/``OBJSENSE``/``QSECTION`` dropped the rest of
its section with status kOk (HiGHS 1.16 and copter read the same wrong model), and an indented ``  OBJSENSE MAX``
was read as MAX by HiGHS and MIN by copter. Each is refused naming its line; the fixed-format reader, which reads
such lines as data, still reads them; an RHS line of one field is a format error, not an IndexError."""

from __future__ import annotations

import highspy
import pytest

from formats.mps import read_mps
from solver.model.errors import FormatError


def _model(word: str) -> str:
    # min -x - 2 w - 3 z  s.t.  x + w + z <= 4,  x <= 5, w <= 3: the optimum puts 4 on z (-12)
    return ("NAME t\nROWS\n N obj\n L cap\nCOLUMNS\n    x obj -1 cap 1\n"
            f"    {word} obj -2\n    {word} cap 1\n    z obj -3 cap 1\nRHS\n    RHS cap 4\n"
            f"BOUNDS\n UP BND x 5\n UP BND {word} 3\nENDATA\n")


def _write(tmp_path, text: str):
    p = tmp_path / "m.mps"
    p.write_text(text)
    return p


def _refused(tmp_path, text: str, line: int, *words: str) -> FormatError:
    with pytest.raises(FormatError) as e:
        read_mps(_write(tmp_path, text))
    assert e.value.line == line and all(w in str(e.value) for w in words), e.value
    return e.value


def _highs_columns(path) -> list[str]:
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(path))
    return list(h.getLp().col_names_)


@pytest.mark.parametrize("word", ["NAME", "name", "Name", "OBJSENSE", "objsense", "QSECTION", "qsection"])
def test_a_column_named_like_a_header_keyword_is_refused_where_highs_drops_the_rest_of_columns(tmp_path, word):
    p = _write(tmp_path, _model(word))
    assert "z" not in _highs_columns(p)  # what copter guards against: HiGHS lost column z without a word
    with pytest.raises(FormatError) as e:
        read_mps(p)
    assert e.value.line == 7 and e.value.entity == word, e.value
    assert "drops the rest of the section" in str(e.value)


def test_an_ordinary_column_name_reads_the_whole_model(tmp_path):
    p = read_mps(_write(tmp_path, _model("w")))
    assert p.col_names.tolist() == ["x", "w", "z"] and p.cost.tolist() == [-1.0, -2.0, -3.0]


@pytest.mark.parametrize("section,line", [
    ("RHS\n    NAME cap 4\n", 9),  # an RHS vector named NAME: the right-hand side was lost (objective 0)
    ("RHS\n    RHS cap 4\nBOUNDS\n UP BND x 1\n    NAME x\n UP BND z 2\n", 12),  # z's bound was lost
])
def test_rhs_and_bounds_lines_starting_with_name_are_refused(tmp_path, section, line):
    text = ("NAME t\nROWS\n N obj\n L cap\nCOLUMNS\n    x obj -1 cap 1\n    z obj -1 cap 1\n" + section
            + "ENDATA\n")
    _refused(tmp_path, text, line, "'NAME'")


def test_an_indented_objsense_header_is_refused_not_read_as_min(tmp_path):
    text = "NAME t\n  OBJSENSE MAX\nROWS\n N obj\n L c\nCOLUMNS\n    x obj 1 c 1\nRHS\n    RHS c 4\nENDATA\n"
    _refused(tmp_path, text, 2, "column 1")
    ok = read_mps(_write(tmp_path, text.replace("  OBJSENSE MAX", "OBJSENSE\n    MAX")))
    assert ok.sense == -1


def test_an_indented_name_before_rows_is_the_models_name_and_reads(tmp_path):
    p = read_mps(_write(tmp_path, "  NAME t\n" + _model("w").split("\n", 1)[1]))
    assert p.col_names.tolist() == ["x", "w", "z"]


def test_an_indented_section_header_is_named(tmp_path):
    text = "NAME t\nROWS\n N obj\n L c\nCOLUMNS\n    x obj 1 c 1\nRHS\n    RHS c 4\n  BOUNDS\n UP BND x 2\nENDATA\n"
    _refused(tmp_path, text, 9, "'BOUNDS' is indented")


@pytest.mark.parametrize("lines,line", [("RHS\n    R1\n    RHS c 4\n", 8), ("RHS\n    RHS c 4\nRANGES\n    RNG\n", 10)])
def test_a_one_field_rhs_or_ranges_line_is_a_format_error(tmp_path, lines, line):
    text = "NAME t\nROWS\n N obj\n L c\nCOLUMNS\n    x obj 1 c 1\n" + lines + "ENDATA\n"
    _refused(tmp_path, text, line, "1 fields")  # was IndexError in the message's entity lookup (exit 1)


def test_a_two_field_rhs_line_without_a_number_says_so(tmp_path):
    text = "NAME t\nROWS\n N obj\n L c\nCOLUMNS\n    x obj 1 c 1\nRHS\n    RHS c\nENDATA\n"
    _refused(tmp_path, text, 8, "'c', is no number", "2 fields")


@pytest.mark.parametrize("rhs", ["rhs d 3 junk", "rhs c 1 .5"])
def test_a_four_field_rhs_line_that_is_no_pair_of_pairs_says_which_field(tmp_path, rhs):
    """hunt 56: "RHS line has 4 fields, expected 2 to 5" contradicted itself; the line is read as two row/value
    pairs without a set name, and the message names the field that is no number."""
    text = "NAME t\nROWS\n N obj\n L c\n L d\nCOLUMNS\n    x obj 1 c 1\n    x d 1\nRHS\n " + rhs + "\nENDATA\n"
    name = rhs.split()[1]
    _refused(tmp_path, text, 10, "4 fields", "two row/value pairs without a set name", f"field 2, '{name}', is no number",
             "3 or 5 fields")


def test_the_fixed_format_reader_reads_a_column_named_name_as_data(tmp_path):
    # a name with a space makes HiGHS read the file with its fixed-format parser, which reads the line as data
    def line(a, b, c, d="", e=""):  # names in columns 5-12 and 15-22, values from 25 and 50
        return f"    {a:<8}  {b:<8}  {c:<12}   {d:<8}  {e}".rstrip() + "\n"

    text = ("NAME          t\nROWS\n N  obj\n L  cap\nCOLUMNS\n" + line("x a", "obj", "-1", "cap", "1")
            + line("NAME", "obj", "-2", "cap", "1") + line("z", "obj", "-3", "cap", "1") + "RHS\n"
            + line("RHS", "cap", "4") + "ENDATA\n")
    p = read_mps(_write(tmp_path, text))
    assert p.col_names.tolist() == ["x a", "NAME", "z"] and p.cost.tolist() == [-1.0, -2.0, -3.0]


def test_init_from_such_a_file_exits_3_and_makes_no_state(tmp_path):
    import json

    from tests.helpers import cli_json

    p = _write(tmp_path, _model("name"))
    code, out = cli_json("init", p, "--state", tmp_path / "st", "--json")
    err = json.loads(out)["error"]
    assert code == 3 and err["kind"] == "format" and err["line"] == 7 and "'name'" in err["message"], out
    assert not (tmp_path / "st").exists()
