"""An interrupt that ends a stateless command after it wrote files whole names them instead of saying "nothing
was changed" (helper-167: ``copter report -o r/rep.html --png r/png`` stopped between its files)."""

from __future__ import annotations

import sys

from copter_cli import entry
from formats import undo


def test_written_files_are_named(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["copter", "report", "-o", "r/rep.html", "--png", "r/png"])
    undo.begin_command()
    try:
        undo.wrote("r/rep.html")
        undo.wrote("r/png/round-time.png")
        msg = entry.as_the_command_says("interrupted by SIGTERM; the state is unchanged")
    finally:
        undo.begin_command()
    assert msg == ("interrupted by SIGTERM; r/rep.html and r/png/round-time.png are written (whole) and nothing "
                   "else was changed"), msg


def test_nothing_written_says_nothing_was_changed(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["copter", "report", "-o", "r/rep.html"])
    undo.begin_command()
    msg = entry.as_the_command_says("interrupted; the state is unchanged")
    assert msg.endswith("nothing was changed (copter writes a file whole or not at all)"), msg


def test_worker_stop_does_not_speak_of_a_started_worker(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["copter", "worker", "stop"])
    undo.begin_command()
    msg = entry.as_the_command_says("interrupted by SIGTERM; the state is unchanged")
    assert "started before the interrupt" not in msg and "worker status" in msg, msg


def test_an_interrupt_that_unwinds_says_it_as_the_command_does(monkeypatch, capsys):
    """The KeyboardInterrupt path (raised inside a region, reported by ``copter_cli.output.run``) gives the same
    text as the handler's at-once path: ``convert`` said "the state is unchanged" (helper-167)."""
    import typer

    from copter_cli import output

    monkeypatch.setattr(sys, "argv", ["copter", "convert", "a.parquet", "b.mps"])
    code = None
    try:
        with output.command_errors(False, False):
            raise KeyboardInterrupt
    except typer.Exit as ex:
        code = ex.exit_code
    err = capsys.readouterr().err
    assert code == 130 and "nothing was changed" in err and "state" not in err, err
