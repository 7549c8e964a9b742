"""A partitioned LP round that also solved its model whole keeps an OPTIMAL whole point over a merged point that is
only FEASIBLE, whatever the objectives: an OPTIMAL point's objective is within ``tol`` of the optimum, so the merged
one's lead is bought with row violations (``solver.partition.fallback.better_lp_point``).

helper-190 (session 49), from a fresh clone: TE scale 12, ``init --partitions 2``, one delta tightening four
capacities; the round kept a merged point FEASIBLE at 14048.65 (primal residual 1.2e-4 above ``--tol`` 1e-4, a
capacity row 0.96% over) over its OPTIMAL whole solve at 14046.45; HiGHS's optimum is 14044.04."""

from __future__ import annotations

import json
from dataclasses import replace

import pyarrow as pa
import pyarrow.parquet as pq

from formats.io import write_problem
from solver.model.settings import Settings
from solver.model.status import Status
from solver.partition.fallback import better_lp_point
from solver.workloads.te import TEScenario
from tests.helpers import run_main, small_lp


def _result(objective: float, status: Status, residual: float):
    from solver.api import solve_problem

    res = solve_problem(small_lp(), Settings())
    return replace(res, objective=objective, status=status, primal_residual_rel=residual, point_feasible=True)


def test_an_optimal_point_beats_a_feasible_one_with_a_better_objective():
    p = small_lp()
    whole = _result(14046.45, Status.OPTIMAL, 7.5e-5)
    merged = _result(14046.45 - p.sense * 2.2, Status.FEASIBLE, 1.2e-4)  # better in the problem's sense by 1.6e-4
    assert better_lp_point(p, 1e-4, whole, merged)
    assert not better_lp_point(p, 1e-4, merged, whole)
    both = replace(merged, status=Status.OPTIMAL)  # the same rank: the objective decides, as before
    assert better_lp_point(p, 1e-4, both, whole) and not better_lp_point(p, 1e-4, whole, both)


def test_an_objective_past_a_proven_bound_counts_as_the_bound():
    """helper-191: TE ring 12, K = 3, a maximisation: the merge, OPTIMAL at 1141.02706, was 1.1e-4 past its own
    Lagrangian bound 1140.89678 and kept over the whole solve's OPTIMAL 1140.84382 (HiGHS: 1140.84507). Counted at
    the bound, the two are within tol of each other, and the smaller primal residual wins."""
    p = replace(small_lp(), sense=-1)
    merged = replace(_result(1141.02706, Status.OPTIMAL, 9e-5), dual_objective=1140.89678)
    whole = _result(1140.84382, Status.OPTIMAL, 1e-6)
    assert not better_lp_point(p, 1e-4, whole, merged)  # on objectives alone the merge won
    assert better_lp_point(p, 1e-4, whole, merged, merged.dual_objective)
    # a bound that the merged point does not pass changes nothing
    assert not better_lp_point(p, 1e-4, whole, merged, 1141.1)
    # minimisation: an objective below the bound is counted at the bound
    q = replace(small_lp(), sense=1)
    lo = _result(99.98, Status.OPTIMAL, 9e-5)
    hi = _result(100.0, Status.OPTIMAL, 1e-7)
    assert better_lp_point(q, 1e-4, lo, hi) and better_lp_point(q, 1e-4, hi, lo, 99.999)


def test_the_round_helper_190_met_keeps_the_optimal_whole_point(tmp_path, capsys):
    base = TEScenario(nodes=12, objective="total", seed=0, paths=4).base()
    write_problem(base, tmp_path / "base.parquet")
    delta = pa.table({"kind": ["con"] * 4 + ["var"], "var": [None] * 4 + ["d6-8/p0"],
                      "con": ["d9-11/cap", "d7-4/cap", "d1-4/cap", "d7-11/cap", None],
                      "value": [None] * 4 + [2.0], "upper": [428.43150319237475, 1e4, 1e4, 0.0, None]})
    meta = {"copter.format": "delta", "copter.version": "1", "copter.base_round": "0"}
    pq.write_table(delta.replace_schema_metadata(meta), tmp_path / "d1.parquet")
    st = tmp_path / "st"
    code, _, err = run_main(capsys, "init", tmp_path / "base.parquet", "--state", st, "--partitions", "2")
    assert code == 0, err
    code, out, err = run_main(capsys, "step", tmp_path / "d1.parquet", "--state", st, "--json")
    assert code == 0, err
    rep = json.loads(out)
    fb = rep["partitions"].get("fallback") or {}
    if fb.get("status") == "OPTIMAL":  # the whole solve ran and was OPTIMAL: its point is the round's
        assert fb["kept"] == "whole" and rep["status"] == "OPTIMAL", fb
    assert rep["status"] == "OPTIMAL" or rep["primal_residual_rel"] <= 1e-4 or fb.get("status") != "OPTIMAL"
    assert rep["objective"] <= 14046.45 + 1e-4 * 14046.45  # not past the whole solve's optimum by more than tol
