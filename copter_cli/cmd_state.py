"""The stateful commands: ``copter init``, ``step``, ``show``, ``history``, ``rollback``, ``export``.

Thin wrappers over ``solver.rounds``; ``--state`` defaults to ``$COPTER_STATE`` or ``./copter-state``.
``--json`` prints the round report (or the command's result) as one plain JSON object on stdout; human
output is a rich table on stderr. Exit codes: ``copter_cli.exit_codes`` (a failed round exits with the
code of its status, a no-op re-apply with 0).
"""

from __future__ import annotations

from pathlib import Path

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from copter_cli import exit_codes
from copter_cli import solver_options as opts
from copter_cli.output import console, print_json, run, say
from formats.checkpoint import StateStore
from solver import rounds

STATE_HELP = "State directory (default: $COPTER_STATE or ./copter-state)."
ROUND_HELP = "A kept round instead of the current one (a round that is not kept: exit 2)."


def _state(state: Path | None) -> Path:
    return state if state is not None else rounds.default_state_dir()


def _wide() -> Console:
    """The stderr console, or (when stderr is not a terminal, where rich assumes 80 columns) a wider one so
    tables are not truncated in logs."""
    return console if console.is_terminal else Console(stderr=True, width=160, highlight=False)


def _fmt(v, spec: str = ".6g") -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return format(v, spec)
    return str(v)


def _print_report(report: dict) -> None:
    """Human summary of a round report on stderr."""
    t = Table(title=f"copter round {report.get('round', '?')}", show_header=False, box=None)
    for key in ("status", "objective", "lp_bound", "gap_rel", "iterations", "warm_started",
                "primal_residual_rel", "dual_residual_rel", "changed_variables", "solution_path",
                "duals_path", "changes_path"):
        if key in report:
            t.add_row(key, _fmt(report[key]))
    sec = report.get("seconds") or {}
    if sec:
        t.add_row("seconds", "  ".join(f"{k} {_fmt(sec.get(k), '.3f')}" for k in
                                       ("load", "apply", "solve", "integerize", "save", "total")))
    _wide().print(t)
    for w in report.get("warnings") or []:
        console.print(f"[yellow]warning[/]: {escape(str(w))}")
    if report.get("message"):
        console.print(report["message"], markup=False)


def _finish(report: dict, json_out: bool) -> int:
    if json_out:
        print_json(report)
    else:
        _print_report(report)
    return exit_codes.for_report(report)


def register(app: typer.Typer) -> None:
    """Add init, step, show, history, rollback and export to the app."""

    @app.command()
    def init(
        base: Path = typer.Argument(..., metavar="BASE", help="Base problem: MPS (.mps, .mps.gz) or Parquet problem file."),
        state: Path | None = typer.Option(None, "--state", envvar="COPTER_STATE", help=STATE_HELP),
        keep: int = typer.Option(5, "--keep", help="Number of round generations to keep."),
        out: Path | None = typer.Option(None, "--out", help="Also copy the round's outputs into this folder."),
        tol: float | None = opts.TOL,
        time_limit: float | None = opts.TIME_LIMIT,
        iteration_limit: int | None = opts.ITERATION_LIMIT,
        integer_fallback: str | None = opts.INTEGER_FALLBACK,
        integer_fallback_seconds: float | None = opts.INTEGER_FALLBACK_SECONDS,
        integer_fallback_gap: float | None = opts.INTEGER_FALLBACK_GAP,
        submip_seconds: float | None = opts.SUBMIP_SECONDS,
        submip_gap: float | None = opts.SUBMIP_GAP,
        relaxation_tol: float | None = opts.RELAXATION_TOL,
        relaxation_round_iterations: int | None = opts.RELAXATION_ROUND_ITERATIONS,
        mip_gap: float | None = opts.MIP_GAP,
        presolve: str | None = opts.PRESOLVE_OPT,
        verbose: bool = opts.VERBOSE,
        json_out: bool = typer.Option(False, "--json", help="Print the round report as JSON on stdout."),
        debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
    ) -> None:
        """Create a state directory from BASE and solve round 0.

        The solver options given here are stored for later steps."""

        def body():
            settings = opts.settings_with(
                tol=tol, time_limit=time_limit, iteration_limit=iteration_limit, integer_fallback=integer_fallback,
                integer_fallback_seconds=integer_fallback_seconds, integer_fallback_gap=integer_fallback_gap, submip_seconds=submip_seconds, submip_gap=submip_gap,
                relaxation_tol=relaxation_tol, relaxation_round_iterations=relaxation_round_iterations,
                mip_gap=mip_gap, presolve=presolve, verbose=verbose)
            return _finish(rounds.init(base, _state(state), settings, keep, out), json_out)

        run(json_out, debug, body)

    @app.command()
    def step(
        delta: Path = typer.Argument(..., metavar="DELTA", help="Delta Parquet file (copter.base_round = current round)."),
        state: Path | None = typer.Option(None, "--state", envvar="COPTER_STATE", help=STATE_HELP),
        force: bool = typer.Option(False, "--force", help="Apply even if copter.base_round does not match."),
        accept_failed: bool = typer.Option(False, "--accept-failed",
                                           help="Advance CURRENT even if the round is infeasible/limited."),
        out: Path | None = typer.Option(None, "--out", help="Also copy the round's outputs into this folder."),
        tol: float | None = opts.TOL,
        time_limit: float | None = opts.TIME_LIMIT,
        iteration_limit: int | None = opts.ITERATION_LIMIT,
        integer_fallback: str | None = opts.INTEGER_FALLBACK,
        integer_fallback_seconds: float | None = opts.INTEGER_FALLBACK_SECONDS,
        integer_fallback_gap: float | None = opts.INTEGER_FALLBACK_GAP,
        submip_seconds: float | None = opts.SUBMIP_SECONDS,
        submip_gap: float | None = opts.SUBMIP_GAP,
        relaxation_tol: float | None = opts.RELAXATION_TOL,
        relaxation_round_iterations: int | None = opts.RELAXATION_ROUND_ITERATIONS,
        mip_gap: float | None = opts.MIP_GAP,
        presolve: str | None = opts.PRESOLVE_OPT,
        verbose: bool = opts.VERBOSE,
        json_out: bool = typer.Option(False, "--json", help="Print the round report as JSON on stdout."),
        debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
    ) -> None:
        """Apply DELTA, re-solve warm, store the next round.

        Solver options given here override the ones stored by init for this round only."""

        def body():
            st = _state(state)
            given = dict(tol=tol, time_limit=time_limit, iteration_limit=iteration_limit,
                         integer_fallback=integer_fallback, integer_fallback_seconds=integer_fallback_seconds,
                         integer_fallback_gap=integer_fallback_gap, submip_seconds=submip_seconds, submip_gap=submip_gap, relaxation_tol=relaxation_tol,
                         relaxation_round_iterations=relaxation_round_iterations, mip_gap=mip_gap,
                         presolve=presolve, verbose=verbose)
            settings = None
            if opts.given(**given):
                stored = rounds.settings_from_json(StateStore(st).config().get("settings"))
                settings = opts.settings_with(stored, **given)
            return _finish(rounds.step(delta, st, settings, force, accept_failed, out), json_out)

        run(json_out, debug, body)

    @app.command()
    def show(
        round_: int | None = typer.Option(None, "--round", help=ROUND_HELP),
        state: Path | None = typer.Option(None, "--state", envvar="COPTER_STATE", help=STATE_HELP),
        json_out: bool = typer.Option(False, "--json", help="Print the round's report as JSON."),
        debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
    ) -> None:
        """Show the current (or a kept) round's report.

        For the current round also the last failed round, if any."""

        def body():
            report = rounds.show(_state(state), round_)
            if json_out:
                print_json(report)
            else:
                _print_report(report)
                if "last_failed" in report:
                    lf = report["last_failed"]
                    console.print(f"[yellow]last failed round[/]: {lf.get('round')} {lf.get('status')}: "
                                  f"{escape(str(lf.get('message', '')))}")
            return 0

        run(json_out, debug, body)

    @app.command()
    def history(
        state: Path | None = typer.Option(None, "--state", envvar="COPTER_STATE", help=STATE_HELP),
        json_out: bool = typer.Option(False, "--json", help="Print {\"rounds\": [...]} as JSON."),
        debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
    ) -> None:
        """Table of the kept and failed rounds.

        Status, objective, iterations, seconds per phase."""

        def body():
            rows = rounds.history(_state(state))
            if json_out:
                print_json({"rounds": rows})
                return 0
            t = Table(title="copter history", box=box.SIMPLE_HEAD)
            for col in ("round", "", "status", "objective", "iters", "warm", "changed", "load", "apply",
                        "solve", "integ.", "save", "total"):
                t.add_column(col, justify="left" if col in ("", "status") else "right")
            for r in rows:
                s = r["seconds"] or {}
                mark = "*" if r["current"] else ("failed" if r["kind"] == "failed" else "")
                t.add_row(_fmt(r["round"]), mark, _fmt(r["status"]), _fmt(r["objective"]),
                          _fmt(r["iterations"]), _fmt(r["warm_started"]), _fmt(r["changed_variables"]),
                          *[_fmt(s.get(k), ".3f") for k in ("load", "apply", "solve", "integerize", "save",
                                                            "total")])
            _wide().print(t)
            return 0

        run(json_out, debug, body)

    @app.command()
    def rollback(
        to: int | None = typer.Option(None, "--to", help="Kept round to make current (default: the one before the "
                                                         "current round; a later kept round moves forward again)."),
        state: Path | None = typer.Option(None, "--state", envvar="COPTER_STATE", help=STATE_HELP),
        json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
        debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
    ) -> None:
        """Make another kept round current (default: the previous one).

        Later rounds stay on disk, so --to can move forward again, until the next step starts a new branch and
        moves them into STATE/abandoned/."""

        def body():
            res = rounds.rollback(_state(state), to)
            if json_out:
                print_json(res)
            else:
                say(res["message"])
            return 0

        run(json_out, debug, body)

    @app.command()
    def export(
        output: Path | None = typer.Option(None, "-o", "--output",
                                           help="Output file: .mps/.mps.gz (MPS) or .parquet (default: round-NNNNNN.mps in the "
                                                "current folder, e.g. round-000003.mps)."),
        round_: int | None = typer.Option(None, "--round", help=ROUND_HELP),
        state: Path | None = typer.Option(None, "--state", envvar="COPTER_STATE", help=STATE_HELP),
        json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
        debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
    ) -> None:
        """Write the current (or a kept) round's problem to a file.

        MPS or Parquet, by the output's extension."""

        def body():
            res = rounds.export(_state(state), output, round_)
            if json_out:
                print_json(res)
            else:
                say(f"round {res['round']}: wrote {res['output']} ({res['n_cols']} variables, "
                    f"{res['n_rows']} constraints, {res['nnz']} nonzeros)")
            return 0

        run(json_out, debug, body)
