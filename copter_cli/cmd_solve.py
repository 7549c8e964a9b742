"""``copter solve PROBLEM``: one-shot solve of an LP (or MILP) file, no state.

Reads ``.mps``/``.mps.gz``/``.parquet`` with ``formats.io.read_problem``, solves with
``solver.api.solve_problem`` (LP core; MILPs go through integerization), prints a HiGHS-style summary
(the answer, on stdout; with ``--json`` on stderr after the JSON) and, on a terminal, a live progress line for
solves longer than two seconds (``copter_cli.progress``); ``--json`` prints the report of
docs/DESIGN.md "CLI contract and round report" on stdout, ``-o FILE`` writes variables (name, value, reduced_cost) to FILE and
constraints (name, activity, dual) to FILE with suffix ``.duals.parquet``. Exit code by status
(``copter_cli.exit_codes.for_status``); a failed solve's reason is also an error line on stderr.
"""

from __future__ import annotations

import time
from pathlib import Path

import typer

from copter_cli import solver_options as opts

JSON_OPT = typer.Option(False, "--json", help="Print one JSON object (the solve report) on stdout.")
DEBUG_OPT = typer.Option(False, "--debug", help="Show a traceback on errors.")


def duals_path_for(path: Path) -> Path:
    """FILE.parquet -> FILE.duals.parquet (any other suffix: FILE + .duals.parquet)."""
    name = path.name
    stem = name[: -len(".parquet")] if name.endswith(".parquet") else name
    return path.with_name(stem + ".duals.parquet")


def check_solution_name(path: Path) -> None:
    """``solve -o`` writes the solution as Parquet: a name ending in .parquet or .pq, as ``export -o`` tells a
    file's format by its extension (``formats.io.kind_of``).

    Raises:
        UsageError: any other name (``sol.mps`` was written as Parquet under the .mps name), naming ``-o``.
    """
    from formats.io import kind_of
    from solver.model.errors import UsageError

    try:
        kind = kind_of(path)
    except UsageError:
        kind = None
    if kind != "parquet":
        raise UsageError("-o writes the solution as Parquet: name it .parquet or .pq (MPS holds "
                         "models, not solutions; `copter convert PROBLEM model.mps` writes the model)", file=str(path))


def report_for(problem, result, seconds: dict) -> dict:
    """The JSON report of a one-shot solve (docs/DESIGN.md "CLI contract and round report", without round and paths)."""
    rep = {
        "status": result.status.name,
        "objective": float(result.objective),
        "dual_objective": float(result.dual_objective),
        "iterations": int(result.iterations),
        "seconds": {k: round(float(v), 6) for k, v in seconds.items()},
        "primal_residual_rel": float(result.primal_residual_rel),
        "dual_residual_rel": float(result.dual_residual_rel),
        "gap_rel": float(result.gap_rel),
        "max_row_violation": float(result.max_row_violation),
        "point_feasible": bool(result.point_feasible),
        "warm_started": bool(result.warm_started),
        "engine": result.engine or None, "engine_reason": result.engine_reason or None,  # solver.lp.engine_choice
        "n_rows": problem.n_rows, "n_cols": problem.n_cols, "nnz": problem.nnz,
        "message": result.message,
    }
    if result.mip is not None:
        rep["lp_bound"] = float(result.mip.get("lp_bound", result.dual_objective))
        rep["gap_rel"] = float(result.mip.get("gap_rel", result.gap_rel))
        rep["mip"] = result.mip
        if not result.point_feasible:  # the rounded point violates rows: its objective means nothing
            rep["objective"] = None
    if result.status.is_model_failure:  # infeasible / unbounded: the last iterate's objectives mean nothing,
        # nor their gap (box1, PRIMAL_INFEASIBLE: gap_rel 0.99998 beside null objectives; a user's trial), nor a MILP's
        # bound (as a round's report: formats.reports)
        rep["objective"] = rep["dual_objective"] = rep["gap_rel"] = None
        if "lp_bound" in rep:
            rep["lp_bound"] = None
            rep["mip"] = {**rep["mip"], "lp_bound": None, "gap_rel": None}  # the same numbers, as in the summary
    if getattr(result, "iis", None) is not None:
        rep["iis"] = result.iis  # an infeasible model's conflicting rows and bounds (solver.highs_bridge.find_iis)
    return rep


def _summary(console, path: Path, problem, result, rep: dict) -> None:
    """HiGHS-style summary block on ``console``: stdout, or stderr after ``--json``'s report."""
    from copter_cli.printable import printable

    sec = rep["seconds"]
    lines = [
        f"Model {printable(path.name)}: {problem.n_rows} rows, {problem.n_cols} columns, {problem.nnz} nonzeros"
        + (f", {int(problem.integrality.sum())} integer" if problem.is_mip else ""),
        f"Model status        : {result.status.name}",
        ("Objective value     : - (no integer-feasible point)" if result.mip is not None
         and not result.point_feasible else "Objective value     : - (the model has no optimum)"
         if result.status.is_model_failure else f"Objective value     : {result.objective:.12g}"),
        ("Dual objective      : -" if result.status.is_model_failure else
         f"Dual objective      : {result.dual_objective:.12g}"),
        ("Relative gap        : -" if result.status.is_model_failure else
         f"Relative gap        : {rep['gap_rel']:.2e}"),
        f"Rel. primal residual: {result.primal_residual_rel:.2e}   max row violation {result.max_row_violation:.2e}",
        f"Rel. dual residual  : {result.dual_residual_rel:.2e}",
        f"Iterations          : {result.iterations}",
        "Seconds             : " + "  ".join(f"{k} {v:.3f}" for k, v in sec.items()),
    ]
    if result.message:
        lines.append(f"Message             : {printable(result.message)}")  # names: one line
    console.print("\n".join(lines), markup=False, highlight=False, soft_wrap=True)


@opts.with_solver_options
def solve_cmd(
    problem_path: Path = typer.Argument(..., metavar="PROBLEM", help="Problem file: .mps, .mps.gz or .parquet."),
    output: Path | None = typer.Option(None, "-o", "--output",
                                       help="Write variables here (Parquet: .parquet or .pq) and constraints to *.duals.parquet."),
    solver: opts.GivenOptions = None,
    json_out: bool = JSON_OPT,
    debug: bool = DEBUG_OPT,
) -> None:
    """Solve one LP/MILP file from scratch (no state).

    A HiGHS-style summary on stdout; --json prints the report there instead and the summary on stderr."""
    from copter_cli.output import run

    run(json_out, debug, lambda: _solve(problem_path, output, solver, json_out))


def _solve(problem_path: Path, output: Path | None, solver: opts.GivenOptions, json_out: bool) -> int:
    """Body of ``copter solve``: read, solve, write ``-o``, report; returns the exit code of the status."""
    from copter_cli.exit_codes import for_status
    from copter_cli.output import answering, console, print_json
    from copter_cli.progress import SolveProgress
    from formats.io import read_problem
    from solver.api import solve_problem

    settings = solver.settings()
    if output is not None:  # refuse an unwritable -o before solving
        from solver.rounds.outputs import check_output_file

        check_output_file(output, "-o", inputs=(("PROBLEM", problem_path),))  # a folder, a missing one, ...
        check_solution_name(output)
        check_output_file(duals_path_for(output), "-o (duals)", inputs=(("PROBLEM", problem_path),))
    from copter_cli.cmd_prepare import ensure_prepared

    ensure_prepared()  # kernels compiled (with the progress line) before the solve, as init does: none mid-solve
    from formats.read_notes import collect

    t0 = time.perf_counter()
    with collect() as notes:  # the reader's warnings: stderr as before, and the JSON's "warnings"
        problem = read_problem(problem_path)
    notes = [*notes, *_unread_milp_options(solver, problem, problem_path)]
    if notes:
        from copter_cli.output import say_warnings

        say_warnings({"warnings": notes})
    t1 = time.perf_counter()
    with SolveProgress(settings.time_limit_seconds, enabled=not solver.verbose):
        result = solve_problem(problem, settings)
    t2 = time.perf_counter()
    from solver.rounds.limit_warning import time_limit_gap_warning

    late = time_limit_gap_warning(result, settings, None)  # a MILP stopped above its --mip-gap, as init says
    if late:
        from copter_cli.output import say_warnings

        say_warnings({"warnings": late})
        notes = [*notes, *late]
    seconds = {"load": t1 - t0}
    seconds.update({k: v for k, v in result.seconds.items() if k != "total"})
    seconds["solve"] = t2 - t1
    if output is not None:
        from formats import undo
        from formats.faults import environment_faults
        from formats.reports import duals_table, solution_table, write_parquet
        from solver.model.errors import EnvironmentFaultError

        with environment_faults(output, destination=True):  # disk full etc.: exit 7 naming -o
            write_parquet(output, solution_table(problem.col_names, result.x, result.reduced_cost))
        undo.wrote(str(output))  # a stdout closed later: its error says the files are written
        try:
            with environment_faults(duals_path_for(output), destination=True):
                write_parquet(duals_path_for(output), duals_table(problem.row_names, result.row_activity, result.y))
        except EnvironmentFaultError as err:  # the solution file is complete: say so, as a failed stdout does
            err.message += f"; {output} is written (the solution file)"
            err.context = {**(err.context or {}), "written": [str(output)]}
            raise
        undo.wrote(str(duals_path_for(output)))
        seconds["write"] = time.perf_counter() - t2
    seconds["total"] = time.perf_counter() - t0
    rep = report_for(problem, result, seconds)
    if notes:
        rep["warnings"] = notes
    if output is not None:
        rep["solution_path"] = str(output)
        rep["duals_path"] = str(duals_path_for(output))
    if json_out:  # the JSON is the answer; the summary follows it on stderr
        print_json(rep)
        _summary(console, problem_path, problem, result, rep)
    else:  # the summary is the answer: stdout
        with answering():
            _summary(console, problem_path, problem, result, rep)
    code = for_status(result.status)
    if code:  # a failed solve says why on stderr, as every non-zero exit does (docs/DESIGN.md, CLI contract)
        from copter_cli.output import say_error

        say_error(f"error (solve_failed, exit {code}): {problem_path.name} ended {result.status.name}: "
                  f"{result.message or 'no usable point'}")
    return code


def _unread_milp_options(solver: opts.GivenOptions, problem, path: Path) -> list[str]:
    """The warning (a list of at most one) that MILP-only options were given for a model without integer
    columns, which none of them reaches (``solver.rounds.unread_options.milp_only_warning``, as init and step
    say it): ``solve lp.mps --mip-gap 0.1`` said nothing. A warning, not an error: one command line may be run
    over a batch of LPs and MILPs."""
    if problem.is_mip:
        return []
    from copter_cli.printable import printable
    from solver.rounds.unread_options import milp_only_warning

    return milp_only_warning(solver.milp_only(), False, printable(path.name), None)


def register(app: typer.Typer) -> None:
    """Add ``copter solve`` to the app."""
    app.command("solve")(solve_cmd)
