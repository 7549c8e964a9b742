"""A config.json without the keys init always writes (``format`` = ``copter-state``, ``version``, ``settings``) is
damaged: exit 3 naming config.json and the key, state untouched. Replaced by ``{}`` it was accepted and every round
solved at the default settings. A single setting missing from ``settings`` stays accepted (a state written by an
older copter lacks the settings added since)."""

from __future__ import annotations

import json

import pytest

from tests.helpers import cli_json, small_lp_state, snapshot


def _edit(st, change) -> None:
    cfg = json.loads((st / "config.json").read_text())
    change(cfg)
    (st / "config.json").write_text(json.dumps(cfg))


@pytest.mark.parametrize(("change", "entity"), [
    (lambda c: c.clear(), "format"),
    (lambda c: c.pop("format"), "format"),
    (lambda c: c.pop("version"), "version"),
    (lambda c: c.pop("settings"), "settings"),
    (lambda c: c.update(format="copter-problem"), "format"),
])
@pytest.mark.parametrize("command", ["step", "show"])
def test_a_config_without_a_required_key_is_exit_3_naming_it(tmp_path, change, entity, command):
    st, delta = small_lp_state(tmp_path, "--tol", "1e-6")
    _edit(st, change)
    before = snapshot(st)
    args = ("step", delta) if command == "step" else ("show",)
    code, out = cli_json(*args, "--state", st, "--json")
    err = json.loads(out)["error"]
    assert code == 3 and err["kind"] == "state" and err["entity"] == entity, out
    assert err["file"] == str(st / "config.json") and "config.json is damaged" in err["message"]
    assert snapshot(st) == before


def test_a_missing_single_setting_is_still_its_default(tmp_path):
    st, delta = small_lp_state(tmp_path, "--tol", "1e-6")
    _edit(st, lambda c: c["settings"].pop("iis_seconds"))
    code, out = cli_json("step", delta, "--state", st, "--json")
    assert code == 0 and json.loads(out)["round"] == 1, out
