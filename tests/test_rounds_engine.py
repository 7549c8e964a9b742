"""The continual loop (solver.rounds) in-process: reports, no-op re-apply, round checks, failure
behaviour, rollback, and warm-equals-cold against HiGHS on shared LP instances."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp

from copter_cli import exit_codes
from formats.checkpoint import StateStore
from solver import rounds
from solver.model.delta import Delta
from solver.model.errors import RoundMismatchError, StateError, UsageError, ValidationError
from solver.model.problem import Problem
from solver.model.settings import Settings
from tests.helpers import infeasible_delta, require_data, small_lp, snapshot

REPORT_KEYS = {"round", "status", "objective", "iterations", "warm_started", "primal_residual_rel",
               "dual_residual_rel", "seconds", "changed_variables", "delta_sha256", "solution_path",
               "duals_path", "changes_path", "message"}


@pytest.fixture
def state(tmp_path):
    st = tmp_path / "st"
    rep = rounds.init(small_lp(), st, Settings(tol=1e-6))
    assert rep["status"] == "OPTIMAL"
    return st


def test_init_writes_round_zero_with_every_report_field(state):
    rep = rounds.show(state)
    assert REPORT_KEYS <= set(rep) and rep["round"] == 0 and not rep["warm_started"]
    assert set(rep["seconds"]) >= {"load", "apply", "solve", "integerize", "save", "total"}
    sol = pq.read_table(state / rep["solution_path"])
    assert sol.column_names == ["name", "value", "reduced_cost"] and sol.num_rows == 30
    duals = pq.read_table(state / rep["duals_path"])
    assert duals.column_names == ["name", "activity", "dual"] and duals.num_rows == 12
    ch = pq.read_table(state / rep["changes_path"]).to_pydict()
    assert ch["kind"].count("var_added") == 30 and ch["kind"].count("con_added") == 12
    assert (state / "CURRENT").read_text() == "0\n"


def test_step_advances_and_lists_changes(state, tmp_path):
    d = Delta.concat([Delta.vars(["x3", "new"], cost=[50.0, 2.0], upper=[None, 1.0]),
                      Delta.coefs(var=["new"], con=["cap0"], value=[1.0]), Delta.drop_vars(["x7"])],
                     base_round=0)
    rep = rounds.step(d, state, out_dir=tmp_path / "out")
    assert rep["round"] == 1 and rep["status"] == "OPTIMAL" and rep["warm_started"]
    assert (state / "CURRENT").read_text() == "1\n"
    ch = pq.read_table(state / rep["changes_path"]).to_pydict()
    rows = dict(zip(ch["name"], ch["kind"], strict=True))
    assert rows["new"] == "var_added" and rows["x7"] == "var_removed"
    assert rep["changed_variables"] == sum(k != "con_added" and k != "con_removed" for k in ch["kind"])
    assert sorted(os.listdir(tmp_path / "out")) == ["changes.parquet", "duals.parquet", "report.json",
                                                    "solution.parquet"]
    assert json.loads((state / "gen-000001" / "report.json").read_text())["delta_sha256"] == rep["delta_sha256"]


def test_reapplying_the_same_delta_is_a_no_op(state):
    d = Delta.vars(["x1"], cost=[3.0])
    d.base_round = 0
    rounds.step(d, state)
    before = snapshot(state)
    rep = rounds.step(d, state)
    assert rep["no_op"] and "already produced round 1" in rep["message"] and exit_codes.for_report(rep) == 0
    assert rep["round"] == 1 and rep["current_round"] == 1 and not rep.get("warnings")
    assert snapshot(state) == before


def test_a_stale_reapply_names_the_round_it_produced_without_its_warnings(state):
    d = Delta.vars(["x1"], cost=[3.0])
    d.base_round = 7  # applied with --force: its round carries a warning (a stale re-apply of a delta
    first = rounds.step(d, state, force=True)  # without base_round is a change coming back: applied again)
    assert first["round"] == 1 and first["warnings"]
    rounds.step(Delta.vars(["x2"], cost=[4.0]), state)
    rounds.step(Delta.vars(["x2"], cost=[5.0]), state)  # round 3
    rep = rounds.step(d, state)
    assert rep["no_op"] and rep["round"] == 1 and rep["current_round"] == 3
    assert rep["objective"] == first["objective"] and rep["status"] == first["status"]
    assert "seconds" not in rep and not rep.get("warnings") and "abandoned_rounds" not in rep
    assert "already produced round 1 (current round 3)" in rep["message"]


def test_reapply_is_checked_before_base_round(state):
    d = Delta.vars(["x1"], cost=[3.0], )
    d.base_round = 0
    rounds.step(d, state)
    rounds.step(Delta.vars(["x2"], cost=[3.0]), state)  # round 2
    assert rounds.step(d, state)["no_op"]


def test_base_round_mismatch_is_refused_and_state_unchanged(state):
    d = Delta.vars(["x1"], cost=[3.0])
    d.base_round = 5
    before = snapshot(state)
    with pytest.raises(RoundMismatchError, match="round 5"):
        rounds.step(d, state)
    assert snapshot(state) == before
    rep = rounds.step(d, state, force=True)
    assert rep["round"] == 1 and any("--force" in w for w in rep["warnings"])


@pytest.mark.parametrize("delta, culprit", [
    (Delta.coefs(var=["nosuch"], con=["cap0"], value=[1.0]), "nosuch"),
    (Delta.vars(["x1"], cost=[float("nan")]), "row 0"),
    (Delta.vars(["x1"], lower=[5.0], upper=[1.0]), "x1"),
    (Delta.drop_cons(["ghost"]), "ghost"),
])
def test_invalid_delta_raises_naming_the_culprit_and_changes_nothing(state, delta, culprit):
    before = snapshot(state)
    with pytest.raises(ValidationError, match=culprit):
        rounds.step(delta, state)
    assert snapshot(state) == before


def test_infeasible_round_keeps_current_and_records_the_failure(state):
    rep = rounds.step(infeasible_delta(), state, Settings(tol=1e-6, iteration_limit=20000))
    assert exit_codes.for_report(rep) == 4 and rep["status"] == "PRIMAL_INFEASIBLE" and not rep["accepted"]
    assert (state / "CURRENT").read_text() == "0\n" and "CURRENT stays at round 0" in rep["message"]
    assert rounds.show(state)["last_failed"]["round"] == 1
    assert [r["kind"] for r in rounds.history(state)] == ["generation", "failed"]


def test_accept_failed_advances_current(state):
    rep = rounds.step(infeasible_delta(), state, Settings(tol=1e-6, iteration_limit=20000),
                            accept_failed=True)
    assert rep["accepted"] and exit_codes.for_report(rep) in (4, 5)
    assert (state / "CURRENT").read_text() == "1\n"


def test_rollback_moves_current_and_next_step_overwrites(state):
    rounds.step(Delta.vars(["x1"], cost=[3.0]), state)
    rounds.step(Delta.vars(["x2"], cost=[3.0]), state)
    assert rounds.rollback(state)["round"] == 1
    with pytest.raises(UsageError, match="kept"):
        rounds.rollback(state, to=9)
    rep = rounds.step(Delta.vars(["x5"], cost=[4.0]), state)
    assert rep["round"] == 2 and rounds.show(state)["delta_sha256"] == rep["delta_sha256"]


def _branch_after_rollback(state) -> dict:
    """Rounds 1..3, rollback to 1, a failed round 4 of the old branch, then a new round 2."""
    for i in range(3):
        rounds.step(Delta.vars([f"x{i}"], cost=[3.0 + i]), state)
    failed = rounds.step(infeasible_delta(), state, Settings(tol=1e-6, iteration_limit=20000), force=True)
    assert failed["round"] == 4 and not failed["accepted"]
    rounds.rollback(state, to=1)
    return rounds.step(Delta.vars(["x5"], cost=[4.0]), state)


def test_step_after_rollback_moves_the_abandoned_branch_aside(state):
    rep = _branch_after_rollback(state)
    assert rep["round"] == 2 and (state / "CURRENT").read_text() == "2\n"
    assert rep["abandoned_rounds"] == [2, 3]  # the report says what the step moved aside
    assert any("the earlier round(s) 2, 3 after round 1 (the branch left by a rollback" in w and "moved into" in w
               and "as many as the state's --keep; this round takes their place" in w for w in rep["warnings"])
    assert sorted(p.name for p in state.glob("gen-*")) == ["gen-000000", "gen-000001", "gen-000002"]
    moved = sorted(p.name for p in (state / "abandoned").glob("*/gen-*"))
    assert moved == ["gen-000002", "gen-000003"]
    assert [p.name[:19] for p in (state / "abandoned").glob("*/failed-*")] == ["failed-round-000004"]
    assert [(r["round"], r["kind"]) for r in rounds.history(state)] == [(0, "generation"), (1, "generation"),
                                                                         (2, "generation")]
    assert "last_failed" not in rounds.show(state)
    with pytest.raises(UsageError, match="not kept"):
        rounds.rollback(state, to=3)
    man = json.loads((state / "gen-000002" / "generation.json").read_text())
    parent = json.loads((state / "gen-000001" / "generation.json").read_text())
    assert man["parent_id"] == parent["id"] and man["parent_round"] == 1


def test_unreadable_current_after_a_branch_recovers_the_new_round_not_the_abandoned_one(state):
    rep = _branch_after_rollback(state)
    (state / "CURRENT").write_text("garbage\n")
    shown = rounds.show(state)
    assert shown["round"] == 2 and shown["delta_sha256"] == rep["delta_sha256"]
    assert "newest complete generation, round 2" in shown["warnings"][-1]


def test_rollback_without_a_step_can_move_forward_again(state):
    for i in range(3):
        rounds.step(Delta.vars([f"x{i}"], cost=[3.0 + i]), state)
    rounds.rollback(state, to=1)
    assert [r["round"] for r in rounds.history(state)] == [0, 1, 2, 3]
    assert rounds.rollback(state, to=3)["round"] == 3 and not (state / "abandoned").exists()


def test_lineage_skips_a_generation_of_another_branch_left_on_disk(state):
    """Belt and braces: even if a generation of an old branch were still in place (e.g. copied back by
    hand), history and rollback follow CURRENT's parent links and do not offer it."""
    _branch_after_rollback(state)
    old3 = next((state / "abandoned").glob("*/gen-000003"))
    os.rename(old3, state / "gen-000003")
    assert [r["round"] for r in rounds.history(state)] == [0, 1, 2]
    with pytest.raises(UsageError, match="not kept"):
        rounds.rollback(state, to=3)


def test_keep_limits_the_generations_on_disk(tmp_path):
    st = tmp_path / "st"
    rounds.init(small_lp(), st, keep=2)
    for i in range(4):
        rounds.step(Delta.vars([f"x{i}"], cost=[float(i + 2)]), st)
    assert sorted(p.name for p in st.iterdir() if p.name.startswith("gen-")) == ["gen-000003", "gen-000004"]


def test_init_twice_and_step_without_init_are_state_errors(state, tmp_path):
    with pytest.raises(StateError, match="already"):
        rounds.init(small_lp(), state)
    with pytest.raises(StateError, match="not an initialised"):
        rounds.step(Delta.vars(["x1"], cost=[1.0]), tmp_path / "empty")
    assert not (tmp_path / "empty").exists()  # nothing created by a refused command


def small_milp() -> Problem:
    """Assignment-like MILP: 6 jobs x 3 machines, binary x, each job at most once, machine capacities."""
    rng = np.random.default_rng(5)
    jobs, machines = 6, 3
    n = jobs * machines
    rows, cols, vals = [], [], []
    for j in range(jobs):
        for k in range(machines):
            c = j * machines + k
            rows += [j, jobs + k]
            cols += [c, c]
            vals += [1.0, float(rng.integers(1, 4))]
    A = sp.csc_array((vals, (rows, cols)), shape=(jobs + machines, n))
    return Problem.from_arrays(cost=rng.uniform(1, 3, n), col_lower=np.zeros(n), col_upper=np.ones(n),
                               row_lower=np.full(jobs + machines, -np.inf),
                               row_upper=np.r_[np.ones(jobs), np.full(machines, 4.0)], matrix=A,
                               integrality=np.ones(n, dtype=bool), sense=-1)


def test_milp_rounds_report_lp_bound_and_keep_the_integer_allocation(tmp_path):
    st = tmp_path / "st"
    rep = rounds.init(small_milp(), st)
    assert rep["status"] in ("OPTIMAL", "FEASIBLE") and {"lp_bound", "gap_rel"} <= set(rep)
    x = pq.read_table(st / rep["solution_path"]).column("value").to_numpy()
    assert np.array_equal(x, np.round(x))
    assert StateStore(st, reuse=False).load().state.integer_x is not None
    rep = rounds.step(Delta.vars(["x4"], cost=[9.0]), st)
    assert rep["round"] == 1 and rep["status"] in ("OPTIMAL", "FEASIBLE") and rep["lp_bound"] >= rep["objective"] - 1e-6


def test_init_with_an_infeasible_base_stores_round_zero_only_when_accepted_and_a_fixing_delta_recovers(tmp_path):
    p = small_lp()
    p = p.replace(row_lower=np.r_[5.0, p.row_lower[1:]], row_upper=np.r_[6.0, p.row_upper[1:]])
    p = p.replace(col_upper=np.zeros(p.n_cols))  # x = 0 cannot reach row 0's lower bound 5
    st = tmp_path / "st"
    rep = rounds.init(p, st, Settings(iteration_limit=20000))  # a failed round 0 initialises nothing
    assert exit_codes.for_report(rep) in (4, 5) and rep["accepted"] is False and not (st / "CURRENT").exists()
    rep = rounds.init(p, st, Settings(iteration_limit=20000), accept_failed=True)
    assert exit_codes.for_report(rep) in (4, 5) and (st / "CURRENT").read_text() == "0\n"
    fix = Delta.concat([Delta.cons(["cap0"], lower=[-np.inf], upper=[6.0])], base_round=0)
    assert rounds.step(fix, st)["status"] == "OPTIMAL"


# ------------------------------------------------------------------------------------ warm == cold
def _read_mps(path: Path) -> Problem:
    from solver.highs_bridge import from_highs_lp, new_highs

    h = new_highs()
    h.readModel(str(path))
    lp = h.getLp()
    lp.a_matrix_.ensureColwise() if hasattr(lp.a_matrix_, "ensureColwise") else None
    return from_highs_lp(lp)


def _random_delta(rng, p: Problem, round_: int, highs) -> Delta:
    """Costs scaled by 1 +- 5%, finite row bounds loosened by up to 5%, one new bounded column with two
    coefficients; the same changes are replayed into ``highs`` (independently of copter's apply)."""
    import highspy

    n, m = p.n_cols, p.n_rows
    cols = rng.choice(n, size=max(1, n // 10), replace=False)
    cost = p.cost[cols] * (1 + 0.05 * rng.uniform(-1, 1, cols.size))
    rows = rng.choice(m, size=max(1, m // 10), replace=False)
    lo, up = p.row_lower[rows].copy(), p.row_upper[rows].copy()
    lo = np.where(np.isfinite(lo), lo - 0.05 * np.abs(lo) * rng.random(rows.size), lo)
    up = np.where(np.isfinite(up), up + 0.05 * np.abs(up) * rng.random(rows.size), up)
    name = f"new{round_}"
    crow = rng.choice(m, size=2, replace=False)
    cval = rng.uniform(0.5, 1.5, 2)
    ccost = float(abs(p.cost).mean() + 1.0) * p.sense  # a worse-than-average new column
    # replay into HiGHS by position (new column appended last, as copter appends)
    highs.changeColsCost(cols.size, cols.astype(np.int32), cost)
    highs.changeRowsBounds(rows.size, rows.astype(np.int32), lo, up)
    highs.addCol(ccost, 0.0, 1.0, 2, np.sort(crow).astype(np.int32), cval[np.argsort(crow)])
    assert highs.getLp().num_col_ == n + 1 and isinstance(highspy.HighsLp, type)
    return Delta.concat([Delta.vars(p.col_names[cols], cost=cost), Delta.cons(p.row_names[rows], lower=lo, upper=up),
                         Delta.vars([name], cost=[ccost], lower=[0.0], upper=[1.0]),
                         Delta.coefs(var=[name, name], con=p.row_names[crow], value=cval)], base_round=round_)


@pytest.mark.data
@pytest.mark.parametrize("instance", ["afiro.mps", "sc50a.mps.gz", "adlittle.mps"])
def test_each_warm_round_matches_a_cold_highs_solve_of_the_replayed_problem(tmp_path, instance):
    from solver.highs_bridge import new_highs, to_highs_lp

    path = require_data("mps") / instance
    base = _read_mps(path)
    tol = 1e-6
    st = tmp_path / "st"
    rep = rounds.init(base, st, Settings(tol=tol))
    highs = new_highs(threads=1)
    highs.passModel(to_highs_lp(base, with_names=False))
    rng = np.random.default_rng(hash(instance) % 2**32)
    for r in range(4):
        p = StateStore(st).load(with_state=False).problem
        d = _random_delta(rng, p, r, highs)
        rep = rounds.step(d, st)
        highs.run()
        ref = highs.getInfo().objective_function_value
        assert highs.getModelStatus().name == "kOptimal"
        assert rep["status"] == "OPTIMAL" and rep["warm_started"], rep["message"]
        assert abs(rep["objective"] - ref) <= 10 * tol * (1 + abs(ref)), (instance, r, rep["objective"], ref)


def test_dropping_the_last_variable_of_a_large_problem_leaves_a_state_the_next_round_can_load(tmp_path):
    # every column array only shrinks by its last entry (the checkpoint stores them as patches of the
    # previous generation's files): the next load must see the new length, not the old file's
    st = tmp_path / "st"
    rounds.init(small_lp(n=1100, m=12), st, Settings(tol=1e-4))
    rep = rounds.step(Delta.concat([Delta.drop_vars(["x1099"])], base_round=0), st)
    assert rep["round"] == 1 and rep["status"] == "OPTIMAL"
    from formats import checkpoint

    checkpoint._RECENT.clear()  # the next round runs in a new process (cron): it reads the files
    assert rounds.show(st)["round"] == 1
    rep2 = rounds.step(Delta.concat([Delta.vars(["x5"], cost=[2.0])], base_round=1), st)
    assert rep2["round"] == 2 and rep2["status"] == "OPTIMAL"
