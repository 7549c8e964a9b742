"""A signal that lands inside a C extension's module initialisation (highspy under ``copter export``, found by a
hunt: SIGHUP 0.4-0.5 s into the command) comes out of the import as ``ImportError: initialization failed`` with
the KeyboardInterrupt as its cause; it is an interrupt (128 + the signal), not an internal error (exit 1)."""

from __future__ import annotations

import json
import signal

import pytest
import typer

from copter_cli.output import command_errors, run
from formats import undo


def _import_interrupted():
    try:
        raise KeyboardInterrupt
    except KeyboardInterrupt as stop:
        raise ImportError("initialization failed") from stop


@pytest.mark.parametrize("signum,code", [(signal.SIGINT, 130), (signal.SIGHUP, 129), (signal.SIGTERM, 143)])
def test_an_interrupted_import_exits_as_the_signal(signum, code, capsys):
    def body():
        undo.received(signum)
        _import_interrupted()

    with pytest.raises(typer.Exit) as ex:
        run(True, False, body)
    assert ex.value.exit_code == code
    err = json.loads(capsys.readouterr().out)["error"]
    assert err["kind"] == "interrupted" and "internal" not in err["message"]


def test_an_import_error_of_its_own_is_still_internal(capsys):
    def body():
        raise ImportError("initialization failed")

    with pytest.raises(typer.Exit) as ex:
        with command_errors(True, False):
            body()
    assert ex.value.exit_code == 1
    assert json.loads(capsys.readouterr().out)["error"]["kind"] == "internal"
