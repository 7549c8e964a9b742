"""The stateful commands: ``copter init``, ``step``, ``show``, ``history``, ``rollback``, ``export``.

Thin wrappers over ``solver.rounds``; ``--state`` defaults to ``$COPTER_STATE`` or ``./copter-state``.
``--json`` prints the round report (or the command's result) as one plain JSON object on stdout; human
output is a rich table on stdout too. Exit codes: ``copter_cli.exit_codes`` (a failed round exits with the
code of its status and says why in an error line on stderr, a no-op re-apply with 0).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from copter_cli import exit_codes
from copter_cli import solver_options as opts
from copter_cli.output import console, emit, run, say, say_error, say_warnings, table_console
from copter_cli.printable import printable
from copter_cli.state_option import STATE_HELP, refuse_absent_state
from solver.extras import needs
from solver.model.errors import CopterError, UsageError
from solver.partition.limits import MAX_PASSES
from solver.partition.small import INLINE_BELOW_NNZ, SMALL_LP_NNZ

if TYPE_CHECKING:
    from rich.console import Console

# rich, solver.rounds and formats.checkpoint are imported where used: `copter --help` imports every command
# module, and `rollback` or `export` print no table (issue #15: start-up)

ROUND_HELP = "A kept round instead of the current one (a round that is not kept: exit 2)." + opts.range_help(0)


def _rounds():
    """The ``solver.rounds`` library (imported on first use)."""
    from solver import rounds

    return rounds


def _state(state: Path | None) -> Path:
    return state if state is not None else _rounds().default_state_dir()


def _fmt(v, spec: str = ".6g") -> str:
    if v is None or (isinstance(v, float) and v != v):  # NaN: not applicable, shown as any empty field
        return "-"
    if isinstance(v, float):
        return format(v, spec)
    return printable(str(v))  # a path or name: one table row, one line


def _print_report(report: dict, news: list[str] | None = None, message: bool = True) -> None:
    """Human summary of a round report (on stdout: :func:`copter_cli.output.emit`; a no-op re-apply: its
    one-line message). The report's ``warnings`` are ``warning:`` lines (a round just made: news), or, with ``news`` given (``show``: a stored
    round), rows of the table (facts of that round) and only ``news`` are ``warning:`` lines. ``message`` False:
    the report's message is not printed (a failed round's, which :func:`_round_failure` prints on stderr)."""
    if report.get("no_op"):
        console.print(printable(report.get("message", "nothing done")), markup=False)
        say_warnings(report)  # an unusable CURRENT: the current round is the newest complete generation
        return
    from rich.table import Table

    t = Table(title=f"copter round {report.get('round', '?')}", show_header=False, box=None)
    # a narrow terminal folds a value (a path, the seconds) onto more lines; a field's name is never cut
    # (at 40 columns both were cut with an ellipsis: "primal_residual_r…", "gen-000001/soluti…"; helper-236)
    t.add_column(no_wrap=True, min_width=len("primal_residual_rel"))
    t.add_column(overflow="fold")
    for key in ("status", "objective", "lp_bound", "gap_rel", "engine", "iterations", "warm_started",
                "primal_residual_rel", "dual_residual_rel", "changed_variables", "solution_path",
                "duals_path", "changes_path"):
        if key in report:
            t.add_row(key, _fmt(report[key]))
    sec = report.get("seconds") or {}
    if sec:
        t.add_row("seconds", "  ".join(f"{k} {_fmt(sec.get(k), '.3f')}" for k in
                                       ("wait", "load", "apply", "kernels", "solve", "integerize", "save",
                                        "total")))
    if news is not None:
        from rich.text import Text

        for i, w in enumerate(report.get("warnings") or []):  # user text (paths): never markup
            t.add_row("warnings" if i == 0 else "", Text(printable(str(w))))
    table_console(160).print(t)
    if news is None and "error" in report:  # a failed --out copy: its error line follows, not also a warning
        news = [w for w in report.get("warnings") or [] if w != report["error"].get("message")]
    say_warnings(report if news is None else {"warnings": news})
    if message and report.get("message"):
        console.print(printable(report["message"]), markup=False)  # an IIS names rows and columns


def _round_failure(report: dict, code: int, current: bool = True) -> str | None:
    """The error line of a round report whose exit code is not 0, printed on stderr after the report in every
    mode, like any failing command's error. A failed round (exit 4 or 5: its status): ``error (round_failed,
    exit 5): round 1 ended ITERATION_LIMIT: ...; CURRENT stays at round 0 ...`` (the report's message, which
    names the round and the cause); a stored round whose ``--out`` copy failed (exit 7 or 2): its ``error``.
    None for exit 0. ``current``: False for a batch's round stored by ``--accept-failed`` that a later round of
    the batch replaced as current (its line said "stored as current")."""
    if code == exit_codes.OK:
        return None
    if "error" in report:
        return f"error ({report['error']['kind']}, exit {report['error']['code']}): {report['error']['message']}"
    round_ = report.get("round", "?")
    text = report.get("message") or "no usable point"
    if not text.startswith(f"round {round_} ended"):  # an accepted failed round's message is the solver's
        stored = ""
        if report.get("accepted"):
            where = "as current" if current else "(a later round of this batch is current)"
            stored = f" and was stored {where} (--accept-failed)"
        text = f"round {round_} ended {report.get('status') or 'without a status'}{stored}: {text}"
    return f"error (round_failed, exit {code}): {text}"


def _with_state_dir(obj: dict, st: Path) -> dict:
    """``obj`` plus ``state_dir``: the state directory's absolute path, which the reports' ``*_path`` fields are
    relative to (a cron job reading ``solution_path`` from ``--json`` had to know it; user trial 37)."""
    return {**obj, "state_dir": os.path.abspath(st)}


def _finish(report: dict, json_out: bool, st: Path | None = None) -> int:
    """Print a round report (JSON or the human table on stdout; an error line on stderr); its exit code. A
    failed round's reason is that error line (:func:`_round_failure`). A round stored but whose ``--out`` copy
    failed exits 7 (or 2): its JSON report then also carries ``error`` (code, kind, message saying the round is
    stored and current, file). ``st``: the state directory, named in the JSON (:func:`_with_state_dir`)."""
    code = exit_codes.for_report(report)
    report = report if st is None else _with_state_dir(report, st)
    report = _with_out_error(report, code)
    failure = _round_failure(report, code)
    emit(report, json_out, lambda r: _print_report(r, message=failure is None or "error" in r))
    if failure is not None:
        say_error(failure)
    return code


def _with_out_error(report: dict, code: int) -> dict:
    """The report plus ``error`` when its exit code comes from a failed ``--out`` copy."""
    oe = report.get("out_error")
    if not oe or code not in (exit_codes.ENVIRONMENT, exit_codes.USAGE):
        return report
    return {**report, "error": {"code": code, **oe}}


def _not_applied(report: dict, n_deltas: int | None) -> str:
    """What a batch's round report that stopped it (failed and not accepted, or its ``--out`` copy failed) adds to
    its error line when deltas after it were left: `` [delta K of N: PATH; delta(s) K+1..N not applied]``
    (the line alone named the round, not that the rest of the batch never ran); "" otherwise."""
    k = report.get("delta_index")
    if n_deltas is None or k is None or k >= n_deltas or not _stopped_batch(report):
        return ""
    rest = f"delta {n_deltas}" if k + 1 == n_deltas else f"deltas {k + 1}-{n_deltas}"
    return f" [delta {k} of {n_deltas}: {report.get('delta')}; {rest} not applied]"


def _stopped_batch(report: dict) -> bool:
    """A batch's round report that ended it: its round failed and was not accepted, or its ``--out`` copy failed
    (a round stored by ``--accept-failed`` lets the batch go on)."""
    return report.get("accepted") is False or "out_error" in report


def _finish_many(reports: list[dict], json_out: bool, stop: dict | None = None, n_deltas: int | None = None,
                 st: Path | None = None) -> int:
    """Print the reports of ``step`` with several deltas: JSON ``{"rounds": [report, ...], "current_round",
    "stopped_at"}`` (``stopped_at``: 1-based index of the delta whose round failed (not accepted) or whose
    --out copy failed, which stopped the batch, else null: a round stored by --accept-failed lets it go on), or one human table per round. Exit code: the first non-zero code of a report (the
    one that stopped the batch), else 0. ``stop``: what stopped the batch at a later delta, an error
    (:func:`_stop_of`) or an interrupt (:func:`_interrupted_many`): the same shape plus ``error`` (as a failed
    command's JSON error), its error line last, its exit code. When stdout refuses that answer (closed,
    full: exit 7), the stopping error still decides: its line and code, and a warning that the stored
    rounds' reports were not printed (the bad delta is what the user must fix; the rounds are stored).
    ``n_deltas``: the batch's number of deltas, so a round that stopped it says which were not applied. ``st``: the
    state directory, named in the JSON object (:func:`_with_state_dir`)."""
    codes = [exit_codes.for_report(r) for r in reports]
    reports = [_with_out_error(r, c) for r, c in zip(reports, codes, strict=True)]
    code = next((c for c in codes if c), exit_codes.OK)
    last = reports[-1] if reports else {}
    current = last.get("current_round") if last.get("accepted") is False or last.get("no_op") else last.get("round")
    stopped = next((r["delta_index"] for r, c in zip(reports, codes, strict=True) if c and _stopped_batch(r)), None)
    obj = {"rounds": reports, "current_round": current, "stopped_at": stopped}
    obj = obj if st is None else _with_state_dir(obj, st)
    failures = []
    for r, c in zip(reports, codes, strict=True):
        f = _round_failure(r, c, current=r.get("round") == current)
        failures.append(None if f is None else f + _not_applied(r, n_deltas))
    if stop is not None:
        from copter_cli.output import ERROR_PRINTED

        code = stop["error"]["code"]
        obj.update(current_round=stop["current_round"], stopped_at=stop["stopped_at"], error=stop["error"])
        failures.append(f"error ({stop['error']['kind']}, exit {code}): {stop['error']['message']}")
        ERROR_PRINTED.append(code)  # the command's error is printed (copter_cli.app.main adds none)
    if json_out:  # each round's warnings (emit sees only the top level)
        for r in reports:
            say_warnings(r)

    def human(_):
        for r, failure in zip(reports, failures, strict=False):  # failures: one more with an error
            say(f"delta {r.get('delta_index')}: {printable(str(r.get('delta')))}")
            _print_report(r, message=failure is None or "error" in r)
            if failure is not None:
                say_error(failure)
        if stop is not None:
            say_error(failures[-1])

    try:
        emit(obj, json_out, human)
    except CopterError as fault:  # stdout refused (closed, full): the error that stopped the batch decides
        if stop is None or exit_codes.for_error(fault) != exit_codes.ENVIRONMENT:
            raise
        for failure in filter(None, failures):  # the bad delta is what the user must fix: its line and code
            say_error(failure)
        say_warnings({"warnings": [f"{fault}; the reports of the rounds stored before it were not printed"]})
        return code
    if json_out:
        for failure in filter(None, failures):
            say_error(failure)
    return code


def _stop_of(error: CopterError) -> dict:
    """The error that stopped a batch of deltas (``solver.rounds.step_many`` attaches its stored rounds'
    ``reports`` and ``current_round``) as :func:`_finish_many` prints it: ``{"error": {"code", "kind",
    "message", ...its culprit and context}, "current_round", "stopped_at"}``."""
    code = exit_codes.for_error(error)
    extra = {k: v for k, v in error.to_dict().items() if k not in ("kind", "message")}
    return {"error": {"code": code, "kind": error.kind, "message": str(error), **extra},
            "current_round": error.current_round, "stopped_at": (error.context or {}).get("delta_index")}


def _interrupted_many(reports: list[dict], deltas: list, st: Path, json_out: bool, code: int, message: str) -> int:
    """An interrupt (exit ``code``, ``message`` from ``formats.undo``) that stopped ``step`` with several deltas
    after ``reports`` (the deltas done; their rounds are stored): printed as a batch stopped by an error
    (:func:`_finish_many`), the stored rounds' reports with the interrupted error, whose message and context
    name the interrupted delta as bad input's does. ``current_round``: CURRENT as it reads now."""
    from copter_cli.progress import silence
    from solver.rounds.loop import batch_stop

    silence()  # the live line (a terminal) neither redrawn between the reports nor left in front of them
    suffix, context = batch_stop(list(deltas), reports)
    stop = {"error": {"code": code, "kind": "interrupted", "message": message + suffix, **context},
            "current_round": _current_round(st), "stopped_at": context.get("delta_index")}
    return _finish_many(reports, json_out, stop=stop, st=st)


def _interrupted_one(report: dict, json_out: bool, st: Path, code: int, message: str) -> None:
    """An interrupt that ended ``step`` with one delta after its round was stored (delivered once CURRENT had moved,
    or during the log and pruning): the round's report as :func:`_finish` prints it, plus the interrupted error
    (exit ``code``, ``message`` from ``formats.undo``: "...; round N is stored and current"): JSON ``error``, and its
    line last on stderr. A script then has the stored round's objective, as a batch's stored rounds give theirs
    (helper-189 #2: exit 130 with an empty stdout)."""
    from copter_cli.output import ERROR_PRINTED
    from copter_cli.progress import silence

    silence()  # the live line (a terminal) not left in front of the report
    report = {**_with_state_dir(report, st), "error": {"code": code, "kind": "interrupted", "message": message}}
    emit(report, json_out, lambda r: _print_report(r, message=True))
    say_error(f"error (interrupted, exit {code}): {message}")
    ERROR_PRINTED.append(code)  # the command's error is printed


def _current_round(st: Path) -> int | None:
    """The round ``st``'s CURRENT names (one small read, no checks), None when unreadable."""
    try:
        text = (st / "CURRENT").read_text(encoding="ascii").strip()
    except (OSError, ValueError):
        return None
    return int(text) if text.isdigit() else None


STATE_OPT = typer.Option(None, "--state", envvar="COPTER_STATE", help=STATE_HELP)
OUT_OPT = typer.Option(None, "--out", help="Also copy the round's outputs into this folder.")
ROUND_OPT = typer.Option(None, "--round", help=ROUND_HELP)
REPORT_JSON_OPT = typer.Option(False, "--json", help="Print the round report as JSON on stdout.")
RESULT_JSON_OPT = typer.Option(False, "--json", help="Print the result as JSON.")
DEBUG_OPT = typer.Option(False, "--debug", help="Show tracebacks.")
WAIT_OPT = typer.Option(0.0, "--wait", metavar="SECONDS",
                        help="Wait up to SECONDS for another writer to release the state's lock instead of "
                             "exiting 6 at once (inf: wait as long as it takes)." + opts.range_help(0))
ROUND_WAIT_OPT = typer.Option(0.0, "--wait", metavar="SECONDS",
                              help="Wait up to SECONDS for another writer to release the state's lock instead of "
                                   "exiting 6 at once (inf: wait as long as it takes; at most until --time-limit, "
                                   "which the wait counts toward)." + opts.range_help(0))


def _check_wait(wait: float) -> None:
    """``--wait`` out of range: copter's usage error (exit 2)."""
    opts.check_range("--wait", wait, 0, what=opts.SECONDS_WHAT)


def _check_round(flag: str, round_: int | None) -> None:
    """A negative ``--round`` / ``--to``: the value's usage error, naming the option (exit 2), not "round -1 is not
    kept" (helper-184), as other numeric options are refused."""
    if round_ is not None:
        opts.check_range(flag, round_, 0)


@contextmanager
def _wait_within_limit(wait: float, settings):
    """Yields ``--wait`` cut at what ``--time-limit`` (``settings``' limit) leaves of the command's wall time
    (:mod:`solver.clock`; uncut without a command clock or a finite limit): the wait counts toward the limit,
    so waiting past it could only store a failed TIME_LIMIT round that never ran. A lock still held when the
    cut wait ends is exit 6 (busy) as any other, its message saying the limit ended the wait."""
    import math

    from solver import clock
    from solver.model.errors import StateBusyError

    limit = getattr(settings, "time_limit_seconds", math.inf)
    left = max(limit - clock.elapsed(), 0.0) if clock.command_start() is not None and math.isfinite(limit) else wait
    if left >= wait:
        yield wait
        return
    try:
        yield left
    except StateBusyError as err:
        err.message += (f"; the wait (--wait {wait:g}) ended at --time-limit {limit:g}, the whole command's wall "
                        f"time ({clock.elapsed():.2f} s since it started)")
        raise


EXECUTOR_HELP = (f"Where a partitioned round's parts run: process (local worker processes), ray (Ray tasks; "
                 f"{needs('ray', 'Ray')}), inline (one after another in this process)")
RAY_ADDRESS_HELP = "Ray cluster to join with --executor ray"
#: the defaults, as init states them; step's are the state's (the values init stored)
INIT_DEFAULTS = {"executor": f" (default: process, or inline for a round of at most {INLINE_BELOW_NNZ:,} nonzeros, whose "
                             "parts take less time than starting the workers; given, it is used whatever the size).",
                 "ray": " (default: $RAY_ADDRESS, else the cluster Ray recorded last on this machine, else a new local one; "
                        "local: always a new one). Stored whatever the executor, for a later "
                        "step --executor ray, and its form checked now (host:port, ray://host:port, auto or local)."}
STEP_DEFAULTS = {"executor": " (default: the state's, set by init; process unless init was given another, inline "
                             f"for a round of at most {INLINE_BELOW_NNZ:,} nonzeros unless init was given one; given, it is used "
                             "whatever the size). A monolithic state refuses it (exit 2).",
                 "ray": " (default: the state's, set by init; $RAY_ADDRESS, else the cluster Ray recorded last on this "
                        "machine, else a new local one, unless init was given one). A monolithic state refuses it (exit 2), and so does a round whose executor is not ray."}


def _check_executor(value: str | None) -> str | None:
    """``--executor`` must name a known executor even where it is not used (a monolithic state): exit 2 naming
    it (``ray`` without Ray installed: :func:`_ray_importable` in the command's body, exit 8). Without the
    option nothing is imported (``solver.partition.executor`` imports multiprocessing and concurrent.futures:
    ~20 ms of CPU in every ``copter step`` process, issue #15)."""
    if value is None:
        return None
    from solver.partition.executor import EXECUTORS

    if value is not None and value not in EXECUTORS:
        raise typer.BadParameter(f"unknown executor {value!r}; choose {', '.join(EXECUTORS)}")
    return value


def _ray_importable(executor: str | None) -> None:
    """In a command's body (its errors mapped to exit codes there, not in an option's callback): ``--executor
    ray`` without Ray installed is MissingDependencyError, exit 8 naming the extra (``copter report`` without
    matplotlib is the same), even on a monolithic state, which does not use it."""
    if executor == "ray":
        from solver.partition.executor import check_executor

        check_executor(executor)


def _after_prepare(fn, *args, **kw):
    """Compile the solver kernels first when needed (``copter_cli.cmd_prepare.ensure_prepared``: a stamp
    check of milliseconds on a warm install), then return ``fn(*args)``: round 0 never compiles."""
    from copter_cli import solving_stack
    from copter_cli.cmd_prepare import ensure_prepared

    before = kw.pop("_before", None)
    if before is not None:  # checks that must not wait for a compilation
        before()
    ensure_prepared()
    solving_stack.load()  # the round's modules, without the collector's passes over them (console process only)
    return fn(*args, **kw)


def _stored_settings(st: Path):
    """The settings init stored in ``st`` (for the progress line's time limit); the defaults when they cannot
    be read (the round itself then reports what is wrong)."""
    from formats.checkpoint import StateStore
    from solver.model.settings import Settings

    try:
        return _rounds().settings_from_json(StateStore(st).config().get("settings"))
    except (TypeError, ValueError, AttributeError):
        return Settings()


def _with_progress(fn, solver: opts.GivenOptions, settings):
    """``fn`` (a round: init, step, step_many) run inside the live progress line of long solves on a terminal
    (``copter_cli.progress``; its time limit from ``settings``, off with ``--verbose``)."""
    from copter_cli.progress import SolveProgress

    def wrapped(*args, **kw):
        with SolveProgress(settings.time_limit_seconds, enabled=not solver.verbose):
            return fn(*args, **kw)

    return wrapped


@opts.with_solver_options
def init_cmd(
    ctx: typer.Context,
    base: Path = typer.Argument(..., metavar="BASE", help="Base problem: MPS (.mps, .mps.gz) or Parquet problem file."),
    state: Path | None = STATE_OPT,
    keep: int = typer.Option(5, "--keep", help="Number of round generations to keep." + opts.range_help(1)),
    out: Path | None = OUT_OPT,
    wait: float = ROUND_WAIT_OPT,
    partitions: int = typer.Option(1, "--partitions",
                                   help="Split every round into K parts by client, solved in parallel, each warm "
                                        "from its own previous iterate (1: one monolithic solve). Stored."
                                        + opts.range_help(1)),
    client_regex: str | None = typer.Option(None, "--client-regex",
                                            help="With --partitions: regex whose group 'client' (or whole match) "
                                                 "is a variable's client (default: the text before the first /)."),
    shared_rows_regex: str | None = typer.Option(None, "--shared-rows-regex",
                                                 help="With --partitions: rows whose name matches are shared "
                                                      "resources even if one client uses them."),
    partition_passes: int = typer.Option(1, "--partition-passes",
                                         help="With --partitions: share updates + re-solves within each round."
                                              + opts.range_help(1, MAX_PASSES)),
    share_update_every: int | None = typer.Option(None, "--share-update-every", show_default=False,
                                                  help="With --partitions: move the shared rows' shares after "
                                                       "every round (1), every N-th, or never (0: the first "
                                                       "round's shares). Default: 0 for an LP above "
                                                       "--whole-below-nnz, 1 otherwise. Stored."
                                                       + opts.range_help(0)),
    whole_below_nnz: int = typer.Option(SMALL_LP_NNZ, "--whole-below-nnz",
                                        help="With --partitions: an LP round with at most this many nonzeros is "
                                             "also solved whole and the better point kept (0: never)."
                                             + opts.range_help(0)),
    executor: str = typer.Option("process", "--executor", help=EXECUTOR_HELP + INIT_DEFAULTS["executor"],
                                 callback=_check_executor, show_default=False),  # the help states it
    ray_address: str | None = typer.Option(None, "--ray-address", help=RAY_ADDRESS_HELP + INIT_DEFAULTS["ray"]),
    accept_failed: bool = typer.Option(False, "--accept-failed",
                                       help="Store round 0 even if it is infeasible/limited (a later delta can "
                                            "fix it); without it a failed round 0 initialises nothing."),
    solver: opts.GivenOptions = None,
    json_out: bool = REPORT_JSON_OPT,
    debug: bool = DEBUG_OPT,
) -> None:
    """Create a state directory from BASE and solve round 0.

    The solver options given here are stored for later steps, and so are the partition options. A round 0
    that fails (infeasible, limit) initialises nothing: its report is kept under STATE/failed/ and init
    can run again."""
    partition = None
    if partitions > 1:
        partition = {"k": partitions, "client_regex": client_regex, "shared_rows_regex": shared_rows_regex,
                     "passes": partition_passes, "executor": executor, "ray_address": ray_address,
                     "update_every": share_update_every, "whole_below_nnz": whole_below_nnz,
                     # without --executor a small model's parts run in this process (solver.partition.small)
                     "inline_below_nnz": 0 if _given(ctx, "executor") else INLINE_BELOW_NNZ}

    def body() -> int:
        _check_wait(wait)
        opts.check_range("--partitions", partitions, 1)
        _partition_options_need_partitions(ctx, partitions)
        _ray_importable(executor if _given(ctx, "executor") else None)  # after: without --partitions it is exit 2
        opts.check_range("--partition-passes", partition_passes, 1, MAX_PASSES)
        if share_update_every is not None:
            opts.check_range("--share-update-every", share_update_every, 0)
        opts.check_range("--whole-below-nnz", whole_below_nnz, 0)
        init_round = _with_progress(_rounds().init, solver, solver.settings())

        def init_within_limit(*args, **kw):  # the wait cut at --time-limit once the kernels are ready
            with _wait_within_limit(wait, solver.settings()) as wait_:
                return init_round(*args[:-1], wait_, **kw)

        st = _state(state)
        return _finish(_after_prepare(init_within_limit, base, st, solver.settings(), keep, out, wait,
                                      partition=partition, accept_failed=accept_failed,
                                      milp_options=tuple(solver.milp_only()),
                                      _before=lambda: _clients_before_compiling(base, partition)), json_out, st)

    run(json_out, debug, body)


#: init's options that only a partitioned state stores (parameter name -> flag)
_PARTITION_ONLY = {"client_regex": "--client-regex", "shared_rows_regex": "--shared-rows-regex",
                   "partition_passes": "--partition-passes", "share_update_every": "--share-update-every",
                   "whole_below_nnz": "--whole-below-nnz", "executor": "--executor", "ray_address": "--ray-address"}


def _given(ctx: typer.Context, name: str) -> bool:
    """Whether the option of parameter ``name`` was given on the command line."""
    return getattr(ctx.get_parameter_source(name), "name", None) == "COMMANDLINE"


def _partition_options_need_partitions(ctx: typer.Context, partitions: int) -> None:
    """Raise UsageError (exit 2) when init is given a partition option on the command line but no
    ``--partitions`` K >= 2: the option would be dropped (only a partitioned state stores it) and every round
    run monolithic, where the operator most likely forgot ``--partitions``."""
    if partitions > 1:
        return
    given = [flag for name, flag in _PARTITION_ONLY.items() if _given(ctx, name)]
    if given:
        from solver.model.errors import UsageError

        one = len(given) == 1
        one_part = _given(ctx, "partitions")
        has = "has --partitions 1 (one part: the monolithic round)" if one_part else "has no --partitions K (K >= 2)"
        fix = "give --partitions K with K >= 2" if one_part else "add --partitions K"
        raise UsageError(f"{', '.join(given)} appl{'ies' if one else 'y'} to partitioned rounds only, and this init "
                         f"{has}: the rounds would be monolithic and {'it' if one else 'they'} would be "
                         f"ignored; {fix}, or leave {'it' if one else 'them'} out")


def _clients_before_compiling(base: Path, partition: dict | None) -> None:
    """The partition options are checked first (exit 2 at once). A partitioned init that would compile the
    kernels first (no current stamp: a fresh install) then checks that
    the base's variable names give clients before that (exit 2 at once, not after minutes); with the stamp
    current the round checks right after reading the base, before any worker starts (no second read)."""
    if partition is None:
        return
    from solver.prepare import is_prepared
    from solver.rounds.partitioned import config_of

    config_of(partition)  # --partition-passes / --share-update-every out of range: exit 2 before compiling

    if not is_prepared():
        from solver.partition.clients import check_base_clients

        check_base_clients(base, partition.get("client_regex"), partition.get("shared_rows_regex"))


@opts.with_solver_options(from_state=True)  # an option not given is the one init stored: its help says so
def step_cmd(
    deltas: list[Path] = typer.Argument(..., metavar="DELTA...",
                                        help="Delta Parquet file(s) (copter.base_round = current round), "
                                             "applied in order, each its own round; '-' reads one from standard input."),
    state: Path | None = STATE_OPT,
    force: bool = typer.Option(False, "--force", help="Apply even if copter.base_round does not match the current "
                                                       "round (a retry of a delta that already produced a round "
                                                       "stays a no-op: docs/formats.md, \"Deltas and problems\")."),
    accept_failed: bool = typer.Option(False, "--accept-failed",
                                       help="Advance CURRENT even if the round is infeasible/limited."),
    out: Path | None = OUT_OPT,
    wait: float = ROUND_WAIT_OPT,
    executor: str | None = typer.Option(None, "--executor", help=EXECUTOR_HELP + STEP_DEFAULTS["executor"],
                                        callback=_check_executor),
    ray_address: str | None = typer.Option(None, "--ray-address", help=RAY_ADDRESS_HELP + STEP_DEFAULTS["ray"]),
    solver: opts.GivenOptions = None,
    json_out: bool = REPORT_JSON_OPT,
    debug: bool = DEBUG_OPT,
) -> None:
    """Apply DELTA, re-solve warm, store the next round.

    Several deltas (catching up after downtime) are applied in order, each its own round; the first that
    fails stops the batch. Solver options given here override the ones stored by init for these rounds."""

    def body() -> int:
        _check_wait(wait)
        if sum(str(d) == "-" for d in deltas) > 1:
            raise UsageError("DELTA '-' (the delta's Parquet bytes on standard input) can be given only once")
        from copter_cli import solving_stack
        from copter_cli.cmd_prepare import ensure_prepared
        from formats import undo
        from formats.checkpoint import StateStore

        rounds = _rounds()
        st = _state(state)
        undo.about_state(lambda: _current_of(st))  # an interrupted warm-up names the state it left alone
        refuse_absent_state(st)
        ensure_prepared()  # as init: kernels compiled (progress line on stderr) before the round, none mid-solve
        solving_stack.load()
        settings = None  # none given: the library uses the stored settings
        if solver:
            settings = solver.settings(rounds.settings_from_json(StateStore(st).config().get("settings")))
        milp = tuple(solver.milp_only())  # a warning in the round's report when its model has no integer column
        step, step_many = (_with_progress(f, solver, settings or _stored_settings(st))
                           for f in (rounds.step, rounds.step_many))
        if len(deltas) == 1:
            printing: list[bool] = []  # set once the report is being printed: an interrupt then prints no second one

            def interrupted_one(code: int, message: str) -> bool:  # once the round is stored: its report too
                stored = undo.stored_report()
                if stored is None or printing:
                    return False  # nothing stored yet (the plain interrupted error), or the report already going out
                printing.append(True)
                _interrupted_one({**stored, "delta": str(deltas[0])}, json_out, st, code, message)
                return True

            try:
                with undo.on_interrupt_report(interrupted_one), \
                        _wait_within_limit(wait, settings or _stored_settings(st)) as wait_:
                    report = step(deltas[0], st, settings, force, accept_failed, out, wait_, executor, ray_address,
                                  milp_options=milp)
            except KeyboardInterrupt:  # raised in a region: once the round was stored (held back while CURRENT moved)
                if not interrupted_one(undo.exit_code(), undo.interrupted_message()):  # its report with the error
                    raise  # before: the state as it was, the plain error
                return undo.exit_code()
            printing.append(True)
            # the delta it applied, as a batch's rows name theirs: a rounds.jsonl of single steps says which file
            return _finish({**report, "delta": str(deltas[0])}, json_out, st)
        done: list[dict] = []  # the reports of the deltas done so far (solver.rounds.step_many's on_round)

        def with_last() -> list[dict]:
            """``done`` and, when an interrupt came as the next round was stored (held back while CURRENT moved,
            delivered right after), that round's report too: the batch stopped before its on_round saw it."""
            last = undo.stored_report()
            if last is None or len(done) >= len(deltas) or any(r.get("round") == last.get("round") for r in done):
                return done
            return [*done, {**last, "delta": str(deltas[len(done)]), "delta_index": len(done) + 1}]

        def interrupted(code: int, message: str) -> bool:  # once a round is done: its report with the error
            reports = with_last()
            if not reports:
                return False  # nothing stored yet: the plain interrupted error
            _interrupted_many(reports, deltas, st, json_out, code, message)
            return True

        try:
            with undo.on_interrupt_report(interrupted), \
                    _wait_within_limit(wait, settings or _stored_settings(st)) as wait_:
                reports = step_many(deltas, st, settings, force, accept_failed, out, wait_, executor, ray_address,
                                    on_round=done.append, milp_options=milp)
        except CopterError as err:
            if getattr(err, "reports", None) is None:  # raised before the first delta: no rounds to report
                raise
            return _finish_many(err.reports, json_out, _stop_of(err), st=st)
        except KeyboardInterrupt:  # raised in a region (a round being saved): unwound, the state as it was
            reports = with_last()
            if not reports:
                raise
            return _interrupted_many(reports, deltas, st, json_out, undo.exit_code(), undo.interrupted_message())
        return _finish_many(reports, json_out, n_deltas=len(deltas), st=st)

    run(json_out, debug, body)


def _current_of(st: Path) -> str:
    """``"STATE: CURRENT names round N"`` as the file reads now (for an interrupt's message: one small read,
    no checks; ``CURRENT is missing or unreadable`` otherwise)."""
    current = _current_round(st)
    what = f"CURRENT names round {current}" if current is not None else "CURRENT is missing or unreadable"
    return f"{st}: {what}"


def _print_show(report: dict, news: list[str]) -> None:
    from rich.markup import escape

    _print_report(report, news)
    if "last_failed" in report:
        lf = report["last_failed"]
        console.print(f"[yellow]last failed round[/]: {lf.get('round')} {lf.get('status')}: "
                      f"{escape(printable(str(lf.get('message', ''))))}")


def show_cmd(
    round_: int | None = ROUND_OPT,
    state: Path | None = STATE_OPT,
    solution: bool = typer.Option(False, "--solution", help="Show the allocation instead of the report: nonzero "
                                  "variables grouped by client (the name before its first '/')."),
    top: int | None = typer.Option(None, "--top", metavar="N", help="The N largest clients and moves (default "
                                   "10; implies --solution)." + opts.range_help(1)),
    entries: int | None = typer.Option(None, "--entries", metavar="K", help="The K largest variables of each "
                                       "client shown (default 3; implies --solution)." + opts.range_help(0)),
    changes: bool = typer.Option(False, "--changes", help="With --solution: also the biggest moves since the "
                                 "previous round and the entities added/removed (implies --solution)."),
    client_regex: str | None = typer.Option(None, "--client-regex", help="Regex whose named group 'client' (or "
                                            "whole match) is a variable's client, as init's --client-regex "
                                            "(default: the one init --client-regex stored, else the text "
                                            "before the first /; implies --solution)."),
    zero_tol: float | None = typer.Option(None, "--zero-tol", help="|value| <= this counts as zero (default: "
                                          "the state's --tol; implies --solution)." + opts.range_help(0)),
    json_out: bool = typer.Option(False, "--json", help="Print the round's report (or allocation) as JSON."),
    debug: bool = DEBUG_OPT,
) -> None:
    """Show a round's report, or with --solution its allocation.

    The current round (or a kept one, --round); for the current round also the last failed round, if any.
    --solution groups the nonzero variables by client; --changes adds the biggest moves since the
    previous round. The warnings the round got when it was made are part of the report (its table, the JSON's
    "warnings"), not warning lines on stderr; only a warning about the state now (a damaged CURRENT) is."""

    def body() -> int:
        _check_round("--round", round_)
        # every allocation option implies --solution, as --changes does (--top 2 alone was exit 2)
        if not (solution or changes or any(v is not None for v in (top, entries, client_regex, zero_tol))):
            news: list[str] = []  # a damaged CURRENT: about the state now, a warning on stderr every time
            report = _rounds().show(_state(state), round_, news)
            stored = report.get("warnings") or []  # the round's, from when it was made: output, not news
            if json_out:
                report = {**_with_state_dir(report, _state(state)),
                          **({"warnings": [*stored, *news]} if stored or news else {})}
            return emit(report, json_out, lambda r: _print_show(r, news), news)
        from copter_cli.allocation_view import print_allocation

        res = _rounds().show_solution(_state(state), round_, top=10 if top is None else top,
                                   entries=3 if entries is None else entries, changes=changes,
                                   client_regex=client_regex, zero_tol=zero_tol)
        return emit(_with_state_dir(res, _state(state)) if json_out else res, json_out, print_allocation)

    run(json_out, debug, body)


#: history's columns: (header, justify, priority); 0 = essential (never dropped), higher = dropped first when
#: the terminal is too narrow (copter_cli.table_fit); "mark": * the current round, failed a failed round's record,
#: undone a kept round after the current one (a rollback undid it)
HISTORY_COLUMNS = (("round", "right", 0), ("mark", "left", 1), ("status", "left", 0), ("objective", "right", 0),
                   ("gap", "right", 0), ("engine", "left", 3), ("iters", "right", 3), ("warm", "right", 8),
                   ("changed", "right", 5), ("wait", "right", 13), ("load", "right", 10), ("apply", "right", 9),
                   ("kern.", "right", 12), ("solve", "right", 4), ("integ.", "right", 7), ("save", "right", 11),
                   ("total", "right", 0), ("compare (time / copter)", "left", 6))


def _print_history(rows: list[dict], out: Console | None = None, terminal: bool | None = None,
                   current: int | None = None) -> list[str]:
    """The history table on the shared console (stdout inside ``emit``; or ``out``), fitted to the terminal: no
    cell is cut; the least important columns are dropped with a note when the width cannot hold them. Returns the
    dropped headers. ``current``: the current round's number (default: the row marked current, if shown); a kept
    round after it is marked ``undone`` (a rollback undid it: ``rollback --to`` moves forward to it again, the next
    step moves it into ``abandoned/``)."""
    from rich import box

    from copter_cli.table_fit import Column, print_fitted
    from solver.rounds.log_history import current_round, is_undone

    if current is None:
        current = current_round(rows)
    cells = []
    for r in rows:
        s = r["seconds"] or {}
        undone = is_undone(r, current)
        mark = "*" if r["current"] else ("failed" if r["kind"] == "failed" else ("undone" if undone else ""))
        cmp = "  ".join(f"{m} {_fmt(c.get('time_ratio'), '.2g')}x" if _fmt(c.get("time_ratio")) != "-" else f"{m} -"
                        for m, c in r.get("compare", {}).items() if m != "copter")
        cells.append([_fmt(r["round"]), mark, _fmt(r["status"]), _fmt(r["objective"]),
                      _fmt(r.get("gap_rel"), ".2g"), _fmt(r.get("engine")), _fmt(r["iterations"]),
                      _fmt(r["warm_started"]), _fmt(r["changed_variables"]),
                      *[_fmt(s.get(k), ".3f") for k in ("wait", "load", "apply", "kernels", "solve", "integerize",
                                                        "save", "total")],
                      cmp])
    return print_fitted([Column(*c) for c in HISTORY_COLUMNS], cells, console=out, terminal=terminal,
                        more="--json or --csv", title="copter history (times in seconds)",
                        box=box.SIMPLE_HEAD)


def _print_csv(rows: list[dict], last: int | None = None, header: bool = True) -> None:
    """History rows as CSV on stdout: one line per round of the newest ``last`` (None: all), ``seconds`` and
    ``compare`` spread into columns. The header is the same whichever rows are printed and whatever was compared,
    so ``--last 1`` appended to a file each round keeps its columns: the columns of every row of the log (the round
    log's fixed ones), then the ``compare_*`` columns of copter and every HiGHS baseline, then ``compare_pop_k`` and
    ``compare_pop_*`` (the round's newest POP row, whatever its part count), always. (They came and went with the
    rows shown, a first ``compare`` inserted its columns in the middle, and a first POP part count added columns
    at the end.) Written in full or exit 7 naming stdout (``copter_cli.output.AnswerFile``: a write cut by the
    file-size limit). ``header`` False leaves the header line out (``--no-header``: a cron job appending
    ``--last 1`` to its file each round)."""
    import csv

    from copter_cli.output import AnswerFile
    from solver.rounds.log_history import COMPARE_FIELDS, CSV_METHODS, compare_prefix, flat, pop_k

    flat_rows = [flat(r) for r in rows]
    others = sorted({m for r in rows for m in r["compare"] if pop_k(m) is None} - set(CSV_METHODS))
    cols = [k for k in dict.fromkeys(k for r in flat_rows for k in r) if not k.startswith("compare_")]
    cols += [f"{compare_prefix(m)}_{f}" for m in CSV_METHODS for f in COMPARE_FIELDS]
    cols += ["compare_pop_k", *(f"compare_pop_{f}" for f in COMPARE_FIELDS)]
    cols += [f"{compare_prefix(m)}_{f}" for m in others for f in COMPARE_FIELDS]  # none today: a method outside the registry
    w = csv.DictWriter(AnswerFile(), fieldnames=cols, lineterminator="\n")
    if header:
        w.writeheader()
    w.writerows(flat_rows if last is None else flat_rows[-last:])


def history_cmd(
    state: Path | None = STATE_OPT,
    last: int | None = typer.Option(None, "--last", help="Only the newest N rows, by round number (after a "
                                                         "rollback, the undone rounds above the current one count "
                                                         "until the next step replaces them)." + opts.range_help(1)),
    json_out: bool = typer.Option(False, "--json", help="Print {\"rounds\": [...]} as JSON (plus \"warnings\" when "
                                                        "CURRENT was unusable)."),
    csv_out: bool = typer.Option(False, "--csv", help="Print the rounds as CSV on stdout (seconds and compare "
                                                      "results spread into columns)."),
    no_header: bool = typer.Option(False, "--no-header", help="With --csv: leave the header line out (append "
                                                              "--last 1 --no-header to one file each round)."),
    debug: bool = DEBUG_OPT,
) -> None:
    """Every round from the round log, failed ones included.

    The round log outlives pruning. Status, objective, gap, iterations, seconds per phase, compare results.
    A state written before the round log existed shows its kept and failed rounds."""

    def body() -> int:
        if json_out and csv_out:
            raise UsageError("--json and --csv exclude each other")
        if last is not None and last < 1:
            raise UsageError(f"--last must be at least 1, got {last}")
        if no_header and not csv_out:
            raise UsageError("--no-header applies to --csv only (the table and --json have no header line to leave out)")
        from copter_cli.entry import keep_numpy_out

        keep_numpy_out()  # the round log is read with pyarrow alone (issue #15: start-up)
        warnings: list[str] = []  # CURRENT unusable: the rows are the newest complete generation's lineage
        st = _state(state)
        rows = _rounds().history(st, None if csv_out else last, warnings)
        obj = {"rounds": rows, **({"warnings": warnings} if warnings else {})}
        if csv_out:
            _print_csv(rows, last, header=not no_header)
            say_warnings(obj)
            return 0
        # --last may leave the current round out: CURRENT then says which rows come after it (one small read)
        current = None if any(r["current"] for r in rows) else _current_round(st)
        return emit(obj, json_out, lambda _: (_print_history(rows, current=current), say_warnings(obj)))

    run(json_out, debug, body)


def rollback_cmd(
    to: int | None = typer.Option(None, "--to", help="Kept round to make current (default: the one before the "
                                                     "current round; a later kept round moves forward again)."
                                                     + opts.range_help(0)),
    state: Path | None = STATE_OPT,
    wait: float = WAIT_OPT,
    json_out: bool = RESULT_JSON_OPT,
    debug: bool = DEBUG_OPT,
) -> None:
    """Make another kept round current (default: the previous one).

    Later rounds stay on disk, so --to can move forward again, until the next step starts a new branch and
    moves them into STATE/abandoned/ (kept there for inspection, not for rollback; like the generations, only the
    newest --keep batches of abandoned/ are kept). --json: {"round": the round now current, "previous_round": the round
    current before the rollback (in a round's report it is that round's parent), "later_rounds", "message"}."""
    def body() -> int:
        _check_wait(wait)
        _check_round("--to", to)
        res = _rounds().rollback(_state(state), to, wait)
        return emit(res, json_out, lambda r: (say(r["message"]), say_warnings(r)))

    run(json_out, debug, body)


def _say_export(res: dict) -> None:
    from formats.io import kind_of

    # what `copter diff` will know of the round: recorded in a Parquet file, not in an MPS one
    note = (f"copter.round {res['round']}, read by `copter diff` as the delta's base round" if
            kind_of(res["output"]) == "parquet" else
            f"MPS records no round: give `copter diff --base-round {res['round']}`")
    say(f"round {res['round']}: wrote {printable(res['output'])} ({res['n_cols']} variables, "
        f"{res['n_rows']} constraints, {res['nnz']} nonzeros; {note})")
    say_warnings(res)


def export_cmd(
    output: Path | None = typer.Option(None, "-o", "--output",
                                       help="Output file: .mps/.mps.gz (MPS) or .parquet (default: round-NNNNNN.mps in the "
                                            "current folder, e.g. round-000003.mps)."),
    round_: int | None = ROUND_OPT,
    state: Path | None = STATE_OPT,
    json_out: bool = RESULT_JSON_OPT,
    debug: bool = DEBUG_OPT,
) -> None:
    """Write the current (or a kept) round's problem to a file.

    MPS or Parquet, by the output's extension."""
    def body() -> int:
        _check_round("--round", round_)
        res = _rounds().export(_state(state), output, round_)
        return emit(res, json_out, _say_export)

    run(json_out, debug, body)


def register(app: typer.Typer) -> None:
    """Add init, step, show, history, rollback and export to the app."""
    for name, command in (("init", init_cmd), ("step", step_cmd), ("show", show_cmd), ("history", history_cmd),
                          ("rollback", rollback_cmd), ("export", export_cmd)):
        app.command(name)(command)
