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
    assert "standard input only in `copter step -`" in res.stderr, res.stderr
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("args", [["export", "-o", "-"], ["convert", "IN", "-"], ["diff", "IN", "IN", "-o", "-"]],
                         ids=lambda a: a[0])
def test_an_output_named_dash_is_refused_as_an_output(tmp_path, monkeypatch, args):
    """An output named ``-`` was refused with the reading message ("read only by `copter step -`"), wrong for a file
    copter was asked to write."""
    from formats.io import write_problem
    from solver import rounds
    from tests.helpers import small_lp

    monkeypatch.chdir(tmp_path)
    write_problem(small_lp(), tmp_path / "in.mps")
    rounds.init(small_lp(), tmp_path / "s")
    argv = [str(tmp_path / "in.mps") if a == "IN" else a for a in args]
    res = CliRunner().invoke(app, [*argv, "--state", str(tmp_path / "s")] if args[0] == "export" else argv)
    assert res.exit_code == USAGE, res.output
    assert "writes no model or delta file to standard output" in res.stderr, res.stderr
    assert not (tmp_path / "-").exists()
