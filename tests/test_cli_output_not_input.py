"""An output file that is one of the command's inputs is refused before anything is read or written
(exit 2, naming both): ``copter diff OLD NEW -o OLD`` replaced OLD with a one-row delta and ``copter solve
M -o M`` replaced the model with its solution, both with exit 0."""

from __future__ import annotations

import hashlib
import os

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import write_problem
from tests.helpers import small_lp

runner = CliRunner()


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def two(tmp_path):
    write_problem(small_lp(), tmp_path / "old.parquet")
    write_problem(small_lp(seed=1), tmp_path / "new.parquet")
    return tmp_path


@pytest.mark.parametrize("args,victim", [
    (["diff", "old.parquet", "new.parquet", "-o", "old.parquet"], "old.parquet"),
    (["diff", "old.parquet", "new.parquet", "-o", "new.parquet"], "new.parquet"),
    (["solve", "old.parquet", "-o", "old.parquet"], "old.parquet"),
    (["convert", "old.parquet", "old.parquet"], "old.parquet"),
])
def test_an_output_that_is_an_input_is_refused_and_the_input_kept(two, args, victim):
    before = _digest(two / victim)
    res = runner.invoke(app, [str(two / a) if a.endswith(".parquet") else a for a in args])
    assert res.exit_code == 2, res.output
    assert "replace the input" in res.output and str(two / victim) in res.output
    assert _digest(two / victim) == before


def test_the_same_file_by_another_name_is_refused(two):
    os.link(two / "old.parquet", two / "alias.parquet")
    (two / "sym.parquet").symlink_to(two / "new.parquet")
    for out in ("alias.parquet", "sym.parquet"):
        res = runner.invoke(app, ["diff", str(two / "old.parquet"), str(two / "new.parquet"), "-o", str(two / out)])
        assert res.exit_code == 2, (out, res.output)


def test_other_outputs_still_work(two):
    res = runner.invoke(app, ["diff", str(two / "old.parquet"), str(two / "new.parquet"), "-o", str(two / "d.parquet")])
    assert res.exit_code == 0, res.output
    res = runner.invoke(app, ["solve", str(two / "old.parquet"), "-o", str(two / "sol.parquet")])
    assert res.exit_code == 0, res.output
