"""The stderr consoles of the CLI's tables (``copter_cli.output.wide_console`` / ``table_console``): off a
terminal (a log, a pipe: rich assumes 80 columns) a round report or compare's notes are printed at least 160 /
180 columns wide, so a long path or note line is not folded at 80; the console writes where the shared one
does, with its NO_COLOR."""

from __future__ import annotations

import io

from rich.console import Console

from copter_cli import output


def test_round_report_off_a_terminal_keeps_a_long_path_on_one_line(capsys):
    from copter_cli.cmd_state import _print_report

    path = "/srv/" + "a-state-folder-with-a-long-name/" * 3 + "gen-000001/solution.parquet"  # 130 columns
    _print_report({"round": 1, "status": "OPTIMAL", "solution_path": path})
    err = capsys.readouterr().err
    assert any(path in line for line in err.splitlines()), err


def test_table_console_is_the_shared_console_widened_off_a_terminal(capsys):
    wide = output.table_console(180)
    assert not output.console.is_terminal and wide.width == max(output.console.width, 180)
    wide.print("x" * 150)
    assert capsys.readouterr().err == "x" * 150 + "\n"  # one line: not folded at 80


def test_wide_console_takes_the_file_and_no_color_of_the_console_it_is_like():
    buf = io.StringIO()
    like = Console(file=buf, width=30, no_color=True)
    wide = output.wide_console(200, like, force_terminal=True)
    assert wide.file is buf and wide.no_color and wide.width == 200 and wide.is_terminal
