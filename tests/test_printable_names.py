"""Names holding line separators or control characters (U+2028, U+2029, NEL U+0085, the C1 CSI U+009B) are valid;
JSON escapes them, and the human tables of ``show --solution`` now write them as Python escapes
(``ls\\u2028sep``) instead of raw, which split a table row over lines for line-based tools (fresh-install
hunter, session 13). JSON keeps the exact names."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.printable import printable
from formats.io import write_delta
from solver.model.delta import Delta

ODD = ["ls\u2028sep/x", "para\u2029/x", "nel\u0085/x", "csi\u009b31m/x", "plain/x"]  # C0 controls are refused


@pytest.mark.parametrize("raw,shown", [("ls\u2028sep", "ls\\u2028sep"), ("nel\u0085", "nel\\x85"),
                                       ("a\tb\nc", "a\\tb\\nc"), ("nb\u00a0sp", "nb\u00a0sp"), ("a\\b", "a\\b"),
                                       # bidirectional controls reorder the rest of the line (helper-203)
                                       ("abc\u202edef", "abc\\u202edef"), ("x\u2066y\u2069", "x\\u2066y\\u2069"),
                                       ("r\u200fl\u061c", "r\\u200fl\\u061c"), ("\u05e9\u05dc\u05d5\u05dd", "\u05e9\u05dc\u05d5\u05dd"),
                                       # zero-width characters make two names print alike
                                       ("a\u200bb", "a\\u200bb"), ("\ufeffx\u2060", "\\ufeffx\\u2060")])
def test_printable_escapes_controls_and_separators_only(raw, shown):
    assert printable(raw) == shown


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("odd")
    d = Delta.concat([Delta.vars(ODD, cost=[-1.0 - i for i in range(len(ODD))], upper=[1.0] * len(ODD)),
                      Delta.cons(["cap"], upper=[10.0]), Delta.coefs(ODD, ["cap"] * len(ODD), [1.0] * len(ODD))])
    d.format = "problem"
    write_delta(d, tmp / "p.parquet")
    st = tmp / "S"
    assert CliRunner().invoke(app, ["init", str(tmp / "p.parquet"), "--state", str(st)]).exit_code == 0
    return st


def test_show_solution_tables_escape_separators_in_names(state):
    res = CliRunner().invoke(app, ["show", "--solution", "--state", str(state), "--changes"])
    assert res.exit_code == 0, res.output
    out = res.output
    for ch in ("\u2028", "\u2029", "\u0085", "\u009b"):
        assert ch not in out
    for shown in ("ls\\u2028sep/x", "para\\u2029/x", "nel\\x85/x", "csi\\x9b31m/x"):
        assert shown in out
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("'ls\\u2028sep' "))
    assert "'ls\\u2028sep/x' 1" in line  # the client and its entry on one row, quoted as escaped names are


def test_show_solution_json_keeps_the_exact_names(state):
    res = CliRunner().invoke(app, ["show", "--solution", "--state", str(state), "--json"])
    names = {e["name"] for c in json.loads(res.stdout)["clients"] for e in c["top"]}
    assert set(ODD) <= names


@pytest.mark.parametrize("raw,shown", [("a", "a"), ("a b", "a b"), ("a ", "'a '"), (" a", "' a'"), ("", "''"),
                                       ("'a '", "\"'a '\""), ("a\u00a0", "'a\\xa0'"), ("a\u2028", "'a\\u2028'"),
                                       # an escaped name and a literal backslash one are told apart (helper-206)
                                       ("a\u200bb", "'a\\u200bb'"), ("a\\u200bb", "'a\\\\u200bb'"),
                                       # a space other than U+0020 prints as one (helper-209)
                                       ("tab\u00a0nbsp/w", "'tab\\xa0nbsp/w'"), ("a\u2009b", "'a\\u2009b'"),
                                       ("\u3000x", "'\\u3000x'"),
                                       # characters that print as nothing, which Python's repr keeps (helper-212)
                                       ("c1\u034f", "'c1\\u034f'"), ("c1\ufe0f", "'c1\\ufe0f'"),
                                       ("c1\u3164", "'c1\\u3164'"), ("c1\u061c", "'c1\\u061c'"),
                                       ("c1\u2066", "'c1\\u2066'"), ("c1\U000e0041", "'c1\\U000e0041'"),
                                       # a name not in NFC printed like its NFC twin: quoted, its marks escaped
                                       ("\u00e9/1", "\u00e9/1"), ("e\u0301/2", "'e\\u0301/2'")])
def test_a_table_cell_quotes_a_name_it_would_show_like_another(raw, shown):
    """``a`` and ``a `` printed alike in a table (helper-203): a name with a leading or trailing space, an empty one
    or one that starts with a quote is shown as Python's repr; others as :func:`printable`."""
    from copter_cli.printable import name_cell

    assert name_cell(raw) == shown
    assert name_cell("x y", ", ") == "'x y'" and name_cell("x,y", ", ") == "'x,y'"  # a cell listing names
    assert name_cell("(no client)", reserved=("(no client)",)) == "'(no client)'"  # not the table's own label


def test_show_solution_tells_apart_clients_in_two_unicode_normalisations(tmp_path):
    """helper-212: variables 'é/1' (NFC) and 'e' U+0301 '/2' (NFD) are not twins (their full names differ), but their
    clients printed as two identical 'é' rows."""
    names = ["\u00e9/1", "e\u0301/2"]
    d = Delta.concat([Delta.vars(names, cost=[-1.0, -2.0], upper=[5.0, 6.0]), Delta.cons(["cap"], upper=[100.0]),
                      Delta.coefs(names, ["cap"] * 2, [1.0] * 2)])
    d.format = "problem"
    write_delta(d, tmp_path / "p.parquet")
    st = tmp_path / "S"
    assert CliRunner().invoke(app, ["init", str(tmp_path / "p.parquet"), "--state", str(st)]).exit_code == 0
    out = CliRunner().invoke(app, ["show", "--solution", "--state", str(st)], terminal_width=200).output
    assert "'e\\u0301'" in out and "'e\\u0301/2'" in out, out
    assert not any(ln.strip().startswith("e\u0301") for ln in out.splitlines()), out


def test_show_solution_tells_names_apart_that_differ_by_spaces(tmp_path):
    """Variables ``a`` and ``a `` (and clients ``c`` / ``c ``): every row of ``show --solution --changes`` is one of
    them, told apart: before, the two rows read the same."""
    names = ["c/a", "c/a ", "c /a"]
    d = Delta.concat([Delta.vars(names, cost=[-1.0, -2.0, -3.0], upper=[1.0] * 3), Delta.cons(["cap"], upper=[10.0]),
                      Delta.coefs(names, ["cap"] * 3, [1.0] * 3)])
    d.format = "problem"
    write_delta(d, tmp_path / "p.parquet")
    st = tmp_path / "S"
    assert CliRunner().invoke(app, ["init", str(tmp_path / "p.parquet"), "--state", str(st)]).exit_code == 0
    out = CliRunner().invoke(app, ["show", "--solution", "--changes", "--state", str(st)], terminal_width=200).output
    assert "'c/a '" in out and "'c /a'" in out  # the largest entries and the moves
    clients = [ln.strip() for ln in out.splitlines() if ln.strip().startswith(("c  ", "'c '  "))]
    assert len(clients) == 2 and clients[0][0] != clients[1][0], out  # the client rows: c and 'c '
    moves = [ln.split()[0] for ln in out.splitlines() if "var_added" in ln]
    assert sorted(moves) == sorted(["c/a", "'c/a", "c"]), out  # 'c/a ' quoted; c /a as is (its space is inside)


SEPARATORS = ("\u2028", "\u2029", "\u0085", "\u009b")


def _one_line_each(text: str) -> None:
    for ch in SEPARATORS:
        assert ch not in text, text


def test_error_lines_and_show_escape_names_from_an_iis(state, tmp_path):
    """An infeasible round's error line names the IIS's rows and columns: it printed them raw (a row split over
    lines); the error line, the report's message and show's last failed round escape them as the tables do."""
    d = Delta.concat([Delta.cons(["force\u2028f"], lower=[50.0]), Delta.coefs(ODD, ["force\u2028f"] * len(ODD),
                                                                              [1.0] * len(ODD))])
    d.base_round = 0
    write_delta(d, tmp_path / "inf.parquet")
    res = CliRunner().invoke(app, ["step", str(tmp_path / "inf.parquet"), "--state", str(state)])
    assert res.exit_code == 4, res.output
    _one_line_each(res.output)
    line = next(ln for ln in res.stderr.splitlines() if ln.startswith("error (round_failed, exit 4)"))
    # a name with a separator (whitespace) is quoted in the IIS sentence (solver.highs_bridge._iis_name), escaped there
    assert "row 'force\\u2028f' >= 50" in line and "ls\\u2028sep/x" in line, line
    res = CliRunner().invoke(app, ["show", "--state", str(state)])
    _one_line_each(res.output)
    assert "last failed round" in res.output and "force\\u2028f" in res.output


def test_warnings_tables_and_diff_output_escape_a_path_holding_a_separator(state, tmp_path):
    """A delta file named with U+2028 and no copter.base_round: the step's warning line, show's warnings row and
    a batch's 'delta K:' line print it escaped; so does diff's summary of an output so named."""
    d = Delta.vars(["plain/x"], cost=[-2.5])
    odd = tmp_path / "d\u2028elta.parquet"
    write_delta(d, odd)
    before = CliRunner().invoke(app, ["show", "--state", str(state), "--json"])
    res = CliRunner().invoke(app, ["step", str(odd), str(odd), "--state", str(state)])
    assert res.exit_code == 0, res.output
    _one_line_each(res.output)
    assert "warning: delta" in res.stderr and "d\\u2028elta.parquet" in res.stderr
    assert "d\\u2028elta.parquet" in res.stdout  # the batch's 'delta K: PATH' lines
    res = CliRunner().invoke(app, ["show", "--state", str(state)])
    _one_line_each(res.output)
    assert "d\\u2028elta.parquet" in res.stdout  # the stored warning, a row of show's table
    base = tmp_path / "base.parquet"
    round0 = json.loads(before.stdout)["round"]
    assert CliRunner().invoke(app, ["export", "--state", str(state), "--round", str(round0), "-o",
                                    str(base)]).exit_code == 0
    out = tmp_path / "o\u2029ut.parquet"
    res = CliRunner().invoke(app, ["diff", str(base), str(base), "-o", str(out)])
    assert res.exit_code == 0, res.output
    _one_line_each(res.output)
    assert "o\\u2029ut.parquet: 0 rows" in res.stdout


def test_fitted_tables_escape_their_cells():
    """history and compare build their tables through table_fit: every cell through printable."""
    import io

    from rich import box
    from rich.console import Console

    from copter_cli.table_fit import FAST_ROWS, Column, print_fitted

    for n in (1, FAST_ROWS + 5):  # rich's rows, and the rows laid out without rich (a long history)
        buf = io.StringIO()
        con = Console(file=buf, width=200, force_terminal=True, color_system=None)
        print_fitted([Column("name", "left"), Column("v")], [["ls\u2028sep", "1"]] * n, console=con, terminal=True,
                     box=box.SIMPLE_HEAD)
        text = buf.getvalue()
        _one_line_each(text)
        assert text.count("ls\\u2028sep") == n
