"""An integer column whose own bounds hold no integer ([0.2, 0.8], or fixed at 4.54): PRIMAL_INFEASIBLE, exit 4,
the state unchanged, as before. Its message went on with HiGHS's IIS search, "the LP relaxation is feasible:
integrality itself conflicts with the rows (no IIS of rows)", blaming rows that play no part (helper-228). The
conflict is now named as the column's box, with the column as the round's IIS and no search."""

from __future__ import annotations

import json

import numpy as np
import pytest

from formats.io import write_delta, write_problem
from solver.api import solve_problem as solve
from solver.model.delta import Delta
from solver.model.settings import Settings
from solver.model.status import Status
from tests.helpers import lp, run_main, snapshot


def _model(lower: float, upper: float):
    p = lp([1.0, 2.0], [[1.0, 1.0]], [0.0], [10.0], [lower, 0.0], [upper, 5.0])
    return p.replace(integrality=np.array([1, 0], dtype=np.int8))


@pytest.mark.parametrize(("lower", "upper"), [(0.2, 0.8), (4.54, 4.54)])
def test_the_column_box_is_named_and_no_row_is_blamed(monkeypatch, lower, upper):
    import solver.highs_bridge as hb

    monkeypatch.setattr(hb, "find_iis", lambda *a, **k: pytest.fail("no IIS search for a column's own box"))
    res = solve(_model(lower, upper), Settings())
    assert res.status == Status.PRIMAL_INFEASIBLE
    assert "has no integer in its bounds" in res.message and "own bounds" in res.message, res.message
    assert "rows (no IIS" not in res.message
    assert res.iis["rows"] == [] and [c["name"] for c in res.iis["columns"]] == ["x0"]


def test_a_step_that_makes_a_column_integer_in_a_fractional_box_fails_cleanly(tmp_path, capsys):
    write_problem(_model(0.2, 0.8).replace(integrality=np.array([0, 0], dtype=np.int8)), tmp_path / "base.parquet")
    st = tmp_path / "st"
    code, _, _ = run_main(capsys, "init", tmp_path / "base.parquet", "--state", st)
    assert code == 0
    d = tmp_path / "d.parquet"
    write_delta(Delta.concat([Delta.vars(["x0"], integer=[True])], base_round=0), d)
    gens = snapshot(st / "gen-000000")
    code, out, _ = run_main(capsys, "step", d, "--state", st, "--json")
    rep = json.loads(out)
    assert code == 4 and rep["accepted"] is False and rep["status"] == "PRIMAL_INFEASIBLE"
    assert "own bounds" in rep["message"] and "rows (no IIS" not in rep["message"], rep["message"]
    assert rep["iis"]["columns"][0]["name"] == "x0"
    assert (st / "CURRENT").read_text().strip() == "0" and snapshot(st / "gen-000000") == gens


def test_verbose_says_what_the_small_milp_path_did(tmp_path, capsys):
    """helper-226: ``--verbose`` ("the solver's iteration log") printed nothing for a small MILP, which HiGHS solves
    first (no PDHG, whose log was all it printed)."""
    p = lp([-1.0, -2.0], [[1.0, 1.0]], [0.0], [3.5], [0.0, 0.0], [10.0, 10.0])
    write_problem(p.replace(integrality=np.array([1, 1], dtype=np.int8)), tmp_path / "m.parquet")
    code, _, err = run_main(capsys, "solve", tmp_path / "m.parquet", "--verbose")
    assert code == 0
    assert "HiGHS first (small MILP" in err and "HiGHS MIP" in err, err
    code, _, err = run_main(capsys, "solve", tmp_path / "m.parquet")
    assert code == 0 and "HiGHS first" not in err
