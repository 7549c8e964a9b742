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
