"""The ``copter`` Typer application: every command module registers itself here.

A process runs one command, so :func:`main` imports only the module of the command named in argv
(:data:`COMMAND_MODULES`); ``--help``, no command or a name no module registers get every module, so the
command list, "No such command" and its suggestions are those of the whole app (issue #15: each command
module imported costs start-up). ``copter_cli.app.app`` is the whole app (built on first access), for
``typer.testing.CliRunner`` and other in-process callers.
"""

from __future__ import annotations

import typer

#: every command module of ``copter_cli`` and the top-level commands its ``register(app)`` adds, in the order
#: of ``copter --help`` (tests/test_startup_imports.py checks this table against the modules)
COMMAND_MODULES = {
    "cmd_solve": ("solve",),
    "cmd_formats": ("convert", "diff"),
    "cmd_state": ("init", "step", "show", "history", "rollback", "export"),
    "cmd_demo": ("demo",),
    "cmd_compare": ("compare",),
    "cmd_prepare": ("prepare",),
    "cmd_report": ("report",),
    "cmd_worker": ("worker",),
}
OWN_COMMANDS = ("version",)  #: defined here, no module to import


def _print_version(value: bool) -> None:
    """Eager ``--version``: print ``copter X.Y.Z`` (the installed package's version) on stdout and exit 0."""
    if value:
        from importlib.metadata import version as installed_version

        from copter_cli.output import print_line

        print_line(f"copter {installed_version('copter')}")
        raise typer.Exit(0)


def _root(
    _version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True,
                                  help="Print copter's version and exit (`copter version` adds the libraries)."),
) -> None:
    """copter: keep an LP/MILP and its solver state on disk, apply a delta each round, re-solve warm."""


def version(json_out: bool = typer.Option(False, "--json", help="Print JSON on stdout.")) -> None:
    """Print the versions of copter and its libraries."""
    from importlib.metadata import version as installed_version

    from copter_cli.output import print_json, print_line

    info = {name: installed_version(name) for name in ("copter", "highspy", "numba", "numpy", "pyarrow")}
    if json_out:
        print_json(info)
    else:  # the requested output: on stdout, as --version's
        print_line("  ".join(f"{k} {val}" for k, val in info.items()))


def command_name(args: list[str]) -> str | None:
    """The command ``args`` name: the first argument that is not an option (the root group has only the
    flags ``--version`` and ``--help``, which take no value); ``version`` for ``--version`` without a command
    or ``--help`` (it prints and exits before a command would be looked up); else None, also for a root
    ``--help`` before the command (``copter --help show`` prints the root help, listing every command)."""
    pos = next((i for i, a in enumerate(args) if not a.startswith("-")), None)
    if pos is None:
        return "version" if "--version" in args and "--help" not in args else None
    return None if "--help" in args[:pos] else args[pos]


def build(command: str | None = None) -> typer.Typer:
    """The ``copter`` app with every command module registered, or, when ``command`` is a known command,
    only the module that registers it (none for ``version``). Help and errors of ``command`` are the same in
    both (its parameters, the root's usage line and options do not depend on the other commands)."""
    from copter_cli.option_values import CopterGroup

    app = typer.Typer(
        name="copter",
        cls=CopterGroup,  # a numeric option's unconvertible value is copter's usage error (copter_cli.option_values)
        help="Continual optimization for round-based resource allocation (LP/MILP re-solved warm every round).",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,  # plain help: rich's panels showed every flag as taking a value ("--json <bool>")
    )
    app.callback()(_root)
    app.command()(version)
    modules = [m for m, names in COMMAND_MODULES.items() if command in names]
    if not modules and command not in OWN_COMMANDS:
        modules = list(COMMAND_MODULES)
    for module in modules:
        # __import__, not importlib.import_module: `python -X importtime` lists only what the import machinery
        # of the import statement loads, and the command modules belong in that list
        __import__(f"copter_cli.{module}", fromlist=["register"]).register(app)
    return app


def __getattr__(name: str):
    """``app``: the whole app, built on first access and kept."""
    if name == "app":
        globals()["app"] = whole = build()
        return whole
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _options(command) -> set[str]:
    """Every option name of a click command (``--tol``, its secondary ``--no-...`` forms too)."""
    return {o for p in command.params for o in (*p.opts, *p.secondary_opts)}


def _prefix_suggestion(err) -> str | None:
    """For click's NoSuchOption ``--exec``: "No such option: --exec Did you mean --executor?" when the name begins
    one or more of the command's long options (at least 3 characters after the dashes), which click's own
    similarity match ranks below unrelated ones ("Possible options: --executor, --keep", a user's trial in
    session 35) or misses; None (click's message stands) when no option begins with it."""
    name = str(getattr(err, "option_name", "") or "")
    ctx = getattr(err, "ctx", None)
    if not name.startswith("--") or len(name) < 5 or ctx is None or ctx.command is None:
        return None
    opts = sorted(o for o in _options(ctx.command) if o.startswith(name) and o != name)
    if not opts:
        return None
    said = f"Did you mean {opts[0]}?" if len(opts) == 1 else f"(Possible options: {', '.join(opts)})"
    return f"{err.message} {said}"


def _close_suggestion(err) -> str | None:
    """For click's NoSuchOption: the command's long options whose names without the dashes are close to the unknown
    one's (``difflib``, ratio at least 0.6), "Did you mean --tol?" for ``--tl``, or the bare "No such option: --bogus"
    when none is. click compares the names with their dashes, whose shared ``--`` alone lifts unrelated names over
    its cut-off: ``step --bogus`` got "(Possible options: --out, --verbose)" and ``--tl`` "--out, --tol, --wait"
    (helper-241, session 60)."""
    import difflib

    name = str(getattr(err, "option_name", "") or "")
    ctx = getattr(err, "ctx", None)
    if not name.startswith("--") or ctx is None or ctx.command is None:
        return None
    longs = {o[2:]: o for o in _options(ctx.command) if o.startswith("--") and o != "--help"}
    close = [longs[n] for n in difflib.get_close_matches(name[2:], sorted(longs), n=3, cutoff=0.6)]
    if not close:
        return err.message
    said = f"Did you mean {close[0]}?" if len(close) == 1 else f"(Possible options: {', '.join(sorted(close))})"
    return f"{err.message} {said}"


def _elsewhere(err) -> str | None:
    """For click's NoSuchOption that is an option of other commands only: "No such option: --partitions (an option
    of copter init, not of copter step)" (a new user's ``step --partitions 2``, helper-183); None when no other
    command of the group has it."""
    name = str(getattr(err, "option_name", "") or "")
    ctx = getattr(err, "ctx", None)
    group = getattr(getattr(ctx, "parent", None), "command", None)
    if not name.startswith("--") or ctx is None or ctx.command is None or group is None:
        return None
    try:
        others = sorted(n for n, c in getattr(group, "commands", {}).items()
                        if c is not ctx.command and name in _options(c))
    except (AttributeError, TypeError):
        return None
    if not others:
        return None
    groups, c = [], ctx.parent  # the group's path under "copter" (the program's name may be another's in-process)
    while c is not None and c.parent is not None:
        groups.insert(0, c.info_name)
        c = c.parent
    path = " ".join(["copter", *groups])
    names = [f"{path} {n}" for n in others]
    where = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return f"{err.message} (an option of {where}, not of {path} {ctx.info_name})"


def _round_argument(err, message: str) -> str | None:
    """For click's "Got unexpected extra argument (2)" on a command that takes a round as an option (``rollback
    --to``, ``show`` / ``export --round``): the message with "(the round is an option: copter rollback --to 2)"
    (a new user's ``copter rollback 2``, helper-184); None otherwise."""
    import re

    ctx = getattr(err, "ctx", None)
    got = re.fullmatch(r"Got unexpected extra argument(?:\(s\)|s)? \((\d+)\)", message.strip())
    if got is None or ctx is None or ctx.command is None:
        return None
    flag = next((f for f in ("--to", "--round") if f in _options(ctx.command)), None)
    if flag is None:
        return None
    return f"{message.strip()} (the round is an option: copter {ctx.info_name} {flag} {got.group(1)})"


def _click_error(err, json_out: bool) -> int:
    """Print a click/typer error raised while the command line was parsed (no such option or command, a missing
    argument, a bad value or choice) as copter's error and return its exit code: one line ``error (usage, exit
    2): MESSAGE`` on stderr, MESSAGE being click's own, suggestions included ("No such option: --tl Did you mean
    --tol?" (:func:`_close_suggestion`), "No such command 'stpe'. Did you mean 'step'?"), and with ``json_out``
    the JSON error object on stdout. ``copter`` or a command group alone (``copter worker``: click's
    NoArgsIsHelpError) prints the help on stderr, then the same error line ("missing command", help printed
    above), as every non-zero exit does."""
    from copter_cli import exit_codes
    from copter_cli.output import print_json, say

    code = int(getattr(err, "exit_code", exit_codes.USAGE) or exit_codes.USAGE)
    message = err.format_message() if hasattr(err, "format_message") else str(err)
    if type(err).__name__ == "NoSuchOption":
        message = _prefix_suggestion(err) or _elsewhere(err) or _close_suggestion(err) or message
    elif type(err).__name__ == "UsageError":
        message = _round_argument(err, message) or message
    if type(err).__name__ == "NoArgsIsHelpError":  # the "message" is the whole help text
        say(message.rstrip("\n"))
        message = "missing command (help printed above on stderr)"
    kind = "usage" if code == exit_codes.USAGE else "error"
    if json_out:
        from solver.model.errors import CopterError

        try:
            print_json({"error": {"code": code, "kind": kind, "message": message}})
        except typer.Exit as ex:  # stdout's reader went away: 141, nothing more (output.quiet_broken_pipe)
            return int(ex.exit_code)
        except CopterError:  # a stdout closed at start or refused: the error line below still says the usage error
            pass  # (helper-203: exit 1 and no line, or exit 7 naming stdout instead of it)
    say(f"error ({kind}, exit {code}): {message}")
    return code


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point.

    A usage error click finds (missing argument, unknown option or command, bad value or choice) is copter's
    one line ``error (usage, exit 2): MESSAGE`` on stderr with click's message (:func:`_click_error`), exit 2;
    with ``--json`` anywhere in ``argv`` also ``{"error": {"code": 2, "kind": "usage", "message": ...}}`` on
    stdout. ``--help`` keeps exit 0.

    SIGINT: ``copter_cli.entry``'s handler (the console script); in-process callers get KeyboardInterrupt,
    which ends as exit 130 with the interrupted error (JSON with ``--json``) wherever it lands, parsing
    included. A closed stdout ends with exit 141 and no output (``copter_cli.output.quiet_broken_pipe``); one
    closed before the process started (``>&-``) is exit 7 naming stdout (``copter_cli.closed_streams``).
    """
    import sys

    from copter_cli import closed_streams, exit_codes, output

    # a stdout closed at start (`>&-`): exit 7 naming it, not an AttributeError; a stderr closed or refused: silent
    closed_streams.adopt(console_script=argv is None)
    # --time-limit counts from process start (solver.clock): the console script passes no argv; an
    # in-process caller with argv keeps the library rule (the limit counts from the solve's start)
    from solver.clock import process_start, start_command
    from solver.model.errors import CopterError, EnvironmentFaultError

    start_command(process_start() if argv is None else None)
    args = sys.argv[1:] if argv is None else list(argv)
    json_out = "--json" in args
    try:
        app = build(command_name(args))
        try:  # click's own parsing; its errors are printed here, not as its "Usage: ... Error: ..." box
            code = app(args=args, standalone_mode=False)
        except typer.Abort:
            code = exit_codes.INTERRUPTED
        except typer.TyperException as err:  # click's ClickException/UsageError derive from it
            code = _click_error(err, json_out)
        if code == exit_codes.INTERRUPTED and not output.ERROR_PRINTED:  # typer's own Exit(130) during parsing
            _interrupted(json_out)
    except KeyboardInterrupt:
        _interrupted(json_out)
    except BrokenPipeError:
        try:
            output.quiet_broken_pipe()
        except typer.Exit:
            code = exit_codes.BROKEN_PIPE
    except (OSError, CopterError) as err:  # outside a command body: --version, --help, version to a full stdout
        fault = output.stdout_refused(err) if isinstance(err, OSError) else err
        if not isinstance(fault, EnvironmentFaultError):
            raise
        output.say(f"error ({fault.kind}, exit {exit_codes.ENVIRONMENT}): {fault}")
        code = exit_codes.ENVIRONMENT
    sys.exit(code if isinstance(code, int) else 0)


def _interrupted(json_out: bool) -> None:
    """An interrupt outside a command body (while parsing): print the interrupted error, exit 130."""
    import sys

    from copter_cli import exit_codes
    from copter_cli.output import print_json, say

    message = "interrupted; nothing was done"
    if json_out:
        print_json({"error": {"code": exit_codes.INTERRUPTED, "kind": "interrupted", "message": message}})
    say(f"error (interrupted, exit {exit_codes.INTERRUPTED}): {message}")
    sys.exit(exit_codes.INTERRUPTED)


if __name__ == "__main__":
    main()
