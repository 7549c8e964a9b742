"""A model HiGHS refuses (a coefficient of magnitude >= its ``large_matrix_value`` 1e15, which copter accepts up
to 1e30) is never reported as solved: HiGHS's ``passModel`` fails, leaves an empty model, and a run of that says
"Empty", which the HiGHS baselines read as OPTIMAL without an objective. The baselines now say NUMERICAL_ERROR
with HiGHS's reason and the coefficient's row and column; ``export -o x.mps`` names them too. A model without
columns is still OPTIMAL, with its objective (the offset)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from formats.io import write_delta
from formats.mps import write_mps
from solver.baselines.highs import solve_highs
from solver.baselines.highs_warm import WarmHighs, solve_from_basis
from solver.model.delta import Delta
from solver.model.errors import InputError
from solver.model.problem import Problem
from solver.model.status import Status
from tests.helpers import cli_json, small_lp, small_lp_state, snapshot


def _huge() -> tuple[Problem, str, str]:
    """small_lp with one coefficient at 1e25: (problem, its row, its column)."""
    p = small_lp()
    k = 5
    p.a_data[k] = 1e25
    col = int(np.searchsorted(p.a_indptr, k, side="right") - 1)
    return p, str(p.row_names[p.a_indices[k]]), str(p.col_names[col])


@pytest.mark.parametrize("solve", [
    lambda p: solve_highs(p),
    lambda p: solve_highs(p, solver="ipm"),
    lambda p: WarmHighs().solve(p),
    lambda p: solve_from_basis(p, None)[0],
], ids=["highs", "highs-ipm", "highs-warm", "highs-warm-basis"])
def test_a_model_highs_refuses_is_a_numerical_error_naming_the_coefficient(solve):
    p, row, col = _huge()
    res = solve(p)
    assert res.status == Status.NUMERICAL_ERROR and res.x is None
    assert "HiGHS refused the model" in res.message and "1e+15" in res.message  # HiGHS's own line
    assert f"row {row}, column {col}" in res.message and "1e+25" in res.message


def test_a_model_without_columns_is_optimal_with_its_objective():
    p = Problem.empty().replace(offset=2.5)
    res = solve_highs(p)
    assert res.status == Status.OPTIMAL and res.objective == 2.5


def test_write_mps_names_the_coefficient_highs_refuses(tmp_path):
    p, row, col = _huge()
    with pytest.raises(InputError) as ex:
        write_mps(p, tmp_path / "x.mps")
    assert "1e+15" in ex.value.message and f"row {row}, column {col}" in ex.value.message
    assert ex.value.entity == f"{row}/{col}"
    assert not (tmp_path / "x.mps").exists()


def test_compare_and_export_of_a_refused_state(tmp_path):
    st, _ = small_lp_state(tmp_path)
    p, row, col = _huge()
    d = tmp_path / "big.parquet"
    write_delta(Delta.concat([Delta.coefs(var=[col], con=[row], value=[1e25])], base_round=0), d)
    code, out = cli_json("step", d, "--state", st, "--accept-failed", "--json", "--iteration-limit", "2000")
    assert code in (0, 5) and json.loads(out)["round"] == 1, out  # stored either way
    code, out = cli_json("compare", "--state", st, "--baseline", "highs", "--baseline", "highs-warm", "--json")
    assert code == 0, out
    for b in json.loads(out)["baselines"]:
        assert b["status"] == "NUMERICAL_ERROR" and f"row {row}, column {col}" in b["message"], b
    before = snapshot(st)
    code, out = cli_json("export", "--state", st, "-o", tmp_path / "x.mps", "--json")
    err = json.loads(out)["error"]
    assert code == 3 and err["entity"] == f"{row}/{col}" and "1e+15" in err["message"], out
    assert not (tmp_path / "x.mps").exists() and snapshot(st) == before


def test_warm_highs_edit_to_a_refused_coefficient_is_not_the_old_model_solved():
    """The incremental instance's ``changeCoeff`` to 1e25 was refused without a check, and the next run solved the
    previous round's model, reported OPTIMAL; it now rebuilds cold, which says why HiGHS refuses the model."""
    p = small_lp()
    q, row, col = _huge()
    w = WarmHighs()
    assert w.solve(p).status == Status.OPTIMAL
    res = w.solve(q)
    assert res.status == Status.NUMERICAL_ERROR and f"row {row}, column {col}" in res.message
    again = w.solve(p)  # the round after: cold again, and right
    assert again.status == Status.OPTIMAL and again.objective == pytest.approx(solve_highs(p).objective, rel=1e-9)


def test_the_milp_steps_say_highs_refused_the_model():
    """HiGHS MIP (fallback, RENS) and the HiGHS LP relaxation on a refused model reported "Empty" (the
    relaxation: OPTIMAL at x = 0); they now say HiGHS refused it and return no point."""
    from solver.integer.fallback import highs_mip
    from solver.integer.relaxation import solve_relaxation_highs

    p, row, col = _huge()
    p = p.replace(integrality=np.ones(p.n_cols, dtype=bool))
    x, info = highs_mip(p, 5.0)
    assert x is None and info["highs_status"].startswith("Refused: ") and f"row {row}, column {col}" in info["highs_status"]
    assert solve_relaxation_highs(p).status == Status.NUMERICAL_ERROR
