"""HiGHS MIP on a model with tiny costs: its tolerances are absolute, so before its costs were scaled it took a point
twice the optimum for optimal and reported that as its dual bound, which copter passed on as proven (helper-202:
stein27 with costs x 1e-7 ended OPTIMAL at 2.6e-6 with bound 2.6e-6; the optimum is 1.8e-6). HiGHS now runs the costs
times the power of two that brings ||c||_2 into [1, 2) (``solver.integer.gap.cost_scale``)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from formats.io import read_problem
from solver.integer import solve_milp
from solver.integer.fallback import highs_mip
from solver.integer.gap import cost_scale
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
    assert cost_scale(p.cost) == 1.0  # ||c||_2 = sqrt(27) >= 1
    tiny = p.cost * 3e-7  # ||c||_2 = 1.56e-6 = 1.63 x 2**-20
    assert cost_scale(tiny) == 2.0 ** 20
    assert 1.0 <= float(np.linalg.norm(tiny)) * cost_scale(tiny) < 2.0
    assert cost_scale(np.zeros_like(p.cost)) == 1.0  # no cost: nothing to scale


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
