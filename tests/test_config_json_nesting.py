"""A config.json nested too deeply for Python's JSON parser (``[[[[...]]]]``, a damaged or hostile file)
is a damaged config like any other text that is not JSON: exit 3 naming config.json for every command, never
an internal error (exit 1, RecursionError) and never a changed state."""

from __future__ import annotations

import json

import pytest

from tests.helpers import cli_json, small_lp_state, snapshot

cli = cli_json


@pytest.fixture
def state(tmp_path):
    return small_lp_state(tmp_path)


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


def test_read_only_commands_refuse_a_deeply_nested_config_as_they_refuse_a_bad_value(state):
    """A config.json that is not JSON fails show and history too (exit 3 naming it), as a bad value in a JSON
    config.json always did: a damaged config is never silently skipped."""
    st, _ = state
    (st / "config.json").write_text("{\"settings\": " + "[" * 100_000 + "]" * 100_000 + "}")
    for args in (("show",), ("history",)):
        code, out = cli(*args, "--state", st, "--json")
        assert code == 3, (args, out)
        error = json.loads(out)["error"]
        assert error["file"] == str(st / "config.json") and "nested too deeply" in error["message"], (args, error)
