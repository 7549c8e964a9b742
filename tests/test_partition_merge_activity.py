"""The merged point's re-check measures A x once (issue #18: on TE Kdl every pass over the 31M nonzeros counts):
``point_quality`` takes the KKT measure's row activities when they are of the same point."""

from __future__ import annotations

import numpy as np
import pytest

from solver.baselines import result as bres
from solver.model.settings import Settings
from solver.partition import round as pround
from solver.workloads import make_scenario


def test_point_quality_with_the_activities_given_measures_the_same():
    problem = make_scenario("te", 16, seed=4).base()
    rng = np.random.default_rng(0)
    lo, hi = problem.col_lower, np.where(np.isfinite(problem.col_upper), problem.col_upper, 10.0)
    for scale in (1.0, 1.5):  # inside the bounds, then past them
        x = rng.uniform(lo, hi) * scale
        assert bres.point_quality(problem, x, problem.row_activity(x)) == bres.point_quality(problem, x)


@pytest.mark.parametrize("k", [2, 3])
def test_an_lp_merge_hands_point_quality_the_kkt_activities_of_its_point(monkeypatch, k):
    problem = make_scenario("te", 16, seed=4).base()
    assert not problem.is_mip
    seen, measure = [], bres.point_quality

    def spy(prob, x, activity=None):
        seen.append(activity is not None)
        if activity is not None:  # the activities handed over are A x of this x
            np.testing.assert_allclose(activity, prob.row_activity(x), rtol=1e-13, atol=1e-12)
        return measure(prob, x, activity)

    monkeypatch.setattr(bres, "point_quality", spy)  # merge_parts imports it when called
    out = pround.solve_round(problem, Settings(), pround.PartitionConfig(k=k, executor="inline"))
    assert seen and all(seen)
    assert out.result.point_feasible
    q = bres.point_quality(problem, out.result.x)
    assert out.result.max_row_violation == pytest.approx(q.max_row_violation, abs=1e-12)
