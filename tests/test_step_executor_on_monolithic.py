"""``copter step --executor X`` / ``--ray-address A`` on a monolithic state (init had no ``--partitions K``) is
refused: exit 2 naming the option and the state, nothing applied, as init refuses the same options without
``--partitions``. They were validated and then dropped without a word (exit 0), so a cron line
``step --executor ray ...`` ran every round in the step's own process while its author believed Ray ran them.
Only init makes a state partitioned, so no later round of that state would read them either."""

from __future__ import annotations

import json

import pytest

from formats.io import write_delta, write_problem
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import client_allocation, run_main, small_lp_state, snapshot


@pytest.mark.parametrize("args", [("--executor", "inline"), ("--executor", "process"),
                                  ("--ray-address", "127.0.0.1:6379"),
                                  ("--executor", "inline", "--ray-address", "127.0.0.1:6379")])
def test_executor_options_on_a_monolithic_state_are_refused(tmp_path, capsys, args):
    st, delta = small_lp_state(tmp_path)
    before = snapshot(st)
    code, out, _ = run_main(capsys, "step", delta, "--state", st, *args, "--json")
    error = json.loads(out)["error"]
    assert code == 2 and error["kind"] == "usage", out
    assert all(flag in error["message"] for flag in args if flag.startswith("--")), error
    assert "monolithic" in error["message"] and "--partitions" in error["message"], error
    assert snapshot(st) == before  # nothing applied


def test_a_batch_is_refused_before_its_first_delta(tmp_path, capsys):
    st, delta = small_lp_state(tmp_path)
    before = snapshot(st)
    code, out, _ = run_main(capsys, "step", delta, delta, "--state", st, "--executor", "inline", "--json")
    assert code == 2 and "--executor" in json.loads(out)["error"]["message"], out
    assert snapshot(st) == before


def test_a_monolithic_step_without_them_and_a_partitioned_one_with_them_still_run(tmp_path, capsys):
    st, delta = small_lp_state(tmp_path)
    code, out, _ = run_main(capsys, "step", delta, "--state", st, "--json")
    assert code == 0 and json.loads(out)["round"] == 1, out
    base = client_allocation(n_clients=4)
    write_problem(base, tmp_path / "alloc.parquet")
    part = tmp_path / "part"
    rounds.init(tmp_path / "alloc.parquet", part, partition={"k": 2, "executor": "inline"})
    write_delta(Delta.concat([Delta.vars([base.col_names[0]], cost=[2.0])], base_round=0), tmp_path / "p1.parquet")
    code, out, _ = run_main(capsys, "step", tmp_path / "p1.parquet", "--state", part, "--executor", "inline", "--json")
    assert code == 0 and json.loads(out)["partitions"]["executor"] == "inline", out
