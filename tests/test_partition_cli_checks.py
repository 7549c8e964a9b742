"""Partition options checked before any work: an unknown ``--executor`` is exit 2 naming the option also on a
monolithic state (``copter step`` used to ignore it there and exit 0), and init refuses it before writing."""

from __future__ import annotations

from formats.io import write_delta
from solver import rounds
from solver.workloads import make_scenario
from tests.helpers import run_main, snapshot


def test_unknown_executor_is_a_usage_error_on_a_monolithic_state(tmp_path, capsys):
    sc = make_scenario("te", 16, seed=4)
    state = tmp_path / "st"
    rounds.init(sc.base(), state)
    delta = tmp_path / "d1.parquet"
    write_delta(sc.next_delta(1), delta)
    before = snapshot(state)
    code, _, err = run_main(capsys, "step", delta, "--state", state, "--executor", "foo")
    assert code == 2 and "--executor" in err and "foo" in err
    assert snapshot(state) == before


def test_unknown_executor_at_init_writes_nothing(tmp_path, capsys):
    base = tmp_path / "base.parquet"
    from formats.io import write_problem

    write_problem(make_scenario("te", 16, seed=4).base(), base)
    code, _, err = run_main(capsys, "init", base, "--state", tmp_path / "st", "--executor", "foo")
    assert code == 2 and "--executor" in err
    assert not (tmp_path / "st").exists()
