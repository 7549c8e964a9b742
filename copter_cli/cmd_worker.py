"""``copter worker start|stop|status``: the opt-in long-running worker that keeps the numerical stack and
the solver kernels loaded, so each ``copter step`` (and init, solve, compare, diff, convert, export, demo)
started by cron skips the imports and the kernel loads (docs/usage.md "Long-running worker (cron)"). The worker is
``copter_cli.worker_server``; these commands only call ``copter_cli.worker_control`` and print.
"""

from __future__ import annotations

import typer

from copter_cli import worker_client as wc
from copter_cli.output import emit, run, say, say_warnings
from copter_cli.solver_options import SECONDS_WHAT, check_range, range_help

JSON_OPT = typer.Option(False, "--json", help="Print the result as JSON.")
DEBUG_OPT = typer.Option(False, "--debug", help="Show tracebacks.")

worker_app = typer.Typer(name="worker", no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                         help="Keep the solver loaded between commands (start, stop, status).")


@worker_app.command("start", short_help="Start the worker in the background (kernels compiled first).")
def start_cmd(
    ctx: typer.Context,
    idle_timeout: float = typer.Option(900.0, "--idle-timeout",
                                       help="Exit after this many seconds without a command (0 or inf: never)."
                                            + range_help(0)),
    timeout: float = typer.Option(300.0, "--timeout", help="Seconds to wait for the worker to answer (0: do not "
                                                            "wait, it starts in the background)." + range_help(0)),
    json_out: bool = JSON_OPT,
    debug: bool = DEBUG_OPT,
) -> None:
    """Start this install's worker in the background and return once it answers.

    Compiles the solver kernels first when they are not (as `copter prepare`). A running worker is left
    alone; one whose copter sources changed is replaced. A worker that cannot start: exit 7, the message
    quotes its log."""

    def body() -> int:
        check_range("--idle-timeout", idle_timeout, 0, what=SECONDS_WHAT)
        check_range("--timeout", timeout, 0, what=SECONDS_WHAT)
        from copter_cli import worker_control
        from copter_cli.cmd_prepare import ensure_prepared

        res = worker_control.start(idle_timeout, timeout, ensure_prepared, say)
        if getattr(ctx.get_parameter_source("idle_timeout"), "name", None) == "COMMANDLINE":
            res = _with_idle_warning(res, idle_timeout)
        return emit(res, json_out, _say_started)

    run(json_out, debug, body)


def _idle_words(seconds: float) -> str:
    return ("never exits when idle" if wc.idle_seconds(seconds) == float("inf") else
            f"exits after {seconds:g} s without a command")


def _with_idle_warning(res: dict, asked: float) -> dict:
    """``res`` with a ``warnings`` entry when the worker was already running with another idle timeout than
    the ``--idle-timeout`` given on the command line (a running worker keeps its own: ``worker start
    --idle-timeout 0`` after a plain ``worker start`` said "already running", exit 0, and the worker still
    exited after 900 idle seconds)."""
    running = res.get("idle_timeout_seconds")
    if not res.get("already_running") or running is None or wc.idle_seconds(running) == wc.idle_seconds(asked):
        return res
    text = (f"--idle-timeout {asked:g} is not applied: the worker already running (pid {res['pid']}) "
            f"{_idle_words(running)}; `copter worker stop`, then start it again with that option")
    return {**res, "warnings": [*(res.get("warnings") or []), text]}


def _say_started(res: dict) -> None:
    when = _idle_words(res["idle_timeout_seconds"])
    if res.get("stopped_meanwhile"):
        say(res["message"])
        return
    if res.get("background") and not res.get("running"):
        say(f"worker starting in the background (pid {res['pid']}), {when}: commands run in-process until it "
            f"answers (`copter worker status` tells when); log {res['log']}")
        return
    if res["already_running"]:
        say(f"worker already running: pid {res['pid']}, served {res['served']} command(s), {when}; "
            f"socket {res['socket']}")
        say_warnings(res)
        if not res.get("import_env_matches", True):
            say("its import-time variables (NUMBA_*, OMP_*, PYTHONPATH, ...) differ from this environment's: "
                "commands from here run in-process (`copter worker status --json` shows them)")
        return
    say(f"worker started: pid {res['pid']} in {res['start_seconds']:.1f} s (imports {res['preload_seconds']:.2f} s, "
        f"{res['kernels_loaded']} kernel signatures in {res['kernel_load_seconds']:.2f} s); {when}; "
        f"socket {res['socket']}; log {res['log']}")


@worker_app.command("stop", short_help="Stop the worker; running commands finish first.")
def stop_cmd(
    timeout: float = typer.Option(60.0, "--timeout", help="Seconds to wait for running commands to finish."
                                                           + range_help(0)),
    json_out: bool = JSON_OPT,
    debug: bool = DEBUG_OPT,
) -> None:
    """Stop this install's worker: new commands run in-process at once, running ones finish first."""

    def body() -> int:
        check_range("--timeout", timeout, 0, what=SECONDS_WHAT)
        from copter_cli import worker_control

        return emit(worker_control.stop(timeout), json_out, _say_stopped)

    run(json_out, debug, body)


def _say_stopped(res: dict) -> None:
    if res.get("stopped"):
        say(f"worker stopped (pid {res['pid']})")
    elif (res.get("stopping") and res.get("pid") is None) or res.get("starting"):
        say(res["message"])
    elif res.get("stopping"):
        say(f"worker {res['pid']} is stopping: it exits when its {res['active']} running command(s) finish")
    else:
        say("no worker running for this install" + (f" ({res['message']})" if res.get("message") else ""))


@worker_app.command("status", short_help="Whether the worker runs, and its figures.")
def status_cmd(json_out: bool = JSON_OPT, debug: bool = DEBUG_OPT) -> None:
    """Whether this install's worker runs, and its figures (exit 0 either way)."""

    def body() -> int:
        from copter_cli import worker_control

        return emit(worker_control.status(), json_out, _say_status)

    run(json_out, debug, body)


def _say_status(res: dict) -> None:
    if not res["running"]:
        what = (f"worker {res['pid']} is stopping: it exits when its {res['active']} running command(s) finish"
                if res["stopping"] else
                f"worker {res['pid']} runs but cannot be reached: its socket file is gone, so commands run "
                "in-process; `copter worker stop` ends it (`worker start` replaces it)" if res.get("unreachable") else
                f"worker {res['pid']} is starting (loading the solver)" if res["starting"] and res["pid"] else
                "a worker holds this install's lock without answering: it is starting (loading the solver) or "
                "stopping (finishing its running commands)" if res["starting"] else
                "no worker running for this install" + (" (a stale socket file is left: `copter worker start` "
                                                        "replaces it)" if res["stale_socket"] else ""))
        say(f"{what}; socket {res['socket']}" + (f" ({res['message']})" if res.get("message") else ""))
        return
    idle = res["idle_timeout_seconds"]
    say(f"worker running: pid {res['pid']}, up {res['uptime_seconds']:.0f} s, served {res['served']} command(s), "
        f"{res['active']} running, idle {res['idle_seconds']:.0f} s of {idle:g} s" + (" (never exits idle)"
                                                                                    if not idle or idle == float("inf")
                                                                                    else ""))
    say(f"socket {res['socket']}; log {res['log']}")
    if res["stale"]:
        say("stale: copter's sources changed since it started; commands run in-process (`copter worker start` "
            "replaces it)")
    if not res["import_env_matches"]:
        say("its import-time variables (NUMBA_*, OMP_*, PYTHONPATH, ...) differ from this shell's: commands from "
            "here run in-process")


def register(app: typer.Typer) -> None:
    """Add ``worker start|stop|status`` to the app."""
    app.add_typer(worker_app)
