"""A reduced cost below the tolerance that points at a real bound far away is a large objective change, not a small
dual residual.

``min -x + 0.99999 w, x - w <= 0, 0 <= x, w <= 1e12``: the optimum is -1e7 at x = w = 1e12 (HiGHS simplex and
HiGHS's PDLP, presolve on or off). Without presolve, PDHG and the ALM stopped at x = w = 0 and reported OPTIMAL at
objective ~0: with y = -1, w's reduced cost -1e-5 sits 1e12 from the bound it points at, and PDLP's rule
(``termination.near_bound``) read it as a dual residual of 4e-6 of ||c|| instead of a gap of 1e7 through that
bound. A bound below ``termination.FAR_COLUMN_BOUND`` (1e15) now counts in the measure that judges every OPTIMAL
(``original_kkt``); a run that misses only that gap asks HiGHS once (``solver.lp.bound_gap``) and returns its point
when it meets the tolerance, else ends NUMERICAL_ERROR naming w. ``copter compare`` no longer calls an objective of
0 and the optimum -1e7 '0.0 apart' (the best point's column-wise zero width was 2e8).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from solver.lp.original_kkt import original_kkt, original_kkt_ref
from solver.model.problem import Problem
from tests.helpers import run_main

MPS = """NAME cancel
ROWS
 N  obj
 L  r
COLUMNS
    x  obj  -1  r  1
    w  obj  0.99999  r  -1
RHS
    rhs  r  0
BOUNDS
 UP bnd x {ub}
 UP bnd w {ub}
ENDATA
"""


def _solve_cli(capsys, tmp_path, *args, ub: str = "1e12") -> tuple[int, dict]:
    path = tmp_path / "cancel.mps"
    path.write_text(MPS.format(ub=ub))
    code, out, _ = run_main(capsys, "solve", path, "--json", *args)
    return code, json.loads(out.strip().splitlines()[0])


@pytest.mark.parametrize("engine", ["pdhg", "alm"])
def test_without_presolve_the_point_1e7_above_the_optimum_is_not_returned(tmp_path, capsys, engine):
    """Through the CLI without presolve (a warm round's path): before, OPTIMAL at ~1e-5 (exit 0) with either
    engine; now OPTIMAL at -1e7, HiGHS's point, and the message says why HiGHS was asked."""
    code, rep = _solve_cli(capsys, tmp_path, "--presolve", "off", "--engine", engine)
    assert code == 0 and rep["status"] == "OPTIMAL", rep
    assert rep["objective"] == pytest.approx(-1e7, rel=1e-6), rep
    assert "not the gap counted through bounds below 1e15, so HiGHS (simplex) was asked" in rep["message"], rep
    assert "not PDHG's objective" in rep["message"]


@pytest.mark.parametrize("engine", ["pdhg", "alm"])
def test_with_bounds_of_9_99e19_the_point_at_0_is_not_returned(tmp_path, capsys, engine):
    """Bounds of 9.99e19 (>= 1e15) keep PDLP's rule, under which x = w = 0 meets every measure (before: OPTIMAL at
    ~1e-5, where HiGHS's optimum is -9.99e14); its reduced costs through those bounds could move the objective by
    ~1e15, so HiGHS is asked and its point returned. The ALM's own OPTIMAL (7 outer steps, objective -7e-6) was not
    asked before: the same judge now rules on every engine's verdict (``solver.lp.dispatch``)."""
    code, rep = _solve_cli(capsys, tmp_path, "--presolve", "off", "--engine", engine, ub="9.99e19")
    assert code == 0 and rep["status"] == "OPTIMAL", rep
    assert rep["objective"] == pytest.approx(-9.99e14, rel=1e-6), rep
    assert "so HiGHS (simplex) was asked" in rep["message"], rep["message"]


def _far(cost_w: float) -> Problem:
    return Problem.from_arrays(cost=[-1.0, cost_w], matrix=np.array([[1.0, -1.0]]), row_lower=[-np.inf],
                               row_upper=[0.0], col_lower=[0.0, 0.0], col_upper=[9.99e19, 9.99e19],
                               col_names=["x", "w"], row_names=["r"])


@pytest.mark.parametrize("engine", ["auto", "pdhg", "alm"])
def test_the_library_solve_of_the_9_99e19_lp_and_a_kept_warm_point(engine):
    """dispatch.solve without presolve (the ALM's verdict), and a warm start that already meets tol by every
    measure: x = w = 0, y = -1 is the optimum of the LP with w's cost 1.00001 and meets tol on the LP with 0.99999
    under PDLP's rule, where the optimum is -9.99e14. Before: the ALM OPTIMAL at -7e-6, the kept point OPTIMAL at 0
    under every engine ('the warm start already meets tol', nothing asked)."""
    from solver.lp.dispatch import solve
    from solver.model.settings import Settings

    res = solve(_far(0.99999), Settings(presolve="off", engine=engine))
    assert res.status.name == "OPTIMAL" and res.objective == pytest.approx(-9.99e14, rel=1e-6), res.message
    warm = (np.zeros(2), np.array([-1.0]), None)
    res = solve(_far(0.99999), Settings(engine=engine), warm)
    assert res.status.name == "OPTIMAL" and res.objective == pytest.approx(-9.99e14, rel=1e-6), res.message
    np.testing.assert_allclose(res.state.x, res.x)  # the point kept for the next round is the one returned
    assert "HiGHS" in res.message, res.message


@pytest.mark.parametrize("engine", ["auto", "pdhg", "alm"])
def test_a_warm_round_does_not_keep_a_point_whose_optimum_moved_to_9_99e19(tmp_path, capsys, engine):
    """Through the CLI, one process per command: round 0 with w's cost 1.00001 (optimum 0 at x = w = 0), then a
    delta setting it to 0.99999 (HiGHS: -9.99e14 at x = w = 9.99e19). Before: round 1 OPTIMAL at 0 under every
    engine (the warm start kept: 'already meets tol', 0 iterations)."""
    from formats.io import write_delta
    from solver.model.delta import Delta

    path = tmp_path / "cancel.mps"
    path.write_text(MPS.format(ub="9.99e19").replace("0.99999", "1.00001"))
    state = tmp_path / "st"
    code, out, _ = run_main(capsys, "init", path, "--state", state, "--json", "--engine", engine)
    rep = json.loads(out.strip().splitlines()[0])
    assert code == 0 and rep["status"] == "OPTIMAL" and abs(rep["objective"]) < 1e-3, rep
    write_delta(Delta.concat([Delta.vars(["w"], cost=[0.99999])]), tmp_path / "d1.parquet")
    code, out, _ = run_main(capsys, "step", tmp_path / "d1.parquet", "--state", state, "--json")
    rep = json.loads(out.strip().splitlines()[0])
    assert code == 0 and rep["status"] == "OPTIMAL", rep
    assert rep["objective"] == pytest.approx(-9.99e14, rel=1e-6), rep


@pytest.mark.data
def test_adlittle_with_9_99e19_bounds_keeps_its_point_and_says_highs_confirmed_it():
    from formats.mps import read_mps
    from solver.lp.dispatch import solve
    from solver.model.settings import Settings
    from tests.helpers import require_data

    p = read_mps(require_data("mps/adlittle.mps"))
    p = p.replace(col_upper=np.minimum(p.col_upper, 9.99e19))
    res = solve(p, Settings(presolve="off"))
    assert res.status.name == "OPTIMAL" and res.iterations == 8464, res.message  # PDHG's point, as before
    assert "HiGHS (simplex" in res.message and "has the same optimum" in res.message, res.message


def test_with_presolve_the_optimum_is_found(tmp_path, capsys):
    from formats.io import read_problem
    from tests.helpers import highs_solution

    code, rep = _solve_cli(capsys, tmp_path)
    assert code == 0 and rep["status"] == "OPTIMAL", rep
    assert rep["objective"] == pytest.approx(highs_solution(read_problem(tmp_path / "cancel.mps"))[1], rel=1e-6)
    assert rep["objective"] == pytest.approx(-1e7, rel=1e-6)


def test_the_library_solve_and_the_measure():
    """dispatch.solve without presolve, and original_kkt (kernel and twin) at x = w = 0, y = -1, tol 1e-4: the
    gap counts w's reduced cost through its bound 1e12 (before: 0, the reduced cost a dual residual)."""
    from solver.lp.dispatch import solve
    from solver.model.settings import Settings

    p = Problem.from_arrays(cost=[-1.0, 0.99999], matrix=np.array([[1.0, -1.0]]), row_lower=[-np.inf],
                            row_upper=[0.0], col_lower=[0.0, 0.0], col_upper=[1e12, 1e12], col_names=["x", "w"])
    res = solve(p, Settings(presolve="off"))
    assert res.status.name == "OPTIMAL" and res.objective == pytest.approx(-1e7, rel=1e-6), res.message
    np.testing.assert_allclose(res.x, [1e12, 1e12])
    for fn in (original_kkt, original_kkt_ref):
        kkt = fn(p, np.zeros(2), np.array([-1.0]), 1e-4)[0]
        assert kkt.dual_objective == pytest.approx(-1e7, rel=1e-9) and kkt.gap_rel > 0.99, kkt
        assert not kkt.converged(1e-4)


def test_without_a_highs_point_the_run_names_the_column(tmp_path, capsys, monkeypatch):
    """When HiGHS returns no point that meets tol (here: none at all), the run is NUMERICAL_ERROR (exit 5), its
    gap counted, the column and its bound named, never OPTIMAL at ~0."""
    import solver.lp.bound_gap as bound_gap

    monkeypatch.setattr(bound_gap, "highs_point", lambda *a: None)
    code, rep = _solve_cli(capsys, tmp_path, "--presolve", "off")
    assert code == 5 and rep["status"] == "NUMERICAL_ERROR", rep
    assert "variable 'w' is 1e+12 from its bound" in rep["message"], rep["message"]
    assert "write it as infinite" in rep["message"]  # the bound may also be a 'no bound' sentinel
    assert rep["gap_rel"] > 0.5, rep


def test_compare_does_not_read_the_two_objectives_as_equal():
    """copter's 1.2e-5 (x = w = 0, objective scale 2) against HiGHS's -1e7 (x = w = 1e12, scale 2e12): the best's
    own zero width, 1e-4 x 2e12 = 2e8, made -1e7 'no scale' and copter's row read 0.0; the width is now the
    smaller point's, so copter's row reads 1.0 (the optimum is 100% below it)."""
    from solver.integer.gap import objective_scale
    from solver.rounds.comparison import _derive

    cost = np.array([-1.0, 0.99999])
    copter = {"name": "copter", "status": "OPTIMAL", "objective": 1.17e-5, "seconds": 1.0,
              "_scale": objective_scale(cost, np.zeros(2))}
    highs = {"name": "highs", "status": "OPTIMAL", "objective": -1e7, "seconds": 1.0,
             "_scale": objective_scale(cost, np.full(2, 1e12))}
    _derive(copter, [highs], 1, 1e-4)
    assert highs["objective_diff_rel"] == 0.0
    assert copter["objective_diff_rel"] == pytest.approx(1.0, rel=1e-6)


def test_highs_is_asked_only_when_the_gap_alone_misses_and_within_the_time_left():
    from solver.lp.bound_gap import highs_budget, only_the_gap_misses
    from solver.lp.termination import KKT

    def kkt(p, d, g, row=0.0):
        return KKT(0.0, 0.0, 0.0, 0.0, p, d, g, row_violation_rel=row)

    assert only_the_gap_misses(kkt(1e-5, 1e-5, 0.9), 1e-4)
    assert not only_the_gap_misses(kkt(1e-5, 1e-5, 1e-5), 1e-4)  # nothing misses
    assert not only_the_gap_misses(kkt(1e-3, 1e-5, 0.9), 1e-4)  # a residual misses too
    assert not only_the_gap_misses(kkt(1e-5, 1e-5, 0.9, row=0.5), 1e-4)  # a row misses its own bound
    assert highs_budget(0.2, 100.0) == 1.0 and highs_budget(7.0, 100.0) == 7.0 and highs_budget(7.0, 3.0) == 3.0
    assert highs_budget(0.2, float("inf")) == 1.0


ROW_MPS = """NAME cancelrow
ROWS
 N  obj
 L  r
 L  cap
COLUMNS
    x  obj  -1  r  1
    w  obj  {cw}  r  -1
    w  cap  1
RHS
    rhs  r  0  cap  9.99e19
ENDATA
"""


@pytest.mark.parametrize("engine", ["pdhg", "alm"])
def test_a_far_bound_written_as_a_row_is_counted_too(tmp_path, capsys, engine):
    """The same LP with w <= 9.99e19 as a row (x, w >= 0 open above): the row's bound is left out of ||b||, so
    x = w = 0.026 with r = -1.2e-5 on x met every measure (before: OPTIMAL at 2e-5, exit 0; HiGHS -9.99e14 at
    x = w = 9.99e19). The residuals on open sides through that row's room could move the objective by ~1e15
    (``reach.far_row_reach``), so HiGHS is asked and its point returned."""
    path = tmp_path / "row.mps"
    path.write_text(ROW_MPS.format(cw="0.99999"))
    code, out, _ = run_main(capsys, "solve", path, "--json", "--presolve", "off", "--engine", engine)
    rep = json.loads(out.strip().splitlines()[0])
    assert code == 0 and rep["status"] == "OPTIMAL", rep
    assert rep["objective"] == pytest.approx(-9.99e14, rel=1e-6), rep
    assert "room under the bound of row 'cap'" in rep["message"], rep["message"]


@pytest.mark.parametrize("engine", ["auto", "pdhg", "alm"])
@pytest.mark.parametrize("presolve", ["auto", "off"])
def test_a_warm_round_into_a_far_row_bound(tmp_path, capsys, engine, presolve):
    """Round 0 with w's cost 1.00001 (optimum 0), round 1 sets it to 0.99999: before, round 1 kept its start
    (OPTIMAL at ~1e-5, 'the warm start already meets tol') under every engine and presolve setting."""
    from formats.io import write_delta
    from solver.model.delta import Delta

    path = tmp_path / "row.mps"
    path.write_text(ROW_MPS.format(cw="1.00001"))
    state = tmp_path / "st"
    code, out, _ = run_main(capsys, "init", path, "--state", state, "--json", "--engine", engine,
                            "--presolve", presolve)
    assert code == 0, out
    write_delta(Delta.concat([Delta.vars(["w"], cost=[0.99999])]), tmp_path / "d1.parquet")
    code, out, _ = run_main(capsys, "step", tmp_path / "d1.parquet", "--state", state, "--json")
    rep = json.loads(out.strip().splitlines()[0])
    assert code == 0 and rep["status"] == "OPTIMAL", rep
    assert rep["objective"] == pytest.approx(-9.99e14, rel=1e-6), rep


def test_far_row_reach_reads_nothing_without_a_far_row_and_names_the_row():
    from solver.lp.reach import far_row_reach

    p = Problem.from_arrays(cost=[-1.0, 0.99999], matrix=np.array([[1.0, -1.0], [0.0, 1.0]]),
                            row_lower=[-np.inf, -np.inf], row_upper=[0.0, 9.99e19], col_lower=[0.0, 0.0],
                            col_upper=[np.inf, np.inf], col_names=["x", "w"], row_names=["r", "cap"])
    def reach(q, x, y):
        _, xo, _, rc, ax = original_kkt(q, np.array(x), np.array(y), 1e-4)
        return far_row_reach(q, xo, rc, ax)

    got = reach(p, [0.026, 0.026], [-0.99998822, 0.0])
    assert got.reach == pytest.approx(1.18e-5 * 9.99e19, rel=1e-2) and (got.column, got.row) == (0, 1), got
    assert reach(p, [0.0, 0.0], [-1.0, -1e-5]).reach == 0.0  # no residual on an open side
    near = p.replace(row_upper=np.array([0.0, 1e14]))
    assert reach(near, [0.026, 0.026], [-0.99998822, 0.0]).reach == 0.0


def test_exact_reach_from_original_kkt_s_reduced_costs_is_column_reach_at_tol_0():
    """The judge reads the reach from ``original_kkt``'s reduced costs (no second A'y pass): the same value."""
    from solver.lp.reach import column_reach, exact_reach

    rng = np.random.default_rng(3)
    a = rng.normal(size=(6, 9)) * (rng.random((6, 9)) < 0.5)
    for sense in (1, -1):
        p = Problem.from_arrays(cost=rng.normal(size=9), matrix=a, row_lower=np.full(6, -1.0), row_upper=np.full(6, 2.0),
                                col_lower=np.r_[np.zeros(6), -np.inf, -5.0, 0.0],
                                col_upper=np.r_[np.full(6, 9.99e19), 3.0, np.inf, 1e12], sense=sense)
        x, y = rng.normal(size=9), rng.normal(size=6)
        kkt, xo, yo, rc, ax = original_kkt(p, x, y, 1e-4)
        got, want = exact_reach(p, xo, rc), column_reach(p, xo, yo, 0.0)
        assert got.reach == pytest.approx(want.reach, rel=1e-12) and got.column == want.column


@pytest.mark.parametrize("engine", ["auto", "pdhg"])
def test_an_lp_presolve_finds_without_optimum_is_not_optimal_within_tol(tmp_path, capsys, engine):
    """The LP with x, w open above: unbounded along x = w (slope -1e-5). HiGHS presolve says 'infeasible or
    unbounded'; the direct run stopped at x = w = 0 (w's reduced cost -1e-5, a dual residual of 4e-6 < tol) and
    reported OPTIMAL (exit 0) against presolve's proof that no optimum exists. HiGHS now settles it: DUAL_INFEASIBLE
    (exit 4), HiGHS's proof named."""
    path = tmp_path / "cancel.mps"
    path.write_text(MPS.format(ub="1e12").replace(" UP bnd x 1e12\n UP bnd w 1e12\n", ""))
    code, out, _ = run_main(capsys, "solve", path, "--json", "--engine", engine)
    rep = json.loads(out.strip().splitlines()[0])
    assert rep["status"] == "DUAL_INFEASIBLE" and code == 4, rep
    assert "HiGHS proved the objective unbounded" in rep["message"], rep["message"]


def test_a_cold_alm_hand_over_does_not_say_warm():
    """A cold ALM run that stalls is finished by PDHG from scratch: the message said 'warm from the round's start
    point' (there was none)."""
    from solver.lp.dispatch import solve
    from solver.model.settings import Settings

    p = Problem.from_arrays(cost=[-1.0, 0.0], matrix=np.array([[1.0, -1.0]]), row_lower=[-np.inf], row_upper=[0.0],
                            col_lower=[0.0, 0.0], col_upper=[9.99e19, 9.99e19])  # optimum -9.99e19 at the bounds
    res = solve(p, Settings(engine="alm", iteration_limit=2000))
    assert "ALM handed over to PDHG (cold, the round had no start point)" in res.message, res.message
    assert "the round's start point)" not in res.message.replace("no start point)", "")
