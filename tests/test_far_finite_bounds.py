"""A finite bound far from the point (9.99e19, just below ``INF_BOUND``) must not stall PDHG, and one that binds
(1e15) must still hold.

PDHG's check took a column's reduced cost from the prox step, which inside the column's box is rounding noise of
about eps |x_j| / tau, and put it in the dual objective times the bound it points at: 9.99e19 x 1e-16 opened a gap
that never closed. adlittle with its open upper bounds written as 9.99e19 ended ITERATION_LIMIT after 1,000,000
iterations (exit 5) where HiGHS solves it; a 10-column chain LP took 45,588 iterations against 194 with the same
bounds written as inf. Now such a reduced cost is dual residual unless x_j is near that bound (PDLP's
``handle_some_primal_gradients_on_finite_bounds_as_residuals``) or, for an arbitrary point's measure
(``original_kkt``), significant for its column at the tolerance (``solver.lp.termination.near_bound``).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from solver.lp.original_kkt import original_kkt, original_kkt_ref
from solver.lp.termination import near_bound
from solver.model.problem import Problem
from tests.helpers import manifest, require_data, run_main


def _chain_mps(ub: str, z_ub: str | None = None, n: int = 10) -> str:
    """max sum_j c_j x_j: x_j - x_(j+1) = 1, sum x <= 10 n, 0 <= x <= ub (x_0 = 14.5 ... x_9 = 5.5 at the optimum,
    140.8333, all inside their boxes); with ``z_ub`` also a column z (cost 1, z <= z_ub) in z + x_0 <= 3e15, where
    z's bound binds (optimum 1e15 + 140.9; 3e15 without it)."""
    rows = [f" E  d{i}" for i in range(n - 1)] + [" L  cap"] + ([" L  zr"] if z_ub else [])
    cols, c = [], np.linspace(1.0, 2.0, n)
    for j in range(n):
        ent = [("obj", float(c[j])), ("cap", 1.0)] + ([(f"d{j}", 1.0)] if j < n - 1 else []) \
            + ([(f"d{j - 1}", -1.0)] if j else []) + ([("zr", 1.0)] if z_ub and j == 0 else [])
        cols += [f"    x{j}  {r}  {v!r}" for r, v in ent]
    if z_ub:
        cols += ["    z  obj  1.0", "    z  zr  1.0"]
    rhs = [f"    rhs  d{i}  1" for i in range(n - 1)] + [f"    rhs  cap  {10 * n}"] + (["    rhs  zr  3e15"] if z_ub
                                                                                       else [])
    bounds = [f" UP bnd x{j} {ub}" for j in range(n)] + ([f" UP bnd z {z_ub}"] if z_ub else [])
    return "\n".join(["NAME chain", "OBJSENSE", "    MAX", "ROWS", " N  obj", *rows, "COLUMNS", *cols, "RHS", *rhs,
                      "BOUNDS", *bounds, "ENDATA"]) + "\n"


def _init(capsys, tmp_path, text: str, name: str, *args) -> tuple[int, dict]:
    path = tmp_path / f"{name}.mps"
    path.write_text(text)
    code, out, err = run_main(capsys, "init", path, "--state", tmp_path / f"st-{name}", "--json", *args)
    return code, json.loads(out.strip().splitlines()[0])


@pytest.mark.parametrize("presolve", ["off", "auto"])
def test_a_bound_of_9_99e19_that_does_not_bind_changes_nothing(tmp_path, capsys, presolve):
    """Through the CLI from MPS: OPTIMAL at HiGHS's optimum, in the iterations of the same model with inf bounds
    (before: 45,588 against 194 without presolve, 46,239 against 0 with it; ITERATION_LIMIT at this limit)."""
    args = ("--presolve", presolve, "--iteration-limit", "5000")
    code_inf, inf = _init(capsys, tmp_path, _chain_mps("inf"), "inf", *args)
    code, far = _init(capsys, tmp_path, _chain_mps("9.99e19"), "far", *args)
    assert code_inf == 0 and inf["status"] == "OPTIMAL", inf
    assert code == 0 and far["status"] == "OPTIMAL", far
    assert far["objective"] == pytest.approx(140.8333333333, rel=1e-4)
    assert (far["iterations"], far["objective"]) == (inf["iterations"], inf["objective"])
    assert far["dual_objective"] == pytest.approx(140.8333333333, rel=1e-4)


@pytest.mark.parametrize("presolve", ["off", "auto"])
def test_a_binding_bound_of_1e15_still_holds(tmp_path, capsys, presolve):
    """z <= 1e15 binds (without it z reaches 3e15): the optimum 1e15 + 140.9 (HiGHS), never 3e15. Without presolve
    the rows x_j - x_(j+1) = 1 sat under ||b|| = 3e15 (the row z + x0 <= 3e15): PDHG's point left d0 at 0
    (violated by 1, a norm-wise residual of 1e-15), was reported OPTIMAL, and after the per-row tolerance ended
    NUMERICAL_ERROR naming d0 (exit 5). A row bound of 1e15 or more is now left out of ||b|| (``FAR_ROW_BOUND``),
    so the direct solve reaches HiGHS's optimum with every row held."""
    code, rep = _init(capsys, tmp_path, _chain_mps("9.99e19", z_ub="1e15"), "z", "--presolve", presolve)
    assert code == 0 and rep["status"] == "OPTIMAL", rep
    assert rep["objective"] == pytest.approx(1e15 + 140.9, rel=1e-9)
    assert rep["objective"] - 1e15 == pytest.approx(140.9, abs=0.5)  # the chain's part too, not only z's 1e15


def test_a_far_row_bound_stays_out_of_the_bound_norm():
    """||b|| (the primal residual's denominator, theta_b's) leaves out row bounds of magnitude >= 1e15; scaled
    bounds are judged by their original magnitude; the KKT kernel and its twin agree."""
    from solver.lp.scaling import FAR_ROW_BOUND, combined_bound_norm

    lc, uc = np.array([3.0, -np.inf, -1e16, 2.0]), np.array([np.inf, 4.0, 5.0, 2.0])
    assert combined_bound_norm(lc, uc) == pytest.approx(np.sqrt(9 + 16 + 25 + 4))
    assert combined_bound_norm(lc * 1e-20, uc * 1e-20, lc, uc) == pytest.approx(np.sqrt(54) * 1e-20)
    assert combined_bound_norm(np.array([1e14]), np.array([1e14]), np.array([FAR_ROW_BOUND]),
                               np.array([FAR_ROW_BOUND])) == 0.0
    p = Problem.from_arrays(cost=[-1.0, -1.0], matrix=np.array([[1.0, 1.0], [1.0, 0.0]]), row_lower=[-np.inf] * 2,
                            row_upper=[10.0, 1e16], col_lower=[0.0, 0.0], col_upper=[np.inf, np.inf])
    for fn in (original_kkt, original_kkt_ref):  # x0 + x1 = 10.5: 0.5 over a row of bound 10, ||b|| = 10
        assert fn(p, np.array([5.0, 5.5]), np.array([-1.0, 0.0]))[0].primal_residual_rel == pytest.approx(0.5 / 11)
        # x0 near its far row bound (it binds there): the bound counts, as column bounds do in near_bound
        rel = fn(p, np.array([1e16 + 8.0, 0.0]), np.array([0.0, 0.0]))[0].primal_residual_rel
        assert rel == pytest.approx(np.hypot(1e16 - 2.0, 8.0) / (1.0 + np.hypot(10.0, 1e16)))


def test_a_row_that_binds_at_a_far_bound_is_never_reported_optimal_off_its_optimum(tmp_path, capsys):
    """z <= 9.99e19 leaves the row z + x0 <= 3e15 binding (HiGHS: 3e15 + 126.5). With presolve OPTIMAL there;
    without, the chain's rows cannot be resolved next to 3e15 at 1e-4: the bound counts in ||b|| where the row is
    near it (``OrigLP.b_norm_at``), so the run ends NUMERICAL_ERROR naming a chain row, as before far bounds left
    ||b||, not ITERATION_LIMIT after the default 1,000,000 iterations (the bound left out everywhere)."""
    code, rep = _init(capsys, tmp_path, _chain_mps("9.99e19", z_ub="9.99e19"), "zr", "--presolve", "auto")
    assert code == 0 and rep["status"] == "OPTIMAL" and rep["objective"] == pytest.approx(3e15 + 126.5, abs=1.0)
    code, rep = _init(capsys, tmp_path, _chain_mps("9.99e19", z_ub="9.99e19"), "zr-off", "--presolve", "off",
                      "--iteration-limit", "200000")
    assert code == 5 and rep["status"] == "NUMERICAL_ERROR" and "row 'd" in rep["message"], rep


@pytest.mark.data
@pytest.mark.parametrize("presolve", ["off", "auto"])
def test_adlittle_with_its_open_bounds_written_as_9_99e19_is_solved(tmp_path, capsys, presolve):
    """Before: ITERATION_LIMIT after 1,000,000 iterations (exit 5), with and without presolve: PDHG's residuals
    met 1e-14 while its dual objective stayed at -7e9 (the optimum is 225,495)."""
    from formats.io import read_problem

    p = read_problem(require_data("mps") / "adlittle.mps")
    opt = float(next(r for r in manifest("mps") if r["file"] == "adlittle.mps")["optimal_objective"])
    text = (require_data("mps") / "adlittle.mps").read_text().replace("ENDATA", "")
    bounds = "".join(f" UP BND {n} 9.99e19\n" for n in p.col_names[np.isinf(p.col_upper)])
    text += ("" if "BOUNDS" in text else "BOUNDS\n") + bounds + "ENDATA\n"
    code, rep = _init(capsys, tmp_path, text, "adlittle", "--presolve", presolve)
    assert code == 0 and rep["status"] == "OPTIMAL", rep
    assert rep["objective"] == pytest.approx(opt, rel=1e-4)


def _with_open_bounds_as_9_99e19(name: str) -> str:
    """The shared netlib file ``name`` with every open upper bound written as 9.99e19 (a BOUNDS section added)."""
    from formats.io import read_problem

    p = read_problem(require_data("mps") / name)
    text = (require_data("mps") / name).read_text().replace("ENDATA", "")
    bounds = "".join(f" UP BND {n} 9.99e19\n" for n in p.col_names[np.isinf(p.col_upper)])
    return text + ("" if "BOUNDS" in text else "BOUNDS\n") + bounds + "ENDATA\n"


@pytest.mark.data
def test_e226_whose_presolve_makes_row_bounds_of_2_7e19_is_solved_without_presolve(tmp_path, capsys):
    """e226's 282 open upper bounds written as 9.99e19: HiGHS presolve moves some into 3 row bounds of 2.7e19,
    whose ||b|| hid rows 21 units off (primal residual 8.8e-19) while the reduced run's point froze at -71.86;
    before: ITERATION_LIMIT after 1,000,000 iterations (exit 5). Now the direct solve, at HiGHS's optimum, as
    ``--presolve off`` reaches it (the message says why presolve was left out)."""
    require_data("mps/e226.mps")  # skips without the shared data before the manifest is read
    opt = float(next(r for r in manifest("mps") if r["file"] == "e226.mps")["optimal_objective"])
    code, rep = _init(capsys, tmp_path, _with_open_bounds_as_9_99e19("e226.mps"), "e226", "--iteration-limit",
                      "100000")
    assert code == 0 and rep["status"] == "OPTIMAL", rep
    assert rep["objective"] == pytest.approx(opt, rel=3e-4)
    assert "row bound(s) of magnitude >= 1e+15" in rep["message"], rep
    code, off = _init(capsys, tmp_path, _with_open_bounds_as_9_99e19("e226.mps"), "e226-off", "--presolve", "off",
                      "--iteration-limit", "100000")
    assert code == 0 and (off["iterations"], off["objective"]) == (rep["iterations"], rep["objective"]), off


def _covering_lp_with_a_dominated_far_column(n: int = 40, m: int = 10, k: int = 3) -> Problem:
    """min c'x, A x >= b (covering, x >= 0, A integers 1..49 at density 0.6) and k rows a_i'x - 0.272 z <= 1 with
    the coefficients of e226's rows ...192-...194; every upper bound 9.99e19. z (cost 0, only negative entries in
    <= rows) is dominated, so HiGHS presolve fixes it at 9.99e19 and leaves a_i'x <= 2.7e19, which it cannot
    prove redundant (x has no upper bound it can use)."""
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    a = rng.integers(1, 50, size=(m, n)).astype(float) * (rng.random((m, n)) < 0.6)
    s = np.zeros((k, n + 1))
    s[:, n] = -0.272
    for i in range(k):
        s[i, rng.choice(n, 3, replace=False)] = [0.534, 0.742, 0.534]
    return Problem.from_arrays(
        cost=np.r_[rng.integers(1, 30, n).astype(float), 0.0], col_lower=np.zeros(n + 1),
        col_upper=np.full(n + 1, 9.99e19), row_lower=np.r_[np.floor(0.25 * a.sum(axis=1)), np.full(k, -np.inf)],
        row_upper=np.r_[np.full(m, np.inf), np.ones(k)], matrix=sp.csc_array(np.vstack([np.c_[a, np.zeros(m)], s])))


def _with_a_redundant_far_row(p: Problem, bound: float = 1e16) -> Problem:
    """``p`` with one more row x0 <= ``bound`` (x0 is far below it at the optimum: the row is redundant)."""
    import scipy.sparse as sp

    a = sp.csc_array((p.a_data, p.a_indices, p.a_indptr), shape=(p.n_rows, p.n_cols))
    row = sp.csc_array(([1.0], ([0], [0])), shape=(1, p.n_cols))
    return Problem.from_arrays(cost=p.cost, col_lower=p.col_lower, col_upper=p.col_upper,
                               row_lower=np.r_[p.row_lower, -np.inf], row_upper=np.r_[p.row_upper, bound],
                               matrix=sp.vstack([a, row]).tocsc(), sense=p.sense, offset=p.offset)


@pytest.mark.parametrize("presolve", ["auto", "off"])
def test_one_redundant_far_row_neither_stalls_the_solve_nor_switches_the_presolve_rule_off(presolve):
    """The covering LP below plus x0 <= 1e16. Before: with presolve the rule (the LP's rows had no far bound) was
    off and the reduced run under ||b|| = 4.7e19 left row r0 at 0 against 134; without presolve the 1e16 in ||b||
    (the primal residual's denominator, theta_b's) did the same: NUMERICAL_ERROR naming r0 both ways. Now the
    bound stays out of ||b||, the rule compares bounds by value, and both solves are OPTIMAL at HiGHS's optimum."""
    from solver.lp.dispatch import solve
    from solver.model.settings import Settings
    from tests.helpers import highs_solution

    p = _with_a_redundant_far_row(_covering_lp_with_a_dominated_far_column())
    res = solve(p, Settings(iteration_limit=20000, presolve=presolve))
    assert res.status.name == "OPTIMAL", res.message
    assert res.objective == pytest.approx(highs_solution(p)[1], rel=1e-3)
    if presolve == "auto":
        assert "3 row bound(s) of magnitude >= 1e+15" in res.message


@pytest.mark.data
@pytest.mark.parametrize("presolve", ["auto", "off"])
def test_e226_with_a_redundant_row_x0_below_1e16_is_solved(tmp_path, capsys, presolve):
    """e226 (open bounds as 9.99e19) plus the row x0 <= 1e16, through the CLI from MPS. Before: ITERATION_LIMIT
    at 100,000 (exit 5) both ways, with presolve frozen at -71.86 (the rule was off), without at 7.113."""
    from formats.io import read_problem, write_problem

    require_data("mps/e226.mps")
    opt = float(next(r for r in manifest("mps") if r["file"] == "e226.mps")["optimal_objective"])
    (tmp_path / "e.mps").write_text(_with_open_bounds_as_9_99e19("e226.mps"))
    write_problem(_with_a_redundant_far_row(read_problem(tmp_path / "e.mps")), tmp_path / "e16.mps")
    code, out, _ = run_main(capsys, "solve", tmp_path / "e16.mps", "--json", "--presolve", presolve,
                            "--iteration-limit", "100000")
    rep = json.loads(out.strip().splitlines()[0])
    assert code == 0 and rep["status"] == "OPTIMAL", rep
    assert rep["objective"] == pytest.approx(opt, rel=3e-4)


def test_a_presolve_that_makes_row_bounds_of_2_7e19_is_left_out():
    """Before: the reduced run stopped at once (||b|| = 4.7e19 hid its rows' residuals), its postsolved point
    missed and the polish from it ended ITERATION_LIMIT at 12.3186 (at 20,000 iterations as at 200,000); now the
    direct solve, OPTIMAL at HiGHS's optimum, and the message says why presolve was left out."""
    from solver.lp.dispatch import solve
    from solver.model.settings import Settings
    from tests.helpers import highs_solution

    p = _covering_lp_with_a_dominated_far_column()
    res = solve(p, Settings(iteration_limit=20000))
    assert res.status.name == "OPTIMAL", res.message
    assert "3 row bound(s) of magnitude >= 1e+15" in res.message
    assert res.objective == pytest.approx(highs_solution(p)[1], rel=1e-3)


def test_near_bound_keeps_a_reduced_cost_only_at_its_bound_or_where_it_is_significant():
    x = np.array([5.0, 5.0, 9.99e19, 0.0, 5.0])
    r = np.array([-1e-15, -1.0, -1e-15, 2.0, 3.0])
    lv = np.array([0.0, 0.0, 0.0, 0.0, -np.inf])
    uv = np.array([9.99e19, 9.99e19, 9.99e19, 1.0, 10.0])
    c, aty = np.ones(5), np.zeros(5)
    # PDLP's rule (tol inf): only at the bound it points at (column 2 at 9.99e19, column 3 at 0)
    np.testing.assert_array_equal(near_bound(x, r, lv, uv, c, aty), [0.0, 0.0, -1e-15, 2.0, 0.0])
    # an arbitrary point's measure at tol 1e-4: column 1's reduced cost -1 is significant, so it still counts
    np.testing.assert_array_equal(near_bound(x, r, lv, uv, c, aty, 1e-4), [0.0, -1.0, -1e-15, 2.0, 0.0])
    # tol 0: every reduced cost counts through its finite bound, as before the rule (column 4's lower is -inf)
    np.testing.assert_array_equal(near_bound(x, r, lv, uv, c, aty, 0.0), [-1e-15, -1.0, -1e-15, 2.0, 0.0])


def test_original_kkt_reads_rounding_noise_at_a_far_bound_as_dual_residual():
    """min -x - y, x + y <= 10, y <= 4, x <= 9.99e19 at its optimum (6, 4) with duals off by 1e-12: x's reduced
    cost -1e-12 times 9.99e19 made a dual objective 1e8 off; at tol 1e-4 it is a dual residual of 1e-12."""
    p = Problem.from_arrays(cost=np.array([-1.0, -2.0]), matrix=np.array([[1.0, 1.0]]), row_lower=np.array([-np.inf]),
                            row_upper=np.array([10.0]), col_lower=np.zeros(2), col_upper=np.array([9.99e19, 4.0]))
    x, y = np.array([6.0, 4.0]), np.array([-1.0 + 1e-12])
    for fn in (original_kkt, original_kkt_ref):
        old = fn(p, x, y)[0]
        assert old.gap_rel > 0.9  # tol 0, the measure before the rule
        kkt = fn(p, x, y, 1e-4)[0]
        assert kkt.converged(1e-8) and kkt.dual_objective == pytest.approx(-14.0, abs=1e-9), kkt


INFEASIBLE = """NAME inf
ROWS
 N  obj
 G  c1
 L  c2
COLUMNS
    x  obj  1  c1  1
    x  c2  1
    y  obj  2  c1  1
    y  c2  1
    z  obj  1  c1  0.5
RHS
    rhs  c1  10  c2  5
BOUNDS
 UP bnd x {ub}
 UP bnd y {ub}
 UP bnd z 4
ENDATA
"""


@pytest.mark.parametrize("ub", ["9.99e19", "1e18"])
def test_an_infeasible_lp_with_far_bounds_names_its_conflict(tmp_path, capsys, ub):
    """HiGHS's IIS search answered "unknown" with column bounds of 1e18 or 9.99e19 ("HiGHS found no conflicting set
    of rows and bounds"), where with inf it names c1 >= 10, c2 <= 5, z <= 4; the far bounds are left out of a first
    search (``highs_bridge.IIS_FAR_BOUND``), which finds that set."""
    (tmp_path / "i.mps").write_text(INFEASIBLE.format(ub=ub))
    code, out, _ = run_main(capsys, "solve", tmp_path / "i.mps", "--json", "--presolve", "off")
    rep = json.loads(out.strip().splitlines()[0])
    assert code == 4 and rep["status"] == "PRIMAL_INFEASIBLE", rep
    iis = rep["iis"]
    assert iis["found"] and iis["status"] == "irreducible", iis
    assert sorted(r["name"] for r in iis["rows"]) == ["c1", "c2"] and [c["name"] for c in iis["columns"]] == ["z"]


def test_a_far_bound_that_is_part_of_the_conflict_is_still_found():
    """x >= 1e18 with x + y <= 5: without the far bound the model is feasible, so the search runs on the model."""
    from solver.highs_bridge import find_iis

    p = Problem.from_arrays(cost=[1.0, 1.0], matrix=np.array([[1.0, 1.0]]), row_lower=[-np.inf], row_upper=[5.0],
                            col_lower=[1e18, 0.0], col_upper=[np.inf, np.inf])
    iis = find_iis(p, 5.0)
    assert iis["found"] and {c["name"] for c in iis["columns"]} >= {"x0"}, iis


def _bounded_by_a_row_presolve_drops() -> Problem:
    """max x + y + z, r0: y + z - 2 x <= 1, r1: -1 <= y - z <= 1, r2: y + 0.5 z >= 1, x <= 9.99e19, y, z >= 0 open
    above. HiGHS: optimal 2.997e20 (x at 9.99e19, y + z = 1 + 2 x). Its presolve fixes x at 9.99e19, r0's bound
    becomes 2e20 (infinite to HiGHS, >= 1e20) and r0 is dropped: the presolved LP is unbounded."""
    return Problem.from_arrays(cost=[1.0, 1.0, 1.0], matrix=np.array([[-2.0, 1.0, 1.0], [0.0, 1.0, -1.0],
                                                                      [0.0, 1.0, 0.5]]),
                               row_lower=[-np.inf, -1.0, 1.0], row_upper=[1.0, 1.0, np.inf], col_lower=np.zeros(3),
                               col_upper=[9.99e19, np.inf, np.inf], sense=-1, col_names=["x", "y", "z"],
                               row_names=["r0", "r1", "r2"])


@pytest.mark.parametrize("engine", ["auto", "pdhg", "alm"])
def test_a_presolved_lp_unbounded_through_a_dropped_far_row_is_not_reported_unbounded(engine):
    """Before: DUAL_INFEASIBLE 'the primal iterates diverged without a ray that certifies it, and HiGHS proved the
    objective unbounded (presolved LP)' where the LP has an optimum (HiGHS 2.997e20). A verdict of no optimum on
    the presolved LP of an LP with bounds of 1e15 or more stands only when HiGHS proves it on the LP itself; here
    HiGHS finds the optimum, which is returned (a direct PDHG run diverges to its iteration limit)."""
    from solver.lp.dispatch import solve
    from solver.model.settings import Settings
    from tests.helpers import highs_solution

    p = _bounded_by_a_row_presolve_drops()
    assert highs_solution(p)[0] == "kOptimal"
    res = solve(p, Settings(engine=engine, iteration_limit=20000))
    assert res.status.name == "OPTIMAL" and res.objective == pytest.approx(2.997e20, rel=1e-6), res.message
    assert "the presolved LP is unbounded, but presolve may drop a row" in res.message, res.message
