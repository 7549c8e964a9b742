"""A part infeasible under its shares is not the model's infeasibility: the round is solved whole and says so.

afiro split by ``--client-regex '^X(?P<client>\\d)'``: balance rows with a zero right-hand side (R12, R22:
what part 1's columns ship, part 0's receive) give every part a zero allocation, which pins part 0's flows at
zero, and R23 (= 44) then asks part 0 for its positive share: part 0 is PRIMAL_INFEASIBLE, the round used to
end PRIMAL_INFEASIBLE (exit 4) with objective 0, though afiro's optimum is -464.75."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from formats.io import read_problem
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.status import Status
from solver.partition.round import PartitionConfig, solve_round
from tests.helpers import highs_solution, require_data, run_main


def _afiro() -> Problem:
    return read_problem(require_data("mps") / "afiro.mps")


def test_a_feasible_model_is_not_reported_infeasible_when_a_part_is():
    p = _afiro()
    out = solve_round(p, Settings(), PartitionConfig(k=2, client_regex=r"^X(?P<client>\d)", executor="inline"))
    assert "PRIMAL_INFEASIBLE" in {pr["status"] for pr in out.report["parts"]}  # the case this test is about
    assert out.result.status == Status.OPTIMAL
    assert out.result.objective == pytest.approx(highs_solution(p)[1], rel=1e-3)
    fb = out.report["fallback"]
    assert fb["status"] == "OPTIMAL" and "PRIMAL_INFEASIBLE" in fb["failed_parts"].values()
    assert "solved whole" in out.result.message
    assert out.data is not None  # the next round tries the parts again


def test_an_infeasible_model_is_still_infeasible():
    # a/x >= 2 on a/x's own row, but a/x + b/x <= 1 (shared): infeasible whole, and part a too
    A = sp.csc_array(np.array([[1.0, 1.0], [1.0, 0.0]]))
    p = Problem.from_arrays(cost=np.array([1.0, 1.0]), col_lower=np.zeros(2), col_upper=np.full(2, 10.0),
                            row_lower=np.array([-np.inf, 2.0]), row_upper=np.array([1.0, np.inf]), matrix=A,
                            col_names=["a/x", "b/x"], row_names=["cap", "need"])
    out = solve_round(p, Settings(), PartitionConfig(k=2, executor="inline"))
    assert out.result.status == Status.PRIMAL_INFEASIBLE
    assert out.report["fallback"]["status"] == "PRIMAL_INFEASIBLE"


def test_cli_afiro_partitioned_exits_0_with_the_optimum(tmp_path, capsys):
    mps = require_data("mps") / "afiro.mps"
    code, out, err = run_main(capsys, "init", mps, "--partitions", "2", "--client-regex", r"^X(?P<client>\d)",
                              "--state", tmp_path / "st", "--executor", "inline", "--json")
    assert code == 0, err
    import json

    rep = json.loads(out)
    assert rep["status"] == "OPTIMAL" and rep["objective"] == pytest.approx(-464.7531, rel=1e-3)
