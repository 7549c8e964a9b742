"""RENS's sub-MIPs of a pure choice/capacity binary model (Sia) go to HiGHS without its MIP presolve
(``submip.presolve_pays``; issue #15: half of RENS's time on Sia 10,240), every other model keeps it; the
points are the same."""

from __future__ import annotations

import numpy as np

from solver.integer.structure import detect_structure
from solver.integer.submip import presolve_pays, rens
from solver.workloads.lb import LBScenario
from solver.workloads.sia import SiaScenario
from tests.helpers import assert_exactly_feasible, assignment_milp


def test_presolve_is_left_out_only_for_pure_choice_and_capacity_binary_models():
    sia = SiaScenario(total_gpus=128, seed=0).base()
    assert not presolve_pays(sia, detect_structure(sia))
    assign = assignment_milp(30, 5, slack=1.0)
    assert not presolve_pays(assign, detect_structure(assign))
    lb = LBScenario(16, 4, seed=0).problem()  # continuous copies and VUB rows
    assert presolve_pays(lb, detect_structure(lb))
    # one general row (neither choice nor capacity) or one continuous column brings it back
    mixed = assign.replace(row_lower=np.r_[assign.row_lower[:-1], 1.0])  # a capacity row with a lower bound
    assert presolve_pays(mixed, detect_structure(mixed))
    cont = assign.replace(integrality=np.r_[assign.integrality[:-1], False])
    assert presolve_pays(cont, detect_structure(cont))


def test_the_pipeline_hands_highs_the_choice_and_gives_the_same_point(monkeypatch):
    import solver.integer.fallback as fallback

    p = assignment_milp(30, 5, slack=1.0)
    x_lp = np.full(p.n_cols, 1.0 / 5)  # every placement fractional: every binary free
    seen = []
    real = fallback.highs_mip

    def spy(sub, seconds, seed=None, **kw):
        seen.append(kw.get("presolve", True))
        return real(sub, seconds, seed, **kw)

    monkeypatch.setattr(fallback, "highs_mip", spy)
    x_off, info_off = rens(p, x_lp, 30.0, mip_rel_gap=1e-9, presolve=False)
    x_on, info_on = rens(p, x_lp, 30.0, mip_rel_gap=1e-9)
    assert seen == [False, True]
    assert info_off["highs_status"] == info_on["highs_status"] == "Optimal"
    assert_exactly_feasible(p, x_off)
    assert p.objective(x_off) == p.objective(x_on)


def test_a_default_sia_round_runs_rens_without_presolve(monkeypatch):
    import solver.integer.fallback as fallback
    from solver.integer import solve_milp
    from solver.model.settings import Settings

    p = SiaScenario(total_gpus=128, seed=0).base()
    seen = []
    real = fallback.highs_mip

    def spy(sub, seconds, seed=None, **kw):
        seen.append(kw.get("presolve", True))
        return real(sub, seconds, seed, **kw)

    monkeypatch.setattr(fallback, "highs_mip", spy)
    # RENS on every stage (gap rule 0), HiGHS first off (the model is small), no fallback: RENS's call only
    res = solve_milp(p, Settings(integer_submip_gap=0.0, mip_gap_tol=0.0, integer_fallback="none",
                                 integer_highs_max_nonzeros=0, relaxation_round_iterations=64), None)
    assert seen and not any(seen)
    assert_exactly_feasible(p, res.x)
