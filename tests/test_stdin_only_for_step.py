"""`-` given to a command that reads a problem file (init, solve, convert, diff) says that only `copter step -`
reads standard input; it said `cannot tell the format of '-' from its extension`, as if a suffix were missing."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from copter_cli.app import app

USAGE = 2


@pytest.mark.parametrize("args", [["init", "-"], ["solve", "-"], ["convert", "-", "out.parquet"],
                                  ["diff", "-", "new.parquet", "-o", "d.parquet"]], ids=lambda a: a[0])
def test_stdin_is_named_as_such(tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(app, [*args, "--state", str(tmp_path / "s")] if args[0] == "init" else args)
    assert res.exit_code == USAGE, res.output
    assert "read only by `copter step -`" in res.stderr, res.stderr
    assert not (tmp_path / "s").exists()
