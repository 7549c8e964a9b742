"""``show``'s views on a narrow terminal and on ``TERM=dumb`` (helper-236, session 59): at 40 columns ``show
--solution`` cut sums across two lines ("130.6" over "6") and rich dropped a move table's name column altogether,
``show`` cut field names and paths with an ellipsis; with ``TERM=dumb`` (Emacs' shell) rich assumed 80 columns
whatever ``COLUMNS`` or the terminal said."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from copter_cli import output

NUMBERS = ("130.66", "129.359", "89.4337", "47.7083", "-41.7254", "123457")
NAMES = ("d19-0/p1", "d18-5/p0", "d14-0", "d7-14")


@pytest.fixture
def terminal(monkeypatch):
    """The shared console as a 40-column terminal writing into a buffer."""
    buf = io.StringIO()
    con = Console(file=buf, width=40, force_terminal=True, color_system=None, highlight=False)
    monkeypatch.setitem(output.console.__dict__, "_console", con)
    return buf


def test_numbers_names_and_kinds_stay_whole_at_40_columns(terminal):
    from copter_cli.allocation_view import _print_moves, print_allocation

    moves = [{"name": "d19-0/p1", "kind": "value_changed", "old": 89.4337, "new": 47.7083, "delta": -41.7254},
             {"name": "d18-5/p0", "kind": "value_changed", "old": 123456.789, "new": 6.36122, "delta": -29.9041}]
    print_allocation({"round": 1, "status": "OPTIMAL", "objective": 1.0, "n_nonzero": 3, "n_variables": 9,
                      "zero_tol": 1e-4, "sum": 260.0, "n_clients": 2, "clients_omitted": 0,
                      "clients": [{"client": "d14-0", "nonzero": 2, "sum": 130.66, "share": 0.5,
                                   "top": [{"name": "d14-0/p0", "value": 82.15}]},
                                  {"client": "d7-14", "nonzero": 1, "sum": 129.359, "share": 0.5,
                                   "top": [{"name": "d7-14/p0", "value": 129.359}]}]})
    _print_moves(1, {"previous_round": 0, "changed_variables": 2, "vars_added": 0, "vars_removed": 0,
                     "vars_moved": 2, "cons_added": 0, "cons_removed": 0, "moves": moves, "moves_omitted": 0,
                     "zero_moves": 0})
    out = terminal.getvalue()
    words = set(out.split())
    for cell in (*NUMBERS, *NAMES, "value_changed", "-29.9041"):
        assert cell in words, (cell, out)
    assert "\u2026" not in out


def test_the_round_report_folds_a_path_and_never_cuts_a_field_name(terminal):
    from copter_cli.cmd_state import _print_report

    path = "gen-000001/solution.parquet"
    _print_report({"round": 1, "status": "OPTIMAL", "primal_residual_rel": 2.46158e-05, "solution_path": path})
    out = terminal.getvalue()
    assert "\u2026" not in out and "primal_residual_rel" in out.split() and "2.46158e-05" in out.split()
    lines = [ln for ln in out.splitlines() if ln.strip()]
    start = next(i for i, ln in enumerate(lines) if "solution_path" in ln)
    column = lines[start].index(lines[start].split()[1])  # where the value starts
    assert "".join(ln[column:].strip() for ln in lines[start:]) == path  # folded onto the next lines, whole


@pytest.mark.parametrize("env,width", [({"TERM": "dumb", "COLUMNS": "200"}, 200), ({"TERM": "xterm", "COLUMNS": "200"}, 200),
                                       ({"TERM": "dumb", "COLUMNS": "57"}, 57)])
def test_a_dumb_terminal_takes_its_width_from_columns(env, width):
    con = output.rich_console(file=io.StringIO(), force_terminal=True, _environ=env)
    assert con.is_dumb_terminal == (env["TERM"] == "dumb")
    assert con.width == width
