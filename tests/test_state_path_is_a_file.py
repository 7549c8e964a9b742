"""`--state PATH` naming a file says so in every command; the read-only ones said `not an initialised copter state
directory (run copter init BASE --state PATH)`, an init that then fails the same way, where step and init said
`is a file, not a state directory`."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from copter_cli.app import app

BAD_INPUT = 3


@pytest.mark.parametrize("args", [["history"], ["show"], ["show", "--solution"], ["rollback"],
                                  ["export", "-o", "x.mps"], ["compare", "--baseline", "highs"]],
                         ids=lambda a: " ".join(a))
def test_the_error_says_the_path_is_a_file(tmp_path, monkeypatch, args):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "afile").write_text("not a state\n")
    res = CliRunner().invoke(app, [*args, "--state", "afile"])
    assert res.exit_code == BAD_INPUT, res.output
    assert "afile: is a file, not a state directory" in res.stderr, res.stderr
    assert (tmp_path / "afile").read_text() == "not a state\n" and not (tmp_path / "x.mps").exists()
