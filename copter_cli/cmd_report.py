"""``copter report``: the rounds of a state as one self-contained HTML page (charts inline), and with
``--png DIR`` the charts as image files. The work is in :func:`solver.rounds.report.write_report`; this
module parses options and prints. Without matplotlib (the optional extra ``plot``) it exits 8 naming
how to install it (``solver.extras.install_hint``).
"""

from __future__ import annotations

from pathlib import Path

import typer

from copter_cli.output import emit, run, say, say_warnings
from copter_cli.solver_options import range_help
from copter_cli.state_option import STATE_HELP


def _say(res: dict) -> None:
    extra = f" and {len(res['png'])} PNG charts in {Path(res['png'][0]).parent}" if res["png"] else ""
    rounds = f"{res['rounds']} round{'' if res['rounds'] == 1 else 's'}"
    if res.get("rows", res["rounds"]) != res["rounds"]:  # a failed round stepped again is a row of its own
        rounds += f" in {res['rows']} rows"
    say(f"wrote {res['output']}{extra}: {rounds} ({res['failed']} failed) in "
        f"{res['seconds']:.2f} s; open it in a browser (it needs no network)")
    say_warnings(res)  # a damaged CURRENT, as `copter history` says it (also on the page)


def report_cmd(
    output: Path = typer.Option(Path("report.html"), "-o", "--output", help="HTML file to write."),
    png: Path | None = typer.Option(None, "--png", help="Also write the charts as PNG files into this folder."),
    last: int | None = typer.Option(
        None, "--last", help="Only the newest N rounds, every row of each (a failed attempt and the round stepped "
                             "after it)." + range_help(1)),
    state: Path | None = typer.Option(None, "--state", envvar="COPTER_STATE", help=STATE_HELP),
    json_out: bool = typer.Option(False, "--json", help="Print the result (files written, rounds) as JSON."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
) -> None:
    """Write an HTML page of the rounds: charts and a table.

    Round time by phase, objective and gap, warm vs cold iterations, churn, failed rounds; one offline
    file. Needs matplotlib, the optional extra plot (pip install '.[plot]' from a checkout; exit 8
    without it). An unusable CURRENT is
    a warning on stderr, in the --json result's "warnings" and on the page, as in history."""

    def body() -> int:
        from solver.rounds.report import write_report

        return emit(write_report(state, output, png, last), json_out, _say)

    run(json_out, debug, body)


def register(app: typer.Typer) -> None:
    """Add ``report`` to the app."""
    app.command("report")(report_cmd)
