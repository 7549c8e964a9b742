"""Cold LP solves through HiGHS presolve: reduce, solve the reduced LP with PDHG, postsolve, verify.
``solver.lp.dispatch.solve`` routes a solve here when :func:`presolve_applies`; this module runs the
direct PDHG solve (``solver.lp.pdhg.solve``) and is never imported by it.

HiGHS's presolve (Achterberg et al., "Presolve reductions in mixed integer programming", and HiGHS's
``presolve/HPresolve``; Galabova, Hall, "HiGHS" 2020) removes fixed/singleton/doubleton rows and
columns, dominated columns and redundant bounds; on the netlib set it shrinks e.g. seba 515x1028 to
2x8 and solves sctest outright. HiGHS's own ``solver=pdlp`` runs it before iterating, so copter does
the same for COLD solves (a warm start is worth more than presolve for round-to-round re-solves, and it
cannot be carried into the reduced space).

Pipeline (:func:`solve_with_presolve`):
1. ``Highs.presolve()`` on the LP (integrality dropped: copter solves LPs and relaxations here), its
   time counted against ``settings.time_limit_seconds``, with the one rule whose postsolve needs a
   basis for its duals switched off (:data:`PRESOLVE_RULE_OFF`);
2. PDHG (``solver.lp.pdhg.solve``, the direct run) on ``Highs.getPresolvedLp()``;
3. ``Highs.postsolve`` with the reduced primal/dual point (x, A x, y, c - A'y) back to the original
   space; HiGHS then reports model status Unknown because PDHG's point is not a basic solution, so the
   result is never taken from HiGHS's word:
4. the relative KKT residuals and gap are recomputed in the ORIGINAL space by
   :func:`original_kkt` (``solver.lp.termination``'s formulas); if they miss ``settings.tol`` (postsolve
   can amplify a reduced-space error, e.g. through a doubleton substitution), a warm-started PDHG solve
   on the original LP from the postsolved (x, y) polishes it. The status is OPTIMAL only when the
   original-space criteria hold.

Presolve outcomes: reduced to empty -> postsolve of the empty solution (exact); infeasible ->
PRIMAL_INFEASIBLE; "unbounded or infeasible", not reduced, timeout, a reduced LP with row bounds of 1e15 or more
that no row of the LP has (``solver.lp.scaling.FAR_ROW_BOUND``) or any error -> the LP is solved without presolve within
the time left.
"""

from __future__ import annotations

import math
import re
import sys
import threading
import time
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

import numpy as np

from solver.clock import name_user_limit
from solver.lp import kernels
from solver.lp.original_kkt import measured_result, original_kkt
from solver.lp.pdhg import current_progress_callback, progress_callback
from solver.lp.pdhg import solve as pdhg_solve
from solver.lp.scaling import FAR_ROW_BOUND
from solver.lp.trivial import reduce_trivial
from solver.model.errors import CopterError, UsageError
from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status

PRESOLVE_MODES = ("auto", "on", "off")
PRESOLVE_ENGINE = "presolve"
"""``SolveResult.engine`` of an LP that HiGHS presolve settled alone (proved infeasible, or reduced to nothing and
postsolved): the engine the choice named never iterated, and the round's ``iterations`` (0) count nothing."""

# HiGHS presolve rules switched off (option ``presolve_rule_off``, bit k = rule k as HiGHS 1.16 logs it).
# Rule 18, "zero cost singleton" columns: its postsolve relies on a basis to place the row dual, and a
# value-only postsolve of a PDHG point leaves c - A'y inconsistent with the returned column duals
# (relative dual residual 2e-3 on 25fv47, gap 3e-1 on brandy whatever the reduced LP's accuracy).
# Measured at tol 1e-4: with it off, 25fv47, boeing1, brandy, scfxm1, kb2, grow7 and sctap1 need no
# polish and their total PDHG work (iterations x nonzeros) drops 6-60%; the reduced sizes barely change.
PRESOLVE_RULE_OFF = 1 << 18

if TYPE_CHECKING:
    from solver.highs_bridge import Highs, HighsLp


def _hb():
    """``solver.highs_bridge``, imported (with highspy) on first use: a warm PDHG round, which skips HiGHS
    presolve, imports no HiGHS (issue #15: ~0.03 s of CPU of every ``copter step`` process)."""
    from solver import highs_bridge

    return highs_bridge


def presolve_applies(problem: Problem, settings: Settings, warm_start) -> bool:
    """True when ``solver.lp.dispatch.solve`` should go through HiGHS presolve.

    ``settings.presolve``: ``"auto"`` = cold solves only; ``"on"`` = also when a warm start is given
    (the warm start is then dropped: it lives in the original space); ``"off"`` = never. Problems with no
    rows or no columns, or trivially infeasible (an empty bound box or an empty row excluding 0, which
    the direct path names: ``solver.lp.trivial``), skip it.

    Raises:
        UsageError: ``settings.presolve`` is not one of ``"auto"``, ``"on"``, ``"off"``.
    """
    mode = settings.presolve
    if mode not in PRESOLVE_MODES:
        raise UsageError(f"settings.presolve must be one of {PRESOLVE_MODES}, got {mode!r}")
    if mode == "off" or (mode == "auto" and warm_start is not None):
        return False
    if problem.n_cols == 0 or problem.n_rows == 0:
        return False
    red = reduce_trivial(problem.cost, problem.col_lower, problem.col_upper, problem.row_lower,
                         problem.row_upper, problem.a_indptr, problem.a_indices, problem.col_names,
                         problem.row_names)
    return not red.infeasible_message


_ITERATION_LIMIT_MSG = re.compile(r"iteration limit \d+ reached")


def _user_limit(status: Status, message: str, settings: Settings) -> str:
    """Inner solves run on the budget left; a TIME_LIMIT or ITERATION_LIMIT message names the user's whole
    limit instead."""
    if status == Status.TIME_LIMIT:
        return name_user_limit(message, settings.time_limit_seconds)
    if status == Status.ITERATION_LIMIT:
        return _ITERATION_LIMIT_MSG.sub(f"iteration limit {settings.iteration_limit} reached", message)
    return message


def _remaining(settings: Settings, t_start: float) -> float:
    return settings.time_limit_seconds - (time.perf_counter() - t_start)


def _direct(problem: Problem, settings: Settings, t_start: float, seconds: dict, note: str,
            warm_start=None) -> SolveResult:
    """Solve without presolve in the time left (from ``warm_start`` when one was given: it lives in this
    original space); keep the presolve seconds and say why."""
    left = max(_remaining(settings, t_start), 0.0)
    res = pdhg_solve(problem, replace(settings, time_limit_seconds=left), warm_start=warm_start)
    inner = res.seconds
    res.seconds = {**seconds, "iterate": inner.get("iterate", 0.0), "setup": inner.get("setup", 0.0)}
    _finish_seconds(res.seconds, t_start)
    res.message = _user_limit(res.status, f"{res.message}; {note}" if res.message else note, settings)
    return res


def _finish_seconds(seconds: dict, t_start: float) -> None:
    seconds["solve"] = seconds["total"] = time.perf_counter() - t_start


def _presolved_problem(plp: HighsLp, name: str) -> Problem:
    """The reduced LP as a Problem (HiGHS may hand it over row-wise).

    Fast path (no scipy object, no name sort): when HiGHS's matrix, once its columns are sorted by row,
    is canonical (row indices strictly increasing within columns, in range, nonzero finite values, finite costs, no bound at
    +inf below / -inf above), the Problem is built from the arrays directly with names ``C{j}`` /
    ``R{i}``; it is the Problem :func:`solver.highs_bridge.from_highs_lp` would build (that function,
    which canonicalises and validates, handles every other case and raises its errors).
    """
    from solver.highs_bridge import from_highs_lp
    from solver.lp.scaling import csc_to_csr
    from solver.model.problem import normalize_infinite

    m, n = int(plp.num_row_), int(plp.num_col_)
    start, index, value = _hb().colwise_arrays(plp, csc_to_csr)  # a row-wise matrix is transposed (CSR of A = CSC of A')
    integ = plp.integrality_
    if start.shape == (n + 1,) and start[0] == 0 and len(integ) == 0:
        nnz = int(start[-1])
        index, value = index[:nnz], value[:nnz]
        if nnz:  # HiGHS's presolved columns are not sorted by row: sort them (what scipy's sort_indices does)
            key = np.repeat(np.arange(n, dtype=np.int64) * max(m, 1), np.diff(start)) + index
            order = np.argsort(key, kind="stable")
            index, value = index[order], value[order]
        cost = np.asarray(plp.col_cost_, dtype=np.float64)
        lo, up, rlo, rup = (normalize_infinite(b) for b in (plp.col_lower_, plp.col_upper_, plp.row_lower_,
                                                             plp.row_upper_))
        # x < inf is False for NaN and +inf alike: one test per bound array (Problem.check's rules)
        if (kernels.csc_is_canonical(start, index, value, m) and np.isfinite(cost).all()
                and (lo < np.inf).all() and (up > -np.inf).all() and (rlo < np.inf).all()
                and (rup > -np.inf).all() and math.isfinite(float(plp.offset_))):
            return Problem(col_names=np.array([f"C{j}" for j in range(n)], dtype=object),
                           row_names=np.array([f"R{i}" for i in range(m)], dtype=object), cost=cost,
                           col_lower=lo, col_upper=up, row_lower=rlo, row_upper=rup,
                           integrality=np.zeros(n, dtype=bool), a_indptr=start, a_indices=index, a_data=value,
                           sense=-1 if _hb().is_maximize(plp) else 1,
                           offset=float(plp.offset_), name=name)
    return from_highs_lp(plp, name=name)


def _result(problem: Problem, status: Status, message: str, measured, settings: Settings, iterations: int,
            seconds: dict) -> SolveResult:
    """A complete SolveResult in original space from ``measured`` = :func:`original_kkt`'s output. Its state
    carries no primal weight: none was measured on the original LP (a reduced run's belongs to another
    scaled space)."""
    x, y = measured[1], measured[2]
    return measured_result(problem, measured, status, _user_limit(status, message, settings), settings.tol,
                           iterations, seconds, SolverState(x=x.copy(), y=y.copy(), step_size=math.nan,
                                                            primal_weight=math.nan, iterations=iterations),
                           warm_started=False)


class _OriginalJudge:
    """``accept`` callback of the reduced PDHG run (``solver.lp.pdhg.solve``): postsolves each point that
    meets the tolerance in the reduced space and measures it on the original LP (:func:`original_kkt`).

    Postsolve can amplify a reduced-space residual (a doubleton substitution scales a row's error by its
    coefficient ratio: 86x on share1b's primal residual at 1e-4). Judging in the original space while the
    run is still going lets it continue with that measure's target tightened (``solver.lp.pdhg``), which
    costs far fewer iterations than a polish of the larger original LP from the postsolved point (tol
    1e-4: share1b 18,262 -> 11,084 iterations in all, maros 59,421 -> 23,182). A point that misses is
    also tried after ONE PDHG step on the original LP (a polish with no iteration budget): that step
    recovers the reduced costs the postsolve left inconsistent, which alone fixes a missed gap (agg,
    scagr7, capri at 1e-4); when it passes, ``polished`` holds that solve's result.
    ``last`` = (x_reduced, y_reduced, original_kkt output) of the latest point judged.
    """

    def __init__(self, h: Highs, reduced: Problem, problem: Problem, settings: Settings, t_start: float):
        self.h, self.q, self.problem, self.s, self.t_start = h, reduced, problem, settings, t_start
        self.last = None
        self.polished = None

    def __call__(self, x: np.ndarray, y: np.ndarray):
        q, s = self.q, self.s
        ax, aty = np.empty(q.n_rows), np.empty(q.n_cols)
        kernels.spmv_csc(q.a_indptr, q.a_indices, q.a_data, x, ax)
        kernels.spmv_csc_t(q.a_indptr, q.a_indices, q.a_data, y, aty)
        if not _hb().postsolve(self.h, _hb().new_solution(x, q.cost - aty, ax, y)):
            return None  # the caller's own postsolve reports the failure
        out = self.h.getSolution()
        if len(out.col_value) != self.problem.n_cols or len(out.row_dual) != self.problem.n_rows:
            return None
        measured = original_kkt(self.problem, np.asarray(out.col_value, dtype=np.float64),
                                np.asarray(out.row_dual, dtype=np.float64), s.tol)
        self.last = (x.copy(), y.copy(), measured)
        kkt = measured[0]
        if kkt.converged(s.tol):
            return None
        with progress_callback(None):  # a side computation: the progress line stays on the reduced run
            step = pdhg_solve(self.problem, replace(s, iteration_limit=0,
                                                    time_limit_seconds=max(_remaining(s, self.t_start), 0.0)),
                              warm_start=(measured[1], measured[2], None))
        # the step's own OPTIMAL uses PDHG's prox-step reduced cost, which one step from a rejected point
        # can leave far from c - A'y (bell5's relaxation at 1e-6: gap 5.5e-7 by it, 1.8e-4 by the measure
        # that rejected the point): it passes only if it passes the same original-space measure
        if step.status == Status.OPTIMAL and original_kkt(self.problem, step.x, step.y, s.tol)[0].converged(s.tol):
            self.polished = step
            return None
        return kkt.primal_measure(s.tol), kkt.dual_residual_rel, kkt.gap_rel


def solve_pdhg(problem: Problem, settings: Settings, warm_start=None) -> SolveResult:
    """Restarted PDHG through HiGHS presolve/postsolve when :func:`presolve_applies`, else directly
    (:func:`solver.lp.pdhg.solve`): the PDHG half of :func:`solver.lp.dispatch.solve`, and the cold run
    the ALM hands a run it cannot finish to (so neither imports the other). Same arguments, result and
    errors as :func:`solver.lp.dispatch.solve`."""
    if presolve_applies(problem, settings, warm_start):
        return solve_with_presolve(problem, settings, warm_start)
    return pdhg_solve(problem, settings, warm_start)


def solve_with_presolve(problem: Problem, settings: Settings, warm_start=None) -> SolveResult:
    """Solve the LP (integrality ignored) of ``problem`` via HiGHS presolve, PDHG and HiGHS postsolve.

    Args:
        problem: the model (n columns, m rows), any HiGHS form.
        settings: tolerances and limits; ``time_limit_seconds`` covers presolve, the reduced solve,
            postsolve and polish together; ``iteration_limit`` covers reduced + polish iterations.
        warm_start: only reached with ``presolve="on"``: the reduced LP starts cold (``result.message``
            says the warm start was ignored, ``warm_started`` is False); when presolve removes nothing or
            fails, the original LP is solved from this warm start.
    Returns:
        SolveResult in original units and sense: x (n,), y (m,), reduced costs, row activity,
        objective, dual objective and relative residuals recomputed on the original LP;
        ``iterations`` = reduced + polish iterations; ``seconds`` has ``presolve`` (HiGHS presolve incl.
        model transfer), ``reduced_solve``, ``postsolve``, ``polish``, ``iterate``, ``solve``, ``total``;
        ``state`` = original-space x, y; its primal weight is the polish's, or nan when no polish ran
        (the reduced LP's weight means nothing for the original LP). OPTIMAL only when the original-space
        relative KKT criteria hold within ``settings.tol``.
    Raises:
        Nothing for infeasible/unbounded models (see ``result.status``).
    """
    t_start = time.perf_counter()
    with _presolve_instance(settings.time_limit_seconds) as h:
        return _solve_presolved(problem, settings, warm_start, h, t_start)


_INSTANCES = threading.local()


@contextmanager
def _presolve_instance(time_limit_seconds: float):
    """A silent Highs instance for one presolve/postsolve, taken from a per-thread free list.

    Constructing a Highs costs ~130 us, a third of a whole cold solve of a 50-row LP; ``clearModel``
    leaves an instance as new (model, presolve and postsolve data) in ~2 us. An instance in use (a
    nested solve) is never shared: the list holds only returned ones.
    """
    from solver.highs_bridge import new_highs

    free = getattr(_INSTANCES, "free", None)
    if free is None:
        free = _INSTANCES.free = []
    h = free.pop() if free else new_highs()
    h.clearModel()
    # HiGHS's time limit is cumulative per instance (REFERENCES.md section 5): budget on top of its clock
    _hb().set_time_budget(h, time_limit_seconds)
    h.setOptionValue("presolve_rule_off", PRESOLVE_RULE_OFF)
    try:
        yield h
    finally:
        h.clearModel()  # drop the model's memory now, not at the next solve
        free.append(h)


# A row bound of magnitude >= FAR_ROW_BOUND (``solver.lp.scaling``) that presolve made (no row of the LP has that
# bound) sends the LP to the direct solve. HiGHS moves a column bound into rows' bounds when it fixes a column
# there: e226 with its open upper bounds written as 9.99e19 (finite: below INF_BOUND) has .VNNF2, cost 0 and -0.272
# in four <= rows, a dominated column that presolve fixes at 9.99e19 (with inf it drops it), and came back with 3
# row bounds of 2.7e19. ||b|| (1 + ||b|| is the primal residual's denominator and theta_b's, solver.lp.termination
# / scaling) was then 2.7e19: the reduced run met its primal residual at 8.8e-19 with rows 21 units off, its point
# froze at -71.86 with a gap of 1.6e-2 and it ended ITERATION_LIMIT after 1,000,000 iterations (HiGHS: -11.6389);
# without presolve it is OPTIMAL at -11.6375 in 14,542. Leaving such bounds out of ||b|| (now done everywhere,
# ``combined_bound_norm``) did not do for the reduced run: it then left the original rows off (polish
# ITERATION_LIMIT at 50,000, objective 9.9). The test is by value, not "the LP has no far row bound": one redundant
# row x0 <= 1e16 added to that e226 switched the rule off and the reduced run froze at -71.86 again.
def _far_row_bounds_made(problem: Problem, reduced: Problem) -> int:
    """How many finite row bounds of ``reduced`` (presolved LP) reach |bound| >= :data:`FAR_ROW_BOUND` with a
    value that no row bound of ``problem`` (the original LP) has (bounds presolve made, not carried over)."""

    def far(v: np.ndarray) -> np.ndarray:
        return v[np.isfinite(v) & (np.abs(v) >= FAR_ROW_BOUND)]

    made = np.r_[far(reduced.row_lower), far(reduced.row_upper)]
    if not made.size:
        return 0
    own = np.r_[far(problem.row_lower), far(problem.row_upper)]
    return int(np.count_nonzero(~np.isin(made, own)))


# A verdict of no optimum on the presolved LP of an LP with a finite bound of 1e15 or more is not taken: HiGHS
# presolve reads a bound it computes past 1e20 as infinite, so a row it moved such a bound into can vanish.
# max x + y + z, y + z - 2 x <= 1, x <= 9.99e19 (y, z open above; two more rows): presolve fixes x at 9.99e19, the
# row's bound becomes 2e20 and the row is dropped, and the presolved LP is unbounded where the LP's optimum is
# 2.997e20 (HiGHS); the run was DUAL_INFEASIBLE "(presolved LP)".
_FAR_NOTE = ("presolve may drop a row or bound it moves past 1e20 (the LP has bounds of 1e15 or more) and HiGHS did "
             "not confirm it on the LP itself: decided without presolve")


def _highs_optimum(problem: Problem, s: Settings, said: str, iterations: int, t_start: float, seconds: dict,
                   notes: list) -> SolveResult:
    """The LP's result when a verdict of no optimum through presolve (``said``) of an LP with far bounds was not
    confirmed by HiGHS on the LP itself: HiGHS's optimum (simplex on the LP, within max(1 s, the seconds so far) and
    the time left) when ``original_kkt`` accepts it, else raises _WithoutPresolve (the direct run decides).
    max x + y + z, y + z - 2x <= 1, x <= 9.99e19 (two more rows): OPTIMAL at HiGHS's 2.997e20 instead of a direct
    PDHG run that diverges to its iteration limit."""
    from solver.lp.bound_gap import highs_point

    budget = min(max(1.0, time.perf_counter() - t_start), max(_remaining(s, t_start), 0.0))
    got = highs_point(problem, s.tol, budget)
    if got is None:
        raise _WithoutPresolve(f"{said}, but {_FAR_NOTE}")
    _finish_seconds(seconds, t_start)
    msg = (f"relative KKT residuals and gap below {s.tol:g} at HiGHS's point: {said}, but presolve may drop a row "
           f"or bound it moves past 1e20 (the LP has bounds of 1e15 or more), and HiGHS (simplex, {got[3]:.2f} s) "
           "found the LP's optimum")
    return _result(problem, Status.OPTIMAL, "; ".join([msg, *notes]), got[2], s, iterations, seconds)


def _highs_agrees(problem: Problem, s: Settings, status: Status, t_start: float) -> bool:
    """True when HiGHS, run on ``problem`` itself (its own presolve, then without it), proves ``status``
    (PRIMAL_INFEASIBLE or DUAL_INFEASIBLE) within max(1 s, the seconds so far) and the time left: the presolved
    verdict of an LP with far bounds stands on that (a far LP that is really unbounded keeps DUAL_INFEASIBLE)."""
    from solver.lp.infeasibility import highs_proves_infeasible, highs_proves_unbounded

    budget = min(max(1.0, time.perf_counter() - t_start), max(_remaining(s, t_start), 0.0))
    prove = highs_proves_infeasible if status == Status.PRIMAL_INFEASIBLE else highs_proves_unbounded
    return bool(prove(problem, budget))


def _has_far_bounds(problem: Problem) -> bool:
    """True when a finite column or row bound of ``problem`` has magnitude >= :data:`FAR_ROW_BOUND` (1e15)."""
    return any(bool(np.any(np.isfinite(v) & (np.abs(v) >= FAR_ROW_BOUND)))
               for v in (problem.col_lower, problem.col_upper, problem.row_lower, problem.row_upper))


class _WithoutPresolve(Exception):  # a control-flow signal inside this module, never raised out of it
    """Presolve cannot help this LP (the message says why): :func:`_solve_presolved` solves it directly.
    ``no_optimum``: presolve proved that the LP has no optimum (infeasible or unbounded)."""

    def __init__(self, message: str, no_optimum: bool = False):
        super().__init__(message)
        self.no_optimum = no_optimum


def _solve_presolved(problem: Problem, settings: Settings, warm_start, h: Highs,
                     t_start: float) -> SolveResult:
    """Body of :func:`solve_with_presolve` on the instance ``h``: the pipeline, or a direct solve (from
    ``warm_start``) in the time left when one of its steps finds presolve of no use."""
    notes = ["presolve ignores the warm start"] if warm_start is not None else []
    seconds: dict = {}
    try:
        return _presolve_pipeline(problem, settings, h, t_start, seconds, notes)
    except _WithoutPresolve as why:
        res = _direct(problem, settings, t_start, seconds, str(why), warm_start)
        if why.no_optimum and res.status == Status.OPTIMAL:
            res = _no_optimum_settled(problem, settings, res, t_start)
        return res


def _no_optimum_settled(problem: Problem, s: Settings, res: SolveResult, t_start: float) -> SolveResult:
    """``res`` (a direct OPTIMAL run on an LP HiGHS presolve found infeasible or unbounded, an exact proof that no
    optimum exists) with HiGHS's verdict: DUAL_INFEASIBLE or PRIMAL_INFEASIBLE at the run's point when HiGHS (within
    the time left, at most max(1 s, the seconds so far)) proves one, else ``res`` unchanged. ``min -x + 0.99999 w``,
    ``x - w <= 0``, ``x, w >= 0`` (unbounded along x = w, slope -1e-5) met tol at x = w = 0 (the reduced cost -1e-5
    a dual residual of 4e-6 of ||c||) and was OPTIMAL against presolve's proof."""
    from solver.lp.infeasibility import highs_proves_infeasible, highs_proves_unbounded

    elapsed = time.perf_counter() - t_start
    budget = min(max(1.0, elapsed), max(_remaining(s, t_start), 0.0))
    if highs_proves_unbounded(problem, budget):
        status, what = Status.DUAL_INFEASIBLE, "HiGHS proved the objective unbounded"
    elif highs_proves_infeasible(problem, min(budget, max(_remaining(s, t_start), 0.0))):
        status, what = Status.PRIMAL_INFEASIBLE, "HiGHS proved that no feasible point exists"
    else:
        return res
    res.status = status
    res.message = (f"{what}: the point PDHG stopped at (objective {res.objective:.10g}) met tol {s.tol:g}, but "
                   f"presolve had found the LP infeasible or unbounded; {res.message}")
    res.seconds["solve"] = res.seconds["total"] = time.perf_counter() - t_start
    return res


def _presolve_pipeline(problem: Problem, s: Settings, h: Highs, t_start: float, seconds: dict,
                       notes: list) -> SolveResult:
    """Presolve, the reduced solve, postsolve and the original-space measure, the polish when the point
    misses there, result assembly (module docstring, steps 1-4). Raises _WithoutPresolve."""
    left, cost = _remaining(s, t_start), presolve_seconds_estimate(problem)
    if left < cost:
        seconds["presolve"] = 0.0
        raise _WithoutPresolve(f"the time left ({max(left, 0.0):.3g} s) is less than HiGHS presolve's estimated "
                               f"{cost:.3g} s on {problem.nnz:,} nonzeros, and presolve does not stop at a time limit: "
                               "solved without it")
    pstat = _presolve(h, problem, t_start, seconds)
    _PS = _hb().PresolveStatus
    far = _has_far_bounds(problem)
    if pstat == _PS.kInfeasible and far and not _highs_agrees(problem, s, Status.PRIMAL_INFEASIBLE, t_start):
        return _highs_optimum(problem, s, "presolve found the LP infeasible", 0, t_start, seconds, notes)
    if pstat == _PS.kInfeasible:
        return _presolve_infeasible(problem, s, t_start, seconds, notes)
    if pstat != _PS.kReduced and pstat != _PS.kReducedToEmpty:
        why = {_PS.kNotReduced: "presolve removed nothing", _PS.kTimeout: "presolve hit the time limit",
               _PS.kUnboundedOrInfeasible: "presolve found the LP infeasible or unbounded (which one is "
                                           "decided without presolve)"}.get(pstat, f"presolve failed ({pstat.name})")
        raise _WithoutPresolve(f"{why}: solved without it", no_optimum=pstat == _PS.kUnboundedOrInfeasible)
    red = judged = None
    iterations, status, msg = 0, Status.OPTIMAL, "HiGHS presolve solved the LP"
    iterate = 0.0
    if pstat == _PS.kReduced:
        red, judged = _solve_reduced(h, problem, s, t_start, seconds)
        iterations, status, msg = red.iterations, red.status, red.message
        if far and status in (Status.PRIMAL_INFEASIBLE, Status.DUAL_INFEASIBLE) \
                and not _highs_agrees(problem, s, status, t_start):
            word = "infeasible" if status == Status.PRIMAL_INFEASIBLE else "unbounded"
            return _highs_optimum(problem, s, f"the presolved LP is {word}", iterations, t_start, seconds, notes)
        iterate = red.seconds.get("iterate", 0.0)
    else:
        seconds["reduced_solve"] = 0.0
        if s.verbose:
            print(f"HiGHS presolve: {problem.n_rows}x{problem.n_cols} -> empty", file=sys.stderr)
    measured, polished = _postsolve_and_measure(h, problem, red, judged, seconds, s.tol)
    x, y = measured[1], measured[2]
    kkt = measured[0]
    seconds["polish"] = 0.0
    if polished is not None:  # the judge's one PDHG step on the original LP made the point pass
        seconds["polish"] = polished.seconds["total"]
        seconds["reduced_solve"] -= seconds["polish"]
    elif status == Status.OPTIMAL and not kkt.converged(s.tol):  # a budget ran out before the polish
        status = Status.TIME_LIMIT if _remaining(s, t_start) <= 0 else Status.ITERATION_LIMIT
        msg = "postsolved point misses the tolerance in the original space and no budget is left to polish it"
    if polished is None and kkt.converged(s.tol) and status in (Status.OPTIMAL, Status.ITERATION_LIMIT,
                                                                Status.TIME_LIMIT):
        seconds["iterate"] = iterate
        _finish_seconds(seconds, t_start)
        msg = (f"relative KKT residuals and gap below {s.tol:g} in the original space after HiGHS "
               f"presolve/postsolve")
        res = _result(problem, Status.OPTIMAL, "; ".join([msg, *notes]), measured, s, iterations, seconds)
        if red is None:  # reduced to empty: postsolve of the empty solution, no engine iterated
            res.engine = PRESOLVE_ENGINE
        return res
    left_t, left_it = _remaining(s, t_start), s.iteration_limit - iterations
    if polished is None and status not in (Status.PRIMAL_INFEASIBLE, Status.DUAL_INFEASIBLE) and left_t > 0 \
            and left_it > 0:
        polished = _polish(problem, s, x, y, iterations, left_t, left_it, seconds)
    if polished is not None:
        return _polished_result(polished, s, iterations, iterate, t_start, seconds, notes)
    seconds["iterate"] = iterate
    _finish_seconds(seconds, t_start)
    return _result(problem, status, "; ".join([f"{msg} (presolved LP)", *notes]), measured, s, iterations,
                   seconds)


#: Seconds of HiGHS presolve (model transfer included) per nonzero, an upper estimate: ``Highs.presolve()`` does not
#: stop at its time limit (TE Cogentco, 956k nonzeros: 0.95-1.11 s whether the limit was 0.01 s, 0.2 s or none), so
#: ``copter solve --time-limit 0.5`` ended TIME_LIMIT after 2.0-2.1 s (helper-241). Measured on this 2-core machine:
#: 0.6-1.1 us per nonzero on the shared LPs above 9k nonzeros and on Cogentco, up to 5 us on LPs of 1-2k nonzeros
#: (milliseconds). A cold solve whose time left is below :func:`presolve_seconds_estimate` solves without presolve:
#: restarted PDHG checks the limit as it goes.
PRESOLVE_SECONDS_PER_NONZERO = 2e-6
PRESOLVE_SECONDS_FIXED = 0.005  #: ... plus this much for any LP (the instance, the transfer of small models)


def presolve_seconds_estimate(problem: Problem) -> float:
    """An upper estimate (seconds) of HiGHS presolve on ``problem``: :data:`PRESOLVE_SECONDS_FIXED` +
    :data:`PRESOLVE_SECONDS_PER_NONZERO` x its nonzeros."""
    return PRESOLVE_SECONDS_FIXED + PRESOLVE_SECONDS_PER_NONZERO * problem.nnz


def _presolve(h: Highs, problem: Problem, t_start: float, seconds: dict):
    """Pass the LP (integrality dropped) to ``h`` and presolve it; fills ``seconds["presolve"]`` (model
    transfer included) and returns HiGHS's presolve status."""
    from solver.highs_bridge import to_highs_lp

    if not _hb().pass_problem(h, problem):
        h.passModel(to_highs_lp(problem, with_names=False, relax=True))
    h.presolve()
    pstat = h.getModelPresolveStatus()
    seconds["presolve"] = time.perf_counter() - t_start
    return pstat


def _presolve_infeasible(problem: Problem, s: Settings, t_start: float, seconds: dict,
                         notes: list) -> SolveResult:
    """PRIMAL_INFEASIBLE on presolve's proof, measured at the box projection of 0 and y = 0; its ``engine`` is
    :data:`PRESOLVE_ENGINE` (no engine iterated)."""
    seconds["reduced_solve"] = seconds["postsolve"] = seconds["polish"] = seconds["iterate"] = 0.0
    _finish_seconds(seconds, t_start)
    x0 = np.minimum(np.maximum(0.0, problem.col_lower), problem.col_upper)
    res = _result(problem, Status.PRIMAL_INFEASIBLE, "; ".join(
        ["HiGHS presolve proved that no feasible point exists", *notes]),
        original_kkt(problem, x0, np.zeros(problem.n_rows), s.tol), s, 0, seconds)
    res.engine = PRESOLVE_ENGINE
    return res


def _solve_reduced(h: Highs, problem: Problem, s: Settings, t_start: float, seconds: dict) -> tuple:
    """PDHG on the presolved LP, each point judged in the original space (:class:`_OriginalJudge`); fills
    ``seconds["reduced_solve"]``. Returns (the reduced result, the judge). Raises _WithoutPresolve when our
    Problem refuses the reduced LP or PDHG fails on it."""
    try:
        q = _presolved_problem(h.getPresolvedLp(), problem.name)
    except CopterError as exc:  # a reduced LP our Problem refuses: do without presolve
        raise _WithoutPresolve(f"presolved LP unusable ({exc}): solved without it") from exc
    far = _far_row_bounds_made(problem, q)
    if far:
        raise _WithoutPresolve(f"presolved LP has {far} row bound(s) of magnitude >= {FAR_ROW_BOUND:g} that no "
                               "row of the LP has: solved without presolve")
    judged = _OriginalJudge(h, q, problem, s, t_start)
    # the gap leaves out the model's own constant only: the rest of q's offset is the removed columns' cost
    red = pdhg_solve(q, replace(s, time_limit_seconds=max(_remaining(s, t_start), 0.0)), accept=judged,
                     objective_constant=problem.offset)
    # the reduced run's primal weight belongs to the reduced LP's scaled space: a warm start of the
    # original LP must not reuse it (Sia 1,024 round 1: 4,809 warm iterations with it, 2,951 without)
    seconds["reduced_solve"] = red.seconds["total"]
    if s.verbose:
        print(f"HiGHS presolve: {problem.n_rows}x{problem.n_cols} -> {q.n_rows}x{q.n_cols}, "
              f"reduced LP {red.status.name} after {red.iterations} iterations", file=sys.stderr)
    if red.status == Status.NUMERICAL_ERROR:
        raise _WithoutPresolve("PDHG failed on the presolved LP: solved without presolve")
    return red, judged


def _postsolve_and_measure(h: Highs, problem: Problem, red, judged, seconds: dict, tol: float) -> tuple:
    """The original-space point and its :func:`original_kkt` measure (at ``tol``): the judge's, when the reduced run
    stopped at the point it judged last, else HiGHS postsolve of the reduced point (``red`` None: of the
    empty solution). Fills ``seconds["postsolve"]``. Returns (measured, the judge's polished result or
    None). Raises _WithoutPresolve when postsolve fails."""
    t = time.perf_counter()
    polished = None
    if red is not None and judged.last is not None and np.array_equal(judged.last[0], red.x) \
            and np.array_equal(judged.last[1], red.y):
        measured = judged.last[2]  # the point the run stopped at was postsolved and measured already
        polished = judged.polished if red.status == Status.OPTIMAL else None
    else:
        if red is None:
            sol = _hb().new_solution(None, None, None, None)  # values and duals marked valid
        else:
            sol = _hb().new_solution(red.x, red.reduced_cost, red.row_activity, red.y)
        ok = _hb().postsolve(h, sol)
        out = h.getSolution() if ok else None
        if out is None or len(out.col_value) != problem.n_cols or len(out.row_dual) != problem.n_rows:
            seconds["postsolve"] = time.perf_counter() - t
            raise _WithoutPresolve("HiGHS postsolve failed: solved without presolve")
        measured = original_kkt(problem, np.asarray(out.col_value, dtype=np.float64),
                                np.asarray(out.row_dual, dtype=np.float64), tol)
    seconds["postsolve"] = time.perf_counter() - t
    return measured, polished


def _polish(problem: Problem, s: Settings, x: np.ndarray, y: np.ndarray, iterations: int, left_t: float,
            left_it: int, seconds: dict) -> SolveResult:
    """Warm-started PDHG on the original LP from the postsolved point (x (n,), y (m,)) within the budget
    left; its progress continues the reduced run's count. Fills ``seconds["polish"]``."""
    t = time.perf_counter()
    outer = current_progress_callback()  # the polish's progress continues the count of the reduced run
    shifted = None if outer is None else (lambda info: outer({**info, "iteration": info["iteration"] + iterations}))
    with progress_callback(shifted):
        polished = pdhg_solve(problem, replace(s, time_limit_seconds=max(left_t, 0.0),
                                               iteration_limit=max(left_it, 0)),
                              warm_start=(x, y, None))
    seconds["polish"] = time.perf_counter() - t
    return polished


def _polished_result(pol: SolveResult, s: Settings, iterations: int, iterate: float, t_start: float,
                     seconds: dict, notes: list) -> SolveResult:
    """The polish's result as the whole solve's: iterations and seconds of both runs, not warm-started."""
    seconds["iterate"] = iterate + pol.seconds.get("iterate", 0.0)
    _finish_seconds(seconds, t_start)
    pol.iterations += iterations
    pol.state.iterations = pol.iterations
    pol.seconds = seconds
    pol.warm_started = False
    pol.message = "; ".join([f"{_user_limit(pol.status, pol.message, s)} (polished on the original LP from "
                             f"the postsolved point, {pol.iterations - iterations} of {pol.iterations} "
                             f"iterations)", *notes])
    return pol
