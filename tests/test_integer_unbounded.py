"""A MILP with no optimum is reported unbounded (DUAL_INFEASIBLE, exit 4) when an integer-feasible point proves
it, infeasible when HiGHS proves there is no integer point, and INFEASIBLE_OR_UNBOUNDED only when neither is
known (``solver.integer.unbounded``).

Before, every MILP whose relaxation had no optimum ended INFEASIBLE_OR_UNBOUNDED: ``max x + y, x - y <= 0.5`` with
x integer free and y >= 0 (unbounded: x = y = k for every k) as well as ``min -x, 2x - 2y = 1`` with x, y integer
free (no integer point: 2(x - y) is even), and HiGHS MIP's own "unbounded" with an integer point in hand too.
HiGHS at its defaults answers "Primal infeasible or unbounded" on the first two; with presolve off it proves the
first "Unbounded".
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from solver.integer.unbounded import settle_no_optimum
from solver.model.problem import Problem
from solver.model.status import Status
from tests.helpers import run_main

UNBOUNDED = """NAME unb
OBJSENSE
    MAX
ROWS
 N  obj
 L  c1
COLUMNS
    MARKER  'MARKER'  'INTORG'
    x  obj  1  c1  1
    MARKER  'MARKER'  'INTEND'
    y  obj  1  c1  -1
RHS
    rhs  c1  0.5
BOUNDS
 FR bnd x
 PL bnd y
ENDATA
"""
#: min -x, 2x - 2y >= 1 (unbounded: x = k + 1, y = k) or = 1 (no integer point), x and y integer free
PARITY = """NAME par
ROWS
 N  obj
 {kind}  c1
COLUMNS
    MARKER  'MARKER'  'INTORG'
    x  obj  -1  c1  2
    y  c1  -2
    MARKER  'MARKER'  'INTEND'
RHS
    rhs  c1  1
BOUNDS
 FR bnd x
 FR bnd y
ENDATA
"""
CASES = {"max_x_plus_y": (UNBOUNDED, "DUAL_INFEASIBLE"), "parity_ge": (PARITY.format(kind="G"), "DUAL_INFEASIBLE"),
         "parity_eq": (PARITY.format(kind="E"), "PRIMAL_INFEASIBLE")}


def _solve(capsys, tmp_path, text, *args):
    path = tmp_path / "m.mps"
    path.write_text(text)
    code, out, err = run_main(capsys, "solve", path, "--json", *args)
    return code, json.loads(out.strip().splitlines()[0]), err


@pytest.mark.parametrize("engine", ["auto", "pdhg"])  # HiGHS first (small model), the relaxation stages
@pytest.mark.parametrize("case", sorted(CASES))
def test_no_optimum_is_settled_by_an_integer_point_or_highss_proof(tmp_path, capsys, case, engine):
    text, want = CASES[case]
    code, rep, err = _solve(capsys, tmp_path, text, "--engine", engine)
    assert code == 4 and rep["status"] == want, rep
    if want == "DUAL_INFEASIBLE":
        assert rep["point_feasible"] is True and "the MILP is unbounded" in rep["message"], rep["message"]
        assert "integer-feasible point" in rep["message"] and "DUAL_INFEASIBLE" in err
        assert any(s["step"] == "feasibility" for s in rep["mip"]["steps"])
    else:
        assert "no integer-feasible point exists" in rep["message"], rep["message"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_without_highs_mip_no_optimum_stays_infeasible_or_unbounded(tmp_path, capsys, case):
    """--integer-fallback none turns every HiGHS MIP step off: nothing settles it, and the answer stays honest."""
    code, rep, _ = _solve(capsys, tmp_path, CASES[case][0], "--integer-fallback", "none")
    assert code == 4 and rep["status"] == "INFEASIBLE_OR_UNBOUNDED", rep
    assert "no integer-feasible point is known" in rep["message"]


def test_compare_shows_the_unbounded_rounds_point_as_feasible(tmp_path, capsys):
    (tmp_path / "m.mps").write_text(UNBOUNDED)
    st = tmp_path / "st"
    assert run_main(capsys, "init", tmp_path / "m.mps", "--state", st, "--accept-failed")[0] == 4
    code, out, _ = run_main(capsys, "compare", "--state", st, "-b", "highs", "--json")
    assert code == 0, out
    cmp = json.loads(out)
    assert cmp["copter"]["status"] == "DUAL_INFEASIBLE" and cmp["copter"]["violates_tol"] is False, cmp["copter"]
    (highs,) = cmp["baselines"]
    assert highs["status"] in ("INFEASIBLE_OR_UNBOUNDED", "DUAL_INFEASIBLE")  # HiGHS at its defaults: the former


def _parity(kind_eq: bool) -> Problem:
    return Problem.from_arrays(cost=[-1.0, 0.0], matrix=np.array([[2.0, -2.0]]), row_lower=[1.0],
                               row_upper=[1.0 if kind_eq else np.inf], col_lower=[-np.inf, -np.inf],
                               col_upper=[np.inf, np.inf], integrality=[True, True])


def test_a_known_point_settles_it_without_highs_and_a_bad_one_does_not():
    p = _parity(False)
    v = settle_no_optimum(p, np.array([1.0, 0.0]), 0.0, who="the incumbent")
    assert v.status == Status.DUAL_INFEASIBLE and v.step is None and "the incumbent is integer-feasible" in v.clause
    v = settle_no_optimum(p, np.array([0.5, 0.0]), 0.0)  # fractional: no proof, and no HiGHS budget
    assert v.status == Status.INFEASIBLE_OR_UNBOUNDED and v.x is None
    v = settle_no_optimum(_parity(True), None, 5.0)
    assert v.status == Status.PRIMAL_INFEASIBLE and v.step["highs_status"] == "Infeasible"


def test_a_step_that_opens_the_model_is_unbounded_at_the_previous_rounds_point(tmp_path, capsys):
    """Round 0 bounded (x <= 10, y <= 20: optimum 30); a delta drops both upper bounds (1e20: no bound). The
    previous round's point still holds, so it proves the round unbounded without any HiGHS MIP run."""
    from formats.io import write_delta
    from solver.model.delta import Delta

    (tmp_path / "b.mps").write_text(UNBOUNDED.replace(" FR bnd x\n PL bnd y\n",
                                                      " LI bnd x -5\n UI bnd x 10\n UP bnd y 20\n"))
    st = tmp_path / "st"
    assert run_main(capsys, "init", tmp_path / "b.mps", "--state", st)[0] == 0
    write_delta(Delta.concat([Delta.vars(["x", "y"], upper=[1e20, 1e20])], base_round=0), tmp_path / "d1.parquet")
    code, out, _ = run_main(capsys, "step", tmp_path / "d1.parquet", "--state", st, "--json")
    rep = json.loads(out.strip().splitlines()[0])
    assert code == 4 and rep["status"] == "DUAL_INFEASIBLE", rep
    assert "the previous round's point is integer-feasible (objective 30)" in rep["message"], rep["message"]
    assert not any(s["step"] == "feasibility" for s in rep["mip"]["steps"])
