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


def test_a_missing_config_json_fails_the_writers_and_the_readers_say_they_used_the_defaults(tmp_path):
    # helper-211: with config.json gone, `show --solution` of a state initialised with --tol 0.5 listed the values
    # above 1e-4 without a word, and rollback moved CURRENT where step refused the state as damaged
    from formats.io import write_problem
    from tests.helpers import small_lp

    base = tmp_path / "base.parquet"
    write_problem(small_lp(), base)
    st = tmp_path / "st"
    code, out = cli_json("init", base, "--state", st, "--tol", "0.5", "--json")
    assert code == 0, out
    code, out = cli_json("show", "--solution", "--state", st, "--json")
    assert code == 0 and "warnings" not in json.loads(out), out
    (st / "config.json").rename(tmp_path / "config.bak")
    before = snapshot(st)
    for args in (("show",), ("show", "--solution"), ("history",), ("export", "-o", str(tmp_path / "e.parquet"))):
        code, out = cli_json(*args, "--state", st, "--json")
        assert code == 0, (args, out)
        said = json.loads(out)
        warnings = said.get("warnings") if isinstance(said, dict) else None
        if warnings is None and args == ("history",):
            code, out = cli_json(*args, "--state", st)  # history's JSON is its rows: the warning goes to stderr
        assert "config.json is missing" in (" ".join(warnings) if warnings else out), (args, out)
    code, out = cli_json("rollback", "--state", st, "--json")
    assert code == 3 and "config.json is missing" in json.loads(out)["error"]["message"], out
    assert snapshot(st) == before


@pytest.mark.parametrize(("version", "shown"), [(True, "true"), ("1", '"1"'), (0, "0")])
def test_a_version_that_is_no_positive_integer_is_shown_as_json_writes_it(state, version, shown):
    """hunt 56: ``"version": true`` was shown as Python's ``True``; the message quotes the file's own JSON."""
    st, _ = state
    config = st / "config.json"
    good = config.read_bytes()
    try:
        body = json.loads(good)
        body["version"] = version
        config.write_text(json.dumps(body))
        code, out = cli_json("show", "--state", st, "--json")
        error = json.loads(out)["error"]
        assert code == 3 and f"state format version {shown} is not a positive integer" in error["message"], error
    finally:
        config.write_bytes(good)
