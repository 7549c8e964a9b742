"""A partitioned round's ``iterations`` is the count of the part with the most iterations (README), also when a
part's count includes a re-solve (the MILP "resolve" tier adds its iterations to the part's report row; the
round's count used to stay at the merge's, 128 while its parts reported 256). The price re-split and the whole
solve of a far merge are switched off (FAR_GAP inf): with them the demo's K = 2 round is OPTIMAL without RENS."""

from __future__ import annotations

import math

from solver.model.settings import Settings
from solver.partition import merge as pmerge
from solver.partition import round as pround
from solver.partition.round import PartitionConfig, solve_round
from solver.workloads import make_scenario


def test_round_iterations_is_the_busiest_parts_count(monkeypatch):
    monkeypatch.setattr(pmerge, "FAR_GAP", math.inf)
    monkeypatch.setattr(pround, "PRICE_SPLITS", 0)  # (the price pass after RENS gets this round to its target)
    base = make_scenario("sia", None, seed=0).base()  # copter demo's round 0: RENS, then the resolve tier
    out = solve_round(base, Settings(), PartitionConfig(k=2, executor="inline", whole_below_nnz=0))  # not solved whole
    parts = out.report["parts"]
    assert out.result.iterations == max(int(p["iterations"]) for p in parts) > 0
    assert "resolve" in (out.report.get("improvement") or {})  # the case this test is about
