"""solve_milp on the MILPs of the shared MPS collection (known optima in MANIFEST.tsv).

Per instance it reports whether a feasible point was found (heuristic / fallback / none) and the integer
objective against the manifest optimum (printed; run with -s to see the table). The test fails when a
point reported feasible is not exactly feasible, when the bound is on the wrong side of the optimum, or
when the objective beats the known optimum. The fallback gets a short time limit to keep the suite fast.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from solver.integer import solve_milp
from solver.model.settings import Settings
from solver.model.status import Status
from tests.helpers import assert_exactly_feasible, manifest, require_data

ROWS = [r for r in manifest("mps") if r["kind"] == "MILP"]


@pytest.mark.data
@pytest.mark.parametrize("row", ROWS, ids=[r["file"] for r in ROWS])
def test_milp_instance_result_is_exactly_feasible_and_bounded_by_the_known_optimum(row):
    from formats.mps import read_mps
    from solver.model.errors import UnsupportedError

    path = require_data("mps") / row["file"]
    if row["file"] == "semi-continuous.mps":
        with pytest.raises(UnsupportedError):
            read_mps(str(path))
        pytest.skip("semi-continuous columns are rejected by the MPS reader by design")
    p = read_mps(str(path))
    r = solve_milp(p, Settings(integer_fallback="highs", integer_fallback_seconds=2.0), None)
    opt = float(row["optimal_objective"])
    src = r.mip["source"]
    print(f"\n{row['file']:22s} source={src:9s} status={r.status.name:19s} integer={r.objective:.10g} "
          f"optimum={opt:.10g} rel_diff={(r.objective - opt) / max(1, abs(opt)):+.3e} "
          f"lp_bound={r.mip['lp_bound']:.10g} fractional_before={r.mip['fractional_before']}")
    scale = max(1.0, abs(opt))
    # the bound never cuts off the optimum
    if math.isfinite(r.mip["lp_bound"]):
        assert p.sense * (opt - r.mip["lp_bound"]) >= -1e-6 * scale
    if r.point_feasible or r.status in (Status.OPTIMAL, Status.FEASIBLE):
        assert src in ("heuristic", "fallback")
        assert_exactly_feasible(p, r.x)
        assert p.sense * (r.objective - opt) >= -1e-6 * scale, "better than the proven optimum: not feasible"
        assert r.objective == pytest.approx(float(p.cost @ r.x + p.offset), rel=1e-12, abs=1e-9)
    else:
        assert r.status == Status.NO_INTEGER_SOLUTION and src == "none"
        assert np.isnan(r.mip["integer_objective"])
    # OPTIMAL is the proven gap's verdict, whichever step found the point
    assert (r.status == Status.OPTIMAL) == (r.mip["gap_rel"] <= 5e-3) or r.status not in (Status.OPTIMAL,
                                                                                         Status.FEASIBLE)


@pytest.mark.data
@pytest.mark.parametrize("name", ["misc03.mps.gz", "p0201.mps.gz"])
def test_a_small_milp_highs_calls_optimal_is_optimal_only_within_the_reported_gap(name):
    """helper-216: with costs x 1e6, HiGHS first returned "Optimal" with a dual bound proving gap 0.00595 (misc03) and
    0.00525 (p0201) against the 0.005 target, and the round said OPTIMAL: OPTIMAL must mean gap_rel <= --mip-gap."""
    from formats.mps import read_mps
    from solver.api import solve_problem

    p = read_mps(str(require_data("mps") / name))
    scaled = p.replace(cost=p.cost * 1e6, offset=p.offset * 1e6)
    r = solve_problem(scaled, Settings())
    assert r.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert (r.status == Status.OPTIMAL) == (r.gap_rel <= Settings().mip_gap_tol), (r.status, r.gap_rel, r.message)
