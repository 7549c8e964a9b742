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
        msg = entry._as_the_command_says("interrupted by SIGTERM; the state is unchanged")
    finally:
        undo.begin_command()
    assert msg == ("interrupted by SIGTERM; r/rep.html and r/png/round-time.png are written (whole) and nothing "
                   "else was changed"), msg


def test_nothing_written_says_nothing_was_changed(monkeypatch):
    monkeypatch.setattr(sys, "argv", ["copter", "report", "-o", "r/rep.html"])
    undo.begin_command()
    msg = entry._as_the_command_says("interrupted; the state is unchanged")
    assert msg.endswith("nothing was changed (copter writes a file whole or not at all)"), msg
