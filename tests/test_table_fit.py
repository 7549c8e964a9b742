"""``copter history`` and ``copter compare`` tables at 80 and 120 columns (``copter_cli.table_fit``): every
shown status is a whole status word, no number is cut ('…' never appears), the least important columns are
dropped with a note naming them, essentials never; off a terminal every column is printed."""

from __future__ import annotations

import io
import re

import pytest
from rich.console import Console

from copter_cli import output
from copter_cli.cmd_compare import COMPARE_COLUMNS, print_table
from copter_cli.cmd_state import HISTORY_COLUMNS, _print_history
from copter_cli.table_fit import Column, fit
from solver import rounds
from solver.model.delta import Delta
from solver.model.settings import Settings
from tests.helpers import run_main, small_lp

STATUSES = ("OPTIMAL", "FEASIBLE", "INFEASIBLE", "ITERATION_LIMIT", "NO_INTEGER_SOLUTION", "NUMERICAL_ERROR")


def _history_rows() -> list[dict]:
    rows = []
    for i, status in enumerate(STATUSES * 2):
        ok = status in ("OPTIMAL", "FEASIBLE")
        rows.append({"round": 1000 + i, "kind": "generation" if ok else "failed", "current": i == 11,
                     "status": status, "objective": -123456789.123 * (i + 1) if ok else None,
                     "gap_rel": 1.5e-05 * (i + 1) if ok else None, "iterations": 1234567, "warm_started": True,
                     "changed_variables": 987654, "seconds": {k: 1234.5678 for k in ("load", "apply", "solve",
                                                                                       "integerize", "save", "total")},
                     "compare": {"highs": {"time_ratio": 12.5}, "pop-16": {"time_ratio": 0.123}}})
    return rows


def _compare_result() -> dict:
    row = {"objective": -123456.789012345, "objective_diff_rel": 1.2345e-07, "primal_residual_rel": 3.2e-05,
           "max_row_violation": 1.5e-03, "max_row_violation_rel": 2.5e-06, "integrality_violation": 0.0,
           "seconds": 123.456, "time_ratio": 12.34, "pop_seconds": 98.765, "pop_time_ratio": 9.87}
    return {"round": 12, "n_rows": 123456, "n_cols": 654321, "nnz": 9876543, "feasibility_tol": 1e-4,
            "copter": {**row, "name": "copter", "status": "OPTIMAL", "dual_residual_rel": 1e-5,
                       "duality_gap_rel": 1e-6},
            "baselines": [{**row, "name": "highs-simplex", "status": "ITERATION_LIMIT", "hit_limit": True},
                          {**row, "name": "pop-16", "status": "FEASIBLE", "violates_tol": True},
                          {**row, "name": "highs-warm", "status": "NO_INTEGER_SOLUTION"}]}


def _render(fn, data, width: int, terminal: bool = True) -> tuple[str, list[str]]:
    buf = io.StringIO()
    dropped = fn(data, Console(file=buf, width=width, force_terminal=terminal, color_system=None, highlight=False),
                 terminal)
    return buf.getvalue(), dropped


def _cells(line: str) -> list[str]:
    return [c for c in (x.strip() for x in re.split(r"[│┃]|\s{2,}", line)) if c]


def _table(text: str, headers: list[str]) -> tuple[list[str], list[list[str]]]:
    """The shown headers (the header line's cells) and each body row's cells (split on box lines and runs of
    2+ spaces)."""
    lines = text.splitlines()
    head_i = next(i for i, ln in enumerate(lines) if re.search(r"\bround\b|\bname\b", ln) and "status" in ln)
    shown = _cells(lines[head_i])
    assert set(shown) <= set(headers)
    body = []
    for ln in lines[head_i + 2:]:
        if not ln.strip() or ln.startswith(("note:", "└")):
            break
        body.append(_cells(ln))
    return shown, body


@pytest.mark.parametrize("width", [80, 120])
def test_history_at_terminal_width_shows_whole_statuses_and_numbers(width):
    text, dropped = _render(_print_history, _history_rows(), width)
    assert "…" not in text
    assert all(len(ln) <= width for ln in text.splitlines() if not ln.startswith("note:"))
    headers = [c[0] for c in HISTORY_COLUMNS]
    shown, body = _table(text, headers)
    for essential in ("round", "status", "objective", "gap", "total"):
        assert essential in shown and essential not in dropped
    assert len(body) == len(STATUSES) * 2
    words = [w for row in body for w in row]
    for status in STATUSES:
        assert words.count(status) == 2, (status, text)
    assert words.count("-1.23457e+08") == 1 and "1.5e-05" in words and "1234.568" in words
    assert dropped and set(dropped) == {h for h in headers if h} - set(shown)
    note = [ln for ln in text.splitlines() if ln.startswith("note:")]
    assert len(note) == 1 and all(d in note[0] for d in dropped) and "--json" in note[0]
    assert f"{width} columns" in note[0]


def test_every_history_column_has_a_header():
    """The column holding ``*`` for the current round (and ``failed``) had an empty header."""
    assert all(c[0] for c in HISTORY_COLUMNS)
    text, _ = _render(_print_history, _history_rows(), 200, terminal=False)  # round 1011 is current
    lines = text.splitlines()
    head = next(ln for ln in lines if "status" in ln and "round" in ln)
    star = next(ln for ln in lines if re.search(r"\s\*\s", ln))
    assert head.index("mark") <= star.index("*") < head.index("mark") + len("mark"), text


def test_history_drops_fewer_columns_when_wider():
    _, d80 = _render(_print_history, _history_rows(), 80)
    _, d120 = _render(_print_history, _history_rows(), 120)
    _, d250 = _render(_print_history, _history_rows(), 250)
    assert set(d120) < set(d80) and d250 == []


def test_history_off_a_terminal_prints_every_column_whole():
    text, dropped = _render(_print_history, _history_rows(), 80, terminal=False)
    assert dropped == [] and "…" not in text and "note:" not in text
    shown, _ = _table(text, [c[0] for c in HISTORY_COLUMNS])
    assert shown == [c[0] for c in HISTORY_COLUMNS if c[0]]


@pytest.mark.parametrize("width", [80, 120])
def test_compare_fits_the_terminal_without_cutting_statuses_or_numbers(width):
    text, dropped = _render(print_table, _compare_result(), width)
    table = text.split("note:")[0]
    assert "…" not in table
    assert all(len(ln) <= width for ln in table.splitlines())
    headers = [c[0] for c in COMPARE_COLUMNS]
    shown, body = _table(text, headers)
    for essential in ("name", "status", "objective", "seconds"):
        assert essential in shown
    cells = [w for row in body for w in row]
    for status in ("OPTIMAL", "ITERATION_LIMIT (limit hit)", "FEASIBLE (violates tol)", "NO_INTEGER_SOLUTION"):
        assert status in cells, (status, text)
    assert cells.count("-123456.789") == 4 and cells.count("123.456") == 4
    assert dropped and set(dropped) == set(headers) - set(shown)
    if width == 120:
        assert len(dropped) < len(_render(print_table, _compare_result(), 80)[1])
    assert "--json" in next(ln for ln in text.splitlines() if ln.startswith("note:"))


def test_essentials_wider_than_the_terminal_are_printed_whole_not_cut():
    cols = [Column("name", "left"), Column("status", "left"), Column("extra", priority=1)]
    rows = [["a-very-long-baseline-name-" * 2, "NO_INTEGER_SOLUTION", "1.0"]]
    keep, dropped, need = fit(cols, rows, 30, Console(width=30))
    assert keep == [0, 1] and dropped == ["extra"] and need > 30
    buf = io.StringIO()
    from copter_cli.table_fit import print_fitted

    print_fitted(cols, rows, console=Console(file=buf, width=30, force_terminal=True, color_system=None), terminal=True)
    assert "NO_INTEGER_SOLUTION" in buf.getvalue() and "…" not in buf.getvalue()


def test_copter_history_cli_at_80_columns_on_a_terminal(tmp_path, capsys, monkeypatch):
    """The command itself: rich reads COLUMNS and (FORCE_COLOR: a terminal) from the environment."""
    st = tmp_path / "st"
    rounds.init(small_lp(), st, Settings())
    rounds.step(Delta.vars(["x1"], cost=[2.5]), st)
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    output.console.__init__(**output.CONSOLE_OPTIONS)  # build the console again for this environment
    try:
        code, out, err = run_main(capsys, "history", "--state", st)
    finally:
        output.console.__init__(**output.CONSOLE_OPTIONS)
    assert code == 0 and err == ""  # the table is the answer: stdout
    out = re.sub(r"\x1b\[[0-9;]*m", "", out)  # styles (bold header) stay on a terminal without colour
    assert "…" not in out and "OPTIMAL" in out and "note: column(s)" in out
    table = out.split("note:")[0]
    assert max(len(ln) for ln in table.splitlines()) <= 80


@pytest.mark.parametrize("terminal", [True, False])
def test_a_blank_optional_column_takes_no_room_and_is_not_named_dropped(terminal):
    rows = _history_rows()
    for r in rows:
        r["compare"] = {}
    text, dropped = _render(_print_history, rows, 250, terminal=terminal)
    shown, _ = _table(text, [c[0] for c in HISTORY_COLUMNS])
    assert "compare (time / copter)" not in shown and dropped == [] and "note:" not in text
    _, d80 = _render(_print_history, rows, 80, terminal=terminal)
    assert "compare (time / copter)" not in d80


def test_the_widest_cells_have_the_whole_tables_natural_width():
    """``fit`` measures one row of each column's widest cell (session 58: measuring 3,000 rows of history took
    10 s); the width must be the whole table's, wide characters and names made printable included."""
    import random

    from rich.console import Console

    from copter_cli.table_fit import _build, _widest, natural_width

    rng = random.Random(5)
    alphabet = ["a", "7", "-", "é", "界", "\t", "\u200b", "OPTIMAL", "1.5e-07"]
    console = Console(width=80)
    columns = [Column(f"c{i}", "right" if i % 2 else "left", i % 3) for i in range(6)]
    for _ in range(50):
        rows = [["".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 6))) for _ in columns]
                for _ in range(rng.randrange(1, 30))]
        keep = list(range(len(columns)))
        assert natural_width(_build(columns, _widest(rows), keep, {}), console) == \
            natural_width(_build(columns, rows, keep, {}), console), rows


@pytest.mark.parametrize("terminal,width", [(False, 80), (True, 200), (True, 80), (True, 40)])
def test_a_long_table_is_printed_as_rich_prints_it(monkeypatch, terminal, width):
    """From FAST_ROWS rows on, the body rows are laid out without rich (3,000 rounds' history: 3-5 s -> 0.14 s): the
    output is rich's own, character for character, styles, dropped columns and wide cells included."""
    import random

    from copter_cli import table_fit

    rng = random.Random(width)
    rows = _history_rows() * 30  # 360 rows
    for i, r in enumerate(rows):
        r = rows[i] = {**r, "round": i, "current": i == len(rows) - 1}
        if rng.random() < 0.2:
            r["compare"] = {"highs": {"time_ratio": rng.choice([1.5, 120.0, None])}, "pop-\u00e9\u4e2d": {"time_ratio": 0.5}}
        if rng.random() < 0.1:
            r["objective"] = rng.choice([None, 1e300, -0.0])

    def render():
        buf = io.StringIO()
        con = Console(file=buf, width=width, force_terminal=terminal, color_system="standard" if terminal else None)
        dropped = _print_history(rows, con, terminal)
        return buf.getvalue(), dropped

    laid_out = []
    row_line = table_fit._row_line
    monkeypatch.setattr(table_fit, "_row_line", lambda *a: laid_out.append(1) or row_line(*a))
    fast = render()
    assert len(laid_out) > len(rows)  # the fast path ran, not its fallback
    monkeypatch.setattr(table_fit, "FAST_ROWS", 10**9)
    slow = render()
    assert fast == slow
    assert fast[0].count("\n") > len(rows)


def test_a_recording_or_capturing_console_keeps_every_row_of_a_long_table():
    from rich import box

    from copter_cli.table_fit import FAST_ROWS, Column, print_fitted

    rows = [[str(i), "OPTIMAL"] for i in range(FAST_ROWS + 3)]
    cols = [Column("round"), Column("status", "left")]
    con = Console(width=100, record=True, file=io.StringIO())
    print_fitted(cols, rows, console=con, terminal=True, box=box.SIMPLE_HEAD)
    assert con.export_text().count("OPTIMAL") == len(rows)
    con = Console(width=100, file=io.StringIO())
    with con.capture() as cap:
        print_fitted(cols, rows, console=con, terminal=True, box=box.SIMPLE_HEAD)
    assert cap.get().count("OPTIMAL") == len(rows)
