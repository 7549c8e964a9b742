"""A state whose partitioned rounds run on Ray (``init --executor ray``), stepped or compared where Ray is not
installed (another machine, a runtime-only venv), is exit 8 naming the state's stored executor, the extra and
the per-round way out (``--executor process``). The error said ``--executor ray needs Ray``, an option the
operator had not given, with no hint that the state chose it or that one option runs the round anyway."""

from __future__ import annotations

import json
import sys

import pytest

from formats.io import write_delta
from solver import rounds
from solver.workloads import make_scenario
from tests.helpers import cli_json, edit_json, snapshot


@pytest.fixture
def ray_state(tmp_path):
    """A K = 2 state (made inline) whose config.json says executor ray, and round 1's delta."""
    sc = make_scenario("te", 16, seed=4)
    state = tmp_path / "st"
    rounds.init(sc.base(), state, partition={"k": 2, "executor": "inline"})
    edit_json(state / "config.json", lambda body: body["partition"].update(executor="ray"))
    delta = tmp_path / "d1.parquet"
    write_delta(sc.next_delta(1), delta)
    return state, delta


@pytest.mark.parametrize("command", ["step", "compare"])
def test_the_states_ray_without_ray_names_the_state_and_the_way_out(ray_state, monkeypatch, command):
    state, delta = ray_state
    monkeypatch.setitem(sys.modules, "ray", None)  # ``import ray`` raises ImportError
    before = snapshot(state)
    args = ["step", delta] if command == "step" else ["compare", "-b", "pop", "--k", "2"]
    code, out = cli_json(*args, "--state", state, "--json")
    message = json.loads(out)["error"]["message"]
    assert code == 8, out
    assert json.loads(out)["error"]["kind"] == "missing_dependency"
    assert "pip install '.[ray]'" in message and "copter[ray]" not in message and str(state / "config.json") in message, message
    assert "--executor process" in message, message
    assert snapshot(state) == before


def test_the_way_out_runs_the_round(ray_state, monkeypatch):
    state, delta = ray_state
    monkeypatch.setitem(sys.modules, "ray", None)
    code, out = cli_json("step", delta, "--state", state, "--executor", "inline", "--json")
    assert code == 0, out
    assert json.loads(out)["partitions"]["executor"] == "inline"
