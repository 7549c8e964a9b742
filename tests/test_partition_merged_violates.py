"""A partitioned MILP round whose merged point fails the whole model's exact re-check is solved whole, not failed.

An LP state (40 jobs x 6 servers, capacity rows shared) partitioned into 3 parts, then a delta adding two clients
with integer columns: the round is a MILP, but the part without a new client has no integer column, so it is an
LP solved to ``--tol`` (norm-wise) and its columns overshoot the shared capacity rows by ~1e-6 relative. The merge's
exact MILP re-check (rows within 1e-6) refused the point and the round failed NUMERICAL_ERROR (exit 5, CURRENT
unchanged) on a model HiGHS solves at once, where the monolithic round is OPTIMAL."""

from __future__ import annotations

import numpy as np
import pytest

from formats.io import read_problem, write_delta
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import highs_mip_objective


def _jobs(names: list[str], n_srv: int, cost: np.ndarray, lower, upper, integer: bool) -> list[Delta]:
    """Each job's demand row and its columns job/s<j> in its demand row and in the servers' capacity rows."""
    cols = [f"{c}/s{j}" for c in names for j in range(n_srv)]
    return [Delta.cons([f"{c}/demand" for c in names], lower=lower, upper=upper),
            Delta.vars(cols, cost=cost, lower=[0.0] * len(cols), upper=[3.0] * len(cols),
                       integer=[integer] * len(cols)),
            Delta.coefs(var=cols + cols, con=[f"cap/s{j}" for _ in names for j in range(n_srv)]
                        + [f"{c}/demand" for c in names for _ in range(n_srv)], value=[1.0] * (2 * len(cols)))]


def test_a_violating_merge_of_a_milp_round_is_solved_whole(tmp_path):
    rng = np.random.default_rng(3)
    n_jobs, n_srv = 40, 6
    caps = rng.integers(8, 14, n_srv) * 2.5
    lower, upper = rng.integers(1, 4, n_jobs).astype(float), rng.integers(4, 6, n_jobs).astype(float)
    names = [f"job{i}" for i in range(n_jobs)]
    base = Delta.concat([Delta.cons([f"cap/s{j}" for j in range(n_srv)], upper=caps),
                         *_jobs(names, n_srv, -rng.uniform(1, 5, n_jobs * n_srv), lower, upper, False)],
                        format="problem")
    write_delta(base, tmp_path / "base.parquet")
    new = ["job40", "job41"]
    d1 = Delta.concat(_jobs(new, n_srv, -3.0 - 0.1 * np.tile(np.arange(n_srv), 2), [2.0, 2.0], [4.0, 4.0], True),
                      base_round=0)
    write_delta(d1, tmp_path / "d1.parquet")
    state = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", state,
                partition={"k": 3, "executor": "inline", "whole_below_nnz": 0})
    rep = rounds.step(tmp_path / "d1.parquet", state)
    assert rep["status"] in ("OPTIMAL", "FEASIBLE"), rep["message"]
    assert rep["partitions"]["fallback"]["reason"] == "merged_violates"
    assert "solved whole" in rep["message"]
    rounds.export(state, tmp_path / "now.parquet")
    best = highs_mip_objective(read_problem(tmp_path / "now.parquet"))
    assert rep["objective"] == pytest.approx(best, rel=5e-3)
