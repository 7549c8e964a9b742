"""The partitioned MILP merge's whole-model bound (issue #18): the dual ascent is ONE run across the merge's calls
(Polyak's level and stall count carried on, nothing evaluated twice), the gap split books global columns to the
part the merge took them from, and evaluates the Lagrangian once."""

from __future__ import annotations

import numpy as np
import pytest

from solver.api import solve_problem
from solver.integer.ascent import coupling_dual_ascent
from solver.model.settings import Settings
from solver.partition import merge as pmerge
from solver.partition import round as pround
from solver.partition.bound import shared_dual_candidates
from solver.partition.improve import WholeBound, gap_by_part
from solver.partition.split import combine_points
from solver.workloads import make_scenario
from tests.partition_helpers import fresh_split

K = 4


@pytest.fixture(scope="module")
def merged():
    """A Sia MILP split in K parts, each solved to its first integer point (the merge's inputs)."""
    problem = make_scenario("sia", 256, seed=3).base()
    cfg = pround.PartitionConfig(k=K, executor="inline")
    r, eff, parts, st = fresh_split(problem, K)
    outs = [{"result": solve_problem(part.problem, st), "seconds": 0.0, "max_rss_mb": 0.0} for part in parts]
    solve_idx = list(range(K))
    results, part_rep = pround._part_results(parts, r.assignment, K, solve_idx, outs, 5e-3)
    duals = pround._part_duals(parts, [x.y for x in results], r.spos, K, r.ns)
    return problem, cfg, r, parts, results, part_rep, solve_idx, eff, duals, WholeBound(problem)


class _Counting:
    """Counts the evaluations of a Lagrangian (delegates everything else)."""

    def __init__(self, lag):
        self.lag, self.calls = lag, 0

    def evaluate(self, y):
        self.calls += 1
        return self.lag.evaluate(y)

    def __getattr__(self, name):
        return getattr(self.lag, name)


def _merge(merged, settings, **kw):
    problem, cfg, r, parts, results, part_rep, solve_idx, eff, duals, wb = merged
    return pmerge.merge_parts(problem, settings, cfg, r, parts, list(results), [dict(p) for p in part_rep],
                              solve_idx, eff, duals, wb, **kw)


def test_an_ascent_continued_from_its_state_is_the_same_run_as_one_call(merged):
    problem, r, parts, results, wb = merged[0], merged[2], merged[3], merged[4], merged[-1]
    y0 = np.zeros(problem.n_rows)
    x, _ = combine_points(problem, parts, [res.x for res in results], r.grouping.global_cols)
    obj = problem.objective(x)  # the merged integer point: Polyak's target (gap target 0: never proven)
    b1, y1, i1 = coupling_dual_ascent(wb.lag, y0, obj, 0.0, max_steps=30)
    ba, _, ia = coupling_dual_ascent(wb.lag, y0, obj, 0.0, max_steps=12)
    bb, yb, ib = coupling_dual_ascent(wb.lag, None, obj, 0.0, max_steps=18, resume=ia["state"])
    assert i1["steps"] == 30 and ia["steps"] + ib["steps"] == 30
    assert bb == b1 and np.array_equal(yb, y1)  # bitwise: the level and stall count went on
    assert ib["start_bound"] == ba  # a resumed call starts from the earlier best, without evaluating it again
    proven = coupling_dual_ascent(wb.lag, None, obj, 1.0, max_steps=5, resume=ib["state"])
    assert proven[2]["steps"] == 0 and proven[0] == bb  # already proven: nothing evaluated


def test_the_merges_near_target_ascent_continues_instead_of_restarting(merged, monkeypatch):
    """Before RENS the merge ascends FIRST steps, then (near the target) the rest of its budget: one run."""
    st = Settings(mip_gap_tol=0.0, integer_dual_ascent_steps=24)
    monkeypatch.setattr(pmerge, "FAR_GAP", np.inf)  # always "near": the merge goes on after its first steps
    two = _merge(merged, st, first_steps=7)
    one = _merge(merged, st, first_steps=None)
    a2, a1 = two.rep["dual_ascent"], one.rep["dual_ascent"]
    assert a2["evaluations"] == a1["evaluations"] == 24
    assert a2["bound"] == a1["bound"] and np.array_equal(two.y_bound, one.y_bound)


def test_the_merge_after_rens_goes_on_from_the_ascent_before_it_without_re_evaluating(merged, monkeypatch):
    st = Settings(mip_gap_tol=0.0, integer_dual_ascent_steps=15)
    monkeypatch.setattr(pmerge, "FAR_GAP", 0.0)  # always "far": the first merge stops after its first steps
    first = _merge(merged, st, first_steps=5)
    assert first.rep["dual_ascent"]["evaluations"] == 5
    wb = merged[-1]
    counting = _Counting(wb.lag)
    monkeypatch.setattr(wb, "lag", counting)
    problem, cfg, r, parts, results, part_rep, solve_idx, eff, duals, _ = merged
    after = pmerge.merge_parts(problem, st, cfg, r, parts, list(results), [dict(p) for p in part_rep], solve_idx,
                               eff, duals, wb, prior=first, duals_changed=False)
    asc = after.rep["dual_ascent"]
    assert asc["start"] == "previous_ascent" and asc["start_bound"] == first.rep["bound"]
    # no candidate or best duals evaluated again, and the round's budget counts the 5 before RENS
    assert counting.calls == asc["evaluations"] == 10 and asc["run_evaluations"] == 15
    assert after.rep["bound"] >= first.rep["bound"] if problem.sense > 0 else after.rep["bound"] <= first.rep["bound"]
    monkeypatch.undo()
    single = WholeBound(problem)  # the same run in one call, from the start the first merge chose
    cands = shared_dual_candidates(duals, eff)
    y_start = first.result.y.copy()
    y_start[r.rows_sh] = cands[first.rep["dual_ascent"]["start"]]
    b, y, _ = coupling_dual_ascent(single.lag, y_start, first.result.objective, 0.0, max_steps=15)
    assert after.rep["bound"] == b and np.array_equal(after.y_bound, y)


def test_a_rounds_merges_share_one_ascent_budget(merged):
    """A later merge of the round (a price pass's, the re-merge of the pass it did not beat) continues the ascent
    within what the earlier merges left of ``integer_dual_ascent_steps``: 10 + 40 more evaluations moved Sia
    25,600's bound by 3e-9 relative."""
    st = Settings(mip_gap_tol=0.0, integer_dual_ascent_steps=8)
    first = _merge(merged, st)
    assert first.rep["dual_ascent"]["evaluations"] == first.rep["dual_ascent"]["run_evaluations"] == 8
    again = _merge(merged, st, prior=first, duals_changed=False)
    assert again.rep["dual_ascent"]["evaluations"] == 0 and again.rep["dual_ascent"]["run_evaluations"] == 8
    assert again.rep["bound"] == first.rep["bound"] and np.array_equal(again.y_bound, first.y_bound)


def test_gap_by_part_books_global_columns_to_the_part_the_merge_took_them_from(merged):
    problem, cfg, r, parts, results, part_rep, solve_idx, eff, duals, wb = merged
    x, _ = combine_points(problem, parts, [res.x for res in results], r.grouping.global_cols)
    y = wb.ascend(np.zeros(problem.n_rows), problem.objective(x), 0.0, 10)[1]
    ref = gap_by_part(wb, y, x, r.col_part, K, r.rows_sh, eff)
    owner = 2
    as_global = r.col_part.copy()
    cols = np.flatnonzero(r.col_part == owner)[::3]  # some of part 2's columns, as if they were global
    as_global[cols] = -1
    got = gap_by_part(wb, y, x, as_global, K, r.rows_sh, eff, global_part=owner)
    assert abs(ref[owner]) > 0
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-9)


def test_gap_by_part_evaluates_the_lagrangian_once(merged, monkeypatch):
    problem, cfg, r, parts, results, part_rep, solve_idx, eff, duals, wb = merged
    x, _ = combine_points(problem, parts, [res.x for res in results], r.grouping.global_cols)
    y = np.zeros(problem.n_rows)
    ref = gap_by_part(wb, y, x, r.col_part, K, r.rows_sh, eff)
    counting = _Counting(wb.lag)
    monkeypatch.setattr(wb, "lag", counting)
    calls = []
    monkeypatch.setattr(counting.lag, "reduced_costs", lambda yy: calls.append(1) or type(counting.lag).reduced_costs(
        counting.lag, yy))
    got = gap_by_part(wb, y, x, r.col_part, K, r.rows_sh, eff)
    assert counting.calls + len(calls) == 1
    np.testing.assert_array_equal(got, ref)


def test_a_merged_results_duals_keep_the_shared_rows_of_the_ascents_start(merged):
    """The round's stored duals on the shared rows are the bound's start, also when a later merge continues."""
    st = Settings(mip_gap_tol=0.0, integer_dual_ascent_steps=6)
    first = _merge(merged, st, first_steps=3)
    after = _merge(merged, st, prior=first, duals_changed=False)
    rows_sh = merged[2].rows_sh
    assert np.array_equal(after.result.y[rows_sh], first.result.y[rows_sh])


def test_on_worker_processes_the_near_target_ascent_goes_on_during_rens_and_the_merge_after_it_continues_it(
        monkeypatch):
    from solver.integer.relaxation import relaxed_problem, solve_relaxation_highs

    problem = make_scenario("sia", 256, seed=3).base()
    st = Settings(mip_gap_tol=1e-5)  # never proven: RENS runs, the ascent uses its budget
    monkeypatch.setattr(pmerge, "FAR_GAP", np.inf)  # "near": inline, the ascent would run its budget before RENS
    out = pround.solve_round(problem, st, pround.PartitionConfig(k=K, executor="process", workers=2,
                                                                  whole_below_nnz=0))  # RENS as on a large model
    rep = out.report
    imp = rep["improvement"]
    during = imp["ascent_during_rens"]
    assert imp["parts"] and during["evaluations"] > 0
    assert rep["seconds"]["phases"]["dual_ascent_in_thread"] > 0
    asc = rep["dual_ascent"]  # the merge after RENS: the thread's run, continued
    assert asc["start"] == "previous_ascent"
    if not (imp.get("resolve") or {}).get("improved"):  # else the last merge is the one after the resolve tier
        assert asc["start_bound"] == during["bound"]
    s = problem.sense
    assert s * (asc["bound"] - during["bound"]) >= 0  # never looser than where the thread stopped
    lp = float(solve_relaxation_highs(relaxed_problem(problem, problem.col_lower, problem.col_upper)).objective)
    assert s * (lp - rep["bound"]) >= -1e-6 * abs(rep["bound"])  # a valid bound
    assert rep["gap_rel"] == pytest.approx(s * (out.result.objective - rep["bound"]) / abs(out.result.objective))


def test_far_from_the_target_no_ascent_runs_during_rens():
    """Far from the target the merge after RENS proves the better point with a few steps: no thread competes
    with the RENS workers for the cores."""
    problem = make_scenario("sia", 256, seed=3).base()
    out = pround.solve_round(problem, Settings(mip_gap_tol=1e-5), pround.PartitionConfig(k=K, executor="process",
                                                                                          workers=2, whole_below_nnz=0))
    imp = out.report["improvement"]
    assert imp["parts"] and imp["gap_before"] > pmerge.FAR_GAP * 1e-5
    assert "ascent_during_rens" not in imp and "dual_ascent_in_thread" not in out.report["seconds"]["phases"]


def test_a_deferred_kkt_completed_later_equals_the_merges_own(merged):
    st = Settings(mip_gap_tol=5e-3, integer_dual_ascent_steps=8)
    now = _merge(merged, st)
    later = _merge(merged, st, defer_kkt=True)
    assert later.kkt_deferred and not now.kkt_deferred
    assert later.result.status == now.result.status and later.result.point_feasible == now.result.point_feasible
    done = pmerge.complete_kkt(merged[0], later)
    for f in ("reduced_cost", "row_activity"):
        np.testing.assert_array_equal(getattr(done.result, f), getattr(now.result, f))
    for f in ("primal_residual_rel", "dual_residual_rel", "objective", "dual_objective", "gap_rel"):
        assert getattr(done.result, f) == getattr(now.result, f)


@pytest.mark.parametrize("target", [5e-2, 1e-5])
def test_a_rounds_result_has_its_whole_model_residuals_with_or_without_rens(target):
    problem = make_scenario("sia", 256, seed=3).base()
    out = pround.solve_round(problem, Settings(mip_gap_tol=target),
                             pround.PartitionConfig(k=K, executor="inline", whole_below_nnz=0))  # RENS, as a large model
    res = out.result
    assert ("improvement" in out.report) == (target < 1e-3)
    np.testing.assert_allclose(res.row_activity, problem.row_activity(res.x), rtol=1e-12, atol=1e-9)
    assert np.isfinite(res.reduced_cost).all()
    assert np.isfinite(res.primal_residual_rel) and np.isfinite(res.dual_residual_rel)
