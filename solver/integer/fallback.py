"""Fallback when the heuristics find no integer point: HiGHS's MIP solver, time-limited, seeded.

HiGHS (branch-and-cut) runs on the full problem with ``time_limit`` = the budget and a wall-clock
deadline enforced through its MIP interrupt callback (``solver.highs_bridge.run``; HiGHS's MIP
clock is not always reliable). It is seeded with the best partial assignment the heuristics produced
(``Highs.setSolution`` with the integer columns only: HiGHS completes a partial solution by solving the
LP over the rest). Its incumbent, if any, is returned with integer columns rounded to exact integers;
the caller then finishes the continuous part exactly and re-checks the point. A seeded run whose objective for its
own point is better than the point's (HiGHS 1.16 with presolve on keeps the presolved objective of a start point
that a presolve reduction excludes, and may then call that point "Optimal") is void: HiGHS runs again without the
seed for the time left (``seed_dropped`` in the info).

With ``stall_seconds`` (the improvement of a point the heuristics found: ``pipeline._improve_by_fallback``)
branch-and-cut also stops when it stalls or cannot reach ``mip_rel_gap`` within its budget at the pace its
gap has fallen so far (:class:`StallWatch`; a no-improvement limit in the spirit of CPLEX's and Gurobi's).
A model whose bound branch-and-cut cannot close spends the whole budget otherwise: a random 200-binary,
30-row packing MILP took the 60 s default every round and ended at a 2.4-2.8% gap (HiGHS alone: 2.6-3.0%
after 60-120 s).
"""

from __future__ import annotations

import math
import time

import numpy as np

from solver.highs_bridge import (
    mip_info,
    new_highs,
    objective_value,
    pass_model,
    read_point,
    run,
    set_partial_solution,
    status_text,
    to_highs_lp,
)
from solver.integer.gap import cost_scale
from solver.model.problem import Problem

SEED_MAX = 1e12  #: seed values larger in magnitude are not passed to HiGHS
STALL_PROGRESS = 0.98  #: HiGHS's gap falling to this fraction of its value at the last progress is progress
#: a gap above this many times the target is "far": both stall rules then wait at least ``far_seconds``
FAR_GAP_FACTOR = 10.0


class StallWatch:
    """HiGHS MIP callbacks that interrupt branch-and-cut once it stalls or cannot reach its target in time.

    Two rules, judged in ``cbMipInterrupt`` (which HiGHS calls throughout the search, root cut loop included)
    once HiGHS's relative gap is finite (before, the root LP has not bounded the model: nothing to judge):

    - no progress: progress is a better incumbent (``cbMipImprovingSolution``) or the gap falling to
      ``STALL_PROGRESS`` times its value at the last progress; the search stops when the seconds since the
      last progress reach max(``min_seconds``, the seconds from the start to the last progress): a search
      that progressed late gets as long again;
    - pace: with a target gap ``target`` and a ``budget`` (seconds), at least ``min_seconds`` after the
      first finite gap g0, the search stops when the gap's pace since then, r = ln(g0 / g) / seconds, would
      need more than the budget left to bring g down to the target (ln(g / target) / r seconds; r <= 0:
      never): branch-and-cut that cannot prove the target within its budget only polishes the incumbent.

    Far from the target (HiGHS's gap above ``FAR_GAP_FACTOR`` times ``target``), both rules wait at least
    ``far_seconds`` (capped at a quarter of ``budget``) instead of ``min_seconds``: an incumbent that far from
    its bound is not yet a stall, branch-and-cut is still in its root and its heuristics. LB 128x16 (2,048
    binaries, loaded machine, load 5-6): seeded with RENS's point 66 (HiGHS's bound 9 after its root cuts, gap
    86%), HiGHS finds the optimum 9 after 6-8 s with no progress from 2.2 s on, so 2 s stopped it at 66 (and a
    round at 26 or 54 whose optimum was 3 or 2); with 15 s all 16 rounds of seeds 0-3 came back at HiGHS's
    optimum, proven. A point within 10x of the target (the packing MILP's 3.2%) keeps ``min_seconds``.

    Measured (seeded with the heuristic point, on the loaded 2-core machine): lseu's root cuts take the gap
    8.5% -> 6.0% in 4.4 s (at that pace 0.5% takes ~24 s more, within the 60 s budget) and the tree then
    proves 0.5% (neither rule stops it); the 30-row packing MILP's root holds the gap at 3.24-3.23% for 16 s
    (no progress), and a round whose gap crept 3.2% -> 2.8% in 60 s (pace: ~850 s to 0.5%) used the whole
    budget before the pace rule. Attributes after the run: ``stalled`` (True when this watch interrupted
    it), ``reason`` (``"no progress"``, ``"pace"`` or None) and ``last_progress_seconds``.
    """

    def __init__(self, min_seconds: float, target: float | None = None, budget: float = math.inf,
                 far_seconds: float | None = None):
        self.min_seconds = float(min_seconds)
        self.target = target
        self.budget = float(budget)
        #: the minimum while the gap is far above the target (class docstring): at most a quarter of the budget
        self.far_seconds = (self.min_seconds if far_seconds is None
                            else max(self.min_seconds, min(float(far_seconds), self.budget / 4)))
        self.start = self.last = time.perf_counter()
        self.gap = math.inf
        self.first: tuple[float, float] | None = None  #: (time, gap) of the first finite gap
        self.stalled = False
        self.reason: str | None = None

    @property
    def last_progress_seconds(self) -> float:
        return self.last - self.start

    def _progress(self, now: float, gap: float) -> None:
        self.last = now
        if gap < self.gap:
            self.gap = gap

    def improving(self, event) -> None:
        """``cbMipImprovingSolution``: a better incumbent is progress."""
        self._progress(time.perf_counter(), float(event.data_out.mip_gap))

    def _minimum(self, gap: float) -> float:
        """Seconds both rules wait at least: ``far_seconds`` while ``gap`` is far above the target, else
        ``min_seconds``."""
        far = self.target is not None and self.target > 0 and gap > FAR_GAP_FACTOR * self.target
        return self.far_seconds if far else self.min_seconds

    def _too_slow(self, now: float, gap: float) -> bool:
        """The pace rule (class docstring)."""
        if self.target is None or self.first is None or not (self.target > 0) or gap <= self.target:
            return False
        t0, g0 = self.first
        if now - t0 < self._minimum(gap):
            return False
        rate = math.log(g0 / gap) / (now - t0) if gap > 0 else math.inf
        left = self.start + self.budget - now
        return rate <= 0 or math.log(gap / self.target) / rate > left

    def interrupt(self, event) -> None:
        """``cbMipInterrupt``: note a fall of the gap; interrupt when stalled or too slow."""
        now = time.perf_counter()
        gap = float(event.data_out.mip_gap)
        if not math.isfinite(gap) or gap <= STALL_PROGRESS * self.gap:  # not bounded yet, or progress
            self._progress(now, gap)
        if self.first is None and math.isfinite(gap) and gap > 0:
            self.first = (now, gap)
        if now - self.last >= max(self._minimum(gap), self.last - self.start):
            self.reason = "no progress"
        elif self._too_slow(now, gap):
            self.reason = "pace"
        if self.reason is not None:
            self.stalled = True
            event.interrupt()

    def attach(self, h) -> None:
        self.start = self.last = time.perf_counter()
        h.cbMipImprovingSolution.subscribe(self.improving)
        h.cbMipInterrupt.subscribe(self.interrupt)

    def detach(self, h) -> None:
        h.cbMipImprovingSolution.unsubscribe(self.improving)
        h.cbMipInterrupt.unsubscribe(self.interrupt)


def highs_mip(problem: Problem, seconds: float, seed: np.ndarray | None = None,
              mip_rel_gap: float | None = None, stall_seconds: float | None = None,
              far_seconds: float | None = None, threads: int | None = None,
              presolve: bool = True, objective_target: float | None = None) -> tuple[np.ndarray | None, dict]:
    """Run HiGHS MIP on ``problem`` for at most ``seconds`` (wall); returns (x or None, info).

    Args:
        problem: the MILP (n columns).
        seconds: time budget in seconds (must be finite and > 0 to run).
        seed: (n,) partial assignment: values of integer columns are passed to HiGHS (NaN = unset); values
            outside the column's bounds or above ``SEED_MAX`` in magnitude are left out.
        mip_rel_gap: HiGHS's relative gap at which branch-and-cut stops (None: HiGHS's default, 1e-4).
        stall_seconds: also stop when branch-and-cut stalls or cannot reach ``mip_rel_gap`` within ``seconds``
            at its pace (:class:`StallWatch` with this minimum, seconds); None: only the budget and
            ``mip_rel_gap`` stop it.
        far_seconds: with ``stall_seconds``, the watch's minimum while the gap is more than ``FAR_GAP_FACTOR``
            times ``mip_rel_gap`` (at most a quarter of ``seconds``; None: ``stall_seconds`` throughout).
        threads: HiGHS's thread count (``highs_bridge.configure_threads``; None: HiGHS's default, which on the
            2-core machine is 2). The pipeline passes ``Settings.threads`` (default 1): mod008's HiGHS MIP took
            2.0-2.8 s with HiGHS's 2 threads against 1.2-1.8 s with one on the loaded 2-core machine, and of 8 small
            shared MILPs none was faster with two, dcmulti level (HiGHS's idle workers spin on a busy core).
        presolve: False runs HiGHS without its MIP presolve (``submip.presolve_pays``: RENS's sub-MIP of a
            choice/capacity model).
        objective_target: HiGHS's ``objective_target``: it stops (status "Target for objective reached") at its
            first point at least this good (<= for minimisation, >= for maximisation, objective units); None or
            nan: no target.
    Returns:
        x: (n,) HiGHS incumbent with integer columns rounded to integers, or None.
        info: {"highs_status", "seconds", "mip_dual_bound", "mip_gap", "seeded"}, with ``stall_seconds``:
        also "stalled" (bool: the watch stopped it), "stall_reason" and "last_progress_seconds"; after a void
        seeded run (module docstring) the unseeded run's, plus "seed_dropped" = {"highs_objective",
        "point_objective"} of the seeded run.
    """
    t0 = time.perf_counter()
    info = {"highs_status": "not run", "seconds": 0.0, "mip_dual_bound": math.nan, "mip_gap": math.nan,
            "seeded": False}
    if not (seconds > 0):
        return None, info
    h = new_highs(threads)
    if not presolve:
        h.setOptionValue("presolve", "off")
    # HiGHS's tolerances are absolute (a reduced cost within its dual feasibility tolerance 1e-7 counts as 0, a gap
    # within mip_abs_gap 1e-6 as closed): on stein27 with its costs x 1e-7 HiGHS 1.16 said "Optimal" at 2.6e-6 with
    # that as its dual bound, where the optimum is 1.8e-6, and copter passed the bound on as proven (helper-202). Tiny
    # costs go to HiGHS times a power of two (exact: the point is the same, bound and objective divide back exactly)
    scale = cost_scale(problem.cost)
    lp = to_highs_lp(problem, with_names=False)
    if scale != 1.0:
        lp.col_cost_ = np.asarray(lp.col_cost_, dtype=np.float64) * scale
        lp.offset_ = float(lp.offset_) * scale
    reason = pass_model(h, lp, problem)
    if reason is not None:  # running the empty model it holds would say "Empty", not why
        info.update(highs_status=f"Refused: {reason}", seconds=time.perf_counter() - t0)
        return None, info
    if mip_rel_gap is not None:
        h.setOptionValue("mip_rel_gap", float(mip_rel_gap))
    if objective_target is not None and math.isfinite(objective_target):
        h.setOptionValue("objective_target", float(objective_target) * scale)
    if seed is not None:
        # only values a solution could take: inside the column's bounds and of a sane size (HiGHS 1.16
        # segfaults in run() on a seed value of 1e18, and answers "Solve error" to one of 1e77; a diverged
        # relaxation rounds to such values)
        seed = np.asarray(seed, dtype=np.float64)
        with np.errstate(invalid="ignore"):
            sane = (np.isfinite(seed) & (np.abs(seed) <= SEED_MAX) & (seed >= problem.col_lower)
                    & (seed <= problem.col_upper))
        idx = np.flatnonzero(problem.integrality & sane)
        if idx.size:
            set_partial_solution(h, idx, seed[idx])
            info["seeded"] = True
    watch = StallWatch(stall_seconds, mip_rel_gap, seconds, far_seconds) if stall_seconds is not None else None
    if watch is not None:
        watch.attach(h)
    try:
        run(h, is_mip=True, time_limit_seconds=seconds)
    finally:
        if watch is not None:
            watch.detach(h)
    info["highs_status"] = status_text(h)
    if watch is not None:
        if watch.stalled:  # this watch interrupted it, not the deadline
            info["highs_status"] = f"Stopped: stalled ({watch.reason})"
        info["stalled"] = watch.stalled
        info["stall_reason"] = watch.reason
        info["last_progress_seconds"] = watch.last_progress_seconds
    info.update(mip_info(h))
    info["mip_dual_bound"] /= scale  # HiGHS's figures of the scaled costs in the problem's units (a power of 2: exact)
    if scale != 1.0:
        info["cost_scale"] = scale
    x = read_point(h, problem.n_cols, is_mip=True)
    if x is not None:
        it = problem.integrality
        x[it] = np.round(x[it])
        highs_objective = objective_value(h) / scale
        if info["seeded"] and _wrong_objective(problem, x, highs_objective):
            return _without_seed(problem, x, highs_objective, seconds - (time.perf_counter() - t0),
                                 mip_rel_gap, stall_seconds, far_seconds, t0, threads, presolve, objective_target)
    info["seconds"] = time.perf_counter() - t0
    return x, info


def _wrong_objective(problem: Problem, x: np.ndarray, highs_objective: float) -> bool:
    """HiGHS's objective of its point ``x`` ((n,), integers rounded) is better than the point's own by more than
    1e-6 x (max(1, |objective|) + sum of |integer costs|), the most HiGHS's integrality tolerance (1e-6) and the
    rounding move it (HiGHS 1.16, presolve on: a start point that a presolve reduction excludes keeps the
    presolved model's objective; lseu with C166's cost 183 -> 383, seeded with a point at C166 = 1 (1,320), said
    "Optimal" at 937 with that point where the optimum is 1,128)."""
    true = problem.objective(x)
    slack = 1e-6 * (max(1.0, abs(true)) + float(np.abs(problem.cost[problem.integrality]).sum()))
    return bool(problem.sense * (true - highs_objective) > slack)


def _without_seed(problem: Problem, x_seeded: np.ndarray, highs_objective: float, left: float,
                  mip_rel_gap, stall_seconds, far_seconds, t0: float,
                  threads: int | None = None, presolve: bool = True,
                  objective_target: float | None = None) -> tuple[np.ndarray | None, dict]:
    """The seeded run's verdict is void (``_wrong_objective``): HiGHS again without the seed for the ``left``
    seconds; its point when it has one, else the seeded run's (feasible, as every caller re-checks). The info
    is the unseeded run's, with ``seed_dropped`` = what the seeded run claimed."""
    x, info = highs_mip(problem, left, None, mip_rel_gap=mip_rel_gap, stall_seconds=stall_seconds,
                        far_seconds=far_seconds, threads=threads, presolve=presolve,
                        objective_target=objective_target)
    info["seed_dropped"] = {"highs_objective": float(highs_objective),
                            "point_objective": float(problem.objective(x_seeded))}
    info["seconds"] = time.perf_counter() - t0
    if x is None or problem.sense * (problem.objective(x) - problem.objective(x_seeded)) > 0:
        x = x_seeded
    return x, info
