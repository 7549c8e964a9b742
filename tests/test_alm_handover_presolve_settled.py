"""A warm ALM round that hands over to PDHG, whose HiGHS presolve then settles the LP before PDHG iterates: the
round's engine, iterations and warm start are the ALM's, and its reason says who settled it (helper-200: a failed
round read "engine presolve, iterations 0, warm_started False" and "so no engine iterated" after 19 warm ALM outer
steps that its own message reported). The engine ``presolve`` stays what the README says: an LP presolve settled
alone."""

from __future__ import annotations

from formats.io import read_problem
from solver import rounds
from solver.model.delta import Delta
from solver.model.status import Status
from tests.helpers import require_data


def test_a_round_presolve_settles_after_the_alm_names_the_alms_work(tmp_path):
    base = require_data("mps") / "e226.mps"
    state = tmp_path / "st"
    rounds.init(read_problem(base), state_dir=state)
    # two one-column rows that conflict outright: x >= 10 and x <= 1
    d = Delta.concat([Delta.cons(["bad1", "bad2"], lower=[10.0, None], upper=[None, 1.0]),
                      Delta.coefs(var=[".ETHSD", ".ETHSD"], con=["bad1", "bad2"], value=[1.0, 1.0])], base_round=0)
    rep = rounds.step(d, state_dir=state, accept_failed=True)
    assert rep["status"] == Status.PRIMAL_INFEASIBLE.name
    # the case: the warm ALM's multipliers diverge, it hands over cold, presolve proves the conflict
    assert rep["message"].startswith("ALM handed over to PDHG"), rep["message"]
    assert "HiGHS presolve proved that no feasible point exists" in rep["message"]
    assert rep["engine"] == "alm" and rep["iterations"] > 0 and rep["warm_started"] is True, rep
    assert rep["engine_reason"].endswith("HiGHS presolve settled the LP (PRIMAL_INFEASIBLE) before PDHG iterated")
    assert "no engine iterated" not in rep["engine_reason"] and rep["engine"] != "presolve"
