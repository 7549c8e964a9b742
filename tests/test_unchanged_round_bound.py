"""An unchanged MILP round (an empty delta) keeps the previous round's proven bound: the model is the same, so
the bound still holds. Without it, a limited round kept the previous integer point (``solver/integer/
incumbent.py``) but proved only its own, looser relaxation bound: p0201 under ``--time-limit 1.5`` went from
round 0 OPTIMAL 7615 (bound 7580) to FEASIBLE 7615 (bound 6874.8). Here the round's own proof is cut by an
iteration limit with HiGHS and RENS off, so the outcome does not depend on the machine's speed."""

from __future__ import annotations

import math

import pytest

from formats.io import read_problem
from solver import rounds
from solver.model.delta import Delta
from solver.model.settings import Settings
from solver.rounds import loop
from tests.helpers import require_data

#: a step that cannot prove the gap itself: few PDHG iterations, no HiGHS, no RENS, no dual ascent
WEAK = Settings(iteration_limit=64, relaxation_round_iterations=64, integer_fallback="none",
                integer_improve_max_integers=0, integer_submip_seconds=0.0, integer_dual_ascent_steps=0)


@pytest.fixture
def p0201(tmp_path):
    st = tmp_path / "st"
    rep = rounds.init(read_problem(require_data("mps/p0201.mps.gz")), st)
    assert rep["status"] == "OPTIMAL" and math.isfinite(rep["lp_bound"]), rep
    return st, rep


def test_an_empty_delta_keeps_the_previous_bound_and_optimal(p0201):
    st, rep0 = p0201
    rep = rounds.step(Delta.concat([], base_round=0), st, WEAK)
    assert rep["status"] == "OPTIMAL", rep.get("message")
    assert rep["objective"] == rep0["objective"] and rep["lp_bound"] == rep0["lp_bound"]
    assert rep["gap_rel"] <= Settings().mip_gap_tol


def test_without_the_carried_bound_the_same_round_is_feasible_only(p0201, monkeypatch):
    """The set-up's own check: the round's relaxation alone does not prove the gap (what the fix adds)."""
    st, rep0 = p0201
    monkeypatch.setattr(loop, "_bound_if_unchanged", lambda gen, info: math.nan)
    rep = rounds.step(Delta.concat([], base_round=0), st, WEAK)
    assert rep["status"] == "FEASIBLE" and rep["objective"] == rep0["objective"], rep.get("message")
    assert rep["lp_bound"] < rep0["lp_bound"]


def test_a_changed_model_does_not_inherit_the_bound(p0201):
    from formats.checkpoint import StateStore
    from solver.differential import apply_delta

    st, rep0 = p0201
    gen = StateStore(st).load()
    _, same = apply_delta(gen.problem, Delta.concat([], base_round=0))
    assert loop._bound_if_unchanged(gen, same) == rep0["lp_bound"]
    name, cost = gen.problem.col_names[0], float(gen.problem.cost[0])
    for d in (Delta.vars([name], cost=[cost + 1.0]), Delta.vars([name], upper=[0.0])):
        _, changed = apply_delta(gen.problem, Delta.concat([d], base_round=0))
        assert math.isnan(loop._bound_if_unchanged(gen, changed)), d
