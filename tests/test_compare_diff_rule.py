"""`copter compare`'s objective_diff_rel is relative at every scale: sense * (objective - best) / |best|
(solver.integer.gap.objective_diff_rel, the MIP gap rule with the best as p). It divided by max(1, |best|), so
afiro with its costs x 1e-5 (optimum -4.6e-3) read 1e-8 for two points 2e-6 apart."""

from __future__ import annotations

import math

import pytest

from solver.integer.gap import MIP_ABS_GAP, objective_diff_rel
from solver.rounds.comparison import _derive
from tests.helpers import require_data


def _rows(objectives, sense):
    copter = {"name": "copter", "status": "OPTIMAL", "objective": objectives[0], "seconds": 1.0}
    rows = [{"name": f"b{i}", "status": "OPTIMAL", "objective": o, "seconds": 1.0}
            for i, o in enumerate(objectives[1:])]
    _derive(copter, rows, sense)
    return [copter, *rows]


def test_below_one_the_difference_is_relative_not_absolute():
    best, other = -4.6475414e-3, -4.6475314e-3  # afiro x 1e-5: copter's point and HiGHS's
    copter, highs = _rows([best, other], 1)
    assert copter["objective_diff_rel"] == 0.0
    assert highs["objective_diff_rel"] == pytest.approx(1e-8 / 4.6475414e-3)  # 2.2e-6; was 1e-8
    big = _rows([best * 1e5, other * 1e5], 1)[1]["objective_diff_rel"]
    assert highs["objective_diff_rel"] == pytest.approx(big)  # scale-free: the same at -464.75
    cop, top = _rows([1.8e-4, 1.9e-4], -1)  # maximisation: the lower row is worse by 1e-5 / 1.9e-4
    assert cop["objective_diff_rel"] == pytest.approx(1e-5 / 1.9e-4) and top["objective_diff_rel"] == 0.0


def test_a_best_of_zero_and_non_finite_values():
    assert objective_diff_rel(1, 5e-7, 0.0) == 0.0  # within HiGHS's absolute 1e-6, as the gap closes
    assert objective_diff_rel(1, 2 * MIP_ABS_GAP, 0.0) == 1.0 and objective_diff_rel(-1, 1e-3, 0.0) == -1.0
    assert objective_diff_rel(1, 0.0, 0.0) == 0.0
    assert math.isnan(objective_diff_rel(1, math.inf, 1.0)) and math.isnan(objective_diff_rel(1, 1.0, math.nan))
    assert objective_diff_rel(1, 250.0, 249.0) == pytest.approx(1 / 249)  # |best| >= 1: as before


@pytest.mark.data
def test_compare_on_afiro_with_tiny_costs(tmp_path):
    from formats.io import write_problem
    from formats.mps import read_mps
    from solver import rounds

    p = read_mps(require_data("mps/afiro.mps"))
    write_problem(p.replace(cost=p.cost * 1e-5), tmp_path / "base.parquet")
    rounds.init(tmp_path / "base.parquet", state_dir=tmp_path / "st")
    res = rounds.compare(tmp_path / "st", ["highs"])
    rows = [res["copter"], *res["baselines"]]
    # the best is the best point feasible at the common tolerance unless a lead is more than its rows' violations buy
    best = min(r["objective"] for r in rows if not r["ranked_below_feasible"])
    assert best == pytest.approx(-464.7531428571 * 1e-5, rel=1e-4)
    for r in rows:  # each row's difference is the relative one (was: the absolute one, 1e-8 at most here)
        assert r["objective_diff_rel"] == pytest.approx((r["objective"] - best) / abs(best), rel=1e-9, abs=1e-18)
    from typer.testing import CliRunner

    from copter_cli.app import app

    table = CliRunner().invoke(app, ["compare", "-b", "highs", "--state", str(tmp_path / "st")])
    assert table.exit_code == 0, table.output
    footer = " ".join(table.stdout.split())
    assert "(objective - best) / |best|" in footer and "max(1, |best|)" not in footer


def test_a_best_that_is_zero_within_the_tolerance_has_no_scale():
    # the best is 0 up to tol x sum |c_j| (1 + |x_j|): a tolerance-sized distance reads 0, not 100%
    assert objective_diff_rel(1, 0.0, -5.57e-5, zero_within=1e-4 * 6.67) == 0.0
    assert objective_diff_rel(1, 1e-2, -5.57e-5, zero_within=1e-4 * 6.67) == 1.0  # a real distance: +-1
    assert objective_diff_rel(1, 0.0, -5.57e-5) == pytest.approx(1.0)  # without it: |best| is the scale
    assert objective_diff_rel(-1, 9.0, 10.0, zero_within=1e-4 * 1990.0) == pytest.approx(0.1)  # profit 10 of 1990


MPS_ZERO = """NAME zero3
ROWS
 N obj
 E e1
 L c1
COLUMNS
    x obj -1 e1 1
    x c1 1
    y obj 1 e1 -1
    y c1 2
RHS
    rhs c1 10
BOUNDS
 UP bnd x 7
ENDATA
"""


def test_compare_when_the_optimum_is_zero(tmp_path):
    """min -x + y, x - y = 0: the optimum is 0 on a face through the origin. copter's OPTIMAL point
    (norm-wise tol 1e-4, presolve off) ends a tolerance's width from 0 (-5.6e-5); as the best, it made HiGHS's
    exact 0 read 1.00 (100% worse)."""
    from typer.testing import CliRunner

    from copter_cli.app import app
    from solver import rounds

    (tmp_path / "zero3.mps").write_text(MPS_ZERO)
    res = CliRunner().invoke(app, ["init", str(tmp_path / "zero3.mps"), "--presolve", "off",
                                   "--state", str(tmp_path / "st")])
    assert res.exit_code == 0, res.output
    out = rounds.compare(tmp_path / "st", ["highs"])
    rows = [out["copter"], *out["baselines"]]
    assert all(r["status"] == "OPTIMAL" for r in rows), rows
    assert all(abs(r["objective"]) <= 1e-4 * 7 for r in rows), rows
    assert rows[0]["objective"] != rows[1]["objective"]  # the case: the two differ by a tolerance's width
    for r in rows:  # both are 0 within the tolerance: neither is 100% worse
        assert r["objective_diff_rel"] == 0.0, rows


def test_a_huge_cost_free_column_does_not_widen_the_zero_width():
    """A column fixed at 1e5 without a cost made the norm-wise ||c|| (1 + ||x||) about 2e6, so tol times it (200)
    swallowed a best of -3 and a row at 15.125 read 0.0 (equal to the best)."""
    import numpy as np

    from solver.integer.gap import objective_scale

    cost = np.array([-1.0, -2.0, 0.0])
    x = np.array([1.0, 1.0, 1e5])
    assert objective_scale(cost, x) == pytest.approx(1 * 2 + 2 * 2)  # the cost-free column adds nothing
    assert objective_scale(cost, None) == 0.0
    copter = {"name": "copter", "status": "OPTIMAL", "objective": -3.0, "seconds": 1.0,
              "_scale": objective_scale(cost, x)}
    pop = {"name": "pop-2", "status": "OPTIMAL", "objective": 15.125, "seconds": 1.0, "_scale": 1.0}
    _derive(copter, [pop], 1, 1e-4)
    assert pop["objective_diff_rel"] == pytest.approx(18.125 / 3.0)
    assert "_scale" not in pop and "_scale" not in copter


def test_objectives_within_floating_point_rounding_of_each_other_are_equal():
    """misc03: copter's point and HiGHS's, the same allocation, had objectives 1.49e-15 apart relative (c'x summed
    in another order) and the later row read as worse (helper-200). Within the two points' ``objective_rounding``
    they are equal; a difference above it still counts, and columns at 0 add nothing to the allowance (a 2e-5
    difference on a million columns of which ten are nonzero read as 0.0 when every column counted: helper-206)."""
    import numpy as np

    from solver.integer.gap import objective_rounding

    rng = np.random.default_rng(3)
    c, x = rng.uniform(1, 30, 160), rng.integers(0, 3, 160).astype(float)
    best = float(c @ x)
    other = best * (1 + 1.49e-15)
    rounding = 2 * objective_rounding(c, x)
    assert objective_diff_rel(1, other, best, 0.0, rounding) == 0.0
    assert objective_diff_rel(1, other, best) > 0.0  # without the allowance: worse, as before
    assert objective_diff_rel(1, best * (1 + 1e-12), best, 0.0, rounding) > 0.0  # a real difference is above it
    copter = {"name": "copter", "status": "OPTIMAL", "objective": best, "seconds": 1.0,
              "_scale": 1e4, "_rounding": rounding / 2}
    highs = {"name": "highs", "status": "OPTIMAL", "objective": other, "seconds": 1.0,
             "_scale": 1e4, "_rounding": rounding / 2}
    _derive(copter, [highs], 1, 1e-6)
    assert highs["objective_diff_rel"] == 0.0 and copter["objective_diff_rel"] == 0.0
    n = 1_000_000
    cost, point = np.ones(n), np.zeros(n)
    point[:10] = 1.0
    wide = 2 * objective_rounding(cost, point)
    assert wide < 1e-13 and objective_diff_rel(1, 10.0 + 2e-4, 10.0, 0.0, wide) == pytest.approx(2e-5)
    assert objective_rounding(cost, None) == 0.0 and objective_rounding(np.zeros(3), np.ones(3)) == 0.0
    assert objective_rounding(np.ones(1), np.ones(1), 5.0) > 0.0  # the offset's addition rounds too


def test_objective_rounding_bounds_the_sums_of_c_x_in_any_order():
    """The bound holds: c'x + offset summed by numpy's dot, exactly, in order, reversed and shuffled, each within
    its point's objective_rounding of the exact sum."""
    import numpy as np
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from solver.integer.gap import objective_rounding

    @settings(max_examples=200, deadline=None)
    @given(st.integers(1, 400), st.integers(0, 2 ** 32 - 1), st.sampled_from([1e-6, 1.0, 1e6]),
           st.sampled_from([0.0, 3.25, -1e5]))
    def check(n, seed, spread, offset):
        rng = np.random.default_rng(seed)
        c = rng.normal(size=n) * spread ** rng.uniform(-1, 1, size=n)
        x = rng.normal(size=n) * spread ** rng.uniform(-1, 1, size=n) * (rng.uniform(size=n) < 0.7)
        p = c * x
        exact = math.fsum([*p.tolist(), offset])
        sums = [float(c @ x) + offset, float(np.cumsum(p)[-1]) + offset, float(np.cumsum(p[::-1])[-1]) + offset,
                float(np.cumsum(p[rng.permutation(n)])[-1]) + offset]
        allowed = objective_rounding(c, x, offset)
        assert max(abs(s - exact) for s in sums) <= allowed, (sums, exact, allowed)

    check()
