"""What the MILP result says once the HiGHS fallback has run (H7 findings F12, F15)."""

import numpy as np
import scipy.sparse as sp

from solver.integer import solve_milp
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.status import Status


def test_milp_proved_infeasible_by_the_fallback_is_primal_infeasible_not_no_solution():
    # 2x = 3 with x integer in [0, 100]: LP-feasible (x = 1.5), integer-infeasible
    p = Problem.from_arrays(cost=[1.0], col_lower=[0.0], col_upper=[100.0], row_lower=[3.0], row_upper=[3.0],
                            matrix=sp.csc_array(np.array([[2.0]])), integrality=[True])
    r = solve_milp(p, Settings(integer_fallback="highs", integer_fallback_seconds=10), None)
    assert r.status == Status.PRIMAL_INFEASIBLE
    assert r.mip["fallback_used"] and not r.point_feasible


def test_optimum_proved_by_the_fallback_reports_the_fallback_bound_and_a_zero_gap():
    # flugpl: the heuristics find nothing, HiGHS's branch-and-cut closes it (manifest optimum 1201500)
    from formats.io import read_problem
    from tests.helpers import require_data

    p = read_problem(str(require_data("mps") / "flugpl.mps"))
    # the tight target (the 0.5% default lets HiGHS stop at a point that is not the optimum, by timing)
    r = solve_milp(p, Settings(integer_fallback="highs", integer_fallback_seconds=20, mip_gap_tol=1e-4), None)
    assert r.mip["source"] == "fallback"
    assert r.status == Status.OPTIMAL and abs(r.objective - 1201500) <= 1e-6 * 1201500
    # the gap is measured against HiGHS's proven bound, not the weak LP relaxation's
    assert r.mip["bound_source"] == "highs_mip"
    assert r.mip["lp_bound"] <= r.objective + 1e-6 and r.mip["gap_rel"] <= 1e-4


def test_exhausted_time_limit_skips_the_dive_and_the_fallback():
    # a round whose budget is spent by the relaxation must not start minutes of dive/branch-and-cut after it
    p = Problem.from_arrays(cost=[1.0], col_lower=[0.0], col_upper=[100.0], row_lower=[3.0], row_upper=[3.0],
                            matrix=sp.csc_array(np.array([[2.0]])), integrality=[True])
    r = solve_milp(p, Settings(integer_fallback="highs", integer_fallback_seconds=60, time_limit_seconds=0.0),
                   None)
    ran = {s["step"] for s in r.mip["steps"]}
    assert "dive" not in ran and "fallback" not in ran
    assert r.status == Status.NO_INTEGER_SOLUTION


ASSIGN_MPS = """NAME          ASSIGN
ROWS
 N  OBJ
 L  CAPG1
 L  CAPG2
 E  ONE_J1
 E  ONE_J2
 E  ONE_J3
COLUMNS
    MARKER                 'MARKER'                 'INTORG'
    J1/G1     OBJ         -3.0   CAPG1        2.0
    J1/G1     ONE_J1       1.0
    J1/G2     OBJ         -2.0   CAPG2        2.0
    J1/G2     ONE_J1       1.0
    J2/G1     OBJ         -4.0   CAPG1        3.0
    J2/G1     ONE_J2       1.0
    J2/G2     OBJ         -3.5   CAPG2        3.0
    J2/G2     ONE_J2       1.0
    J3/G1     OBJ         -2.0   CAPG1        1.0
    J3/G1     ONE_J3       1.0
    J3/G2     OBJ         -2.5   CAPG2        1.0
    J3/G2     ONE_J3       1.0
    J1/NONE   OBJ          0.0   ONE_J1       1.0
    J2/NONE   OBJ          0.0   ONE_J2       1.0
    J3/NONE   OBJ          0.0   ONE_J3       1.0
    MARKER                 'MARKER'                 'INTEND'
RHS
    RHS       CAPG1        4.0   CAPG2        3.0
    RHS       ONE_J1       1.0   ONE_J2       1.0
    RHS       ONE_J3       1.0
ENDATA
"""


def test_integer_fallback_gap_sends_a_poor_heuristic_point_to_highs(tmp_path):
    # a 9-binary assignment whose greedy rounding stops at -5.5 (gap 0.70) while the optimum is -8.5
    import json

    from typer.testing import CliRunner

    from copter_cli.app import app

    path = tmp_path / "assign.mps"
    path.write_text(ASSIGN_MPS)
    plain = json.loads(CliRunner().invoke(app, ["solve", str(path), "--json"]).stdout)
    res = CliRunner().invoke(app, ["solve", str(path), "--json", "--integer-fallback-gap", "0.01"])
    improved = json.loads(res.stdout)
    assert res.exit_code == 0
    assert improved["objective"] <= plain["objective"]  # never worse than the heuristic point
    assert improved["status"] == "OPTIMAL" and abs(improved["objective"] + 8.5) < 1e-9
