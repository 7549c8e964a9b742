"""A MILP round its time limit stopped above the --mip-gap target says so in a warning (user trial 37: exit 0
rounds 41-58% worse than unlimited ones, no warning)."""

from __future__ import annotations

from types import SimpleNamespace

from solver.model.settings import Settings
from solver.model.status import Status
from solver.rounds.limit_warning import time_limit_gap_warning

STOPPED = "integer point from the heuristic; gap 2.39; time limit 0.4 s reached (0.46 s since the command started)"


def _result(status=Status.FEASIBLE, gap=2.39, message=STOPPED):
    return SimpleNamespace(status=status, message=message, mip={"gap_rel": gap})


def test_a_round_stopped_by_its_limit_above_target_is_warned():
    (w,) = time_limit_gap_warning(_result(), Settings(time_limit_seconds=0.4), 3)
    assert w.startswith("round 3 stopped at its time limit (0.4 s") and "239% from its LP bound" in w
    assert "--mip-gap target 0.5%" in w and "--time-limit" in w


def test_no_warning_without_the_limit_within_target_or_other_status():
    limited = Settings(time_limit_seconds=0.4)
    assert time_limit_gap_warning(_result(gap=0.004), limited, 1) == []  # within 0.5%
    assert time_limit_gap_warning(_result(message="integer point from the heuristic; gap 2.39"), limited, 1) == []
    assert time_limit_gap_warning(_result(), Settings(), 1) == []  # no limit set
    assert time_limit_gap_warning(_result(status=Status.OPTIMAL), limited, 1) == []
    assert time_limit_gap_warning(_result(gap=None), limited, 1) == []
    assert time_limit_gap_warning(SimpleNamespace(status=Status.FEASIBLE, message=STOPPED, mip=None), limited, 1) == []
    assert time_limit_gap_warning(_result(gap=float("inf")), limited, 1) == []


def test_a_partitioned_rounds_merged_message_counts_when_the_command_spent_its_limit(monkeypatch):
    """helper-174: a partitioned round's merged message never says "time limit ... reached"; a CLI command that has
    spent its limit up to the merge's reserve was stopped by it."""
    from solver import clock

    merged = _result(message="4 parts merged; gap to the Lagrangian bound 6.313%")
    limited = Settings(time_limit_seconds=0.6)
    monkeypatch.setattr(clock, "command_start", lambda: 1.0)
    monkeypatch.setattr(clock, "elapsed", lambda: 0.58)  # past 0.6 less the reserve (0.06)
    (w,) = time_limit_gap_warning(merged, limited, 2)
    assert "time limit (0.6 s from the command's start, start-up included)" in w
    monkeypatch.setattr(clock, "elapsed", lambda: 0.3)  # the round ended well inside its limit
    assert time_limit_gap_warning(merged, limited, 2) == []


def test_init_and_step_reports_carry_the_warning(tmp_path):
    """The wiring (solver/rounds/loop.py): a spent budget (0 s, the library's limit counts from the solve) stops a
    Sia round at its first check, FEASIBLE at a gap above 0.5%."""
    from solver import rounds
    from solver.workloads import make_scenario

    sc = make_scenario("sia", 128, seed=0)
    rep = rounds.init(sc.problem(), tmp_path / "s", settings=Settings(time_limit_seconds=0.0))
    assert rep["status"] == "FEASIBLE" and rep["gap_rel"] > 0.005
    assert rep["warnings"][-1].startswith("round 0 stopped at its time limit (0 s) with an integer point")
    rep = rounds.step(sc.next_delta(1), tmp_path / "s", settings=Settings(time_limit_seconds=0.0))
    assert rep["status"] == "FEASIBLE" and rep["gap_rel"] > 0.005
    assert any(w.startswith("round 1 stopped at its time limit (0 s)") for w in rep["warnings"])
    rep = rounds.step(sc.next_delta(2), tmp_path / "s", settings=Settings())  # init stored its 0 s: not here
    assert rep["status"] == "OPTIMAL" and not any("stopped at its time limit" in w for w in rep.get("warnings", []))


def test_solve_warns_as_init_does(tmp_path):
    """helper-193: ``copter solve --time-limit`` of a MILP that stopped above its --mip-gap was exit 0 without the
    warning ``init`` of the same model gives."""
    import json

    from typer.testing import CliRunner

    from copter_cli.app import app
    from formats.io import write_problem
    from solver.workloads import make_scenario

    path = tmp_path / "sia.parquet"
    write_problem(make_scenario("sia", 128, seed=0).problem(), path)
    res = CliRunner().invoke(app, ["solve", str(path), "--time-limit", "1e-6", "--json"])
    assert res.exit_code == 0, res.stdout + res.stderr
    rep = json.loads(res.stdout)
    assert rep["status"] == "FEASIBLE" and rep["gap_rel"] > 0.005, rep
    (w,) = [w for w in rep["warnings"] if "stopped at its time limit" in w]
    assert w.startswith("the solve stopped at its time limit (1e-06 s") and "above the --mip-gap target 0.5%" in w
    assert "warning: the solve stopped at its time limit" in res.stderr


def test_a_round_whose_relaxation_hit_its_iteration_limit_above_target_is_warned():
    """helper-221: ``--iteration-limit 20`` on Sia 1,024 ended FEASIBLE 30% from the bound, exit 0, without a word."""
    res = SimpleNamespace(status=Status.FEASIBLE, message="integer point from the heuristic; gap 0.301",
                          mip={"gap_rel": 0.301, "lp_status": "ITERATION_LIMIT"})
    (w,) = time_limit_gap_warning(res, Settings(iteration_limit=20), 0)
    assert w.startswith("round 0's LP relaxation stopped at its iteration limit (20 iterations)") and "30.1%" in w
    assert "--iteration-limit" in w
    res.mip["gap_rel"] = 0.004  # within --mip-gap: nothing to say
    assert time_limit_gap_warning(res, Settings(iteration_limit=20), 0) == []
    res.mip.update(gap_rel=0.301, lp_status="OPTIMAL")  # the relaxation finished: not the limit's doing
    assert time_limit_gap_warning(res, Settings(iteration_limit=20), 0) == []


def test_init_with_a_small_iteration_limit_warns(tmp_path):
    from solver import rounds
    from solver.workloads import make_scenario

    sc = make_scenario("sia", 1024, seed=0)
    st = Settings(iteration_limit=20, integer_fallback="none", integer_submip_gap=float("inf"))
    rep = rounds.init(sc.problem(), tmp_path / "s", settings=st)
    assert rep["status"] == "FEASIBLE" and rep["mip"]["lp_status"] == "ITERATION_LIMIT" and rep["gap_rel"] > 0.005
    assert any(w.startswith("round 0's LP relaxation stopped at its iteration limit") for w in rep["warnings"]), rep
