"""A small MILP goes to HiGHS first (``Settings.integer_highs_max_nonzeros``, solver.integer.pipeline._highs_first):
at most that many nonzeros and the HiGHS fallback on, the round is HiGHS simplex on the relaxation (duals, state,
a valid bound) and HiGHS MIP at the round's target, seeded with the previous point; no PDHG relaxation stage.

Before, egout / p0033 / gt2 ran PDHG stages, rounding, RENS and then this same HiGHS MIP (4-47x HiGHS's time).
The verdicts keep their meaning: OPTIMAL = proven within ``mip_gap_tol`` by a bound reported in ``lp_bound``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from formats.io import read_problem
from solver.integer import solve_milp
from solver.integer.check import check_point
from solver.model.errors import SettingsError
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status
from tests.helpers import binary_knapsack, manifest, require_data

TARGET = Settings().mip_gap_tol
OPTIMA = {r["file"]: float(r["optimal_objective"]) for r in manifest("mps") if r["kind"] == "MILP"}
FIRST = "small model: HiGHS first"


def _first_step(res) -> dict:
    return res.mip["steps"][0] if res.mip["steps"] else {}


@pytest.mark.parametrize("name", ["egout.mps", "p0033.mps.gz", "gt2.mps"])
def test_a_small_miplib_model_is_solved_by_highs_first_within_the_target(name):
    p = read_problem(require_data("mps") / name)
    res = solve_milp(p, Settings(), None)
    step = _first_step(res)
    assert step.get("step") == "fallback" and step.get("reason", "").startswith(FIRST)
    assert res.mip["relaxation_stages"] == [] and res.iterations == 0 and res.mip["lp_engine"] == "highs"
    assert res.engine == "highs" and res.engine_reason.startswith(FIRST)
    assert res.status == Status.OPTIMAL and res.point_feasible and check_point(p, res.x)["ok"]
    opt = OPTIMA[name]
    bound = res.mip["lp_bound"]
    # the proven gap is the reported one, within the target, and the bound is valid
    assert math.isfinite(bound) and p.sense * (bound - opt) <= 1e-6 * max(1.0, abs(opt))
    assert res.mip["gap_rel"] <= TARGET
    assert p.sense * (res.objective - opt) <= TARGET * abs(opt)
    # the relaxation's duals and state are there for the report and the next round
    assert res.y.shape == (p.n_rows,) and res.state is not None and res.state.integer_x is not None


def test_the_rule_is_off_at_zero_and_without_the_fallback():
    p = read_problem(require_data("mps") / "p0033.mps.gz")
    for s in (Settings(integer_highs_max_nonzeros=0), Settings(integer_fallback="none"),
              Settings(integer_highs_max_nonzeros=p.nnz - 1)):
        res = solve_milp(p, s, None)
        assert not _first_step(res).get("reason", "").startswith(FIRST)
        assert len(res.mip["relaxation_stages"]) >= 1
    res = solve_milp(p, Settings(integer_highs_max_nonzeros=p.nnz), None)
    assert _first_step(res).get("reason", "").startswith(FIRST)


@pytest.mark.parametrize("engine", ["pdhg", "alm"])
def test_a_pinned_lp_engine_keeps_the_relaxation_stages(engine):
    # --engine pdhg|alm pinned by the user: the relaxation stages run with that engine, never HiGHS first
    # (only engine "auto" takes the small-model path; before, the pinned engine was silently ignored)
    p = read_problem(require_data("mps") / "p0033.mps.gz")
    assert p.nnz <= Settings().integer_highs_max_nonzeros
    res = solve_milp(p, Settings(engine=engine), None)
    assert not _first_step(res).get("reason", "").startswith(FIRST)
    assert len(res.mip["relaxation_stages"]) >= 1 and res.mip["lp_engine"] == engine
    assert res.engine != "highs"


def test_a_warm_round_seeds_highs_with_the_previous_point_and_keeps_it_when_not_beaten():
    p = read_problem(require_data("mps") / "egout.mps")
    r0 = solve_milp(p, Settings(), None)
    ws = SolverState(x=r0.state.x, y=r0.state.y, integer_x=r0.x.copy())
    r1 = solve_milp(p, Settings(), ws)
    assert r1.mip["steps"][0]["step"] == "previous" and r1.mip["previous_point"]["feasible"]
    step = [s for s in r1.mip["steps"] if s.get("reason", "").startswith(FIRST)][0]
    assert step["seeded"]
    assert r1.status == Status.OPTIMAL and r1.objective == pytest.approx(r0.objective, rel=1e-12, abs=1e-9)
    assert r1.mip["incumbent"] == "previous"


def test_an_integer_infeasible_small_model_is_proven_infeasible():
    # 2 x0 + 2 x1 = 1 over integers: the relaxation is feasible, no integer point exists
    p = Problem.from_arrays(cost=np.array([1.0, 1.0]), col_lower=np.zeros(2), col_upper=np.full(2, 3.0),
                            row_lower=np.array([1.0]), row_upper=np.array([1.0]), matrix=np.array([[2.0, 2.0]]),
                            integrality=np.array([True, True]))
    res = solve_milp(p, Settings(), None)
    assert res.status == Status.PRIMAL_INFEASIBLE and not res.point_feasible
    assert _first_step(res).get("reason", "").startswith(FIRST)


def test_a_small_model_with_continuous_columns_is_completed_exactly_without_pdhg():
    # max 5a + 4b + 3c + y, 2a + 2b + 2c + y <= 4.5, y <= 0.5 + 2c (binaries a, b, c; y continuous in [0, 3])
    p = Problem.from_arrays(cost=[5, 4, 3, 1], col_lower=[0, 0, 0, 0], col_upper=[1, 1, 1, 3],
                            row_lower=[-np.inf, -np.inf], row_upper=[4.5, 0.5], matrix=np.array([[2.0, 2, 2, 1],
                                                                                                [0, 0, -2, 1]]),
                            integrality=[True, True, True, False], sense=-1)
    res = solve_milp(p, Settings(), None)
    assert res.status == Status.OPTIMAL and check_point(p, res.x)["ok"]
    assert res.objective == pytest.approx(9.5)


def test_highs_first_that_cannot_close_the_gap_stops_when_stalled():
    """The 200-binary, 30-row packing MILP (3,598 nonzeros): HiGHS cannot prove 0.5% (alone in 120 s neither);
    with a 600 s budget HiGHS first ends because it stalled, FEASIBLE with its point, exact."""
    from tests.helpers import packing

    p = packing(200, 30, seed=0)  # above the default limit: HiGHS first asked for
    r = solve_milp(p, Settings(integer_fallback_seconds=600.0, integer_highs_max_nonzeros=p.nnz), None)
    step = _first_step(r)
    assert step["reason"].startswith(FIRST) and step["stalled"] is True
    assert r.mip["relaxation_stages"] == []
    assert r.status == Status.FEASIBLE and r.point_feasible and check_point(p, r.x)["ok"]
    assert TARGET < r.mip["gap_rel"] < 0.1


def test_a_negative_limit_is_refused_naming_the_field():
    with pytest.raises(SettingsError) as e:
        Settings(integer_highs_max_nonzeros=-1)
    assert e.value.field == "integer_highs_max_nonzeros"


def test_a_partitioned_rounds_parts_round_their_relaxation_instead():
    """The rule is for a whole small model: a part of a partitioned MILP round stops at its first rounded point
    (``cheap_part_settings``), which the merge needs, so its small parts do not go to HiGHS MIP first."""
    from solver.partition.improve import cheap_part_settings

    assert cheap_part_settings(Settings()).integer_highs_max_nonzeros == 0


def _stopped_highs(calls):
    """A highs_mip stand-in: the first call (HiGHS first) returns the all-zero point, stopped at its time budget;
    later calls (the improvement) find nothing. Deterministic, unlike a real 0.05 s budget."""
    def fake(problem, seconds, seed, **kw):
        calls.append(seconds)
        info = {"highs_status": "Time limit reached", "seconds": 0.0, "mip_dual_bound": math.nan,
                "mip_gap": math.inf, "seeded": False, "stalled": False}
        return (np.zeros(problem.n_cols) if len(calls) == 1 else None), info
    return fake


def test_highs_first_stopped_at_its_budget_above_the_target_is_followed_by_the_stages(monkeypatch):
    """HiGHS first that stops at --integer-fallback-seconds with a poor point is no longer the round's answer
    (bell5 0.05 s ended at gap 0.865): the relaxation stages run, seeded with that point as the incumbent, and
    the better point wins (the report says which path produced it)."""
    from solver.integer import fallback

    calls: list = []
    monkeypatch.setattr(fallback, "highs_mip", _stopped_highs(calls))
    p = binary_knapsack()
    res = solve_milp(p, Settings(), None)
    assert _first_step(res).get("reason", "").startswith(FIRST) and _first_step(res)["highs_status"] \
        == "Time limit reached"
    assert len(res.mip["relaxation_stages"]) >= 1 and "relaxation stages follow" in res.mip["highs_first"]
    assert res.point_feasible and check_point(p, res.x)["ok"] and res.objective > 0.0  # beat the zero point
    assert res.mip["source"] in ("heuristic", "fallback") and res.mip["source"] in res.message


@pytest.mark.parametrize("name", ["bell5.mps", "misc03.mps.gz"])
def test_a_real_highs_first_stopped_early_is_no_worse_than_its_point(name):
    # bell5 / misc03 with a tiny HiGHS budget (the adversary's 0.05 / 0.3 s): when HiGHS stops above the target,
    # the stages follow and the answer is at least as good as HiGHS's point
    p = read_problem(require_data("mps") / name)
    res = solve_milp(p, Settings(integer_fallback_seconds=0.01), None)
    step = _first_step(res)
    assert step.get("reason", "").startswith(FIRST)
    assert res.point_feasible and check_point(p, res.x)["ok"]
    if step["highs_status"] != "Optimal" and not step.get("stalled"):
        assert len(res.mip["relaxation_stages"]) >= 1
