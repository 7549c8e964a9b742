"""Known answers on a fixed sample of the shared netlib/HiGHS LPs (../shared/data/mps).

Each OPTIMAL result is re-certified from the raw data (``independent_kkt``), and its objective must be
within 1e-5 relative of the manifest's optimum. Infeasible instances must come back PRIMAL_INFEASIBLE
(never OPTIMAL; klein1 by HiGHS's proof once PDHG's duals diverge along a near-certificate) and the
unbounded one DUAL_INFEASIBLE.
"""

from __future__ import annotations

import pytest

from formats.io import read_problem
from solver.lp.dispatch import solve
from solver.model.settings import Settings
from solver.model.status import Status
from tests.helpers import assert_certified_optimal, manifest, require_data

# together well under a minute at tol 1e-6; chosen to cover ranged rows (boeing1), an objective
# constant (e226), fixed/free columns and negative lower bounds (recipe, vtpbase), equality-heavy
# models (afiro, sc105, israel) and degenerate ones (degen2).
SAMPLE = ["afiro.mps", "adlittle.mps", "blend.mps.gz", "boeing1.mps.gz", "e226.mps", "israel.mps",
          "kb2.mps.gz", "recipe.mps.gz", "sc105.mps.gz", "vtpbase.mps.gz", "degen2.mps.gz", "grow7.mps.gz"]
INFEASIBLE = ["box1.mps", "galenet.mps", "woodinfe.mps", "klein1.mps"]
TOL = 1e-6


def _rows():
    require_data("mps")  # skip (or fail under COPTER_REQUIRE_DATA=1) rather than KeyError without the data
    return {r["file"]: r for r in manifest("mps")}


def _load(name):
    return read_problem(require_data("mps") / name)


@pytest.mark.data
@pytest.mark.parametrize("name", SAMPLE)
def test_sampled_lp_reaches_manifest_optimum_and_is_certified(name):
    row = _rows().get(name)
    if row is None:
        require_data("mps/MANIFEST.tsv")
        pytest.fail(f"{name} missing from the manifest")
    p = _load(name)
    res = solve(p, Settings(tol=TOL, time_limit_seconds=60))
    assert_certified_optimal(p, res, TOL)
    opt = float(row["optimal_objective"])
    assert abs(res.objective - opt) <= 1e-5 * max(1.0, abs(opt)), (res.objective, opt)


@pytest.mark.data
@pytest.mark.parametrize("name", INFEASIBLE)
def test_infeasible_instance_is_reported_primal_infeasible(name):
    assert _rows()[name]["expected_status"] == "infeasible"
    res = solve(_load(name), Settings(time_limit_seconds=20))
    assert res.status == Status.PRIMAL_INFEASIBLE, res.message


@pytest.mark.data
def test_klein1_whose_ray_stalls_is_proved_infeasible_by_highs_once_its_duals_diverge(monkeypatch):
    # the dual ray's ratio stalls near 1e-3 (the certificate needs 1e-8) while ||y|| passes 1e11: the run
    # asks HiGHS once, and only HiGHS's proof makes it PRIMAL_INFEASIBLE
    import solver.lp.pdhg as pdhg_mod

    asked = []
    real = pdhg_mod.highs_proves_infeasible
    monkeypatch.setattr(pdhg_mod, "highs_proves_infeasible", lambda p, sec: asked.append(sec) or real(p, sec))
    res = solve(_load("klein1.mps"), Settings(time_limit_seconds=20))
    assert res.status == Status.PRIMAL_INFEASIBLE, res.message
    assert "HiGHS proved" in res.message and len(asked) == 1
    monkeypatch.setattr(pdhg_mod, "highs_proves_infeasible", lambda p, sec: asked.append(sec) or False)
    res = solve(_load("klein1.mps"), Settings(time_limit_seconds=20, iteration_limit=200_000))
    assert res.status == Status.ITERATION_LIMIT and len(asked) == 2  # no proof: asked once, never OPTIMAL


@pytest.mark.data
@pytest.mark.parametrize("name", SAMPLE)
def test_feasible_lp_never_asks_highs_about_infeasibility(name, monkeypatch):
    import solver.lp.pdhg as pdhg_mod

    def fail(p, sec):
        raise AssertionError(f"HiGHS asked about {p.name}")

    monkeypatch.setattr(pdhg_mod, "highs_proves_infeasible", fail)
    res = solve(_load(name), Settings(tol=1e-4, time_limit_seconds=60))
    assert res.status == Status.OPTIMAL, res.message


@pytest.mark.data
def test_unbounded_instance_is_reported_dual_infeasible():
    assert _rows()["gas11.mps"]["expected_status"] == "unbounded"
    res = solve(_load("gas11.mps"), Settings(time_limit_seconds=20))
    assert res.status == Status.DUAL_INFEASIBLE, res.message


def test_the_suspicion_sentence_says_above_only_when_the_ratio_is_above():
    """helper-242 (session 60): "ray ratio 0.0e+00, above the 1e-08 a certificate needs"."""
    from solver.lp.pdhg import suspicion_sentence

    assert "ray ratio 3.0e-05, above the 1e-08 a certificate needs" in suspicion_sentence(3e-5, 1e-8)
    said = suspicion_sentence(0.0, 1e-8)
    assert "above" not in said and "ratio 0.0e+00, within the 1e-08 a certificate needs" in said
