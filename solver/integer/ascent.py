"""Dual ascent on the Lagrangian of the coupling rows: a tighter MILP bound than the LP iterate's duals.

With the choice rows kept in the inner problem (``bound.ChoiceLagrangian``), the bound L(y) depends only on
the duals of the other rows, the *coupling* rows (Sia: one capacity row per GPU type, 7 of 3,007 rows).
L is concave and piecewise linear, and its maximum equals the LP relaxation's optimum (each choice row
with its binaries is an integral polytope; Geoffrion 1974). A first-order LP method gets the coupling
duals right only slowly: after 128 warm PDHG iterations on Sia 10,240 the bound from its duals was still
1.7-2.0% above the LP optimum, so a round whose rounded point was already within 0.3% of the optimum had to
run a second relaxation stage just to prove it.

This module maximises L over the coupling duals by the projected subgradient method with Polyak's step
toward a target level (Held, Wolfe & Crowder 1974; Fisher 1981, "The Lagrangian relaxation method for
solving integer programming problems", section 4; the adaptive level of Goffin & Kiwiel 1999, "Convergence
of a simple subgradient level method"), started from the LP iterate's duals::

    g   = b(y) - A x(y)            (supergradient on the dualized rows; b_i = row bound the sign of y_i uses)
    y  <- proj(y + (L_best + delta - L(y)) g / ||g||^2)

The level starts at the best integer point's objective (delta = T - L_best, T an upper bound on max L in
minimisation form). That target is only right when the integrality gap is small against the bound's own
error: when the LP duals are already nearly optimal (Sia 1,024, cold round), the full Polyak step overshoots
and every later value is worse. So after ``STALL`` steps without a new best, delta is divided by
``SHRINK`` and the iteration restarts from the best duals. The projection keeps y_i >= 0 where only the
lower row bound is finite and y_i <= 0 where only the upper one is (minimisation form). EVERY evaluated
L(y) is a valid bound, so the result is the best value seen, whatever the method's convergence; the
iteration stops as soon as that bound proves the gap target.

A run can be continued (``resume``: the :class:`AscentState` a previous call returned in its info): the next
call steps on from the duals the last one would have evaluated next, with its best value, level and stall
count, instead of re-evaluating its best duals and restarting the level from the full gap (a partitioned
round's merge ascends a few steps before RENS and the rest after it).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from solver.integer.bound import ChoiceLagrangian
from solver.integer.gap import abs_gap_of, gap_allowance

STALL = 2  #: steps without a new best bound before the target level is lowered and the best duals restored
#: evaluations of a round's ascent before RENS when the rounded point is far from the bound (RENS would run at
#: the gap they leave): the rest of the run's budget goes on after RENS, when the gap still asks for it
#: (``solver.integer.pipeline._ascend``; a partitioned merge's the same, ``solver.partition.merge``)
FIRST_STEPS = 10
SHRINK = 4.0  #: factor by which the level above the best bound (delta) is divided at a stall


@dataclass(eq=False)
class AscentState:
    """Where :func:`coupling_dual_ascent` stopped (minimisation form; arrays (m,)): the duals it would have
    evaluated next, its best value, duals and their row activities, the level's distance ``delta`` above the
    best value, the steps since the last new best, and ``done`` (no step can improve: the supergradient was 0
    or L was not finite)."""

    y_next: np.ndarray
    best_val: float
    best_y: np.ndarray
    best_act: np.ndarray | None
    delta: float
    stall: int
    done: bool
    evaluations: int = 0  #: evaluations of L by the whole run (every call that resumed it included)


def coupling_dual_ascent(lag: ChoiceLagrangian, y_start: np.ndarray, objective_best: float, gap_target: float,
                         max_steps: int = 30, seconds: float = math.inf,
                         resume: AscentState | None = None) -> tuple[float, np.ndarray, dict]:
    """Maximise the choice-row Lagrangian bound over the coupling rows' duals from ``y_start``.

    Args:
        lag: the Lagrangian (problem, bounds and kept choice rows) to maximise.
        y_start: (m,) row duals to start from (HiGHS's sign convention for the problem's sense; NaN -> 0).
        objective_best: objective of the best integer point (problem's sense, offset included): Polyak's
            target and the reference of the gap.
        gap_target: stop once the MIP gap of objective_best to the bound (``solver.integer.gap``) is at most this.
        max_steps: evaluations of L at most (the first is at ``y_start``).
        seconds: wall budget in seconds.
        resume: continue the run that returned this state (same ``lag``; ``y_start`` is then ignored): no
            evaluation is repeated, the level is capped by the (possibly better) ``objective_best``, and a
            state that already proves the gap target returns at once (0 steps).
    Returns:
        (bound, y, info): the best bound found (problem's sense, offset included; -inf/+inf when no
        evaluation gave a finite one; with ``resume`` the earlier run's best counts), the (m,) duals that
        gave it, and info {"steps", "seconds", "start_bound" (the first value of this call, or the earlier
        run's best when resumed), "state" (:class:`AscentState`, to continue with)}.
    """
    t0 = time.perf_counter()
    p = lag.problem
    s = p.sense
    rl, ru = p.row_lower, p.row_upper
    lo_fin, up_fin = np.isfinite(rl), np.isfinite(ru)
    dual = lag.dualized & (lo_fin | up_fin)  # a free row's dual is 0 in every valid Lagrangian
    target = s * (objective_best - p.offset)  # minimisation form: T >= max L
    allowance = gap_allowance(objective_best, gap_target, abs_gap_of(p.cost))  # the MIP gap's rule (solver.integer.gap)
    done = False
    if resume is None:
        ym = s * np.nan_to_num(np.asarray(y_start, dtype=np.float64), nan=0.0, posinf=0.0, neginf=0.0)
        ym = np.where(dual, ym, 0.0)
        ym = _project(ym, lo_fin, up_fin)
        best_val, best_y, best_act = -math.inf, ym.copy(), None
        delta, stall = math.inf, 0
        start = math.nan
    else:
        ym, best_val, best_y, best_act = resume.y_next.copy(), resume.best_val, resume.best_y, resume.best_act
        delta, stall, done = resume.delta, resume.stall, resume.done
        if math.isfinite(best_val):
            delta = min(delta, target - best_val)  # a better objective lowers the level
        start = s * best_val + p.offset if math.isfinite(best_val) else -s * math.inf
        if done or not math.isfinite(best_val) or target - best_val <= allowance:
            max_steps = 0
    if not math.isfinite(objective_best):
        max_steps = min(max_steps, 1)  # no Polyak target: only the start value
    steps = 0
    while steps < max_steps and time.perf_counter() - t0 < seconds:
        bound, x, act = lag.evaluate(s * ym)
        steps += 1
        val = s * (bound - p.offset)  # minimisation form
        if steps == 1 and resume is None:
            start = bound
        if x is None or not math.isfinite(val):
            done = True
            break
        if val > best_val:
            best_val, best_y, best_act, stall = val, ym.copy(), act.copy(), 0
            delta = min(delta, target - best_val)
        else:
            stall += 1
            if stall >= STALL:  # overshooting: a lower level, stepping again from the best duals (known)
                delta, stall = delta / SHRINK, 0
                ym, val, act = best_y.copy(), best_val, best_act
        if target - best_val <= allowance:
            break
        g = np.where(ym > 0, np.where(lo_fin, rl, 0.0), np.where(ym < 0, np.where(up_fin, ru, 0.0), 0.0)) - act
        at0 = ym == 0  # superdifferential [rl - Ax, ru - Ax] at 0: its element nearest 0
        g0 = np.where(lo_fin & (act < rl), rl - act, np.where(up_fin & (act > ru), ru - act, 0.0))
        g = np.where(dual, np.where(at0, np.nan_to_num(g0), g), 0.0)
        gg = float(g @ g)
        if not gg > 0:
            done = True
            break  # x(y) satisfies every dualized row: L(y) is the LP optimum (complementary slackness aside)
        level = best_val + delta
        if not level > val:
            level = val + delta  # (a step from below the best value aims above the current one)
        ym = _project(ym + (level - val) / gg * g, lo_fin, up_fin)
    bound = s * best_val + p.offset if math.isfinite(best_val) else -s * math.inf
    state = AscentState(y_next=ym, best_val=best_val, best_y=best_y, best_act=best_act, delta=delta, stall=stall,
                        done=done, evaluations=steps + (resume.evaluations if resume is not None else 0))
    return bound, s * best_y, {"steps": steps, "seconds": time.perf_counter() - t0, "start_bound": start,
                               "state": state}


def _project(ym: np.ndarray, lo_fin: np.ndarray, up_fin: np.ndarray) -> np.ndarray:
    """Minimisation-form duals with a sign that points at a finite row bound (others set to 0)."""
    return np.where(((ym > 0) & ~lo_fin) | ((ym < 0) & ~up_fin), 0.0, ym)
