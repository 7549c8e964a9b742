"""An LP round's parts stop at PART_TOL_FACTOR x the round's tol (solver.partition.part_settings); the merged point is
still judged on the whole model at the round's own tol; a MILP round's parts keep theirs."""

from __future__ import annotations

import math

import pytest

from solver import rounds
from solver.model.settings import Settings
from solver.partition import round as part_round
from solver.partition.part_settings import PART_TOL_FACTOR, lp_part_settings
from solver.workloads import make_scenario


@pytest.mark.parametrize("tol", [1e-8, 1e-4, 0.01, 0.3, 0.9, 0.999999])
def test_the_parts_tol_is_looser_but_stays_a_relative_tolerance(tol):
    s = lp_part_settings(Settings(tol=tol, threads=4, time_limit_seconds=7.0))
    assert s.threads == 1 and s.time_limit_seconds == 7.0
    assert tol <= s.tol < 1.0
    assert s.tol == pytest.approx(min(PART_TOL_FACTOR * tol, 0.5 * (1 + tol)), rel=1e-15)
    # nothing else moves
    assert {k: v for k, v in vars(s).items() if k not in ("tol", "threads")} == {
        k: v for k, v in vars(Settings(tol=tol, threads=4, time_limit_seconds=7.0)).items()
        if k not in ("tol", "threads")}


def _part_tols(monkeypatch) -> list[float]:
    seen: list[float] = []
    real = part_round.run_parts

    def spy(tasks, *a, **k):
        seen.extend(float(t[1].tol) for t in tasks)
        return real(tasks, *a, **k)

    monkeypatch.setattr(part_round, "run_parts", spy)
    return seen


def test_an_lp_rounds_parts_run_at_the_looser_tol_and_the_merge_at_the_rounds(tmp_path, monkeypatch):
    seen = _part_tols(monkeypatch)
    sc = make_scenario("te", 12, seed=0)
    tol = 1e-4
    rep = rounds.init(sc.base(), tmp_path / "st", settings=Settings(tol=tol),
                      partition={"k": 2, "executor": "inline", "whole_below_nnz": 0})
    rep = rounds.step(sc.next_delta(1), tmp_path / "st")
    assert seen and all(t == pytest.approx(PART_TOL_FACTOR * tol) for t in seen)
    # the merge is judged at the round's tol: FEASIBLE means the whole model's primal residual is within K x tol
    assert rep["status"] in ("OPTIMAL", "FEASIBLE")
    assert rep["primal_residual_rel"] <= 2 * tol
    if rep["status"] == "OPTIMAL":
        assert max(rep["primal_residual_rel"], rep["dual_residual_rel"]) <= tol


def test_a_milp_rounds_parts_keep_the_rounds_tol(tmp_path, monkeypatch):
    seen = _part_tols(monkeypatch)
    sc = make_scenario("sia", 64, seed=0)
    rounds.init(sc.base(), tmp_path / "st", settings=Settings(tol=1e-4),
                partition={"k": 2, "executor": "inline", "whole_below_nnz": 0})
    assert seen and all(math.isclose(t, 1e-4) for t in seen)
