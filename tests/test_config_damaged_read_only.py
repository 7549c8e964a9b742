"""A config.json that is there but not JSON (or not a JSON object) fails the read-only commands as it fails
``step``: exit 3 naming config.json, the state unchanged. They used to skip it without a word (exit 0), while a
bad value in a JSON config.json failed them with exit 3 (the hunt's F8 (a))."""

from __future__ import annotations

import json

import pytest

from tests.helpers import cli_json, small_lp_state, snapshot


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    return small_lp_state(tmp_path_factory.mktemp("config"))


@pytest.mark.parametrize(("text", "words"), [('{"format": "copter-st', "not JSON"), ("[1, 2]", "a JSON list"),
                                             ("\udcff".encode("utf-8", "surrogateescape"), "not JSON")])
@pytest.mark.parametrize("args", [("show",), ("history",), ("export", "-o", "{tmp}/e.parquet"), ("rollback",)])
def test_a_config_json_that_is_not_a_json_object_is_exit_3_naming_it(state, tmp_path, text, words, args):
    st, _ = state
    config = st / "config.json"
    good = config.read_bytes()
    try:
        config.write_bytes(text if isinstance(text, bytes) else text.encode())
        before = snapshot(st)
        code, out = cli_json(*(a.format(tmp=tmp_path) for a in args), "--state", st, "--json")
        assert code == 3, (args, out)
        error = json.loads(out)["error"]
        assert error["kind"] == "state" and error["file"] == str(config), error
        assert "config.json is damaged" in error["message"] and words in error["message"], error
        assert snapshot(st) == before
        assert not (tmp_path / "e.parquet").exists()
    finally:
        config.write_bytes(good)
