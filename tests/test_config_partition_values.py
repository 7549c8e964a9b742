"""config.json's ``partition`` values are checked like its ``settings``: a value of the wrong JSON type
(``"k": "2"``, ``null``, ``2.5``), out of the range init's options accept (``"k": 0``, ``"workers": 0``,
``"k": 1e20``) or a regex that does not compile is exit 3 naming config.json and ``partition.<key>``, the
state untouched. They were an internal error (exit 1, TypeError/OverflowError), an error naming an option
the user never gave (``--partitions must be at least 1``, exit 2), or taken silently (``"workers": 0``).
A ``ray_address`` not of a Ray address's form (hand-edited, or stored by an init before it checked the form
whatever the executor) is damage too, whatever the executor: ``step --executor ray`` blamed it on
``--ray-address`` (exit 2), an option the user did not give."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from tests.helpers import require_ray, snapshot
from tests.partition_helpers import partitioned_te_state


def cli(*args):
    res = CliRunner().invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout


@pytest.fixture(scope="module")
def pstate(tmp_path_factory):
    return partitioned_te_state(tmp_path_factory.mktemp("pcfg"))


@pytest.mark.parametrize("key,value", [
    ("k", "2"), ("k", 2.5), ("k", None), ("k", True), ("k", 0), ("k", 10**20),
    ("whole_below_nnz", None), ("whole_below_nnz", "x"), ("whole_below_nnz", -5),
    ("passes", None), ("passes", 0), ("workers", 0), ("workers", "2"), ("update_every", "x"),
    ("probe", "no"), ("seed", "a"), ("executor", None), ("executor", "thread2"), ("client_regex", 5),
    ("client_regex", "("), ("ray_address", 5), ("ray_address", "nocolon"), ("ray_address", "ray://"),
    ("ray_address", "10.0.0.5:99999"),
])
def test_a_bad_stored_partition_value_is_exit_3_naming_the_key(pstate, tmp_path, key, value):
    st, delta, config = _damaged_copy(pstate, tmp_path, key, value)
    before = snapshot(st)
    code, out = cli("step", delta, "--state", st, "--json")
    assert code == 3, (key, value, out)
    error = json.loads(out)["error"]
    assert error["file"] == str(config) and error["entity"] == f"partition.{key}", error
    assert f"partition.{key}" in error["message"] and repr(value) in error["message"], error
    assert snapshot(st) == before


def _damaged_copy(pstate, tmp_path, key, value):
    import shutil

    src, delta = pstate
    st = tmp_path / "st"
    shutil.copytree(src, st)
    config = st / "config.json"
    body = json.loads(config.read_text())
    body["partition"][key] = value
    config.write_text(json.dumps(body))
    return st, delta, config


@pytest.mark.parametrize("args", [("--executor", "ray"), ("--executor", "ray", "--ray-address", "127.0.0.1:6379")])
def test_a_malformed_stored_ray_address_is_the_state_s_damage_on_a_ray_step(pstate, tmp_path, args):
    """The form check happens before Ray is started: no cluster needed. Without Ray installed ``--executor ray``
    is refused first (exit 8, naming the ``ray`` extra), so the test needs the extra."""
    require_ray()
    st, delta, config = _damaged_copy(pstate, tmp_path, "ray_address", "nocolon")
    before = snapshot(st)
    code, out = cli("step", delta, "--state", st, *args, "--json")
    error = json.loads(out)["error"]
    assert code == 3 and error["file"] == str(config) and error["entity"] == "partition.ray_address", out
    assert "config.json is damaged: partition.ray_address must be host:port" in error["message"], error
    assert "'nocolon'" in error["message"], error
    assert snapshot(st) == before


@pytest.mark.parametrize("address", [None, "", "auto", "local", "127.0.0.1:6379", "ray://head:10001", "[::1]:6379"])
def test_a_well_formed_stored_ray_address_passes(address):
    from solver.rounds.partitioned import _check_stored

    _check_stored({"k": 2, "executor": "process", "ray_address": address}, "config.json")


@pytest.mark.parametrize("option,key", [("--share-update-every", "update_every"),
                                        ("--whole-below-nnz", "whole_below_nnz")])
def test_a_huge_value_init_accepts_is_read_back_by_step(pstate, tmp_path, option, key):
    """init takes any --share-update-every / --whole-below-nnz >= 0 and stores it: the check of config.json
    must not refuse at the next step what init stored."""
    import shutil

    src, delta = pstate
    st = tmp_path / "st"
    shutil.copytree(src, st)
    config = st / "config.json"
    body = json.loads(config.read_text())
    body["partition"][key] = 10**30
    config.write_text(json.dumps(body))
    code, out = cli("step", delta, "--state", st, "--json")
    assert code == 0, (option, out)


def test_the_stored_executors_are_the_executors():
    from solver.partition.executor import EXECUTORS
    from solver.rounds.partitioned import _STORED_EXECUTORS

    assert _STORED_EXECUTORS == EXECUTORS
