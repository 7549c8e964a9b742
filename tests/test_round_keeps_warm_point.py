"""A round whose warm point already meets the tolerance returns THAT point (continual optimisation: a round
with no change must not move the allocation). Before ``solver.lp.dispatch`` returned it as is, such a round ran
PDHG, whose first check measures and returns one PDHG step T(z) from the warm point (and its scaled-space round
trip): afiro after a cost change and an EMPTY delta reported "iterations 0", yet moved X02 from 25.5112 to 25.4904,
the objective from -467.29203 to -467.27756 and changed_variables was 10."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from solver import rounds
from solver.lp.dispatch import solve
from solver.model.delta import Delta
from solver.model.settings import Settings
from solver.workloads import make_scenario

AFIRO = Path(os.environ.get("COPTER_DATA", "/work/shared/data")) / "mps" / "afiro.mps"


def _gen(st: Path, r: int) -> dict:
    """Round r's solution values, reduced costs and row duals (Parquet as written) and its report."""
    import json

    g = st / f"gen-{r:06d}"
    sol, duals = pq.read_table(g / "solution.parquet"), pq.read_table(g / "duals.parquet")
    return {"names": sol["name"].to_pylist(), "x": sol["value"].to_numpy(), "rc": sol["reduced_cost"].to_numpy(),
            "rows": duals["name"].to_pylist(), "y": duals["dual"].to_numpy(),
            "report": json.loads((g / "report.json").read_text())}


def _same_point(a: dict, b: dict) -> None:
    """x and y bitwise equal (the bytes, so -0.0 / 0.0 and the last bit count), names in the same order."""
    assert a["names"] == b["names"] and a["rows"] == b["rows"]
    assert a["x"].tobytes() == b["x"].tobytes(), np.max(np.abs(a["x"] - b["x"]))
    assert a["y"].tobytes() == b["y"].tobytes(), np.max(np.abs(a["y"] - b["y"]))
    np.testing.assert_allclose(a["rc"], b["rc"], rtol=0, atol=1e-12)


def _check_kept(st: Path, before: int, after: int) -> None:
    a, b = _gen(st, before), _gen(st, after)
    _same_point(a, b)
    ra, rb = a["report"], b["report"]
    assert rb["status"] == "OPTIMAL" and rb["iterations"] == 0 and rb["warm_started"] is True
    assert rb["changed_variables"] == 0
    assert rb["objective"] == ra["objective"]  # the same expression on the same x (the ALM had its own sum)
    assert "already meets tol" in rb["engine_reason"]


def _cost_of(problem, name: str) -> float:
    return float(problem.cost[list(problem.col_names).index(name)])


@pytest.mark.skipif(not AFIRO.exists(), reason="shared data (COPTER_DATA) not available")
def test_afiro_empty_and_no_op_deltas_keep_the_point(tmp_path):
    st = tmp_path / "st"
    rounds.init(str(AFIRO), st)
    rep = rounds.step(Delta.concat([Delta.vars(["X02"], cost=[-0.5])], base_round=0), st)
    assert rep["status"] == "OPTIMAL"
    rounds.step(Delta.empty(base_round=1), st)  # no change at all
    _check_kept(st, 1, 2)
    from formats.checkpoint import StateStore

    cur = StateStore(st).load()
    # a delta that changes nothing material: X02's cost set to the value it has
    rounds.step(Delta.concat([Delta.vars(["X02"], cost=[_cost_of(cur.problem, "X02")])], base_round=2), st)
    _check_kept(st, 2, 3)


def test_te_lp_empty_delta_keeps_the_point(tmp_path):
    sc = make_scenario("te", 12, seed=0)
    p = sc.base()
    assert not p.is_mip
    st = tmp_path / "st"
    rounds.init(p, st)
    d = sc.next_delta(1, None)
    rounds.step(Delta.concat([d], base_round=0), st)
    rounds.step(Delta.empty(base_round=1), st)
    _check_kept(st, 1, 2)


@pytest.mark.parametrize("engine", ["auto", "pdhg", "alm"])
def test_dispatch_returns_a_converged_warm_point_unchanged(engine):
    """Every engine setting, LP level: a warm point meeting tol comes back bitwise, state included."""
    p = make_scenario("te", 12, seed=0).base()
    s = Settings(tol=1e-4)
    r0 = solve(p, s)
    assert r0.status.name == "OPTIMAL"
    r1 = solve(p, Settings(tol=1e-4, engine=engine), r0.state)
    assert r1.status.name == "OPTIMAL" and r1.iterations == 0 and r1.warm_started
    assert r1.x.tobytes() == r0.x.tobytes() and r1.y.tobytes() == r0.y.tobytes()
    assert r1.state.x.tobytes() == r0.x.tobytes() and r1.state.y.tobytes() == r0.y.tobytes()
    assert r1.objective == r0.objective


def test_a_warm_point_missing_tol_is_still_solved():
    """The shortcut is taken only when the point meets tol: a tighter tol iterates from it."""
    p = make_scenario("te", 12, seed=0).base()
    r0 = solve(p, Settings(tol=1e-4))
    r1 = solve(p, Settings(tol=1e-7), r0.state)
    assert r1.status.name == "OPTIMAL" and r1.iterations > 0
    assert not np.array_equal(r1.x, r0.x)
