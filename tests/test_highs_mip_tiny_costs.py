"""HiGHS MIP on a model with tiny costs: its tolerances are absolute, so before its costs were scaled it took a point
twice the optimum for optimal and reported that as its dual bound, which copter passed on as proven (helper-202:
stein27 with costs x 1e-7 ended OPTIMAL at 2.6e-6 with bound 2.6e-6; the optimum is 1.8e-6). HiGHS now runs the costs
times a power of two that brings the largest into [1, 2) (``solver.integer.fallback.objective_scale``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from formats.io import read_problem
from solver.integer import solve_milp
from solver.integer.fallback import highs_mip, objective_scale
from solver.model.settings import Settings
from tests.helpers import manifest, require_data

STEIN27_OPT = 18.0


def _stein27(factor: float):
    p = read_problem(require_data("mps") / "stein27.mps.gz")
    opt = float(next(r for r in manifest("mps") if r["file"] == "stein27.mps.gz")["optimal_objective"])
    assert opt == STEIN27_OPT
    return replace(p, cost=p.cost * factor)


def test_the_scale_is_a_power_of_two_for_tiny_costs_only():
    p = _stein27(1.0)
    assert objective_scale(p) == 1.0
    assert objective_scale(replace(p, cost=p.cost * 3e-7)) == 2.0 ** 22  # stein27: |c| <= 1; 3e-7 * 2**22 = 1.26
    top = float(np.max(np.abs(p.cost))) * 3e-7 * objective_scale(replace(p, cost=p.cost * 3e-7))
    assert 1.0 <= top < 2.0
    assert objective_scale(replace(p, cost=np.zeros_like(p.cost))) == 1.0  # no cost: nothing to scale


@pytest.mark.parametrize("factor", [1e-7, 1e-3])
def test_highs_mips_bound_on_tiny_costs_is_valid(factor):
    p = _stein27(factor)
    opt = STEIN27_OPT * factor
    x, info = highs_mip(p, 60.0)
    assert x is not None and info["highs_status"] == "Optimal"
    assert info["mip_dual_bound"] <= opt * (1 + 1e-9), info  # minimisation: a bound is never above the optimum
    assert p.objective(x) == pytest.approx(opt, rel=1e-9)  # and the point it calls optimal is


def test_a_milp_round_on_tiny_costs_reports_a_valid_bound():
    p = _stein27(1e-7)
    r = solve_milp(p, Settings(), None)
    assert r.status.name == "OPTIMAL"
    assert r.dual_objective <= STEIN27_OPT * 1e-7 * (1 + 1e-9), (r.objective, r.dual_objective)
    assert r.objective == pytest.approx(STEIN27_OPT * 1e-7, rel=1e-6)
