"""``show --solution``'s share of a client is its sum over the total; with values of one sign each share lies in
[0, 1], but a client's sum taken in another order than the total's rounded above it: one client's share read
1.0000000000000002 (a user's trial, session 52)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from solver.rounds.allocation import allocation


def test_one_clients_share_is_exactly_one():
    v = None
    rng = np.random.default_rng(0)
    for _ in range(1000):  # values whose grouped sum rounds above their total
        cand = rng.uniform(0, 1, rng.integers(2, 50))
        if np.bincount(np.zeros(cand.size, dtype=np.int64), weights=cand)[0] / float(cand.sum()) > 1.0:
            v = cand
            break
    assert v is not None
    table = pa.table({"name": [f"c/x{i}" for i in range(v.size)], "value": v})
    res = allocation(table)
    assert len(res["clients"]) == 1 and res["clients"][0]["share"] == 1.0
    two = allocation(pa.table({"name": ["a/x", "b/x"], "value": [1.0, 3.0]}))
    assert [c["share"] for c in two["clients"]] == [0.75, 0.25]
