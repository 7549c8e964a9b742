"""Partitioned rounds (issue #18): routing, share updates, the safe bound, and partitioned states through the
round loop (merged point feasible on the whole model, gap below POP's loss, no-op re-apply, rollback, K = 1
unchanged)."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
import scipy.sparse as sp

from solver import rounds
from solver.api import solve_problem
from solver.baselines.pop import solve_pop
from solver.baselines.result import point_quality
from solver.differential import apply_delta
from solver.model.errors import MissingDependencyError, UsageError
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.partition import shares as sh
from solver.partition.bound import LagrangianBound, best_bound
from solver.partition.clients import group_clients
from solver.partition.layout import Assignment, fill_least_loaded, route
from solver.partition.part_settings import PART_TOL_FACTOR
from solver.partition.round import PartitionConfig, pass_name, solve_round
from solver.partition.split import shared_rows
from solver.workloads import make_scenario

INLINE = {"k": 2, "executor": "inline"}


def _gap(p: Problem, obj: float, ref: float) -> float:
    """Relative loss of ``obj`` against the optimum ``ref`` (> 0 = worse)."""
    return p.sense * (obj - ref) / max(1.0, abs(ref))


def test_new_clients_go_to_the_least_loaded_part_and_dropped_ones_disappear():
    # loads 10, 2, 6 -> target (18 + 6) / 3 = 8: part 1 has room 6, part 2 room 2, part 0 none
    parts = fill_least_loaded(np.array([10.0, 2.0, 6.0]), np.array([2.0, 2.0, 2.0]))
    assert sorted(parts.tolist()) == [1, 1, 2]
    p = make_scenario("te", 12, seed=0).base()
    g = group_clients(p)
    prev = Assignment(k=2, client_names=np.r_[g.client_names[1:], np.array(["gone"], dtype=object)],
                      client_part=np.r_[np.zeros(g.n_clients - 1, dtype=np.int64), [1]])
    a, n_new, n_dropped = route(prev, g)
    assert (n_new, n_dropped) == (1, 1)
    assert a.client_part[0] == 1  # everybody else is in part 0
    assert (a.client_part[1:] == 0).all()


def test_share_update_moves_unused_capacity_to_the_priced_part_and_keeps_columns_summing_to_one():
    shares = np.array([[0.5, 0.5], [0.5, 0.5]])
    present = np.ones((2, 2), dtype=bool)
    gain = np.array([[3.0, 0.0], [0.0, 0.0]])  # row 0: part 0 is short of it, part 1 has slack
    usage = np.array([[0.5, 0.1], [0.2, 0.1]])
    new, steps, _ = sh.update(shares, gain, present, np.full((2, 2), sh.D0), np.zeros((2, 2)), usage=usage)
    assert np.allclose(new.sum(axis=0), 1.0)
    assert new[0, 0] >= 0.5 + (1 - sh.KEEP_SLACK) * 0.3 - 1e-9  # part 1 gave its unused 0.3 but KEEP_SLACK
    assert np.allclose(new[:, 1], 0.5)  # no prices: nothing moves
    # a part that does not touch a row gets no share of it
    assert sh.normalise(shares, np.array([[True, True], [False, True]]))[1, 0] == 0.0


def test_share_update_never_takes_an_unpriced_part_below_what_it_kept_of_its_slack():
    """A part without a price on a capacity row gives away (1 - KEEP_SLACK) of its unused share and nothing
    more: its price says more capacity is worth nothing to it, not that less costs nothing. The priced
    parts get it in proportion to their gains and, while slack moves, trade nothing between them (the price
    step between priced parts lost on TE: ``solver.partition.shares``)."""
    shares = np.array([[0.4], [0.3], [0.3]])
    present = np.ones((3, 1), dtype=bool)
    gain = np.array([[0.0], [2.0], [1.0]])  # part 0 has slack, 1 values the row more than 2
    usage = np.array([[0.38], [0.3], [0.3]])  # part 0 uses almost all of its share
    steps, last = np.full((3, 1), sh.D_MAX), np.ones((3, 1))
    steps[2], last[2] = sh.D_MAX, -1.0
    new, _, z = sh.update(shares, gain, present, steps, last, usage=usage)
    assert new[0, 0] == pytest.approx(0.38 + sh.KEEP_SLACK * 0.02)
    given = (1 - sh.KEEP_SLACK) * 0.02
    assert new[1:, 0] == pytest.approx([0.3 + given * 2 / 3, 0.3 + given / 3])
    assert np.allclose(new.sum(axis=0), 1.0)
    # a row without usage (not a capacity row) keeps the old rule: every touching part moves
    new2, _, _ = sh.update(shares, gain, present, np.full((3, 1), sh.D0), np.zeros((3, 1)), usage=None)
    assert new2[0, 0] < 0.4


def test_gain_sign_follows_the_objective_change_of_more_capacity():
    """g_p = -sense * y * b must be the objective gain of a larger share, for max and min problems."""
    A = sp.csc_array(np.array([[1.0, 1.0]]))
    for sense, cost in ((-1, [1.0, 2.0]), (1, [-1.0, -2.0])):
        p = Problem.from_arrays(cost=np.array(cost), col_lower=np.zeros(2), col_upper=np.full(2, 10.0),
                                row_lower=np.array([-np.inf]), row_upper=np.array([4.0]), matrix=A,
                                col_names=["a/x", "b/x"], row_names=["cap"], sense=sense)
        y = solve_problem(p, Settings(tol=1e-8)).y
        g = sh.gains(p, np.array([0]), y[None, :])
        bigger = Problem.from_arrays(cost=p.cost, col_lower=p.col_lower, col_upper=p.col_upper,
                                     row_lower=p.row_lower, row_upper=np.array([4.4]), matrix=A,
                                     col_names=["a/x", "b/x"], row_names=["cap"], sense=sense)
        change = -sense * (solve_problem(bigger, Settings(tol=1e-8)).objective
                           - solve_problem(p, Settings(tol=1e-8)).objective)
        assert change > 0 and g[0, 0] > 0
        assert g[0, 0] * 0.1 == pytest.approx(change, rel=1e-4)  # 10% more share = 0.4 more capacity


def test_integral_allocations_sum_to_the_capacity():
    p = make_scenario("sia", 64, seed=0).base()
    g = group_clients(p)
    rows = shared_rows(g)
    s = np.full((3, rows.size), 1.0 / 3.0)
    out = sh.integral_allocations(p, rows, s)
    alloc = out * p.row_upper[rows]
    assert np.allclose(alloc, np.round(alloc))
    assert np.allclose(alloc.sum(axis=0), p.row_upper[rows])


@pytest.mark.parametrize("domain,scale", [("te", 16), ("sia", 64)])
def test_lagrangian_bound_is_valid_for_any_shared_duals(domain, scale):
    p = make_scenario(domain, scale, seed=1).base()
    lp = dataclasses.replace(p, integrality=np.zeros(p.n_cols, dtype=p.integrality.dtype))
    res = solve_problem(lp, Settings(tol=1e-7))
    rows = shared_rows(group_clients(p))
    lb = LagrangianBound(lp, res.y, rows)
    rng = np.random.default_rng(0)
    for scale_ in (0.0, 0.5, 1.0, 2.0):
        ys = res.y[rows] * scale_ + rng.normal(0, 0.01, rows.size) * (scale_ > 1)
        v = lb.evaluate(ys)
        assert p.sense * (res.objective - v) >= -1e-6 * max(1.0, abs(res.objective))
    assert abs(lb.evaluate(res.y[rows]) - res.objective) <= 1e-3 * max(1.0, abs(res.objective))
    b, name, _, _ = best_bound(lp, res.y, rows, np.vstack([res.y[rows], res.y[rows]]), np.full((2, rows.size), 0.5))
    assert name and abs(b - res.objective) <= 1e-3 * max(1.0, abs(res.objective))


def test_partitioned_te_rounds_beat_pop2_and_the_merged_point_holds_on_the_whole_model(tmp_path):
    """Known answer: K = 2 on a small TE stream; after a few rounds the merged allocation is feasible on the
    whole model, its bound is reported, and its loss to the monolithic optimum is below POP-2's."""
    sc = make_scenario("te", 24, seed=0)
    state = tmp_path / "st"
    # the merged point itself (no small-LP whole solve, whose point would be the round's)
    rep = rounds.init(sc.base(), state, partition={**INLINE, "whole_below_nnz": 0})
    assert rep["partitions"]["k"] == 2 and rep["status"] in ("OPTIMAL", "FEASIBLE")
    # round 0 is cold: its parts start from the probe's points within the round, not from an earlier round
    assert rep["partitions"]["shares"]["passes"][0]["kind"] == "probe" and rep["partitions"]["warm"] is False
    assert rep["warm_started"] is False and not any(q["warm_started"] for q in rep["partitions"]["parts"])
    assert rounds.history(state)[0]["warm_started"] is False
    for r in range(1, 6):
        rep = rounds.step(sc.next_delta(r), state)
        part = rep["partitions"]
        # every part starts from its own previous iterate; one whose PDHG warm run passed 3x its last cold
        # solve's passes is re-solved cold (solver.lp.engine_choice.WARM_OVER) and says so
        assert all(q["warm_started"] or "solved cold" in q["engine_reason"]
                   for q in part["parts"] if q["status"] != "EMPTY")
        # each part says how it stopped and what CPU time its thread took (never more than its wall time)
        for q in part["parts"]:
            if q["status"] != "EMPTY":
                assert isinstance(q["message"], str) and q["message"], q
                assert 0.0 < q["cpu_seconds"] <= q["seconds"] + 1e-3, q
        assert part["bound"] is not None and part["gap_rel"] is not None
        assert set(part["seconds"]) >= {"setup", "slowest_part", "merge", "on_k_cores"}
    from formats.checkpoint import StateStore

    gen = StateStore(state).load()
    problem, x = gen.problem, np.asarray(gen.state.x)
    q = point_quality(problem, x)
    # K parts, each solved to PART_TOL_FACTOR x tol (solver.partition.part_settings): a shared row sums their rows'
    # violations
    assert q.max_row_violation_rel <= 2 * PART_TOL_FACTOR * 2e-4 and q.max_bound_violation <= 1e-9
    mono = solve_problem(problem, Settings(tol=1e-7))
    loss = _gap(problem, problem.objective(x), mono.objective)
    pop = solve_pop(problem, k=2, workers=0, seed=0)
    pop_loss = _gap(problem, pop.objective, mono.objective)
    assert loss < pop_loss
    # the reported bound is a true bound on the optimum, the reported gap matches it
    assert problem.sense * (rep["partitions"]["bound"] - mono.objective) <= 1e-6 * abs(mono.objective)
    assert rep["partitions"]["gap_rel"] >= loss - 1e-3


def test_partitioned_sia_milp_merges_an_integral_point_feasible_on_the_whole_model(tmp_path):
    sc = make_scenario("sia", 128, seed=0)
    state = tmp_path / "st"
    # whole_below_nnz 0: the merged point stays the round's (a small MILP's can be the whole solve's, whose report has
    # the monolithic round's mip section)
    rounds.init(sc.base(), state, partition={"k": 2, "executor": "inline", "whole_below_nnz": 0})
    for r in range(1, 4):
        rep = rounds.step(sc.next_delta(r), state)
        assert rep["status"] in ("OPTIMAL", "FEASIBLE"), rep["message"]
        assert rep["partitions"]["merged_feasible"] and rep["mip"]["integral"]
        assert rep["lp_bound"] >= rep["objective"] - 1e-9  # maximisation: the bound is above
    from formats.checkpoint import StateStore

    gen = StateStore(state).load()
    x = np.asarray(gen.state.x)
    ints = gen.problem.integrality != 0
    assert np.array_equal(x[ints], np.round(x[ints]))
    q = point_quality(gen.problem, x)
    assert q.max_row_violation_rel <= 1e-9 and q.max_bound_violation <= 1e-9


def test_no_op_reapply_and_rollback_on_a_partitioned_state(tmp_path):
    from formats.io import write_delta

    sc = make_scenario("te", 16, seed=2)
    state = tmp_path / "st"
    rounds.init(sc.base(), state, partition=INLINE)
    paths = []
    for r in (1, 2):
        paths.append(tmp_path / f"d{r}.parquet")
        write_delta(sc.next_delta(r), paths[-1])
    r1 = rounds.step(paths[0], state)
    r2 = rounds.step(paths[1], state)
    again = rounds.step(paths[1], state)
    assert again["no_op"] and again["round"] == 2
    rounds.rollback(state, to=1)
    redo = rounds.step(paths[1], state)  # from round 1's stored parts again: the same round 2
    assert redo["round"] == 2 and redo["partitions"]["warm"]
    assert redo["objective"] == pytest.approx(r2["objective"], rel=1e-9)
    assert (state / "gen-000002" / "partition" / "parts.arrow").exists()
    manifest = json.loads((state / "gen-000002" / "generation.json").read_text())
    assert "partition/parts.arrow" in manifest["files"]
    assert r1["round"] == 1


def test_k1_is_the_monolithic_path_and_bad_partition_options_are_usage_errors(tmp_path):
    p = make_scenario("te", 12, seed=0).base()
    rep = rounds.init(p, tmp_path / "a", partition={"k": 1})
    assert "partitions" not in rep
    assert "partition" not in json.loads((tmp_path / "a" / "config.json").read_text())
    assert not (tmp_path / "a" / "gen-000000" / "partition").exists()
    with pytest.raises(UsageError, match="executor"):
        rounds.init(p, tmp_path / "b", partition={"k": 2, "executor": "threads"})
    assert not (tmp_path / "b").exists()
    no_clients = Problem.from_arrays(cost=np.ones(2), col_lower=np.zeros(2), col_upper=np.ones(2),
                                     row_lower=np.array([-np.inf]), row_upper=np.array([1.0]),
                                     matrix=sp.csc_array(np.ones((1, 2))), col_names=["x", "y"], row_names=["r"])
    with pytest.raises(UsageError, match="client"):
        solve_round(no_clients, Settings(), PartitionConfig(k=2, executor="inline"))


def test_ray_executor_without_ray_is_a_missing_extra_naming_it(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(MissingDependencyError, match=r"pip install .\.\[ray\]."):  # exit 8 (exit 2 until session 35)
        PartitionConfig(k=2, executor="ray").check()


def test_passes_within_a_round_close_the_gap_further():
    sc = make_scenario("te", 24, seed=0)
    p = sc.base()
    mono = solve_problem(p, Settings(tol=1e-7)).objective
    # the parts' own merges: the small-LP whole solve (whole_below_nnz) would make both the monolithic optimum
    one = solve_round(p, Settings(), PartitionConfig(k=2, executor="inline", whole_below_nnz=0))
    four = solve_round(p, Settings(), PartitionConfig(k=2, executor="inline", passes=4, whole_below_nnz=0))
    assert _gap(p, four.result.objective, mono) < _gap(p, one.result.objective, mono)
    assert [pass_name(q) for q in four.report["shares"]["passes"]] == ["probe", 0, 1, 2, 3]


def test_delta_rows_reach_the_part_owning_their_client():
    sc = make_scenario("sia", 64, seed=3)
    p = sc.base()
    out = solve_round(p, Settings(), PartitionConfig(k=2, executor="inline"))
    d = sc.next_delta(1)
    p2, info = apply_delta(p, d)
    out2 = solve_round(p2, Settings(), PartitionConfig(k=2, executor="inline"), out.data, info)
    a1, a2 = out.data.assignment, out2.data.assignment
    part_of = dict(zip(a1.client_names.tolist(), a1.client_part.tolist(), strict=True))
    kept = [n in part_of for n in a2.client_names]
    assert all(part_of[n] == q for n, q, k in zip(a2.client_names, a2.client_part, kept, strict=True) if k)
    for p_, part in enumerate(out2.data.parts):  # every column of a client sits in its client's part
        g = group_clients(p2)
        cc = g.col_client[part.cols]
        assert (a2.client_part[cc[cc >= 0]] == p_).all()


def test_share_update_every_zero_keeps_the_first_rounds_shares(tmp_path):
    sc = make_scenario("te", 16, seed=7)
    state = tmp_path / "st"
    rounds.init(sc.base(), state, partition={"k": 2, "executor": "inline", "update_every": 0})
    from solver.partition import store as pstore

    first = pstore.load(state / "gen-000000").shares.copy()
    rep = rounds.step(sc.next_delta(1), state)
    assert rep["partitions"]["shares"]["moved_next"] == 0.0
    assert np.array_equal(pstore.load(state / "gen-000001").shares, first)  # no rows changed in TE deltas


def test_a_round_whose_part_fails_reports_no_gap_to_the_bound(tmp_path):
    """A part that ends ITERATION_LIMIT leaves no merged point to measure: the message and the report say so
    without a gap (it read "gap to the Lagrangian bound -100.000%"), and CURRENT stays. Since session 49 such a part
    has the round solved whole (``fallback.PART_FAILURES``), here under the same iteration limit of 1."""
    sc = make_scenario("te", 16, seed=5)
    state = tmp_path / "st"
    # the parts' round alone: a small LP's whole solve, warm from round 0, can end with a feasible point
    rounds.init(sc.base(), state, partition={**INLINE, "whole_below_nnz": 0})
    rep = rounds.step(sc.next_delta(1), state, settings=Settings(iteration_limit=1))
    assert rep["status"] == "ITERATION_LIMIT" and rep["accepted"] is False
    assert "part 0 ITERATION_LIMIT" in rep["message"] and "solved whole" in rep["message"]
    assert "gap to the Lagrangian bound" not in rep["message"]
    assert rep["partitions"]["gap_rel"] is None
    assert rep["partitions"]["fallback"]["status"] == "ITERATION_LIMIT"
    assert (state / "CURRENT").read_text() == "0\n"


def test_a_point_past_the_bound_reads_as_gap_zero_not_a_negative_percentage():
    """A merged LP point feasible within tolerance beat its Lagrangian bound by 4e-6: the message read "-0.000%"."""
    from solver.partition.merge import gap_sentence

    assert gap_sentence(5.3e-4) == "gap to the Lagrangian bound 0.053%"
    assert gap_sentence(0.0) == "gap to the Lagrangian bound 0.000%"
    words = gap_sentence(-4e-6)
    assert "-" not in words.split("(")[0] and "bound 0 (" in words and "4.0e-06 past it" in words
    # a point that failed the re-check is not "within its row tolerance" (hunt 38: the row 120x over it, same line)
    bad = gap_sentence(-0.2, feasible=False)
    assert "within its row tolerance" not in bad and "violates the whole model" in bad and "2.0e-01" in bad


def test_the_gap_is_never_negative_and_a_kept_whole_point_moves_the_merges_aside():
    """A merged point past its bound had ``gap_rel`` -1.2e-5 in the JSON (hunt 38): now 0 and ``past_bound_rel``
    how far; when the whole solve's point is kept, both describe the discarded merge under ``fallback`` (review 38:
    ``past_bound_rel`` stayed at the top beside a null ``gap_rel``)."""
    from solver.partition.merge import gap_fields
    from solver.partition.round import _merged_aside

    assert gap_fields(-1.2e-5) == {"gap_rel": 0.0, "past_bound_rel": 1.2e-5}
    assert gap_fields(5e-4) == {"gap_rel": 5e-4, "past_bound_rel": 0.0}
    assert gap_fields(None) == {"gap_rel": None, "past_bound_rel": None}
    rep = {"bound": 10.0, "bound_kind": "lagrangian", "bound_candidate": None, **gap_fields(-0.2),
           "max_row_violation_rel": 1.2, "fallback": {"reason": "violation", "kept": "whole"}}
    out = _merged_aside(rep)
    assert out["gap_rel"] is None and out["past_bound_rel"] is None
    assert out["fallback"]["merged_past_bound_rel"] == 0.2 and out["fallback"]["merged_gap_rel"] == 0.0
