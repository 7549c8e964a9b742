"""HiGHS presolve around PDHG for cold solves (``solver.lp.presolve``, ``Settings.presolve``).

Every OPTIMAL result is re-certified from the raw data in the ORIGINAL space (``independent_kkt`` of
tests/helpers.py recomputes residuals and gap from the problem's arrays), never from the solver's numbers.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import solver.lp.presolve as presolve_mod
import solver.lp.termination as termination
from formats.io import read_problem
from solver.highs_bridge import new_highs, pass_problem, to_highs_lp
from solver.lp.dispatch import solve
from solver.model.errors import UsageError
from solver.model.settings import Settings
from solver.model.status import Status
from tests.helpers import assert_certified_optimal, lp, manifest, require_data

TOL = 1e-6
# presolve shrinks these a lot: seba 515x1028 -> 2x8, vtpbase 198x203 -> 26x37, afiro 27x32 -> 7x10;
# sctest is solved by presolve outright (reduced to empty)
REDUCED = ["seba.mps.gz", "vtpbase.mps.gz", "afiro.mps", "sctest.mps"]
NOT_REDUCED = "avgas.mps"  # HiGHS presolve removes nothing
INFEASIBLE_BY_PRESOLVE = ["galenet.mps", "woodinfe.mps"]


def _row(name):
    require_data("mps")
    rows = {r["file"]: r for r in manifest("mps")}
    if name not in rows:
        pytest.fail(f"{name} missing from the manifest")
    return rows[name]


def _load(name):
    return read_problem(require_data("mps") / name)


@pytest.mark.data
@pytest.mark.parametrize("name", REDUCED)
def test_presolved_solve_reaches_manifest_optimum_certified_in_original_space(name):
    opt = float(_row(name)["optimal_objective"])
    p = _load(name)
    res = solve(p, Settings(tol=TOL, time_limit_seconds=60))
    assert_certified_optimal(p, res, TOL)
    assert abs(res.objective - opt) <= 1e-5 * max(1.0, abs(opt)), (res.objective, opt)
    assert "presolve" in res.seconds and res.seconds["total"] >= res.seconds["presolve"]
    assert res.x.shape == (p.n_cols,) and res.y.shape == (p.n_rows,)
    assert res.state.x.shape == (p.n_cols,) and res.state.y.shape == (p.n_rows,)
    assert res.state.iterations == res.iterations


@pytest.mark.data
def test_reduced_to_empty_needs_no_iterations():
    p = _load("sctest.mps")
    res = solve(p, Settings(tol=TOL))
    assert res.status == Status.OPTIMAL and res.iterations == 0, res.message


@pytest.mark.data
def test_not_reduced_lp_is_solved_directly_as_without_presolve():
    p = _load(NOT_REDUCED)
    on = solve(p, Settings(tol=1e-4))
    off = solve(p, Settings(tol=1e-4, presolve="off"))
    assert "removed nothing" in on.message
    assert on.status == off.status == Status.OPTIMAL
    assert on.iterations == off.iterations
    np.testing.assert_array_equal(on.x, off.x)
    np.testing.assert_array_equal(on.y, off.y)
    assert on.seconds["presolve"] > 0


@pytest.mark.data
@pytest.mark.parametrize("name", INFEASIBLE_BY_PRESOLVE)
def test_presolve_infeasibility_is_reported_primal_infeasible(name):
    assert _row(name)["expected_status"] == "infeasible"
    p = _load(name)
    res = solve(p, Settings(time_limit_seconds=20))
    assert res.status == Status.PRIMAL_INFEASIBLE and "HiGHS presolve" in res.message, res.message
    assert res.iterations == 0 and res.x.shape == (p.n_cols,) and not res.point_feasible


@pytest.mark.data
def test_unbounded_or_infeasible_verdict_falls_back_to_solving_without_presolve():
    # HiGHS presolve says kUnboundedOrInfeasible on gas11; the direct solve decides: unbounded
    assert _row("gas11.mps")["expected_status"] == "unbounded"
    res = solve(_load("gas11.mps"), Settings(time_limit_seconds=20))
    assert res.status == Status.DUAL_INFEASIBLE, res.message
    assert "infeasible or unbounded" in res.message and "presolve" in res.seconds


@pytest.mark.data
def test_relaxation_of_a_milp_ignores_integrality_in_presolve():
    p = _load("small_mip.mps")
    assert p.is_mip
    h = new_highs()
    h.passModel(to_highs_lp(p, with_names=False, relax=True))
    h.run()
    relax_obj = h.getInfo().objective_function_value
    res = solve(p, Settings(tol=TOL))
    assert_certified_optimal(p, res, TOL)
    assert abs(res.objective - relax_obj) <= 1e-4 * max(1.0, abs(relax_obj)), (res.objective, relax_obj)


def _tiny():
    # x + y >= 2 (doubleton), x - y = 0, 0 <= x, y <= 3, min x + 2y: presolve substitutes
    return lp([1, 2, 1], [[1, 1, 0], [1, -1, 0], [0, 0, 1]], [2, 0, 1], [np.inf, 0, 4], [0, 0, 0], [3, 3, 5])


def test_presolved_result_is_certified_on_a_small_lp():
    p = _tiny()
    res = solve(p, Settings(tol=1e-8))
    assert_certified_optimal(p, res, 1e-8)
    assert abs(res.objective - 4.0) <= 1e-6


def test_warm_start_skips_presolve_under_auto(monkeypatch):
    p = _tiny()
    cold = solve(p, Settings(tol=1e-8))

    def boom(*a, **k):
        raise AssertionError("presolve must not run for a warm-started solve under presolve='auto'")

    monkeypatch.setattr(presolve_mod, "solve_with_presolve", boom)
    warm = solve(p, Settings(tol=1e-8), warm_start=cold.state)
    assert warm.warm_started and warm.status == Status.OPTIMAL


def test_presolve_on_drops_a_warm_start_and_says_so():
    p = _tiny()
    cold = solve(p, Settings(tol=1e-8))
    res = solve(p, Settings(tol=1e-8, presolve="on"), warm_start=cold.state)
    assert not res.warm_started and "ignores the warm start" in res.message
    assert_certified_optimal(p, res, 1e-8)


def test_presolve_off_never_enters_presolve(monkeypatch):
    p = _tiny()

    def boom(*a, **k):
        raise AssertionError("presolve='off' must solve directly")

    monkeypatch.setattr(presolve_mod, "solve_with_presolve", boom)
    res = solve(p, Settings(tol=1e-8, presolve="off"))
    assert_certified_optimal(p, res, 1e-8)
    assert "iterate" in res.seconds and "postsolve" not in res.seconds


def test_state_of_a_presolved_solve_warm_starts_the_same_lp_at_its_optimum():
    p = _tiny()
    s = Settings(tol=1e-8)
    cold = solve(p, s)
    warm = solve(p, s, warm_start=cold.state)
    assert warm.status == Status.OPTIMAL and warm.iterations <= s.check_every, warm.iterations


def test_unknown_presolve_mode_is_a_usage_error():
    with pytest.raises(UsageError, match="presolve"):
        solve(_tiny(), Settings(presolve="sometimes"))


@pytest.mark.data
def test_time_limit_counts_presolve_and_is_never_reported_optimal():
    p = _load("maros.mps.gz")  # 846x1443: cold solve takes seconds, far beyond this limit
    res = solve(p, Settings(tol=1e-6, time_limit_seconds=0.05))
    assert res.status == Status.TIME_LIMIT, res.message
    assert "time limit 0.05 s reached" in res.message  # the user's limit, not the inner budget left
    assert res.x.shape == (p.n_cols,) and np.isfinite(res.objective)


@pytest.mark.data
def test_iteration_limit_covers_reduced_and_polish_solves_together():
    p = _load("maros.mps.gz")
    s = Settings(tol=1e-6, iteration_limit=300)
    res = solve(p, s)
    assert res.status == Status.ITERATION_LIMIT, res.message
    assert res.iterations <= s.iteration_limit + s.check_every, res.iterations


@pytest.mark.data
def test_presolve_on_keeps_the_warm_start_when_presolve_removes_nothing():
    # the fallback solves the original LP, where the warm start lives: a solve from the optimum stops at once
    p = _load(NOT_REDUCED)
    cold = solve(p, Settings(tol=1e-6, presolve="off"))
    res = solve(p, Settings(tol=1e-6, presolve="on"), warm_start=cold.state)
    assert "removed nothing" in res.message
    assert res.warm_started and res.status == Status.OPTIMAL
    assert res.iterations < cold.iterations


@pytest.mark.parametrize("name", ["afiro.mps", "vtpbase.mps.gz", "seba.mps.gz"])
@pytest.mark.parametrize("rowwise", [False, True])
def test_presolved_lp_from_arrays_equals_the_validated_conversion(name, rowwise):
    # the fast path of _presolved_problem (arrays sorted by row, no scipy) must build exactly the Problem
    # that highs_bridge.from_highs_lp's canonicalising, validating conversion builds
    import highspy

    from solver.highs_bridge import from_highs_lp

    p = _load(name)
    h = new_highs()
    h.setOptionValue("presolve_rule_off", presolve_mod.PRESOLVE_RULE_OFF)
    assert pass_problem(h, p)
    h.presolve()
    assert h.getModelPresolveStatus() == highspy.HighsPresolveStatus.kReduced
    ref = from_highs_lp(h.getPresolvedLp(), name=name)
    plp = h.getPresolvedLp()
    if rowwise:  # hand the same matrix over row-wise, as HiGHS may
        A = ref.matrix().tocsr()
        plp.a_matrix_.format_ = highspy.MatrixFormat.kRowwise
        plp.a_matrix_.start_ = A.indptr.astype(np.int32)
        plp.a_matrix_.index_ = A.indices.astype(np.int32)
        plp.a_matrix_.value_ = A.data
    fast = presolve_mod._presolved_problem(plp, name)
    assert fast.equals(ref)
    fast.check()


def test_presolved_lp_with_a_zero_coefficient_goes_through_the_validated_conversion():
    # an explicit zero breaks the canonical form: the fast path must hand over to from_highs_lp (drops it)
    import highspy

    p = _load("afiro.mps")
    h = new_highs()
    pass_problem(h, p)
    h.presolve()
    plp = h.getPresolvedLp()
    v = np.asarray(plp.a_matrix_.value_, dtype=np.float64).copy()
    v[0] = 0.0
    plp.a_matrix_.value_ = v
    q = presolve_mod._presolved_problem(plp, "afiro")
    q.check()
    assert q.nnz == v.size - 1
    assert highspy.MatrixFormat.kColwise == plp.a_matrix_.format_


def test_copter_and_highs_presolve_draw_the_same_line_between_finite_and_no_bound():
    # |bound| >= 1e20 is no bound for copter (every reader, Problem.from_arrays) as for HiGHS (infinite_bound):
    # x0 <= 5e20 once made an "unbounded or infeasible" LP for presolve while PDHG iterated towards 5e20 (1e6
    # iterations); x0 <= 2e19 is finite for both
    p = lp([-1, 1], [[1, 1]], [1], [np.inf], [0, 0], [2e19, 10])
    r = solve(p, Settings(presolve="on", iteration_limit=20_000))
    assert r.status == Status.OPTIMAL and r.objective == pytest.approx(-2e19, rel=1e-12)
    assert np.isposinf(lp([-1, 1], [[1, 1]], [1], [np.inf], [0, 0], [5e20, 10]).col_upper[0])
    h = new_highs()
    assert h.getOptionValue("infinite_bound")[1] == 1e20


@pytest.mark.data
@pytest.mark.parametrize("name", ["share1b.mps.gz", "bandm.mps.gz"])
def test_postsolve_amplified_residual_is_fixed_in_the_reduced_run_without_a_polish(name):
    # share1b's postsolved primal residual is ~86x the reduced one at 1e-4; the reduced run goes on with a
    # tightened target until the postsolved point passes instead of polishing the original LP afterwards
    p = _load(name)
    res = solve(p, Settings(tol=1e-4, time_limit_seconds=60))
    assert_certified_optimal(p, res, 1e-4)
    assert res.seconds["polish"] == 0.0 and "polished" not in res.message, res.message


@pytest.mark.data
def test_postsolve_gap_fixed_by_one_original_step_is_reported_as_a_polish(monkeypatch):
    # agg: the postsolved gap (8e-4) does not follow the reduced gap; one PDHG step on the original LP
    # recovers consistent reduced costs and passes. Under the norm-wise criteria alone: with the per-row
    # tolerance (solver.lp.termination.row_tolerance) agg's rows miss first and the reduced run goes on to a
    # point that passes without a polish
    monkeypatch.setattr(termination, "row_tolerance", lambda tol: math.inf)
    p = _load("agg.mps.gz")
    res = solve(p, Settings(tol=1e-4, time_limit_seconds=60))
    assert_certified_optimal(p, res, 1e-4)
    assert res.seconds["polish"] > 0.0 and "polished" in res.message, res.message


def test_target_schedule_halves_the_missed_measure_and_gives_up_when_it_does_not_follow():
    from solver.lp.termination import KKT, MIN_PRIMAL_TARGET_FRACTION, MIN_TARGET_FRACTION, TargetSchedule

    def kkt(p, d, g):
        return KKT(0.0, 0.0, p, d, p, d, g)

    tol = 1e-4
    sch = TargetSchedule(tol)
    t = sch.next_targets((tol, tol, tol), kkt(4e-5, 9e-5, 1e-5), (3e-3, 5e-5, 1e-5))
    assert t == (2e-5, tol, tol)  # only the primal target moves, to half its value here
    t = sch.next_targets(t, kkt(1e-5, 9e-5, 1e-5), (1e-3, 5e-5, 1e-5))  # outside followed (3e-3 -> 1e-3)
    assert t == (5e-6, tol, tol)
    assert sch.next_targets(t, kkt(2e-6, 9e-5, 1e-5), (9e-4, 5e-5, 1e-5)) is None  # 1e-3 -> 9e-4: futile
    floor = TargetSchedule(tol)
    low = MIN_TARGET_FRACTION * tol
    assert floor.next_targets((tol, low, tol), kkt(0, low / 2, 0), (0, 2 * tol, 0)) is None  # at the floor
    # the primal floor is lower (a row missing its own bound under a large ||b||)
    low_p = MIN_PRIMAL_TARGET_FRACTION * tol
    assert TargetSchedule(tol).next_targets((low, tol, tol), kkt(low / 2, 0, 0), (2 * tol, 0, 0)) == (low / 4, tol, tol)
    assert TargetSchedule(tol).next_targets((low_p, tol, tol), kkt(low_p / 2, 0, 0), (2 * tol, 0, 0)) is None


@pytest.mark.data
def test_reused_presolve_instance_gives_every_solve_its_whole_time_limit():
    # HiGHS's time limit is cumulative per instance; solves reuse instances, so each must get its budget
    # on top of the instance's clock (20 presolves of maros take ~4x the 0.05 s budget in total)
    p = _load("maros.mps.gz")
    for _ in range(20):
        with presolve_mod._presolve_instance(0.05) as h:
            pass_problem(h, p)
            h.presolve()
            assert h.getModelPresolveStatus() == presolve_mod._hb().PresolveStatus.kReduced


@pytest.mark.data
def test_presolved_solve_leaves_no_reduced_space_primal_weight_for_the_next_warm_start():
    # the reduced LP's weight is measured in its own scaled space; "reuse" on the original LP must not get it
    p = _load("vtpbase.mps.gz")
    res = solve(p, Settings(tol=1e-4))
    assert res.seconds["presolve"] > 0 and res.seconds["polish"] == 0.0, res.message
    assert np.isnan(res.state.primal_weight)


@pytest.mark.data
def test_progress_iterations_never_go_back_through_the_judge_and_polish(monkeypatch):
    # agg's judge takes one PDHG step on the original LP; its progress (iteration 0) must not reach the
    # progress line, which follows the reduced run (norm-wise criteria only, as the test above)
    from solver.lp.pdhg import progress_callback

    monkeypatch.setattr(termination, "row_tolerance", lambda tol: math.inf)
    seen = []
    with progress_callback(lambda info: seen.append(info["iteration"])):
        res = solve(_load("agg.mps.gz"), Settings(tol=1e-4, time_limit_seconds=60))
    assert "polished" in res.message and len(seen) > 2
    assert all(b >= a for a, b in zip(seen, seen[1:], strict=False)), seen


def test_a_time_left_below_presolves_estimate_solves_without_it(monkeypatch):
    """HiGHS presolve does not stop at its time limit (TE Cogentco: ~1 s whatever the limit), so
    ``copter solve --time-limit 0.5`` ended after 2 s (helper-241). A cold solve whose time left is below
    ``presolve_seconds_estimate`` never enters presolve: PDHG, which checks the limit, runs in the time left."""

    def boom(*a, **k):
        raise AssertionError("presolve must not start when the time left is below its estimate")

    monkeypatch.setattr(presolve_mod, "_presolve", boom)
    monkeypatch.setattr(presolve_mod, "PRESOLVE_SECONDS_FIXED", 100.0)  # an LP whose presolve would take 100 s
    p = _tiny()
    res = solve(p, Settings(tol=1e-8, time_limit_seconds=30.0))
    assert "less than HiGHS presolve's estimated 100 s on 5 nonzeros" in res.message
    assert "solved without it" in res.message and res.seconds["presolve"] == 0.0
    assert_certified_optimal(p, res, 1e-8)  # PDHG solved it in the time left


def test_presolve_estimate_grows_with_the_nonzeros():
    """The estimate is an upper bound of the measured 0.6-1.1 us per nonzero (module constant's comment)."""
    p = _tiny()
    est = presolve_mod.presolve_seconds_estimate(p)
    assert est == pytest.approx(presolve_mod.PRESOLVE_SECONDS_FIXED + presolve_mod.PRESOLVE_SECONDS_PER_NONZERO * p.nnz)
    assert presolve_mod.PRESOLVE_SECONDS_PER_NONZERO * 955_696 > 1.2  # above TE Cogentco's measured 0.95-1.11 s


def test_a_time_left_above_presolves_estimate_still_presolves(monkeypatch):
    """The check only skips presolve when it cannot fit: with time enough the pipeline runs as before."""
    called = []
    real = presolve_mod._presolve

    def spy(*a, **k):
        called.append(1)
        return real(*a, **k)

    monkeypatch.setattr(presolve_mod, "_presolve", spy)
    res = solve(_tiny(), Settings(tol=1e-8, time_limit_seconds=60.0))
    assert called and res.status == Status.OPTIMAL


def test_a_ray_certificate_that_highs_refutes_gives_highs_optimum():
    """A free column held back only by a 2e-9 coefficient (helper-239, session 60): at tol 1e-6 PDHG's primal ray,
    whose 2e-9 violation of that row its norm-wise test reads as none, made the LP DUAL_INFEASIBLE (exit 4) where
    HiGHS finds the optimum 6.55e10. The ray is put to HiGHS once: its optimum, OPTIMAL, is the answer."""
    inf = np.inf
    # columns x, y, z, u; rows cap, b1, b2; max -2 y + 1e6 u - 7 z (sense -1)
    from solver.model.problem import Problem

    a = np.array([[2e-9, 0.0, -3.0, 0.0], [1.0, 1.0, 0.0, 0.0], [-1.0, -1.0, 0.0, 1.0]])
    p = Problem.from_arrays(cost=[0.0, -2.0, -7.0, 1e6], col_lower=[-inf, -inf, 0.0, -inf],
                            col_upper=[inf, inf, 13.0, 17.0], row_lower=[-inf, 0.0, -1000.0],
                            row_upper=[26.5, 1000.0, 1000.0], matrix=a, sense=-1)
    res = solve(p, Settings(tol=1e-6))
    assert res.status == Status.OPTIMAL, res.message
    assert res.objective == pytest.approx(6.5517e10, rel=1e-4)
    assert "did not find the LP unbounded" in res.message


def test_a_ray_certificate_of_an_unbounded_lp_stands():
    """The same question on an LP that is unbounded: HiGHS proves it, DUAL_INFEASIBLE stays."""
    from solver.model.problem import Problem

    p = Problem.from_arrays(cost=[-1.0, 0.0], col_lower=[0.0, 0.0], col_upper=[np.inf, np.inf],
                            row_lower=[-np.inf], row_upper=[1.0], matrix=np.array([[1.0, -1.0]]))
    res = solve(p, Settings(tol=1e-6))
    assert res.status == Status.DUAL_INFEASIBLE, res.message
