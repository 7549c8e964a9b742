"""HiGHS first (a MILP of at most ``integer_highs_max_nonzeros`` nonzeros) keeps the previous round's point without
HiGHS MIP when that point is exactly feasible and a bound valid for THIS model proves it within ``mip_gap_tol``,
the rule a relaxation stage stops by. Before, lseu's round after a cost delta and then an EMPTY delta ran HiGHS MIP
again (a ``fallback`` step of 0.57-0.78 s in a 0.71-0.95 s round) to re-prove the same point against the same
bound. The previous round's bound counts only when the round loop found the model unchanged
(``loop._bound_if_unchanged``); a real change still goes to HiGHS and ends at its optimum."""

from __future__ import annotations

import numpy as np
import pytest

from formats.checkpoint import StateStore
from formats.io import read_problem
from solver import rounds
from solver.model.delta import Delta
from solver.model.settings import Settings
from tests.helpers import assert_exactly_feasible, highs_mip_objective, require_data

TARGET = Settings().mip_gap_tol


@pytest.fixture
def highs_mip_calls(monkeypatch):
    """Every HiGHS MIP call of the round (``fallback.highs_mip``, which the pipeline imports when it calls it)."""
    from solver.integer import fallback

    calls: list = []
    real = fallback.highs_mip

    def counted(*args, **kw):
        calls.append(args[1] if len(args) > 1 else kw.get("seconds"))
        return real(*args, **kw)

    monkeypatch.setattr(fallback, "highs_mip", counted)
    return calls


def _cost_delta(st, base_round: int) -> tuple[Delta, object]:
    """A cost delta that makes the current point worse: +40 on its costliest column at 1 (lseu: all binary;
    round 0 at 1120, then the optimum is 1128)."""
    gen = StateStore(st).load()
    p, x = gen.problem, np.asarray(gen.state.integer_x)
    j = int(np.argmax(np.where(x > 0.5, p.cost, -np.inf)))
    return Delta.concat([Delta.vars([p.col_names[j]], cost=[float(p.cost[j]) + 40.0])], base_round=base_round), j


def test_an_unchanged_round_keeps_the_proven_point_without_highs_mip(tmp_path, highs_mip_calls):
    st = tmp_path / "st"
    p = read_problem(require_data("mps") / "lseu.mps")
    assert p.nnz <= Settings().integer_highs_max_nonzeros
    rep0 = rounds.init(p, st)
    assert rep0["status"] == "OPTIMAL" and rep0["engine"] == "highs", rep0.get("message")

    # a real change: the previous point is still feasible but no bound proves it, so HiGHS MIP runs
    delta, j = _cost_delta(st, 0)
    n0 = len(highs_mip_calls)
    rep1 = rounds.step(delta, st)
    assert len(highs_mip_calls) > n0 and "highs_first" not in rep1["mip"]
    q = StateStore(st).load().problem  # round 1's model, as stored
    assert q.cost[j] == p.cost[j] + 40.0
    opt = highs_mip_objective(q)  # highspy on the changed model, at its default 1e-4
    assert rep1["status"] == "OPTIMAL" and abs(rep1["objective"] - opt) <= TARGET * abs(opt)
    assert rep1["lp_bound"] <= opt + 1e-6 and rep1["objective"] < rep0["objective"] + 40.0

    # an empty delta: the same model, so round 1's point and bound still prove the gap; HiGHS MIP is not run
    n1 = len(highs_mip_calls)
    rep2 = rounds.step(Delta.concat([], base_round=1), st)
    assert len(highs_mip_calls) == n1, rep2["mip"]["steps"]
    assert [s["step"] for s in rep2["mip"]["steps"]] == ["previous"]
    assert rep2["status"] == "OPTIMAL" and rep2["mip"]["source"] == "previous"
    assert rep2["objective"] == rep1["objective"] and rep2["lp_bound"] == rep1["lp_bound"]
    assert rep2["mip"]["bound_from_previous_round"] == rep1["lp_bound"] and rep2["gap_rel"] <= TARGET
    assert "HiGHS MIP not run" in rep2["mip"]["highs_first"] and rep2["engine"] == "highs"
    gen = StateStore(st).load()  # the next round still has the point and the relaxation's state
    assert_exactly_feasible(gen.problem, gen.state.integer_x)
    assert gen.state.y.shape == (p.n_rows,)
