"""The MIP gap, one rule for every MILP round (monolithic and partitioned) and its decisions.

HiGHS's ``mip_gap`` (and Gurobi's ``MIPGap``): |p - d| / |p|, p the point's objective and d the proven bound,
in the problem's sense; an absolute gap within HiGHS's ``mip_abs_gap`` (1e-6) counts as closed, as HiGHS stops
there too, in the units HiGHS MIP runs the model in: for costs below 1 in size, 1e-6 over :func:`cost_scale`
(:func:`abs_gap_of`). Before, copter divided by max(1, |p|) (the partitioned merge by max(1, |d|)), which made the gap
absolute for objectives below 1: stein27 with its costs x 1e-5 ended OPTIMAL at 1.9e-4 with the optimum at
1.8e-4, 5.6% off where ``--mip-gap`` promises 0.5%.

An objective of 0 makes any open gap infinite, so a bound of -3e-5 could never prove an LB round that moves
nothing optimal. When the objective is integral on integer points (integer columns' costs integral, continuous
columns' costs 0; HiGHS detects the same, "objective function is integral"), every point's objective lies on
offset + Z and a bound rounds up to it (:func:`lattice_bound`): -3e-5 proves 0.

``copter compare``'s ``objective_diff_rel`` (and the bench scripts' ``gap_rel`` to HiGHS) use the same
relative rule with the reference objective as p (:func:`objective_diff_rel`); they divided by max(1, |best|)
too, so afiro with its costs x 1e-5 read 1e-8 where the points are 2e-6 apart.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where it is used: copter history (numpy kept out) measures diffs here
    import numpy as np

MIP_ABS_GAP = 1e-6  #: HiGHS's mip_abs_gap default: an absolute gap at most this is closed (for ||c||_2 >= 1)


def cost_scale(cost: np.ndarray) -> float:
    """The power of two that brings ||c||_2 into [1, 2) when it is positive and below 1, else 1.0 (costs (n,)): the
    reciprocal of the LP core's cost normalisation (``solver.lp.model_scale``), so a MILP's relaxation, its HiGHS MIP
    steps and its gap all work in the model's own units. HiGHS MIP runs such a model's costs times it
    (``solver.integer.fallback.highs_mip``: its tolerances are absolute), and the gap's absolute closure is
    :data:`MIP_ABS_GAP` divided by it (:func:`abs_gap_of`): with an absolute 1e-6, stein27 with its costs x 1e-7
    ended OPTIMAL at 1.9e-6 against the optimum 1.8e-6, 5.6% outside a 0.5% ``--mip-gap`` (helper-202). O(n)."""
    import numpy as np

    from solver.lp.model_scale import power_below

    c = np.asarray(cost, dtype=np.float64)
    return 1.0 / power_below(math.sqrt(float(c @ c)))


def abs_gap_of(cost: np.ndarray) -> float:
    """The absolute gap within which a model's MIP gap is closed (objective units): :data:`MIP_ABS_GAP` over
    :func:`cost_scale` of its costs (n,); 1e-6 for costs of size 1 or more."""
    return MIP_ABS_GAP / cost_scale(cost)


def signed_gap(sense: int, objective: float, bound: float, abs_gap: float = MIP_ABS_GAP) -> float:
    """sense * (objective - bound) / |objective| (negative when the point beats the bound, i.e. numerical
    noise); 0.0 when that absolute difference is within ``abs_gap`` (objective units; :func:`abs_gap_of` of the
    model's costs); +-inf when ``objective`` is 0 and the difference is not, or when ``bound`` is not finite
    (+inf)."""
    if not math.isfinite(bound):
        return math.inf
    diff = sense * (objective - bound)
    if abs(diff) <= abs_gap:
        return 0.0
    if objective == 0.0:
        return math.copysign(math.inf, diff)
    return diff / abs(objective)


def gap_rel(sense: int, objective: float, bound: float, abs_gap: float = MIP_ABS_GAP) -> float:
    """The relative MIP gap (module docstring), clipped at 0; inf when the bound is not finite; ``abs_gap``
    as :func:`signed_gap`'s."""
    return max(0.0, signed_gap(sense, objective, bound, abs_gap))


def objective_diff_rel(sense: int, objective: float, reference: float, zero_within: float = 0.0,
                       rounding: float = 0.0) -> float:
    """How much worse ``objective`` is than ``reference`` (both in the problem's sense; scalars, objective
    units), relative: sense * (objective - reference) / |reference|, HiGHS's |p - d| / |p| with the reference
    as p (> 0: worse, < 0: better, 0.0 equal). No absolute closure when the reference is nonzero: a comparison
    stops nothing, and ``MIP_ABS_GAP`` would erase a 2e-6 relative difference at an objective of 5e-3.

    A reference of 0 has no scale, and neither has one within ``zero_within`` of 0 (objective units; compare
    passes its feasibility tol times :func:`objective_scale` of the best point, the most a tolerance-sized
    move of that point can change its objective). Such a reference gives 0.0
    when |objective - reference| is within max(``MIP_ABS_GAP``, ``zero_within``) (as :func:`signed_gap` closes
    it), else +-1.0. nan when either is not finite.

    ``rounding`` (objective units, >= 0): how far float64 rounding alone can set the two objectives apart (compare
    passes the sum of the two points' :func:`objective_rounding`); a difference within it is 0.0 at any reference. Two points with the same
    allocation, evaluated in different orders, differed by 1.5e-15 relative on misc03 and the later one read as
    worse (helper-200)."""
    if not (math.isfinite(objective) and math.isfinite(reference)):
        return math.nan
    diff = sense * (objective - reference)
    if abs(diff) <= rounding:
        return 0.0
    zero = zero_within if math.isfinite(zero_within) and zero_within > 0.0 else 0.0
    if abs(reference) > zero:
        return diff / abs(reference) + 0.0
    if abs(diff) <= max(MIP_ABS_GAP, zero):
        return 0.0
    return math.copysign(1.0, diff)


def objective_rounding(cost: np.ndarray, x: np.ndarray | None, offset: float = 0.0) -> float:
    """The most float64 rounding can move the evaluation of c'x + offset at ``x`` (objective units; cost and x
    (n,)): gamma_k sum_j |c_j x_j| + |offset| over the k nonzero products and the offset (Higham, Accuracy and
    Stability of Numerical Algorithms, 2nd ed., eq. 3.5: |fl(s) - s| <= gamma_k sum |terms| for any order of the k
    terms, gamma_k = k u / (1 - k u), u = 2^-53; a zero product adds nothing and rounds nothing). Two objectives
    closer than the sum of their points' figures cannot be told apart. 0.0 without a point; inf when k u >= 1."""
    if x is None:
        return 0.0
    import numpy as np

    terms = np.abs(np.asarray(cost, dtype=np.float64) * np.asarray(x, dtype=np.float64))
    terms = terms[np.isfinite(terms)]
    k = int(np.count_nonzero(terms)) + (offset != 0.0)
    ku = k * 2.0 ** -53
    if ku >= 1.0:
        return math.inf
    return ku / (1.0 - ku) * (float(terms.sum()) + abs(float(offset)))


def integrality_slack(cost: np.ndarray, x: np.ndarray | None, integrality: np.ndarray) -> float:
    """sum_j |c_j| |x_j - round(x_j)| over the integer columns (objective units; cost, x, integrality (n,)): how far
    a point's objective moves when its integer columns take their nearest integers. A solver's MILP point within its
    integrality tolerance (HiGHS: 3.2e-13 on mod008) has an objective that much off the integral one (306.99999999999164
    against the proven 307), which ``objective_diff_rel`` then read as better than copter's exact 307 (helper-230).
    0.0 without a point or an integer column."""
    if x is None:
        return 0.0
    import numpy as np

    it = np.asarray(integrality) > 0
    if not it.any():
        return 0.0
    xi = np.asarray(x, dtype=np.float64)[it]
    terms = np.abs(np.asarray(cost, dtype=np.float64)[it] * (xi - np.round(xi)))
    return float(terms[np.isfinite(terms)].sum())


def objective_scale(cost: np.ndarray, x: np.ndarray | None) -> float:
    """sum_j |c_j| (1 + |x_j|) (objective units; costs and x (n,)): the most a move of each x_j by a relative
    ``tol`` (|dx_j| <= tol (1 + |x_j|)) can change c'x, so ``objective_diff_rel``'s ``zero_within`` = tol times
    it is the width within which an objective is 0 up to the tolerance. Columns without a cost add nothing
    (a norm-wise ||c|| (1 + ||x||) let a huge cost-free column widen it past real differences). 0.0 without
    a point or with a non-finite one. One pass over n."""
    if x is None:
        return 0.0
    import numpy as np

    c = np.abs(np.asarray(cost, dtype=np.float64))
    g = float(c.sum() + c @ np.abs(np.asarray(x, dtype=np.float64)))
    return g if math.isfinite(g) else 0.0


def gap_allowance(objective: float, gap_target: float, abs_gap: float = MIP_ABS_GAP) -> float:
    """The absolute objective distance a relative ``gap_target`` allows at ``objective`` (objective units):
    max(gap_target * |objective|, ``abs_gap``) (:func:`abs_gap_of` of the model's costs)."""
    return max(gap_target * abs(objective), abs_gap)


def objective_within(sense: int, bound: float, gap_target: float, abs_gap: float = MIP_ABS_GAP) -> float:
    """The worst objective (problem's sense) whose :func:`gap_rel` to ``bound`` is at most ``gap_target``: a point
    at least this good (<= it for minimisation, >= it for maximisation) is proven within the target by ``bound``.

    The farther from ``bound`` of two values: the p that solves sense * (p - d) = g |p| on the side of d where
    feasible points lie (d = ``bound``, g = ``gap_target``; HiGHS's |p| denominator), and d moved by the absolute
    closure ``abs_gap`` (:func:`abs_gap_of`; half of it, and g less a relative 1e-9: round-off never puts a point at the
    returned value above the target). nan (no target) when ``bound`` is not finite, g is not a finite number
    >= 0, or every objective on that side is within the target (g >= 1 where p would cross 0). Scalars,
    objective units."""
    if not (math.isfinite(bound) and math.isfinite(gap_target) and gap_target >= 0.0):
        return math.nan
    g = gap_target * (1.0 - 1e-9)
    if sense > 0:  # p >= d: |p| = p above 0, -p below
        p = bound / (1.0 + g) if bound <= 0 else (bound / (1.0 - g) if g < 1 else math.inf)
    else:  # p <= d
        p = bound / (1.0 + g) if bound >= 0 else (bound / (1.0 - g) if g < 1 else -math.inf)
    if not math.isfinite(p):
        return math.nan
    closed = bound + sense * 0.5 * abs_gap
    return p if sense * (p - closed) > 0 else closed


#: a bound within this of the lattice point above it (in objective units, relative to max(1, |z|)) is taken as
#: that point: the Lagrangian bound's own rounding, never a step past the optimum
LATTICE_TOL = 1e-6


def objective_step(cost: np.ndarray, integrality: np.ndarray) -> float:
    """1.0 when every point's objective lies on offset + Z (costs (n,) of the integer columns integral and of
    the continuous ones 0, some nonzero), else 0.0 (no lattice). O(n)."""
    import numpy as np

    cost = np.asarray(cost, dtype=np.float64)
    ints = np.asarray(integrality, dtype=bool)
    if not ints.any() or not np.any(cost != 0.0) or np.any(cost[~ints] != 0.0):
        return 0.0
    ci = cost[ints]
    return 1.0 if bool(np.all(ci == np.round(ci))) else 0.0


def lattice_bound(sense: int, bound: float, offset: float, step: float) -> float:
    """``bound`` (problem's sense) moved to the first objective value offset + step * k that it does not pass
    (up for minimisation, down for maximisation): still a valid bound when every point's objective lies on that
    lattice; ``bound`` itself when ``step`` is 0 or the bound is not finite."""
    if step <= 0.0 or not math.isfinite(bound):
        return bound
    z = (bound - offset) / step
    slack = LATTICE_TOL * max(1.0, abs(z))
    k = math.ceil(z - slack) if sense > 0 else math.floor(z + slack)
    moved = offset + step * k
    return moved if sense * (moved - bound) > 0 else bound
