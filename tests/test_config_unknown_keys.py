"""A key config.json holds that copter does not know is a damaged config (exit 3 naming the file, the key and
the known keys), never ignored: a mistyped ``"tolerance"`` used to be skipped and every later round solved
at the default tolerance without a word. The state layout has one version, so an unknown key is a typo."""

from __future__ import annotations

import json

import pytest

from tests.helpers import cli_json, edit_json, small_lp_state, snapshot
from tests.partition_helpers import partitioned_te_state

cli = cli_json


@pytest.fixture
def state(tmp_path):
    return small_lp_state(tmp_path, "--tol", "1e-7")


def assert_refused(st, args, entity: str, known: str) -> dict:
    before = snapshot(st)
    code, out = cli(*args, "--state", st, "--json")
    assert code == 3, (args, out)
    error = json.loads(out)["error"]
    assert error["kind"] == "state" and error["file"] == str(st / "config.json"), error
    assert error["entity"] == entity and f"unknown key {entity.split('.')[-1]!r}" in error["message"], error
    assert known in error["message"], error
    assert snapshot(st) == before, args
    return error


def test_a_mistyped_settings_key_is_exit_3_in_every_command(state):
    st, d = state
    edit_json(st / "config.json", lambda b: b["settings"].update(tolerance=b["settings"].pop("tol")))
    for args in (("step", d), ("show",), ("history",), ("export", "-o", st.parent / "out.mps")):
        assert_refused(st, args, "settings.tolerance", "tol, verbose")
    assert not (st.parent / "out.mps").exists()


def test_the_readmes_tolerance_example_gets_a_suggestion(state):
    """README's own example, ``"tolerance"`` for ``"tol"``, got no "did you mean" (difflib's ratio 0.5 is below
    its cutoff) while other typos did."""
    st, d = state
    edit_json(st / "config.json", lambda b: b["settings"].update(tolerance=b["settings"].pop("tol")))
    error = assert_refused(st, ("step", d), "settings.tolerance", "tol, verbose")
    assert "did you mean 'tol'?" in error["message"], error


@pytest.mark.parametrize("typo,meant", [("tolerance", "tol"), ("Tol", "tol"), ("time-limit", "time_limit_seconds"),
                                        ("timeout", "time_limit_seconds"), ("tol_rel", "tol")])
def test_closest_key(typo, meant):
    from dataclasses import fields

    from formats.state_config import closest_key
    from solver.model.settings import Settings

    assert closest_key(typo, [f.name for f in fields(Settings)]) == meant
    assert closest_key("zzzz", ["tol", "keep"]) is None


def test_a_mistyped_top_level_key_names_the_close_known_key(state):
    st, d = state
    edit_json(st / "config.json", lambda b: b.update(kep=b.pop("keep")))
    error = assert_refused(st, ("step", d), "kep", "format, keep, partition, settings, version")
    assert "did you mean 'keep'?" in error["message"]


def test_a_mistyped_partition_key_is_exit_3_on_step(tmp_path):
    st, d = partitioned_te_state(tmp_path)
    edit_json(st / "config.json", lambda b: b["partition"].update(executr=b["partition"].pop("executor")))
    error = assert_refused(st, ("step", d), "partition.executr", "client_regex, executor, inline_below_nnz, k")
    assert "did you mean 'executor'?" in error["message"]


def test_a_partition_entry_that_is_not_an_object_is_exit_3(state):
    st, d = state
    edit_json(st / "config.json", lambda b: b.update(partition=[4]))
    before = snapshot(st)
    code, out = cli("step", d, "--state", st, "--json")
    error = json.loads(out)["error"]
    assert code == 3 and error["entity"] == "partition" and "not an object" in error["message"], out
    assert snapshot(st) == before
