"""A round stored with ``--accept-failed`` as DUAL_INFEASIBLE (or PRIMAL_INFEASIBLE) left an iterate driven along an
unboundedness (infeasibility) ray, and the next round warm-started from it: the model of round 0 again ran 1,000,000
iterations and ended ITERATION_LIMIT (exit 5) where a cold solve ends OPTIMAL at once (helper-205, an LP of three
columns from a random-delta hunt). Such a round's successor now starts cold, and says so."""

from __future__ import annotations

import math

import numpy as np
import pytest

from solver import rounds
from solver.model.delta import Delta
from solver.model.settings import Settings
from tests.helpers import lp


def _base():
    """helper-205's m0: min -3.975 x0 - 3.671 x1 - 1.549 x2 over five rows (two empty, one ranged), x1 in [-4.12,
    5.52], x2 fixed at -2.89; HiGHS's optimum -259.7515."""
    A = [[0, 0, 0], [0, 3.14, 0], [0, 0, 0], [0.688, -6.411, 23.327], [-1.583, -23.986, 0]]
    p = lp([-3.975, -3.671, -1.549], A, [-np.inf, -1.505, -0.193, -60.578 - 3.165, -np.inf],
           [2.813, np.inf, np.inf, -60.578, -7.731], [0.0, -4.12, -2.89], [np.inf, 5.52, -2.89])
    return p.replace(col_names=np.array(["x0", "x1", "x2"], dtype=object),
                     row_names=np.array(["r0", "r1", "r2", "r3", "r4"], dtype=object))


@pytest.mark.parametrize("engine", ["auto", "alm", "pdhg"])
def test_the_round_after_an_unbounded_one_starts_cold_and_solves(tmp_path, engine):
    st = tmp_path / "st"
    r0 = rounds.init(_base(), st, Settings(engine=engine))
    assert r0["status"] == "OPTIMAL" and r0["objective"] == pytest.approx(-259.7515, rel=1e-3)
    free = Delta.vars(["x1"], cost=[5.0], lower=[-math.inf], upper=[math.inf])  # x1 -> -inf: unbounded
    r1 = rounds.step(Delta.concat([free], base_round=0), st, accept_failed=True)
    assert r1["status"] == "DUAL_INFEASIBLE" and r1["accepted"] is True
    back = Delta.vars(["x1"], cost=[-3.671], lower=[-4.12], upper=[5.52])  # round 0's model again
    r2 = rounds.step(Delta.concat([back], base_round=1), st)
    assert r2["status"] == "OPTIMAL" and r2["objective"] == pytest.approx(-259.7515, rel=1e-3), r2  # tol 1e-4: README
    assert r2["warm_started"] is False
    assert any("cold start: the previous round ended DUAL_INFEASIBLE" in w for w in r2["warnings"]), r2


def test_a_partitioned_round_after_an_unbounded_one_solves_whole_from_cold(tmp_path):
    """The same in a partitioned state: the round after a stored DUAL_INFEASIBLE round starts its parts and its whole
    solve cold, keeping its clients' parts and shares."""
    from tests.helpers import client_allocation

    st = tmp_path / "st"
    r0 = rounds.init(client_allocation(n_clients=6), st, partition={"k": 2, "executor": "inline"})
    assert r0["status"] in ("OPTIMAL", "FEASIBLE")
    up = Delta.vars(["c0/a"], cost=[-1.0], lower=[-math.inf])  # maximise: c0/a -> -inf raises it without end
    r1 = rounds.step(Delta.concat([up], base_round=0), st, accept_failed=True)
    assert r1["status"] == "DUAL_INFEASIBLE" and r1["accepted"] is True, r1
    back = Delta.vars(["c0/a"], cost=[float(client_allocation(n_clients=6).cost[0])], lower=[0.0])
    r2 = rounds.step(Delta.concat([back], base_round=1), st)
    assert r2["status"] in ("OPTIMAL", "FEASIBLE") and r2["objective"] == pytest.approx(r0["objective"], rel=1e-3)
    assert any("cold start of the parts and of any whole solve: the previous round ended DUAL_INFEASIBLE" in w
               for w in r2["warnings"]), r2["warnings"]
    # the parts start cold too (helper-219: they warm-started from the failed round's iterates, unsaid)
    solved = [p for p in r2["partitions"]["parts"] if p["status"] != "EMPTY"]
    assert solved and not any(p["warm_started"] for p in solved), solved
