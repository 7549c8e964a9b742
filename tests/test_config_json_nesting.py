"""A config.json nested too deeply for Python's JSON parser (``[[[[...]]]]``, a damaged or hostile file)
is a damaged config like any other text that is not JSON: exit 3 naming config.json for the commands that
need it, never an internal error (exit 1, RecursionError) and never a changed state."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from tests.helpers import small_lp, snapshot


def cli(*args):
    res = CliRunner().invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout


@pytest.fixture
def state(tmp_path):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    code, out = cli("init", tmp_path / "base.parquet", "--state", st, "--json")
    assert code == 0, out
    d = tmp_path / "d1.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), d)
    return st, d


def test_a_deeply_nested_config_is_exit_3_naming_the_file(state):
    st, d = state
    (st / "config.json").write_text("[" * 100_000 + "]" * 100_000)
    before = snapshot(st)
    code, out = cli("step", d, "--state", st, "--json")
    assert code == 3, out
    error = json.loads(out)["error"]
    assert error["kind"] == "state" and error["file"] == str(st / "config.json"), error
    assert "nested too deeply" in error["message"], error
    assert snapshot(st) == before


def test_read_only_commands_read_a_deeply_nested_config_as_an_unreadable_one(state):
    st, _ = state
    (st / "config.json").write_text("{\"settings\": " + "[" * 100_000 + "]" * 100_000 + "}")
    for args in (("show",), ("history",)):
        code, out = cli(*args, "--state", st, "--json")
        assert code == 0, (args, out)
