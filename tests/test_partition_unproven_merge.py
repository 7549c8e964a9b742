"""A partitioned MILP round whose merge has no proven bound gets the whole-model comparison (helper-156,
session 31). A free integer column whose reduced cost is not exactly 0 makes the whole model's bound -inf;
such a merge (the report's ``gap_rel`` null) counted as within every target, so it got no improvement step and
no whole solve: an assignment MILP with free overflow columns, K = 2, stayed 2.3% from HiGHS's optimum round
after round. Now a merge without a gap is treated as above the target (``after_merge.unproven_or_above``)."""

from __future__ import annotations

import math

import numpy as np

from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from solver.model.problem import Problem
from tests.helpers import highs_mip_objective


def _assignment_with_free_overflow(items: int = 60, bins: int = 30, seed: int = 0) -> Problem:
    """Each item ``item<i>/bin<b>`` in one bin; a bin's load above its capacity goes to a free integer column
    ``ovf<b>`` (bounds -inf..inf, cost 7) that a row keeps >= 0 (its column bound stays infinite)."""
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 9, items).astype(float)
    n = items * bins
    cost = rng.integers(1, 50, n) + rng.uniform(0, 1, n)
    a = np.zeros((items + 2 * bins, n + bins))
    for i in range(items):
        a[i, i * bins:(i + 1) * bins] = 1.0
    for b in range(bins):
        a[items + b, b:n:bins] = w
        a[items + b, n + b] = -1.0
        a[items + bins + b, n + b] = -1.0
    p = Problem.from_arrays(cost=np.r_[cost, np.full(bins, 7.0)], col_lower=np.r_[np.zeros(n), np.full(bins, -np.inf)],
                            col_upper=np.r_[np.ones(n), np.full(bins, np.inf)],
                            row_lower=np.r_[np.ones(items), np.full(2 * bins, -np.inf)],
                            row_upper=np.r_[np.ones(items), np.full(bins, w.sum() / bins + w.max()), np.zeros(bins)],
                            matrix=a, integrality=np.ones(n + bins, bool))
    names = [f"item{i}/bin{b}" for i in range(items) for b in range(bins)] + [f"ovf{b}" for b in range(bins)]
    return p.replace(col_names=np.array(names, dtype=object),
                     row_names=np.array([f"r{k}" for k in range(a.shape[0])], dtype=object))


def test_a_merge_without_a_proven_bound_is_compared_with_the_whole_solve(tmp_path):
    p = _assignment_with_free_overflow()
    st = tmp_path / "st"
    rounds.init(p, st, partition={"k": 2, "executor": "inline"})
    rng = np.random.default_rng(1)
    idx = rng.choice(1800, 300, replace=False)
    cost = p.cost[idx] * rng.uniform(0.95, 1.05, idx.size)
    d = tmp_path / "d1.parquet"
    write_delta(Delta.concat([Delta.vars([p.col_names[j] for j in idx], cost=list(cost))], base_round=0), d)
    r = rounds.step(d, st)
    part = r["partitions"]
    assert part["gap_rel"] is None  # the merge proved no bound (the case this test is about)
    fb = part["fallback"]  # was absent: the round ended FEASIBLE with a null gap
    assert fb["merged_gap_rel"] is None and fb["kept"] in ("whole", "merged")
    assert r["status"] == "OPTIMAL" and math.isfinite(r["gap_rel"]) and r["gap_rel"] <= 5e-3
    q = p.replace(cost=p.cost.copy())
    q.cost[idx] = cost
    opt = highs_mip_objective(q)
    assert r["objective"] <= opt + 5e-3 * abs(opt) + 1e-9  # minimisation: within the target of HiGHS's optimum
