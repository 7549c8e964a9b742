"""``--executor ray`` without Ray installed is exit 8 (an optional extra is not installed) naming the extra (it
was exit 2 until session 35, against the exit-code table), before anything is written. A monolithic state's step
used to accept it and exit 0 (the executor is unused there); it now refuses the option itself (exit 2)."""

from __future__ import annotations

import sys

import pytest

from formats.io import write_delta, write_problem
from solver import rounds
from solver.workloads import make_scenario
from tests.helpers import run_main, snapshot


@pytest.fixture
def no_ray(monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # ``import ray`` raises ImportError


@pytest.mark.parametrize("partition, code, needle", [(None, 2, "monolithic state"),
                                                     ({"k": 2, "executor": "inline"}, 8, "pip install '.[ray]'")],
                         ids=["monolithic", "partitioned"])
def test_step_with_ray_missing_is_exit_8_naming_the_extra(tmp_path, capsys, no_ray, partition, code, needle):
    """A monolithic state refuses ``--executor`` itself first (exit 2): no extra to install for an option it
    would not use (helper-168)."""
    sc = make_scenario("te", 16, seed=4)
    state = tmp_path / "st"
    rounds.init(sc.base(), state, partition=partition)
    delta = tmp_path / "d1.parquet"
    write_delta(sc.next_delta(1), delta)
    before = snapshot(state)
    got, _, err = run_main(capsys, "step", delta, "--state", state, "--executor", "ray")
    assert got == code, err
    assert needle in err and "--executor" in err
    assert snapshot(state) == before


def test_init_with_ray_missing_writes_nothing(tmp_path, capsys, no_ray):
    base = tmp_path / "base.parquet"
    write_problem(make_scenario("te", 16, seed=4).base(), base)
    code, _, err = run_main(capsys, "init", base, "--state", tmp_path / "st", "--partitions", "2", "--executor", "ray")
    assert code == 8 and "pip install '.[ray]'" in err and "pip install 'ray" in err
    assert not (tmp_path / "st").exists()
