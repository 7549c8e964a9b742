"""User text (paths, names, warnings) reaches stderr verbatim: rich's emoji codes are off, so ``:smile:`` or
``:cd:`` in a path or a client name is printed as typed, not as a picture (``copter_cli.output``), with the
console built or not, in a message, a warning and a table cell."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from copter_cli import output

PATH = "/data/run:cd:/round:smile:.mps"


@pytest.mark.parametrize("built", [False, True])
def test_say_and_warnings_print_emoji_codes_as_typed(monkeypatch, capsys, built):
    lazy = output.LazyConsole(**output.CONSOLE_OPTIONS)
    monkeypatch.setattr(output, "console", lazy)
    if built:
        lazy.get()
    output.say(f"wrote {PATH}")
    output.say_warnings({"warnings": [f"kept {PATH}"]})
    assert capsys.readouterr().err == f"wrote {PATH}\nwarning: kept {PATH}\n"


def test_a_table_cell_prints_emoji_codes_as_typed():
    from copter_cli.table_fit import Column, print_fitted

    buf = io.StringIO()
    like = Console(file=buf, width=80, **{k: v for k, v in output.CONSOLE_OPTIONS.items() if k != "stderr"})
    print_fitted([Column("name", "left")], [[PATH]], console=like, terminal=False)  # off a terminal: wide_console
    assert PATH in buf.getvalue()


def test_a_client_name_in_the_allocation_table_prints_as_typed(capsys):
    from copter_cli.allocation_view import print_allocation

    print_allocation({"round": 1, "status": "OPTIMAL", "objective": 1.0, "n_nonzero": 1, "n_variables": 1,
                      "zero_tol": 1e-9, "sum": 1.0, "n_clients": 1, "clients_omitted": 0,
                      "clients": [{"client": "team:cd:", "nonzero": 1, "sum": 1.0, "share": 1.0,
                                   "top": [{"name": "team:cd:/x", "value": 1.0}]}]})
    err = capsys.readouterr().err
    assert "team:cd:/x 1" in err and "\N{OPTICAL DISC}" not in err
