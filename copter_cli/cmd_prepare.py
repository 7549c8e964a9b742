"""``copter prepare``: compile and cache every numba kernel a round can reach (``solver.prepare``), e.g. while
building a container image, so that no round ever compiles. Every command that solves (``init``, ``step``,
``solve``, ``compare``, ``demo``) does the same first (skipped in milliseconds while the stamp says nothing
changed), so none compiles silently mid-solve."""

from __future__ import annotations

import typer

from copter_cli.output import emit, run, say


def prepare_cmd(
    force: bool = typer.Option(False, "--force", help="Run the warm-up even when the stamp is current."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
) -> None:
    """Compile and cache the solver's numba kernels (once per install).

    Runs tiny rounds over every solver path unless the stamp says nothing changed since the last run
    (then it only checks the stamp: a tenth of a second); --force runs them anyway (a warm cache only loads:
    seconds). Prints "compiling solver kernels, once per install ..." on stderr when something compiles.
    Also writes the bytecode (.pyc) of copter's own modules where it is missing or stale."""

    def body() -> int:
        from solver.prepare import is_prepared, prepare

        if force or not is_prepared():  # seconds even with a warm cache: say so before the silence
            say("warming up the solver kernels: every solver path once on tiny rounds (seconds with a cached "
                "install) ...")
        res = prepare(progress=say, force=force, bytecode=True)
        if res["skipped"]:
            return emit(res, json_out, lambda r: say(
                f"prepared already: the stamp {r['stamp']} is current ({r['seconds']:.2f} s; --force re-runs)"))
        return emit(res, json_out, lambda r: say(
            f"prepared: {r['kernels']} kernels in the registry, {r['compiled']} compilation(s), "
            f"{r['seconds']:.1f} s; stamp {r['stamp'] or '(not writable: init and demo will warm up each time)'}"))

    run(json_out, debug, body)


def register(app: typer.Typer) -> None:
    """Add ``prepare`` to the app."""
    app.command("prepare")(prepare_cmd)


def ensure_prepared() -> dict:
    """For every command that solves (init, step, solve, compare, demo): run the warm-up unless the stamp is
    current, with the progress line on stderr when something compiles. Returns ``solver.prepare.prepare``'s
    result ("skipped", "compiled", "seconds", ...)."""
    from solver.prepare import prepare

    return prepare(progress=say, force=False)
