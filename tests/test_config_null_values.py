"""A null in config.json where copter never writes one (``"tol": null``, ``"settings": null``) is a damaged config:
exit 3 naming config.json and the key, the state untouched. It used to mean the default silently, so a state whose
``tol`` was set by init to 1e-7 and later nulled by a bad edit solved every round at 1e-4 without a word. A setting
whose null is a value of its own (``relaxation_tol``: the same as ``tol``; init writes it) is still read."""

from __future__ import annotations

import json

import pytest

from tests.helpers import cli_json, edit_json, small_lp_state, snapshot

cli = cli_json


@pytest.fixture
def state(tmp_path):
    return small_lp_state(tmp_path, "--tol", "1e-7")


@pytest.mark.parametrize("entity", ["settings.tol", "settings.iteration_limit", "settings.presolve",
                                    "settings.bound_objective_scaling", "settings", "partition", "format"])
def test_a_null_is_exit_3_naming_config_json_and_the_key_in_every_command(state, entity):
    st, d = state

    def set_null(body):
        *section, key = entity.split(".")
        (body[section[0]] if section else body)[key] = None

    edit_json(st / "config.json", set_null)
    before = snapshot(st)
    for args in (("step", d), ("show",), ("history",), ("export", "-o", st.parent / "out.mps")):
        code, out = cli(*args, "--state", st, "--json")
        assert code == 3, (args, out)
        error = json.loads(out)["error"]
        assert error["kind"] == "state" and error["file"] == str(st / "config.json"), error
        assert error["entity"] == entity and f"{entity} is null" in error["message"], error
        assert snapshot(st) == before, args
    assert not (st.parent / "out.mps").exists()


def test_a_setting_whose_null_is_a_value_is_still_read(state):
    """init itself writes ``"relaxation_tol": null`` (None: the same as ``tol``)."""
    st, d = state
    assert json.loads((st / "config.json").read_text())["settings"]["relaxation_tol"] is None
    code, out = cli("step", d, "--state", st, "--json")
    assert code == 0, out


def test_the_library_reader_refuses_a_null_too():
    """``settings_from_json`` (the library's reader of the stored settings) no longer skips a null: Settings refuses
    it for a field that is never None."""
    from solver.model.errors import SettingsError
    from solver.rounds.config import settings_from_json

    with pytest.raises(SettingsError, match="tol"):
        settings_from_json({"tol": None})
    assert settings_from_json({"relaxation_tol": None}).relaxation_tol is None


@pytest.mark.parametrize("value", [1.0, 5.0])
def test_a_stored_tol_of_one_or_more_is_damage_not_a_tolerance_that_accepts_anything(state, value):
    """Hunt 37: config.json's tol 5 made an infeasible round OPTIMAL (the warm start "met" it), while `--tol 5`
    was refused; the library now refuses a relative tolerance of 1 or more, so the stored one is damage."""
    st, d = state
    edit_json(st / "config.json", lambda body: body["settings"].update(tol=value))
    before = snapshot(st)
    code, out = cli("step", d, "--state", st, "--json")
    error = json.loads(out)["error"]
    assert code == 3 and error["entity"] == "settings.tol" and "must be below 1" in error["message"], out
    assert snapshot(st) == before
