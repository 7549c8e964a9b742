"""The LP engine choice (solver.lp.engine_choice, wired in solver.lp.dispatch): which engine a solve runs, why,
what it leaves for the next round, the report fields and the --engine flag.

Rules tested: a cold solve runs PDHG; a warm start much closer than a cold one runs the ALM; a warm start no
better than a cold one on any KKT measure (each compared with the same measure) drops the start and runs PDHG
cold; a recent ALM loss keeps PDHG; an ALM run past its budget is finished by a warm PDHG solve and recorded as
lost (the budget's floor stops at ALM_OVER x the cold passes); one with more passes than the stream's last PDHG
warm round backs off the ALM; a costly ALM round (ALM_PROBE) is followed by one PDHG warm round that decides whether
the ALM comes back; the record counts the
solve's matrix passes; a pinned engine is honoured; the rounds keep the record across processes (state.arrow)
and reach the cold optimum with the auto engine.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import write_problem
from solver import rounds
from solver.api import solve_problem
from solver.differential import apply_delta, map_state  # noqa: I001 (after solver.lp: the package's lazy exports)
from solver.lp import engine_choice
from solver.lp.dispatch import solve
from solver.lp.engine_choice import ALM_BACKOFF, EngineRecord, choose_engine
from solver.model.errors import SettingsError, UsageError
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status
from solver.workloads.te import TEScenario
from tests.helpers import assert_certified_optimal, small_lp, te_warm_round

TOL = 1e-6
runner = CliRunner()


@pytest.fixture(scope="module")
def te_round():
    """A TE ring round: (problem of round 1, round 0's state mapped onto it, cold result of round 1)."""
    q, warm = te_warm_round(TOL)
    return q, warm, solve(q, Settings(tol=TOL))


def test_cold_solve_runs_pdhg_and_records_its_seconds():
    p = small_lp()
    assert choose_engine(p, Settings(), None).engine == "pdhg"
    res = solve(p, Settings(tol=TOL))
    assert res.status == Status.OPTIMAL and res.engine == "pdhg" and "cold solve" in res.engine_reason
    rec = EngineRecord.from_state(res.state)
    assert rec.engine == "pdhg" and rec.converged and not rec.lost and rec.cold_seconds > 0
    assert rec.cold_passes == engine_choice.PDHG_ITERATION_PASSES * res.iterations  # the ALM budget's base


def test_close_warm_start_runs_the_alm_and_reaches_the_cold_optimum(te_round):
    q, warm, cold = te_round
    ch = choose_engine(q, Settings(tol=TOL), warm)
    assert ch.engine == "alm" and ch.use_warm
    assert ch.warm_kkt <= engine_choice.ALM_RATIO * ch.cold_kkt and ch.warm_kkt <= engine_choice.ALM_MAX_KKT
    assert f"{ch.warm_kkt:.1e}" in ch.reason and f"{ch.cold_kkt:.1e}" in ch.reason  # the numbers it used
    res = solve(q, Settings(tol=TOL), warm)
    assert res.engine == "alm" and res.warm_started
    assert_certified_optimal(q, res, TOL)
    assert abs(res.objective - cold.objective) <= 1e-5 * (1 + abs(cold.objective))
    assert res.state.engine["engine"] == "alm" and res.state.engine["converged"]
    assert res.state.engine["cold_seconds"] == warm.engine["cold_seconds"]  # carried from the cold round
    assert res.state.engine["cold_passes"] == warm.engine["cold_passes"]
    assert "matrix passes" in res.message and "budget" in res.engine_reason


def test_warm_start_worse_than_cold_is_dropped_and_pdhg_solves_cold(te_round):
    q, warm, cold = te_round
    rng = np.random.default_rng(0)
    bad = SolverState(x=warm.x + 1e3 * rng.uniform(0, 1, q.n_cols), y=warm.y - 1e3 * rng.uniform(0, 1, q.n_rows),
                      engine=warm.engine)
    ch = choose_engine(q, Settings(tol=TOL), bad)
    assert ch.engine == "pdhg" and not ch.use_warm and ch.warm_kkt >= ch.cold_kkt
    res = solve(q, Settings(tol=TOL), bad)
    assert res.engine == "pdhg" and not res.warm_started and "no better than a cold start" in res.engine_reason
    assert res.iterations == cold.iterations  # literally the cold solve
    assert abs(res.objective - cold.objective) <= 1e-5 * (1 + abs(cold.objective))
    assert EngineRecord.from_state(res.state).cold_seconds > 0  # a cold solve renews the ALM's budget base


def test_far_warm_start_runs_pdhg_warm(te_round):
    q, warm, _ = te_round
    x0, y0 = engine_choice.cold_point(q)
    mid = SolverState(x=0.5 * (warm.x + x0), y=0.5 * warm.y, engine=warm.engine)  # between warm and cold
    ch = choose_engine(q, Settings(tol=TOL), mid)
    assert ch.warm_kkt < ch.cold_kkt
    if ch.warm_kkt > engine_choice.ALM_MAX_KKT:
        assert ch.engine == "pdhg" and ch.use_warm and "PDHG warm" in ch.reason


def test_recent_alm_loss_and_a_start_without_record_keep_pdhg(te_round):
    q, warm, _ = te_round
    lost = SolverState(x=warm.x, y=warm.y, engine={**warm.engine, "lost": True, "skip_alm": 3})
    ch = choose_engine(q, Settings(tol=TOL), lost)
    assert ch.engine == "pdhg" and ch.use_warm and "ALM lost" in ch.reason
    assert engine_choice.next_record(ch, True, False, None).skip_alm == 2  # counts down
    for bare in ((warm.x, warm.y), SolverState(x=warm.x, y=warm.y)):
        assert choose_engine(q, Settings(tol=TOL), bare).engine == "pdhg"


def test_alm_past_its_budget_hands_the_round_to_warm_pdhg_and_is_recorded_lost(te_round, monkeypatch):
    q, warm, cold = te_round
    monkeypatch.setattr(engine_choice, "ALM_MIN_NONZEROS", 0.0)
    quick = SolverState(x=warm.x, y=warm.y, engine={**warm.engine, "cold_passes": 2.0})  # budget: 1 pass
    ch = choose_engine(q, Settings(tol=TOL), quick)
    assert ch.engine == "alm" and ch.alm_passes == 1.0
    res = solve(q, Settings(tol=TOL), quick)
    assert res.status == Status.OPTIMAL and res.engine == "pdhg" and res.warm_started
    assert "ALM handed over to PDHG (warm from the round's start point)" in res.message
    assert "work budget of 1 matrix passes" in res.message
    assert "the ALM gave up" in res.engine_reason and "PDHG finished the round warm" in res.engine_reason
    assert "alm_total" in res.seconds and res.seconds["total"] >= res.seconds["alm_total"]
    # PDHG ran from the round's own start point: the same iterations as a PDHG warm solve from it
    pinned = solve(q, Settings(tol=TOL, engine="pdhg"), quick)
    assert res.iterations == pinned.iterations
    np.testing.assert_array_equal(res.x, pinned.x)
    rec = EngineRecord.from_state(res.state)
    assert rec.lost and rec.skip_alm == ALM_BACKOFF and rec.engine == "pdhg"
    assert rec.cold_passes == 2.0  # no cold solve ran: the budget's base is carried on
    assert math.isnan(rec.pdhg_warm_passes)  # a lost round's passes are the ALM's and PDHG's: no PDHG yardstick
    assert abs(res.objective - cold.objective) <= 1e-5 * (1 + abs(cold.objective))
    assert choose_engine(q, Settings(tol=TOL), res.state).engine == "pdhg"  # the next round keeps PDHG


def test_pinned_engines_are_honoured(te_round):
    q, warm, _ = te_round
    res = solve(q, Settings(tol=TOL, engine="pdhg"), warm)
    assert res.engine == "pdhg" and res.warm_started and "pinned" in res.engine_reason
    p = small_lp()
    res = solve(p, Settings(tol=TOL, engine="alm"))  # cold, pinned: the ALM's own cold solve
    assert res.engine == "alm" and "--engine alm" in res.engine_reason
    assert_certified_optimal(p, res, TOL)


def test_a_warm_point_that_meets_tol_stays_with_pdhg():
    p = small_lp()
    r0 = solve(p, Settings(tol=TOL))
    again = solve(p, Settings(tol=TOL), r0.state)
    assert again.engine == "pdhg" and again.iterations == 0 and "already meets tol" in again.engine_reason


def test_unknown_engine_is_refused_by_settings_and_by_the_choice():
    with pytest.raises(SettingsError, match="Settings.engine"):
        Settings(engine="bogus")
    s = Settings()
    s.engine = "bogus"  # set after construction: the choice refuses it too
    with pytest.raises(UsageError, match="settings.engine"):
        choose_engine(small_lp(), s, None)


def test_cli_bogus_engine_exits_2_naming_the_flag(tmp_path):
    write_problem(small_lp(), tmp_path / "p.parquet")
    res = runner.invoke(app, ["solve", str(tmp_path / "p.parquet"), "--engine", "bogus"])
    assert res.exit_code == 2
    assert "--engine" in res.output and "bogus" in res.output


def test_cli_solve_json_carries_engine_and_reason(tmp_path):
    write_problem(small_lp(), tmp_path / "p.parquet")
    res = runner.invoke(app, ["solve", str(tmp_path / "p.parquet"), "--json", "--engine", "pdhg"])
    assert res.exit_code == 0, res.output
    rep = json.loads(res.stdout)
    assert rep["engine"] == "pdhg" and rep["engine_reason"].startswith("pinned: Settings.engine = pdhg")


def test_milp_round_reports_its_relaxations_engine():
    p = small_lp().replace(integrality=np.r_[np.ones(5, dtype=bool), np.zeros(25, dtype=bool)])
    # the relaxation stages (not HiGHS first, which this small model would get: tests/test_integer_highs_first.py)
    res = solve_problem(p, Settings(tol=1e-4, integer_highs_max_nonzeros=0))
    assert res.mip is not None and res.engine == "pdhg" and res.engine_reason  # a budgeted stage: pinned to PDHG
    assert res.mip["lp_engine"] == "pdhg"


def test_rounds_with_auto_engine_match_cold_solves_and_keep_the_record(tmp_path):
    sc = TEScenario(nodes=16, seed=2)
    p = sc.base()
    st = tmp_path / "st"
    rep0 = rounds.init(p, st, Settings(tol=TOL))
    assert rep0["engine"] == "pdhg" and "cold solve" in rep0["engine_reason"]
    engines = []
    for r in range(1, 4):
        d = sc.next_delta(r, None)
        q, _ = apply_delta(p, d)
        rep = rounds.step(d, st)
        assert rep["status"] == "OPTIMAL"
        assert rep["engine"] != "alm" or rep["warm_started"]
        assert "without a previous solve's record" not in rep["engine_reason"]  # the record survived state.arrow
        cold = solve(q, Settings(tol=TOL))
        assert math.isclose(rep["objective"], cold.objective, rel_tol=1e-5, abs_tol=1e-5)
        engines.append(rep["engine"])
        p = q
    assert "alm" in engines


def test_the_alm_budget_is_work_not_wall_time(te_round, monkeypatch):
    """A clock that runs 1000x fast (a loaded machine, kernels loading in a fresh worker) changes nothing:
    the same warm round gives the same engine, iterations and point as with the real clock."""
    import time as time_mod

    q, warm, _ = te_round
    ref = solve(q, Settings(tol=TOL), warm)
    assert ref.engine == "alm"
    real = time_mod.perf_counter
    t_start = real()
    monkeypatch.setattr(time_mod, "perf_counter", lambda: t_start + 1000.0 * (real() - t_start))
    slow = solve(q, Settings(tol=TOL), warm)
    assert slow.engine == ref.engine and slow.iterations == ref.iterations
    np.testing.assert_array_equal(slow.x, ref.x)
    np.testing.assert_array_equal(slow.y, ref.y)


def test_a_record_without_cold_passes_gives_the_alm_the_rounds_limits(te_round):
    """A state written before copter counted passes: no budget base, the ALM runs within the round's limits."""
    q, warm, _ = te_round
    old = {k: v for k, v in warm.engine.items() if k != "cold_passes"}
    ch = choose_engine(q, Settings(tol=TOL), SolverState(x=warm.x, y=warm.y, engine=old))
    assert ch.engine == "alm" and ch.alm_passes == float("inf") and "round's limits" in ch.reason


def test_the_abrupt_change_rule_compares_each_measure_with_the_same_measure():
    """LB (every load and the placement costs redrawn): the old point is primal feasible and far off in its gap,
    the cold start has gap 0 by construction and a large primal residual. Neither is better on every measure,
    so the warm start is kept (the old rule compared the warm gap with the cold primal residual and dropped it), and
    as its residuals are close and only its gap is far, the ALM runs within its budget (rule 6b)."""
    from solver.workloads.lb import LBScenario

    sc = LBScenario(shards=32, servers=4, seed=0)
    p = sc.base()
    r0 = solve(p, Settings(tol=TOL))
    q, info = apply_delta(p, sc.next_delta(1, None))
    ws = map_state(r0.state, info, q)
    ch = choose_engine(q, Settings(tol=TOL), ws)
    (pw, _, gw), (pc, dc, gc) = ch.warm_measures, ch.cold_measures
    assert gc == 0.0 and gw > pc > pw  # the warm point's worst measure is its gap, the cold start's its residual
    assert ch.warm_kkt > ch.cold_kkt  # the old worst-vs-worst rule would have dropped the start
    # kept, and only the gap is far (rule 6b): the ALM within its budget, the outcome judging it
    assert ch.use_warm and ch.engine == "alm" and "only the gap is large" in ch.reason
    assert max(pw, ch.warm_measures[1]) <= engine_choice.ALM_RATIO * max(pc, dc) and math.isfinite(ch.alm_passes)
    no_base = {k: v for k, v in ws.engine.items() if k != "cold_passes"}  # no budget: 6b does not apply
    ch = choose_engine(q, Settings(tol=TOL), SolverState(x=ws.x, y=ws.y, engine=no_base))
    assert ch.engine == "pdhg" and ch.use_warm and "PDHG warm" in ch.reason
    assert engine_choice.no_better((pc, dc, gc), (pc, dc, gc)) and engine_choice.no_better((1.0, 1.0, 1.0), (0.5, 0.0, 0.0))
    assert not engine_choice.no_better((0.1, 1.0, 1.0), (0.5, 0.0, 0.0))


def test_the_record_counts_the_solves_matrix_passes(te_round):
    """PDHG: two passes per iteration; the ALM: its own count (also in its message); an ALM loss: both."""
    q, warm, _ = te_round
    res = solve(q, Settings(tol=TOL, engine="pdhg"), warm)
    assert res.state.engine["passes"] == engine_choice.PDHG_ITERATION_PASSES * res.iterations
    alm = solve(q, Settings(tol=TOL), warm)
    assert alm.engine == "alm" and alm.state.engine["passes"] > 0
    assert f"{alm.state.engine['passes']:.0f} matrix passes" in alm.message
    assert EngineRecord.from_state(alm.state).passes == alm.state.engine["passes"]


def test_the_budget_floor_stops_at_alm_over_times_the_cold_passes_and_pdhg_warm_rounds_are_not_judged(te_round):
    """The ALM_MIN_NONZEROS floor never lets an ALM run go past ALM_OVER x the last cold solve's passes (where a
    finished run counts as lost anyway): past it PDHG finishes and the ALM backs off for ALM_BACKOFF rounds. A PDHG
    warm round past that count changes nothing (the cold solve was another LP)."""
    q, warm, _ = te_round
    cheap = {**warm.engine, "cold_passes": 2.0}
    ch = choose_engine(q, Settings(tol=TOL), SolverState(x=warm.x, y=warm.y, engine=cheap))
    assert ch.engine == "alm" and ch.alm_passes == engine_choice.ALM_OVER * 2.0
    assert q.nnz * ch.alm_passes < engine_choice.ALM_MIN_NONZEROS  # the floor alone would have allowed more
    alm_over = solve(q, Settings(tol=TOL), SolverState(x=warm.x, y=warm.y, engine=cheap))
    rec = EngineRecord.from_state(alm_over.state)
    assert alm_over.engine == "pdhg" and rec.lost and rec.skip_alm == ALM_BACKOFF
    within = solve(q, Settings(tol=TOL), warm)
    assert within.engine == "alm" and within.state.engine["skip_alm"] == 0
    x0, _ = engine_choice.cold_point(q)
    # a PDHG warm round past the cold passes (within WARM_OVER x them: test_a_pdhg_warm_round_past_warm_over...)
    base = 0.6 * solve(q, Settings(tol=TOL, engine="pdhg"), warm).state.engine["passes"]
    mid = SolverState(x=warm.x, y=warm.y, engine={**cheap, "skip_alm": 1, "cold_passes": base})
    res = solve(q, Settings(tol=TOL), mid)
    assert res.engine == "pdhg" and res.warm_started and res.state.engine["passes"] > base
    assert res.state.engine["skip_alm"] == 0 and not res.state.engine["warm_lost"]
    assert res.state.engine["pdhg_warm_passes"] == res.state.engine["passes"]  # rule 4's yardstick, carried on


def test_a_pdhg_warm_round_past_warm_over_times_the_cold_passes_is_solved_cold(te_round):
    """Issue #17: an "auto" PDHG warm round stops at WARM_OVER x the record's cold passes and the round is solved
    cold with the time left: OPTIMAL at the cold optimum, its passes the warm run's plus the cold solve's, and the
    cold solve's passes the record's next base. Before the cap the round ran on warm (warm_started, its passes far
    past the cap)."""
    q, warm, cold = te_round
    x0, _ = engine_choice.cold_point(q)
    base = 20.0
    far = SolverState(x=0.5 * (warm.x + x0), y=0.5 * warm.y, engine={**warm.engine, "cold_passes": base,
                                                                       "skip_alm": 1})
    s = Settings(tol=TOL)
    res = solve(q, s, far)
    assert res.status == Status.OPTIMAL and res.engine == "pdhg" and not res.warm_started
    assert "solved cold" in res.message and "solved cold" in res.engine_reason
    assert abs(res.objective - cold.objective) <= 1e-4 * max(1.0, abs(cold.objective))
    rec = EngineRecord.from_state(res.state)
    cap = engine_choice.warm_cap(choose_engine(q, s, far), s)
    assert rec.warm_lost and cap == math.ceil(engine_choice.WARM_OVER * base / engine_choice.PDHG_ITERATION_PASSES)
    cold_its = res.iterations - cap
    assert cold_its > 0 and rec.cold_passes == engine_choice.PDHG_ITERATION_PASSES * cold_its
    assert rec.passes == engine_choice.PDHG_ITERATION_PASSES * res.iterations
    assert math.isnan(rec.pdhg_warm_passes) or rec.pdhg_warm_passes == warm.engine.get("pdhg_warm_passes")
    assert "warm_iterate" in res.seconds or "warm_total" in res.seconds
    # pinned PDHG and rounds without a cold base are not capped
    assert engine_choice.warm_cap(choose_engine(q, Settings(tol=TOL, engine="pdhg"), far), s) is None
    no_base = SolverState(x=far.x, y=far.y, engine={**far.engine, "cold_passes": math.nan})
    assert engine_choice.warm_cap(choose_engine(q, s, no_base), s) is None
    # the round's own iteration limit below the cap wins
    assert engine_choice.warm_cap(choose_engine(q, s, far), Settings(tol=TOL, iteration_limit=cap)) is None


def test_an_alm_run_past_the_streams_last_pdhg_warm_round_backs_off_the_alm(te_round):
    """Rule 4: the engines compared on their own warm rounds. An ALM run that makes more passes than the stream's
    last PDHG warm round (ALM_VS_PDHG) counts as lost (not handed over: its point stands)."""
    q, warm, cold = te_round
    slow = solve(q, Settings(tol=TOL), SolverState(x=warm.x, y=warm.y, engine={**warm.engine, "pdhg_warm_passes": 1.0}))
    rec = EngineRecord.from_state(slow.state)
    assert slow.engine == "alm" and slow.status == Status.OPTIMAL and not rec.lost
    assert rec.skip_alm == ALM_BACKOFF and rec.alm_passes == rec.passes and rec.pdhg_warm_passes == 1.0
    fast = solve(q, Settings(tol=TOL), SolverState(x=warm.x, y=warm.y, engine={**warm.engine, "pdhg_warm_passes": 1e12}))
    assert fast.engine == "alm" and fast.state.engine["skip_alm"] == 0
    assert choose_engine(q, Settings(tol=TOL), slow.state).engine == "pdhg"  # the next round keeps PDHG


def test_a_costly_alm_round_is_followed_by_one_pdhg_warm_round_that_decides(te_round):
    """Rule 6a: after an ALM round past ALM_PROBE x the cold passes, in a stream without a PDHG warm round, PDHG
    runs warm once; the ALM backs off when that round made no more passes than the ALM's, else it comes back."""
    q, warm, _ = te_round
    pdhg = solve(q, Settings(tol=TOL, engine="pdhg"), warm).state.engine["passes"]
    base = {**warm.engine, "engine": "alm", "cold_passes": pdhg}  # the probe line: ALM_PROBE x pdhg
    below = SolverState(x=warm.x, y=warm.y, engine={**base, "alm_passes": 0.9 * engine_choice.ALM_PROBE * pdhg})
    assert choose_engine(q, Settings(tol=TOL), below).engine == "alm"  # a cheap ALM round: no probe
    for alm_passes, backs_off in ((2.0 * pdhg, True), (0.75 * pdhg, False)):
        st = SolverState(x=warm.x, y=warm.y, engine={**base, "alm_passes": alm_passes})
        ch = choose_engine(q, Settings(tol=TOL), st)
        assert ch.engine == "pdhg" and ch.probe and ch.use_warm and "to compare" in ch.reason
        res = solve(q, Settings(tol=TOL), st)
        rec = EngineRecord.from_state(res.state)
        assert res.engine == "pdhg" and rec.pdhg_warm_passes == pdhg == rec.passes
        assert (rec.skip_alm == ALM_BACKOFF) == backs_off
    # a probe runs once: with a PDHG warm figure known, the ALM runs and rule 4 judges it
    known = SolverState(x=warm.x, y=warm.y, engine={**base, "alm_passes": 8.0 * pdhg, "pdhg_warm_passes": pdhg})
    assert choose_engine(q, Settings(tol=TOL), known).engine == "alm"


def test_a_start_far_only_in_its_gap_after_an_alm_loss_is_solved_cold():
    """Rule 3b (issue #17 point 2): on LB with simulated decisions every start is primal feasible and far in
    objective (only its gap is large, rule 6b's signature); once the ALM has lost on such a start, the stream's
    next starts of that signature are solved cold (PDHG warm from them took 0.6-6x a cold solve on LB 256x32),
    so the round does exactly the cold work. A TE start under the same back-off (residual 6e-3, not only its gap)
    stays PDHG warm (test_recent_alm_loss_and_a_start_without_record_keep_pdhg)."""
    from solver.workloads.lb import LBScenario

    sc = LBScenario(shards=32, servers=4, seed=0)
    p = sc.base()
    r0 = solve(p, Settings(tol=TOL))
    q, info = apply_delta(p, sc.next_delta(1, None))
    ws = map_state(r0.state, info, q)
    backing_off = SolverState(x=ws.x, y=ws.y, engine={**ws.engine, "lost": True, "skip_alm": 3})
    ch = choose_engine(q, Settings(tol=TOL), backing_off)
    assert ch.engine == "pdhg" and not ch.use_warm and "rule 3b" in ch.reason and "far only in its gap" in ch.reason
    res = solve(q, Settings(tol=TOL), backing_off)
    cold = solve(q, Settings(tol=TOL))
    assert res.status == Status.OPTIMAL and not res.warm_started and res.engine == "pdhg"
    assert res.state.engine["passes"] == cold.state.engine["passes"]  # at most the cold work: it is the cold solve
    assert res.state.engine["cold_passes"] == cold.state.engine["passes"] and res.state.engine["skip_alm"] == 2
    assert abs(res.objective - cold.objective) <= 1e-6 * max(1.0, abs(cold.objective))
    # without the back-off the same start goes to the ALM (rule 6b), which the outcome then judges
    assert choose_engine(q, Settings(tol=TOL), ws).engine == "alm"
