"""The CLI's option help states each default once and reads as meant (user trial 18): ``init --executor``
printed "(default: process). [default: process]"; ``compare --pop-workers`` stated none; every ``--state``
said "State directory, not empty", read as "must not be empty" (what is refused is ``--state ''``)."""

from __future__ import annotations

import typer

from copter_cli.app import app


def _options():
    """(command path, click option) for every option of every command."""
    def walk(c, path):
        if hasattr(c, "commands"):
            for name, sub in c.commands.items():
                yield from walk(sub, [*path, name])
        else:
            for p in c.params:
                if getattr(p, "param_type_name", "") == "option" and "--help" not in p.opts:
                    yield " ".join(path), p
    return list(walk(typer.main.get_command(app), []))


def _shows_default(p) -> bool:
    return p.show_default is not False and not p.is_flag and p.default is not None


def test_no_option_states_its_default_twice():
    twice = [(cmd, p.opts[-1]) for cmd, p in _options() if _shows_default(p) and "(default" in (p.help or "")]
    assert twice == []


def test_pop_workers_states_its_default():
    (p,) = [p for cmd, p in _options() if cmd == "compare" and "--pop-workers" in p.opts]
    assert "default: one per part, at most the CPU count" in p.help


def test_state_help_does_not_read_as_must_not_be_empty():
    helps = {p.help for _, p in _options() if "--state" in p.opts}
    assert helps and all("not empty" not in h and "--state '' is refused" in h for h in helps)


def test_no_command_listing_cuts_a_description_short():
    """``copter worker --help`` listed its subcommands as "Start this install's worker in the background and return
    once..." (click cuts a docstring's first sentence at 45 characters; helper-241): every listing of commands, of
    ``copter`` and of each group, shows whole descriptions."""
    from typer.testing import CliRunner

    from copter_cli.app import app

    for args in (["--help"], ["worker", "--help"]):
        out = CliRunner().invoke(app, args, env={"COLUMNS": "120"})
        assert out.exit_code == 0
        listing = out.stdout.split("Commands:", 1)[1]
        cut = [line for line in listing.splitlines() if line.rstrip().endswith(("...", "\u2026"))]
        assert cut == [], (args, cut)
