"""Infeasibility and unboundedness certificates from PDHG iterate differences.

PDLP (Applegate et al., arXiv 2106.04756, section 3.4; arXiv 2501.07018): for an infeasible or unbounded
LP the PDHG iterates diverge along a ray; the difference since the last restart (z_hat - z_anchor)
approximates it. A candidate certifies

- PRIMAL infeasibility (a dual ray dy): the ray's reduced cost r = -A'dy, projected onto the cone its
  variable bounds allow, and dy's own sign constraints, are violated by at most ``tol`` times the ray
  objective lc'dy+ - uc'dy- + lv'r+ - uv'r-, which must be > 0;
- DUAL infeasibility (a primal ray dx, projected onto the bounds' recession cone): c'dx < 0 and
  every row of A dx stays in the rows' recession cone up to ``tol`` times min(|c'dx|, ||dx||_inf).

Both tests are normalised. The primal test's violation/objective ratio is multiplied by the largest
finite bound, i.e. it is evaluated as in the bound-scaled space of HPR-LP/PDLP (theta_b = 1/(1+||b||)),
so it does not depend on the magnitude of the right-hand sides: without that factor, ``min x s.t.
x >= 1e8`` passed the test (violation/objective = 1e-8) on the ordinary difference of two dual
iterates of a feasible LP. The dual test's violation must also be small against the ray itself
(||dx||_inf), not only against its objective |c'dx|, which a huge cost inflates: afiro with one cost set to
1e12 (a feasible LP, optimum -455.96 by HiGHS) was "certified" DUAL_INFEASIBLE at iteration 64, the row
violation of an ordinary iterate difference (of the ray's own size) divided by a cost-inflated |c'dx|. A
true ray keeps A dx in the rows' recession cone whatever its length, so both ratios go to 0 along it
(gas11, costs 0.01 to 2.5e10, is still certified unbounded). A positive dual objective alone is never enough, and neither is one made
of cancellation: the ray objective must exceed ``RAY_SIGNIFICANCE`` (1e-9) times the sum of its terms'
magnitudes. A row whose columns are all fixed with ``lc = a'x_fixed`` up to round-off has an undetermined
dual that PDHG moves; along it the objective ``lc dy - (a'lv) dy`` is 0 in exact arithmetic and ~1e-16 dy
in floating point, with zero violation, which "certified" infeasibility of feasible LPs (such rows arise
whenever a delta or fix-and-resolve fixes every column of an equality row).
A ray must also be more than rounding noise on the iterates it is the difference of: its largest entry above
``RAY_SIGNIFICANCE`` times theirs. A warm PDHG round walking one column down from its bound 1e6 while the duals
(~80) stayed put had a dual "ray" of 1e-13 with no sign violation (ratio 0) and ended PRIMAL_INFEASIBLE on a
feasible LP (``tests/test_ray_significance.py``).
All vectors in original units (minimisation form).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

import numpy as np

from solver.lp.kernels import RAY_SIGNIFICANCE
from solver.lp.termination import OrigLP

if TYPE_CHECKING:  # scipy is imported where it is used (0.2-0.7 s a process otherwise)
    import scipy.sparse as sp

#: PDHG's message when a primal ray certified DUAL_INFEASIBLE (``solver.lp.pdhg``); ``solver.lp.bound_gap.judged``
#: recognises such a verdict by it and puts it to HiGHS once (``bound_gap.ray_confirmed``)
PRIMAL_RAY_CERTIFIES = ("a primal ray certifies that the dual is infeasible: the objective is unbounded if any "
                        "feasible point exists")


def primal_infeasibility_ratio(lp: OrigLP, dy: np.ndarray, atdy: np.ndarray, iterate_size: float = 0.0) -> float:
    """Violation / objective of the dual ray dy (m,) with A'dy = ``atdy`` (n,); inf if objective <= 0, or when
    max |dy| is not above ``RAY_SIGNIFICANCE`` x ``iterate_size`` (the largest |entry| of the dual iterates dy is
    the difference of: a difference at their rounding level is noise, not a ray)."""
    r = -atdy
    r_ok = (np.where(np.isfinite(lp.lv), np.maximum(r, 0.0), 0.0)
            + np.where(np.isfinite(lp.uv), np.minimum(r, 0.0), 0.0))
    viol = float(np.max(np.abs(r - r_ok), initial=0.0))
    ysgn = np.where(np.isfinite(lp.lc), 0.0, np.maximum(dy, 0.0)) - np.where(np.isfinite(lp.uc), 0.0,
                                                                               np.minimum(dy, 0.0))
    viol = max(viol, float(np.max(ysgn, initial=0.0)))
    terms = (lp.lc_f * np.maximum(dy, 0.0), lp.uc_f * np.minimum(dy, 0.0),
             lp.lv_f * np.maximum(r_ok, 0.0), lp.uv_f * np.minimum(r_ok, 0.0))
    obj = float(sum(float(t.sum()) for t in terms))
    obj_abs = float(sum(float(np.abs(t).sum()) for t in terms))
    scale = float(np.max(np.abs(dy), initial=0.0))
    if not (obj > RAY_SIGNIFICANCE * obj_abs and scale > 0.0 and scale > RAY_SIGNIFICANCE * iterate_size
            and np.isfinite(obj)):
        return float("inf")
    return viol * _bound_scale(lp) / obj


def _bound_scale(lp: OrigLP) -> float:
    """1 + the largest finite row or column bound magnitude (the inverse of HPR-LP's theta_b)."""
    return 1.0 + max(float(np.max(np.abs(v), initial=0.0)) for v in (lp.lc_f, lp.uc_f, lp.lv_f, lp.uv_f))


def project_primal_ray(lp: OrigLP, dx: np.ndarray) -> np.ndarray:
    """Project dx (n,) onto the recession cone of [lv, uv] (0 for boxed, one-signed for one bound)."""
    fl, fu = np.isfinite(lp.lv), np.isfinite(lp.uv)
    out = dx.copy()
    out[fl] = np.maximum(out[fl], 0.0)
    out[fu] = np.minimum(out[fu], 0.0)
    return out


def dual_infeasibility_ratio(lp: OrigLP, A: sp.csc_array, dx: np.ndarray, iterate_size: float = 0.0) -> float:
    """Violation / min(|objective|, ||d||_inf) of the primal ray dx (n,) after projection d; inf if c'd >= 0, or
    when ||d||_inf is not above ``RAY_SIGNIFICANCE`` x ``iterate_size`` (the largest |entry| of the primal iterates
    dx is the difference of)."""
    d = project_primal_ray(lp, dx)
    obj = float(lp.c @ d)
    size = float(np.max(np.abs(d), initial=0.0))
    if not (obj < -RAY_SIGNIFICANCE * float(np.abs(lp.c * d).sum()) and np.isfinite(obj)
            and size > RAY_SIGNIFICANCE * iterate_size):
        return float("inf")
    ad = A @ d
    viol = np.maximum(np.where(np.isfinite(lp.uc), ad, 0.0), np.where(np.isfinite(lp.lc), -ad, 0.0))
    return float(np.max(np.maximum(viol, 0.0), initial=0.0)) / min(abs(obj), size)


# A run whose dual-ray ratio stalls above ``Settings.infeasibility_tol`` while its duals diverge is
# asked of HiGHS once (klein1: the ratio of the iterate differences stays near 1e-3 for a million
# iterations while ||y|| passes 1e12; HiGHS's own pdlp does not certify it either). The gate below keeps
# feasible LPs, whose duals stay bounded, from ever paying for the question.
SUSPECT_RATIO = 1e-2
"""A primal-infeasibility ratio at or below this, with the duals grown past SUSPECT_DUAL_GROWTH, is a suspicion."""
SUSPECT_DUAL_GROWTH = 1e6
"""||y~|| (scaled) above this factor times (1 + its value at the start) counts as divergence."""


def highs_proves_infeasible(problem, seconds: float) -> bool:
    """True when HiGHS (presolve + dual simplex, integrality dropped) proves ``problem`` infeasible
    within ``seconds``; False for any other outcome (optimal, unbounded, limit, error).

    Used once per PDHG run by ``solver.lp.pdhg.solve`` on a suspicion (see SUSPECT_RATIO); the status is
    then PRIMAL_INFEASIBLE on HiGHS's proof, never on the suspicion alone.
    """
    from solver.highs_bridge import is_infeasible

    if not (seconds > 0.0):
        return False
    return is_infeasible(relaxed_run(problem, seconds))


def relaxed_run(problem, seconds: float, presolve: str | None = None):
    """A HiGHS instance that ran ``problem`` with integrality dropped for at most ``seconds`` (``presolve``:
    HiGHS's option, None = its default)."""
    from solver.highs_bridge import interruptible, new_highs, to_highs_lp

    h = new_highs(time_limit_seconds=seconds)
    if presolve is not None:
        h.setOptionValue("presolve", presolve)
    h.passModel(to_highs_lp(problem, with_names=False, relax=True))
    with interruptible(h):
        h.run()
    return h


def highs_proves_unbounded(problem, seconds: float) -> bool:
    """True when HiGHS (integrality dropped) proves ``problem`` unbounded (a feasible point and a ray along which
    the objective improves without end) within ``seconds``; False for any other outcome.

    Used once per PDHG run by ``solver.lp.pdhg.solve`` when its primal iterates diverge without a certifying ray;
    the status is then DUAL_INFEASIBLE on HiGHS's proof, never on the divergence alone. HiGHS's presolve may
    only say "infeasible or unbounded": the question is then asked again without it.
    """
    import highspy

    if not (seconds > 0.0):
        return False
    t = time.perf_counter()
    for presolve in ("on", "off"):
        left = seconds - (time.perf_counter() - t)
        if not left > 0.0:
            return False
        status = relaxed_run(problem, left, presolve).getModelStatus()
        if status == highspy.HighsModelStatus.kUnbounded:
            return True
        if status != highspy.HighsModelStatus.kUnboundedOrInfeasible:
            return False
    return False

