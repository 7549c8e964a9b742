"""An LP that HiGHS presolve settles alone reports engine ``presolve``, not the engine the choice named: an
infeasible round read "engine pdhg, iterations 0" although PDHG never ran (helper-183's trial, session 45). The
record carried to the next round keeps the chosen engine (``presolve`` is no engine the choice knows)."""

from __future__ import annotations

import json

import numpy as np

from formats.io import write_problem
from solver.lp.dispatch import solve
from solver.lp.engine_choice import EngineRecord
from solver.lp.presolve import PRESOLVE_ENGINE
from solver.model.settings import Settings
from solver.model.status import Status
from tests.helpers import lp, run_main


def _infeasible():
    # x1 + x2 >= 3 with x1, x2 <= 1: HiGHS presolve proves it
    return lp([1.0, 1.0], np.array([[1.0, 1.0], [1.0, 1.0]]), [3.0, -np.inf], [np.inf, 5.0], [0.0, 0.0], [1.0, 1.0])


def _presolved_away():
    # a chain of singleton rows that presolve fixes column by column: nothing left to iterate on
    return lp([1.0, -1.0], np.array([[1.0, 0.0], [0.0, 1.0]]), [1.0, -np.inf], [np.inf, 4.0], [0.0, 0.0],
              [10.0, 10.0])


def test_presolve_proof_is_labelled_presolve():
    res = solve(_infeasible(), Settings())
    assert res.status == Status.PRIMAL_INFEASIBLE and res.iterations == 0
    assert res.engine == PRESOLVE_ENGINE
    assert "HiGHS presolve settled the LP (PRIMAL_INFEASIBLE) before pdhg ran" in res.engine_reason
    assert EngineRecord.from_state(res.state).engine == "pdhg"  # the next round's rules see the chosen engine


def test_lp_reduced_to_nothing_is_labelled_presolve():
    res = solve(_presolved_away(), Settings(presolve="on"))
    assert res.status == Status.OPTIMAL and res.iterations == 0
    assert np.allclose(res.x, [1.0, 4.0]) and res.engine == PRESOLVE_ENGINE


def test_an_iterating_solve_keeps_its_engine():
    res = solve(_presolved_away(), Settings(presolve="off"))
    assert res.status == Status.OPTIMAL and res.engine == "pdhg"


def test_the_round_report_says_presolve(tmp_path, capsys):
    mps = tmp_path / "inf.mps"
    write_problem(_infeasible(), mps)
    state = tmp_path / "st"
    code, out, _ = run_main(capsys, "init", str(mps), "--state", str(state), "--accept-failed", "--json")
    rep = json.loads(out)
    assert code == 4 and rep["status"] == "PRIMAL_INFEASIBLE"
    assert rep["engine"] == "presolve" and rep["iterations"] == 0
    code, out, _ = run_main(capsys, "history", "--state", str(state), "--json")
    assert code == 0 and json.loads(out)["rounds"][0]["engine"] == "presolve"
