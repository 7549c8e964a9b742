"""Partitioned MILP rounds (issue #18): parts stop at their first integer point, the merged point is judged against
the whole model's choice-row Lagrangian bound (dual ascent), the gap is split exactly over the parts, RENS goes to
the parts holding it; and every partitioned round logs the LP engine of each part."""

from __future__ import annotations

import math

import numpy as np
import pytest

from solver import rounds
from solver.api import solve_problem
from solver.baselines.result import point_quality
from solver.integer.relaxation import relaxed_problem, solve_relaxation_highs
from solver.model.settings import Settings
from solver.partition import round as pround
from solver.partition.improve import (
    FIRST_POINT_GAP,
    WholeBound,
    cheap_part_settings,
    choose_parts,
    gap_by_part,
)
from solver.partition.round import pass_name
from solver.partition.split import combine_points
from solver.workloads import make_scenario
from tests.partition_helpers import fresh_split


def _lp_optimum(problem) -> float:
    """The LP relaxation's optimum by HiGHS (every valid MILP bound is on its far side)."""
    lp = solve_relaxation_highs(relaxed_problem(problem, problem.col_lower, problem.col_upper))
    return float(lp.objective)


def _merged_first_points(problem, k: int):
    """The parts of a fresh split solved to their first integer point, merged; (x, setup, eff)."""
    r, eff, parts, st = fresh_split(problem, k)
    xs = [solve_problem(part.problem, st).x for part in parts]
    x, _ = combine_points(problem, parts, xs, r.grouping.global_cols)
    return x, r, eff


def test_the_parts_gap_shares_sum_to_the_whole_gap_and_none_is_negative():
    problem = make_scenario("sia", 256, seed=3).base()
    k = 4
    x, r, eff = _merged_first_points(problem, k)
    assert point_quality(problem, x).max_row_violation_rel <= 1e-9
    wb = WholeBound(problem)
    obj = problem.objective(x)
    bound, y, info = wb.ascend(np.zeros(problem.n_rows), obj, 0.0, 40)
    assert info["steps"] > 1
    s = problem.sense
    assert s * (_lp_optimum(problem) - bound) >= -1e-6 * abs(bound)  # a valid bound on the LP (so MILP) optimum
    contrib = gap_by_part(wb, y, x, r.col_part, k, r.rows_sh, eff)
    whole = s * (obj - bound)
    assert contrib.shape == (k,)
    assert contrib.sum() == pytest.approx(whole, rel=1e-6, abs=1e-6)
    assert (contrib >= -1e-6 * max(1.0, abs(obj))).all(), contrib
    assert (contrib > 0).sum() >= 2  # the split says something: more than one part holds some gap


def test_choose_parts_takes_the_largest_shares_until_the_rest_fits_the_target():
    assert choose_parts(np.array([1.0, 5.0, 3.0, 0.5]), target_abs=4.0) == [1, 2]  # rest 1.5 <= 0.5 * 4
    assert choose_parts(np.array([1.0, 5.0, 3.0, 0.5]), target_abs=100.0) == []
    assert choose_parts(np.array([0.0, -1e-9]), target_abs=0.0) == []
    assert choose_parts(np.array([1.0, np.nan]), target_abs=1.0)[0] == 1  # unknown share: improved first


def test_cheap_part_settings_stop_at_the_first_point_but_keep_the_rounds_other_options():
    st = Settings(tol=1e-5, integer_submip_seconds=7.0, threads=2)
    c = cheap_part_settings(st)
    assert (c.mip_gap_tol, c.integer_submip_gap, c.integer_dual_ascent_steps, c.threads) == (
        FIRST_POINT_GAP, math.inf, 0, 1)
    assert (c.tol, c.integer_submip_seconds) == (1e-5, 7.0)


@pytest.mark.parametrize("target", [1e-5, 5e-2])
def test_a_partitioned_milp_rounds_status_and_gap_are_proven_against_the_whole_bound(target):
    """OPTIMAL exactly when the merged point is within the target of a valid bound; above it, RENS runs on the
    parts that hold most of the gap and never makes the point worse; still far above it, the round is also
    solved whole and keeps the better point (``fallback``)."""
    sc = make_scenario("sia", 256, seed=3)
    problem = sc.base()
    st = Settings(mip_gap_tol=target)
    # whole_below_nnz 0: this small model's merge goes through RENS as a large one's (a small MILP's is compared
    # with a whole solve at once, test_partition_small_rounds.py)
    out = pround.solve_round(problem, st, pround.PartitionConfig(k=4, executor="inline", whole_below_nnz=0))
    rep, res = out.report, out.result
    s = problem.sense
    assert rep["merged_feasible"] and res.point_feasible
    whole = rep.get("fallback")
    kept_whole = whole is not None and whole["kept"] == "whole"
    # the merged point's bound and gap: the report's own, or the fallback's when the whole solve's point is kept
    bound = whole["merged_bound"] if kept_whole else rep["bound"]
    merged_gap = whole["merged_gap_rel"] if kept_whole else rep["gap_rel"]
    if kept_whole:
        assert rep["bound"] is None and rep["gap_rel"] is None  # they would describe a point the round dropped
    assert s * (_lp_optimum(problem) - bound) >= -1e-6 * abs(bound)
    merged = res.objective if whole is None else whole["merged_objective"]
    gap = s * (merged - bound) / abs(merged)  # the MIP gap (HiGHS's mip_gap), as a monolithic round's
    assert merged_gap == pytest.approx(gap, rel=1e-9, abs=1e-12)
    if whole is None:
        assert (res.status.name == "OPTIMAL") == (gap <= target)
    else:  # far above the target after the parts: compared with the whole model's solve, the better point kept
        assert target < 1e-3 and whole["reason"] == "gap" and whole["merged_gap_rel"] == merged_gap
        assert s * (res.objective - merged) <= 0 and s * (res.objective - whole["objective"]) <= 0
    assert res.status.name in ("OPTIMAL", "FEASIBLE")
    imp = rep.get("improvement")
    if target < 1e-3:  # no first point is within 0.001% of the bound: RENS on the parts holding the gap
        assert imp is not None and imp["parts"], rep
        assert imp["gap_after"] <= imp["gap_before"] + 1e-12
        assert all(rep["parts"][p]["rens_seconds"] is not None for p in imp["parts"])
        assert sum(v for v in imp["gap_share"] if v is not None) == pytest.approx(1.0, abs=1e-3)
        res2 = imp["resolve"]  # still above 0.001%: the parts holding the gap get their full integerization
        assert res2["parts"] and res2["gap_after"] <= res2["gap_before"] + 1e-12 <= imp["gap_after"] + 2e-12
        assert all(rep["parts"][p]["resolve_seconds"] > 0 for p in res2["parts"])
        names = [pass_name(x) for x in rep["shares"]["passes"]]  # RENS first (a price pass may follow it), resolve last
        assert names[-1] == "improve-resolve" and names.index("improve-rens") < len(names) - 1
    else:
        assert imp is None  # the first points were enough: the parts ran no RENS
        assert all("rens_seconds" not in p for p in rep["parts"])
    for p in rep["parts"]:  # a part's own status is measured against the round's target, not its loose one
        assert p["status"] != "OPTIMAL" or p["own_gap_rel"] <= target


def test_no_rens_when_the_round_allows_none():
    problem = make_scenario("sia", 256, seed=3).base()
    out = pround.solve_round(problem, Settings(mip_gap_tol=1e-5, integer_submip_seconds=0.0),
                             pround.PartitionConfig(k=4, executor="inline"))
    assert "improvement" not in out.report
    assert out.result.status.name == "FEASIBLE"  # above the target and nothing more to do: not OPTIMAL


@pytest.mark.parametrize("domain,scale", [("te", 12), ("sia", 128)])
def test_each_parts_engine_is_in_the_report_the_round_log_and_history(tmp_path, domain, scale):
    sc = make_scenario(domain, scale, seed=0)
    state = tmp_path / "st"
    # the parts' merged points (no small-LP whole solve: its point would be the round's, with its own engine)
    reps = [rounds.init(sc.base(), state, partition={"k": 2, "executor": "inline", "whole_below_nnz": 0})]
    reps.append(rounds.step(sc.next_delta(1), state))
    hist = rounds.history(state)
    assert len(hist) == 2
    for rep, row in zip(reps, hist, strict=True):
        parts = rep["partitions"]["parts"]
        engines = [p["engine"] for p in parts if p["status"] != "EMPTY"]
        assert engines and all(e in ("pdhg", "alm") for e in engines), parts
        top = max((p for p in parts if p["status"] != "EMPTY"), key=lambda p: p["iterations"])
        assert rep["engine"] == top["engine"]  # the round's engine: the one its iterations count belongs to
        assert row["engine"] == rep["engine"]
        listed = ", ".join(f"part {p['part']} {p['engine']}" for p in parts if p["status"] != "EMPTY")
        assert f"engines: {listed}" in row["message"]
        assert f"engines: {listed}" in rep["message"]


def test_a_parts_peak_memory_is_its_own_not_an_earlier_larger_task_of_the_same_worker():
    from solver.partition.executor import peak_rss_mb, solve_part

    problem = make_scenario("te", 8, seed=0).base()
    big = np.ones(60_000_000)  # 480 MB in this process (the inline "worker"), then freed
    big[::4096] = 2.0
    before = peak_rss_mb()
    del big
    out = solve_part(0, problem, Settings(), None)
    assert before > 400.0
    assert out["max_rss_mb"] < before - 300.0, (out["max_rss_mb"], before)
