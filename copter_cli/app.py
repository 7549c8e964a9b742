"""The ``copter`` Typer application: every command module registers itself here."""

from __future__ import annotations

import typer

from copter_cli import cmd_compare, cmd_demo, cmd_formats, cmd_solve, cmd_state

app = typer.Typer(
    name="copter",
    help="Continual optimization for round-based resource allocation (LP/MILP re-solved warm every round).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)



@app.callback()
def _root() -> None:
    """copter: keep an LP/MILP and its solver state on disk, apply a delta each round, re-solve warm."""


@app.command()
def version(json_out: bool = typer.Option(False, "--json", help="Print JSON on stdout.")) -> None:
    """Print copter's version and the versions of the libraries it runs on."""
    from importlib.metadata import version as v

    from copter_cli.output import console, print_json

    info = {name: v(name) for name in ("copter", "highspy", "numba", "numpy", "pyarrow")}
    if json_out:
        print_json(info)
    else:
        console.print("  ".join(f"{k} {val}" for k, val in info.items()))


for _module in (cmd_solve, cmd_formats, cmd_state, cmd_demo, cmd_compare):
    _module.register(app)


def main() -> None:
    """Console-script entry point."""
    app()


if __name__ == "__main__":
    main()
