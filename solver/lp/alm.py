"""Proximal augmented Lagrangian (proximal method of multipliers) for LPs in HiGHS form: the warm engine.

Problem (minimisation form, ``solver.lp.pdhg``'s sign conventions)::

    min c'x   s.t.   A x - s = 0,   lv <= x <= uv,   lc <= s <= uc

Outer loop (Rockafellar's proximal method of multipliers, "Augmented Lagrangians and applications of the
proximal point algorithm in convex programming", Math. Oper. Res. 1(2), 1976; the LP instance of SNIPAL,
Li, Sun & Toh, SIAM J. Optim. 30(3), 2020): with multiplier y and proximal centre (xbar, sbar),

    (x+, s+) ~ argmin_{x in [lv,uv], s in [lc,uc]}  c'x - y'(A x - s) + sigma/2 ||A x - s||^2
                                                    + ||x - xbar||^2 / (2 tau) + ||s - sbar||^2 / (2 tau)
    y+ = y - sigma (A x+ - s+),   (xbar, sbar) <- (x+, s+).

Each step is solved through its dual, an unconstrained strongly convex piecewise quadratic in the new
multiplier, by semismooth Newton with CG on the active columns (``solver.lp.alm_newton``), to a relative
error ||grad|| <= ``inner_rel`` ||A x - s|| (the relative inexactness of Eckstein & Silva, Math. Program.
141, 2013, in its gradient form) or an absolute floor of ``inner_floor`` tol (1 + ||b~||). This is the
proximal point method on the LP's saddle operator with steps (tau, sigma) = (eta / omega, eta omega):
eta plays the role of PDHG's step and omega of its primal weight, except that the step is implicit, so
any eta > 0 converges and a large eta converges in few outer steps (finite termination on LPs: Rockafellar
1976; Güler, SIAM J. Control Optim. 29(2), 1991). After an outer step whose inner solve met its target,
omega balances the step's own relative residuals, primal ||A x+ - s+|| / (1 + ||b~||) against dual
||(x+, s+) - (xbar, sbar)|| / (tau (1 + ||c~||)) (residual balancing as in He, Yang & Wang, J. Optim. Theory
Appl. 106, 2000): a ratio above ``weight_balance`` multiplies or divides omega by ``weight_factor``; when the
residuals were balanced and the step was slow (its worst relative KKT measure above ``progress_ratio`` times
the previous step's, or the start's), or when the measure did not fall at all, eta grows by ``step_growth``
(SNIPAL section 5 increases sigma when the KKT residuals do not fall fast enough). After a step whose Newton
solve stalled eta shrinks by ``step_growth`` and omega is left alone.

Why eta grows only after slow progress (measured on the TE default ring's warm rounds, 624 x 1,440, every
demand +-10%, tol 1e-4, ``bench/bench_warm.py``'s chain): eta grew 4x after every step (83, 331, 1,324), and
the Newton solves at 331 and 1,324 cost 450-610 CG iterations each against 165 at 83, with their first
steps cut to 2.4e-4-2e-3 by the line search. The cause is the generalised Hessian's near null space
(``solver.lp.alm_newton``): its smallest curvature is 1/sigma = 1/(eta omega), its largest ~ tau = eta /
omega, so CG work and the overshoot of the Newton step grow with eta^2, while the outer steps at eta 83
still cut the KKT error 1.5-5x each. Matrix passes per warm round (12 rounds, each from the previous ALM
round's state): 1,363-6,129 -> 737-2,018 (median against a cold PDHG solve 1.58 -> 0.65), Newton steps 32-65 ->
27-58, of them at unit length 48-62% -> 67-96% (with ``solver.lp.alm_newton``'s CG forcing term). Sia 1,024-GPU
rounds, which start at eta 2-5 and need the growth: 568-1,680 -> 553-1,217 passes (5 rounds); Cogentco TE
rounds stay one outer step. Growth 4 under the same rule made as many passes as 2 or up to 46% more (ring,
rounds 1-5).

The problem is scaled first exactly as for PDHG (``solver.lp.scaling``: Ruiz, Pock-Chambolle,
theta_b / theta_c; the matrix part cached across rounds that keep the matrix, ``solver.lp.alm_scaling``); termination uses the relative KKT measures of the ORIGINAL problem on the unscaled
point (``solver.lp.original_kkt.original_kkt``, the formulas of ``solver.lp.termination``) after every
outer step.

Warm start: the previous round's (x, y) become the proximal centre and the first multiplier (sbar = the
row activity of x projected onto the row bounds); a start that already meets tol is returned at once,
otherwise the first step grows with the start's closeness (``ALMParameters.warm_scale``): the closer the
start, the longer the first proximal step and the fewer outer steps (the first Newton solve starts from y too, the
later ones from the multiplier extrapolated along the last step: ``ALMParameters.extrapolate``).

Certificates: the ALM does not build infeasibility rays itself. Empty boxes, empty rows and empty
columns are decided before iterating (``solver.lp.trivial``); a run whose KKT error stops improving for
``stall_outer`` outer steps, whose multipliers diverge, or whose Newton solve fails hands the problem,
with the time left, to the cold PDHG path (``solver.lp.presolve.solve_pdhg``: presolve + restarted PDHG), which certifies
PRIMAL_INFEASIBLE / DUAL_INFEASIBLE through its rays (or HiGHS's proof); the result's message says so.
"""

from __future__ import annotations

import math
import sys
import time
from dataclasses import dataclass, replace

import numpy as np

from solver.lp.alm_kernels import csc_matvec, diff_norm, dot, primal_screen
from solver.lp.alm_newton import Subproblem, Workspace, newton_solve
from solver.lp.alm_scaling import coupling_rows_of, note_coupling_rows, scale_for_alm
from solver.lp.alm_schur import schur_system
from solver.lp.original_kkt import original_kkt
from solver.lp.pdhg import parse_warm_start, scaling_trouble
from solver.lp.presolve import solve_pdhg as pdhg_solve  # the cold PDHG path: HiGHS presolve + PDHG
from solver.lp.scaling import combined_bound_norm
from solver.lp.termination import row_absmax, row_tolerance
from solver.lp.trivial import drop_empty, reduce_trivial
from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status

#: :meth:`_Run._screen` skips the full KKT test of a Newton iterate only when a primal measure exceeds its
#: tolerance by this factor: the screen and the test differ by round-off only, and a skipped test that would
#: have passed costs one more Newton step, never a wrong answer (the outer loop measures every point it keeps)
SCREEN_MARGIN = 1.1

#: The first proximal step of a warm run is meant to finish the round in one outer step. When it ends above tol
#: but within WARM_NEAR_MISS x tol, the next outer step costs as much as the first or more: its Newton directions
#: move rows clipped at their bound, whose curvature the generalised Hessian does not see, and the line search
#: creeps (docs/performance.md, "Why part 3 of round 3 takes two outer steps"). :func:`next_warm_scale` then
#: multiplies the stream's ``warm_scale`` by WARM_SCALE_GROWTH for the next round (at most WARM_SCALE_MAX), and
#: after every run that ended in one outer step lets it decay by WARM_SCALE_DECAY toward the default, so a stream
#: keeps the longer first step only while it keeps missing. Measured on TE Kdl K = 4 (rounds 3 and 4, the four
#: parts replayed in-process): at warm_scale 0.5, 5 of 8 part solves took two outer steps (their first ended at
#: 1.00-1.08 x tol) and the slowest part took 2.32 / 2.44 s; at 1.0 all 8 took one (1.85 / 1.97 s).
WARM_NEAR_MISS = 2.0
WARM_SCALE_GROWTH = 2.0
WARM_SCALE_DECAY = 0.9
WARM_SCALE_MAX = 2.0


@dataclass
class ALMParameters:
    """Tuning of :func:`solve_alm` (scaled space, where ||A~||_2 <= 1 and eta = 1 is neutral).

    Attributes:
        step_cold: first proximal step eta of a cold solve.
        step_warm, warm_scale: a warm-started solve starts at eta = warm_scale / e, e the warm point's worst
            relative KKT measure on the new problem, clipped to [step_cold, step_warm]: a close start takes
            one long proximal step, a far one (Sia: e ~ 0.2 after a round's arrivals; LB: e ~ 1) starts
            like a cold solve. Measured (2-core machine): Cogentco TE round (e = 5e-4) 0.9 s at eta 1e3
            against 7.1 s at 1e2; a Sia 1,024-GPU round 0.18 s at eta 1 against 2.5 s at 1e3. The default is
            the start of a stream: ``solver.lp.dispatch`` passes the stream's own (:func:`next_warm_scale`).
        step_growth: eta is multiplied by this after an outer step whose inner solve met its target, whose
            residuals were balanced (omega unchanged) and whose KKT progress was slow (``progress_ratio``), or
            whose worst KKT measure did not fall at all; divided by it after a step whose Newton solve stalled.
        progress_ratio: an outer step whose worst relative KKT measure is above this multiple of the previous
            step's (the first step: of the start's) made slow progress (module docstring).
        step_max: cap of eta (beyond it the Newton systems' conditioning, ~ eta^2, costs more CG work
            than the outer steps it saves).
        weight_balance, weight_factor: omega (sigma = eta omega, tau = eta / omega) is multiplied by
            ``weight_factor`` when the step's relative primal residual exceeds ``weight_balance`` times its
            dual one, divided by it in the opposite case (module docstring).
        inner_rel: relative inexactness of an inner solve (||grad Psi|| <= inner_rel ||A x - s||).
        inner_floor: absolute inexactness, as a fraction of tol (1 + ||b~||_2) in scaled units.
        check_within: once the worst relative KKT measure is within this factor of tol (and from the first
            step of a warm start), the original-space KKT test runs after every Newton step, not only
            after every outer step, so a solve stops as soon as a Newton iterate meets tol.
        newton_max: Newton steps per inner solve at most. cg_max: CG iterations per Newton step at most.
        direct_max, direct_passes: the Newton directions come from block elimination with a dense Cholesky
            factor of the coupling rows' Schur complement (``solver.lp.alm_schur``) when there are at most
            ``direct_max`` coupling rows (S takes 8 direct_max^2 bytes) and the factorisation is charged at
            most ``direct_passes`` matrix passes (``alm_schur.factor_passes``: a Jacobi-PCG Newton step took
            100-250 CG iterations, each a pass, on the TE rounds); else (and when the factor fails) from
            Jacobi-preconditioned CG. direct_max 0: always CG.
        stall_outer: outer steps without halving the worst relative KKT measure before PDHG takes over.
        extrapolate: the Newton solve of every outer step after the first starts from y + extrapolate (y - y_prev),
            y the step's multiplier and y_prev the one before it, instead of from y (the step's problem and its
            solution are unchanged: only the inner solve's start moves; 0: from y). Successive proximal steps on
            an LP move the multiplier along nearly the same direction, and a Newton solve started at y first moves
            rows clipped at their bound whose curvature its model misses (docs/performance.md). Measured (Newton
            steps / matrix passes, warm rounds): TE Kdl K = 4 parts that took two outer steps (5 replayed) 71 ->
            58 Newton steps at 0.5 (62 at 1.0); ``bench/bench_alm.py --workloads te-ring sia --rounds 6``: ring 901
            -> 871 passes, Sia 1,024 GPUs 2,528 -> 2,214 at 0.5 (875 and 2,558 at 1.0).
        handover: hand a stalled or diverging run to PDHG (False: stop with NUMERICAL_ERROR instead).
        work_limit: matrix passes (``solver.lp.alm_newton``: a Psi evaluation is two, a CG iteration one) the
            run may make; past it the run stops as a stalled one does (``handover``). A count, not seconds,
            so the same round gives the same point on a loaded machine and in a fresh worker process
            (``solver.lp.engine_choice`` sets it from the previous cold solve's passes).
    """

    step_cold: float = 1.0
    step_warm: float = 1000.0
    warm_scale: float = 0.5
    step_growth: float = 2.0
    progress_ratio: float = 0.7
    step_max: float = 1e6
    weight_balance: float = 3.0
    weight_factor: float = 2.0
    inner_rel: float = 0.2
    inner_floor: float = 0.01
    check_within: float = 100.0
    newton_max: int = 50
    cg_max: int = 500
    direct_max: int = 4000
    direct_passes: int = 100
    stall_outer: int = 30
    extrapolate: float = 0.5
    handover: bool = True
    work_limit: float = math.inf


LOG_HEADER = (f"{'outer':>6} {'newton':>7} {'cg':>7} {'time':>8} {'primal obj':>15} {'dual obj':>15} "
              f"{'rel p res':>9} {'rel d res':>9} {'rel gap':>9} {'eta':>9} {'omega':>9}")


def solve_alm(problem: Problem, settings: Settings | None = None, warm_start=None,
              params: ALMParameters | None = None) -> SolveResult:
    """Solve the LP (relaxation, integrality ignored) of ``problem`` with the proximal ALM (module docstring).

    Args:
        problem: the model in HiGHS form (ranged/equality/free rows, boxed/free/fixed columns, min or max,
            objective constant, empty rows/columns).
        settings: ``tol`` (relative KKT, original units, same measures as PDHG), ``time_limit_seconds``
            (checked between Newton steps), ``iteration_limit`` (outer steps), ``verbose`` (one log line
            per outer step on stderr), the scaling options; defaults if None.
        warm_start: None (cold), a SolverState, or a tuple (x (n,), y (m,)[, state]) in original units and
            this problem's index order (map a previous round's state by name with
            ``solver.differential.map_state``). A start of the wrong length or with NaN is refused: the
            solve runs cold and ``result.message`` says why.
        params: engine tuning (:class:`ALMParameters`); defaults if None.
    Returns:
        SolveResult in original units and the problem's sense: status OPTIMAL when the relative primal
        residual, dual residual and gap are all <= tol; TIME_LIMIT / ITERATION_LIMIT with the last point;
        PRIMAL_INFEASIBLE for an empty box or an empty row excluding 0; otherwise (stall, divergence) the
        result of PDHG on the same problem with the time left (see the module docstring), whose
        ``message`` starts with "ALM handed over to PDHG" (with ``params.handover`` False: NUMERICAL_ERROR,
        message "ALM stopped: ..."). ``iterations`` counts outer steps; the message ends with the Newton-step
        (and unit-step: accepted at length 1), CG-iteration and matrix-pass totals. ``seconds`` has setup,
        iterate, solve, total. ``state`` holds x, y (step size and primal weight nan: they are PDHG's).
    Raises:
        ValidationError only if ``problem`` breaks its invariants (it is not modified).
    """
    return solve_alm_measured(problem, settings, warm_start, params)[0]


def solve_alm_measured(problem: Problem, settings: Settings | None = None, warm_start=None,
                       params: ALMParameters | None = None, start_kkt=None) -> tuple[SolveResult, tuple | None]:
    """:func:`solve_alm` and ``original_kkt``'s output (at ``settings.tol``) for the returned point's x and y, the
    measure :func:`solver.lp.bound_gap.judged` would otherwise take again (TE Kdl: a 0.14 s pass a round), or None
    when the run handed over to PDHG. ``start_kkt``: the ``original_kkt`` KKT of ``warm_start``'s point on
    ``problem`` at ``settings.tol`` when the caller measured it (``solver.lp.engine_choice.Choice.warm_point_kkt``):
    the run takes it as its start's measure instead of a pass over the matrix, unless the trivial reductions
    dropped a row or column (then the start differs). Raises as :func:`solve_alm`."""
    t0 = time.perf_counter()
    s = settings or Settings()
    prm = params or ALMParameters()
    n, m = problem.n_cols, problem.n_rows
    ws_in, ws_msg = parse_warm_start(warm_start, n, m)
    red = reduce_trivial(int(problem.sense) * problem.cost, problem.col_lower, problem.col_upper,
                         problem.row_lower, problem.row_upper, problem.a_indptr, problem.a_indices,
                         problem.col_names, problem.row_names)
    warm = ws_in is not None
    if red.infeasible_message:
        x_full = np.minimum(np.maximum(0.0, problem.col_lower), problem.col_upper)
        x_full = np.where(np.isfinite(x_full), x_full, 0.0)
        return _result(problem, s, Status.PRIMAL_INFEASIBLE, red.infeasible_message, x_full, np.zeros(m),
                       0, {}, t0, warm, ws_msg)
    run = _Run(problem, s, prm, red, t0)
    if red.keep_cols.size:
        run.start(ws_in, start_kkt)
        run.iterate()
        if run.handover:
            if not prm.handover:
                run.status, run.message = Status.NUMERICAL_ERROR, f"ALM stopped: {run.handover}"
            else:
                return _hand_over(problem, s, warm_start, run.handover, run.outer, run.newton_total,
                                  run.cg_total, run.seconds, t0), None
    status, message = run.status, run.message
    if red.unbounded_col >= 0 and status == Status.OPTIMAL:
        status = Status.DUAL_INFEASIBLE
        message = (f"variable {problem.col_names[red.unbounded_col]!r} appears in no constraint and its cost "
                   f"improves without bound in a direction it has no bound")
    message += (f" ({run.outer} outer steps, {run.newton_total} Newton steps, {run.unit_total} of them unit steps, "
                f"{run.direct_total} of them direct, {run.cg_total} CG iterations, "
                f"{run.passes} matrix passes"
                f"{run.start_note})")
    first = {"first_kkt": run.first_kkt, "warm_scale": prm.warm_scale} if run.warm else {}
    return _result(problem, s, status, message, run.x_full, run.y_min_full, run.outer, run.seconds, t0, warm,
                   ws_msg, run.passes, first, run.measured)


class _Run:
    """One ALM run on the reduced, scaled problem (internal to :func:`solve_alm`): :meth:`start` (scaling,
    start point, the warm start's KKT test and first step), :meth:`iterate` (outer steps: :meth:`outer_step`
    then :meth:`verdict`). It leaves the original-space point in ``x_full`` (n,), ``y_min_full`` (m,,
    minimisation form), and ``status``/``message`` or ``handover`` (why PDHG should take over)."""

    def __init__(self, problem: Problem, s: Settings, prm: ALMParameters, red, t0: float):
        self.problem, self.s, self.prm, self.t0 = problem, s, prm, t0
        self.sense = int(problem.sense)
        self.kc, self.kr = red.keep_cols, red.keep_rows
        self.x_full = red.x_fixed.copy()
        self.y_min_full = np.zeros(problem.n_rows)
        self.seconds: dict = {}
        self.outer = self.newton_total = self.unit_total = self.direct_total = self.cg_total = self.passes = 0
        self.status, self.message = Status.OPTIMAL, "every column is empty: solved analytically"
        self.start_note, self.handover, self.already, self.warm = "", "", False, False
        self.last: list = []  # the KKT of the Newton iterate that ``done`` accepted
        self.first_kkt = math.nan  # the worst relative KKT measure after the first outer step (next_warm_scale)
        self.y_prev = None  # (m~,) the multiplier of the outer step before (ALMParameters.extrapolate)
        self.screen_rows = None  # (lo, hi, floor, 1 + ||b||) of the kept rows: :meth:`_screen`, built once
        #: ``original_kkt``'s output for (x_full, y_min_full) as they are (only :meth:`measure` writes them), or
        #: None before the first measure: the result reuses it instead of a pass over the matrix
        self.measured = None

    def start(self, ws_in, start_kkt=None) -> None:
        """Scale the reduced problem (``solver.lp.alm_scaling``), set the proximal centre, multiplier and
        first step (cold: eta = step_cold; warm: ``warm_scale`` / the start's KKT error, or stop at once when
        the start meets tol). ``start_kkt``: :func:`solve_alm_measured`'s."""
        p, s, prm, kc, kr = self.problem, self.s, self.prm, self.kc, self.kr
        cp, ci, cv = drop_empty(p, kr, kc)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):  # reported by scaling_trouble
            sc = self.sc = scale_for_alm(self.sense * p.cost[kc], p.row_lower[kr], p.row_upper[kr],
                                         p.col_lower[kc], p.col_upper[kc], cp, ci, cv, kr.size,
                                         ruiz_iterations=s.ruiz_iterations,
                                         pock_chambolle_alpha=s.pock_chambolle_alpha,
                                         bound_objective_scaling=s.bound_objective_scaling)
        trouble = scaling_trouble(sc, cv, engine="the ALM's")
        if trouble:  # a Problem built without Problem.check: no step can run on it, nor PDHG's (same scaling)
            self.status, self.message, self.already = Status.NUMERICAL_ERROR, trouble, True
            self.seconds["setup"] = time.perf_counter() - self.t0
            return
        self.warm = ws_in is not None
        if self.warm:
            self.xbar = np.ascontiguousarray(sc.x_to_scaled(ws_in[0][kc]))
            self.w = np.ascontiguousarray(sc.y_to_scaled(self.sense * ws_in[1][kr]))
            self.eta = prm.step_warm
        else:
            self.xbar = np.minimum(np.maximum(0.0, sc.lv), sc.uv)
            self.w = np.zeros(sc.m)
            self.eta = prm.step_cold
        ax0 = np.empty(sc.m)
        csc_matvec(*sc.csc, self.xbar, ax0)
        self.sbar = np.minimum(np.maximum(ax0, sc.lc), sc.uc)
        self.omega = 1.0
        self.wsp = Workspace(sc.n, sc.m)
        if prm.direct_max > 0:
            schur = schur_system(*sc.csc, sc.m, coupling_rows_of(cp, ci, cv))  # carried: one checked pass
            note_coupling_rows(cp, ci, cv, schur.coupling)  # stored with the state's scaling (factors_of)
            if schur.m2 <= prm.direct_max and schur.factor <= prm.direct_passes:
                self.wsp.schur = schur
        self.b_den = 1.0 + combined_bound_norm(sc.lc, sc.uc, p.row_lower[kr], p.row_upper[kr])
        self.c_den = 1.0 + math.sqrt(dot(sc.c, sc.c))
        self.floor = prm.inner_floor * s.tol * self.b_den
        self.y_start = math.sqrt(dot(self.w, self.w))
        self.deadline = self.t0 + s.time_limit_seconds
        self.best, self.best_at = math.inf, 0
        self.status, self.message = Status.ITERATION_LIMIT, f"iteration limit {s.iteration_limit} reached"
        self.seconds["setup"] = time.perf_counter() - self.t0
        if start_kkt is not None and self.warm and kc.size == p.n_cols and kr.size == p.n_rows:
            # the engine choice measured this very point on this problem; the scaled round trip below moves it by
            # an ulp at most, so the result measures its own point if the run stops here (``measured`` None)
            self.x_full[kc] = sc.x_to_orig(self.xbar)
            self.y_min_full[kr] = sc.y_to_orig(self.w)
            self.measured, k0 = None, start_kkt
        else:
            k0 = self.measure(self.xbar, self.w)
        e0 = max(k0.primal_measure(s.tol), k0.dual_residual_rel, k0.gap_rel)
        self.last_worst = e0 if math.isfinite(e0) else math.inf  # the progress test's yardstick (``verdict``)
        if self.warm:
            self.start_note = f"; the warm start's relative KKT error was {e0:.1e}"
            if k0.converged(s.tol):
                self.status, self.message = Status.OPTIMAL, f"the warm start already meets tol {s.tol:g}"
                self.already = True
            elif math.isfinite(e0):
                self.eta = min(max(prm.warm_scale / e0, prm.step_cold), prm.step_warm)

    def measure(self, xs: np.ndarray, ys: np.ndarray):
        """Original-space KKT of the scaled point (xs (nn,), ys (mm,)); leaves it in x_full, y_min_full."""
        self.x_full[self.kc] = self.sc.x_to_orig(xs)
        self.y_min_full[self.kr] = self.sc.y_to_orig(ys)
        self.measured = original_kkt(self.problem, self.x_full, self.sense * self.y_min_full, self.s.tol)
        return self.measured[0]

    def _done(self, w_, ws_) -> bool:
        """``newton_solve``'s early stop: the Newton iterate meets tol in original units. The full test (a pass
        over the matrix) runs only when the primal measures, read off the scaled A x the Newton step already
        holds (:meth:`_screen`), do not already fail it."""
        if self._screen(ws_.ax):
            return False
        kk = self.measure(ws_.x, w_)
        self.last[:] = [kk]
        return kk.converged(self.s.tol)

    def _screen(self, ax_s: np.ndarray) -> bool:
        """True when the point whose scaled activity is ``ax_s`` (m~,) misses ``original_kkt``'s primal tests by
        more than :data:`SCREEN_MARGIN` (no matrix pass: ``alm_kernels.primal_screen`` on the kept rows, whose
        residual is at most the whole model's, over a ||b|| that counts every finite bound, at least
        ``original_kkt``'s). TE Kdl warm rounds: 8 of 9 and 5 of 6 Newton iterates fail so, each test a pass over
        the 31M entries otherwise."""
        if self.screen_rows is None:
            p, kr = self.problem, self.kr
            lo, hi = p.row_lower, p.row_upper
            b2 = float(np.sum(np.square(lo[np.isfinite(lo)])) + np.sum(np.square(hi[np.isfinite(hi) & (lo != hi)])))
            floor = np.maximum(1.0, row_absmax(p.a_indices, p.a_data, p.n_rows)[kr])
            self.screen_rows = (np.ascontiguousarray(lo[kr]), np.ascontiguousarray(hi[kr]), floor,
                                1.0 + math.sqrt(b2))
        lo, hi, floor, den = self.screen_rows
        pres2, worst = primal_screen(ax_s, self.sc.d1, self.sc.theta_b, lo, hi, floor)
        tol = self.s.tol
        return math.sqrt(pres2) / den > SCREEN_MARGIN * tol or worst > SCREEN_MARGIN * row_tolerance(tol)

    def iterate(self) -> None:
        """Outer steps until tol, a limit, or a reason to hand over (``self.handover``)."""
        s = self.s
        t_iter = time.perf_counter()
        if s.verbose:
            p = self.problem
            print(f"copter ALM: {p.n_rows} rows, {p.n_cols} columns, {p.nnz} nonzeros; tol {s.tol:g}"
                  f"{', warm start' if self.warm else ''}", file=sys.stderr)
            print(LOG_HEADER, file=sys.stderr)
        while not self.already:
            if self.outer >= s.iteration_limit:
                break
            if time.perf_counter() >= self.deadline:
                self.status, self.message = Status.TIME_LIMIT, f"time limit {s.time_limit_seconds:g} s reached"
                break
            kkt, st, res_p, res_d = self.outer_step()
            if self.verdict(kkt, st, res_p, res_d):
                break
            if self.passes >= self.prm.work_limit:
                self.handover = (f"it used its work budget of {self.prm.work_limit:.0f} matrix passes "
                                 f"({self.outer} outer steps)")
                break
        self.seconds["iterate"] = time.perf_counter() - t_iter

    def outer_step(self):
        """One proximal step: Newton-CG on the step's dual, then the new centre. Returns (KKT of the new
        point in original units, the Newton stats, the step's relative primal and dual residuals)."""
        sc, prm, wsp = self.sc, self.prm, self.wsp
        eta, omega = self.eta, self.omega
        sub = Subproblem(*sc.csc, sc.c, sc.lv, sc.uv, sc.lc, sc.uc, self.xbar, self.sbar, self.w.copy(),
                         eta / omega, eta / omega, eta * omega)
        early = self.warm or self.best <= prm.check_within * self.s.tol
        y = sub.y  # the step's multiplier (a copy): self.w becomes the Newton solve's start, then its solution
        if self.y_prev is None:
            self.y_prev = y.copy()
        else:
            if prm.extrapolate > 0.0:
                self.w += prm.extrapolate * (y - self.y_prev)
            self.y_prev[:] = y
        _, st = newton_solve(sub, self.w, wsp, lambda pres: max(prm.inner_rel * pres, self.floor),
                             max_steps=prm.newton_max, cg_max=prm.cg_max, deadline=self.deadline,
                             pass_limit=prm.work_limit - self.passes, done=self._done if early else None)
        self.outer += 1
        self.newton_total += st.steps
        self.unit_total += st.unit_steps
        self.direct_total += st.direct_solves
        self.cg_total += st.cg_iterations
        self.passes += st.passes
        # the step's own residuals (scaled): primal A x - s, dual = the proximal terms' reduced-cost error
        res_p = diff_norm(wsp.ax, wsp.s) / self.b_den
        res_d = math.hypot(diff_norm(wsp.x, self.xbar), diff_norm(wsp.s, self.sbar)) / (eta / omega) / self.c_den
        self.xbar, wsp.x = wsp.x, self.xbar  # the new centre is x(w); the old centre's array becomes work space
        self.sbar, wsp.s = wsp.s, self.sbar
        kkt = self.last[0] if st.reason == "done" else self.measure(self.xbar, self.w)
        if self.s.verbose:
            print(f"{self.outer:6d} {self.newton_total:7d} {self.cg_total:7d} {time.perf_counter() - self.t0:7.2f}s "
                  f"{self.sense * kkt.primal_objective:15.8e} {self.sense * kkt.dual_objective:15.8e} "
                  f"{kkt.primal_residual_rel:9.2e} {kkt.dual_residual_rel:9.2e} {kkt.gap_rel:9.2e} {eta:9.2e} "
                  f"{omega:9.2e}", file=sys.stderr, flush=True)
        return kkt, st, res_p, res_d

    def verdict(self, kkt, st, res_p: float, res_d: float) -> bool:
        """After an outer step: True to stop (OPTIMAL, or ``self.handover`` set); else adapt eta and omega
        (module docstring: omega when the step's residuals are unbalanced, else eta when its progress was slow).

        Args: kkt: the new point's original-space KKT (``original_kkt``); st: the step's NewtonStats;
        res_p, res_d: the step's relative primal and dual residuals (scaled space, ``outer_step``)."""
        prm, tol = self.prm, self.s.tol
        # the primal measure counts the worst row's own violation too (KKT.primal_measure, in units of tol)
        pr, dr, gp = kkt.primal_measure(tol), kkt.dual_residual_rel, kkt.gap_rel
        if self.outer == 1:
            self.first_kkt = max(pr, dr, gp)
        if not (math.isfinite(pr) and math.isfinite(dr) and math.isfinite(gp)) or st.reason == "not finite":
            self.handover = "the iterates became NaN or infinite"
            return True
        if kkt.converged(tol):
            # the row rule in words a capacity planner reads right: relative, with its ruler (user trial 37 read
            # "within 0.01" as absolute units, and a TE link 0.44 over 1000 as a broken promise)
            self.status, self.message = Status.OPTIMAL, (
                f"relative KKT residuals and gap below {tol:g}, every row within {100 * row_tolerance(tol):g}% "
                "of its bound (relative to max(1, |bound|, its largest |coefficient|))")
            return True
        worst = max(pr, dr, gp)
        if worst <= 0.5 * self.best:
            self.best, self.best_at = worst, self.outer
        if self.outer - self.best_at >= prm.stall_outer:
            self.handover = f"its KKT error stopped improving ({worst:.1e} after {self.outer} outer steps)"
            return True
        if math.sqrt(dot(self.w, self.w)) > 1e10 * (1.0 + self.y_start):
            self.handover = "its multipliers diverged (an infeasible model?)"
            return True
        slow = not worst <= prm.progress_ratio * self.last_worst
        worse = not worst < self.last_worst
        self.last_worst = worst
        if not st.converged:
            # the Newton solve stalled (line search at round-off, or its step cap): this eta is too
            # ill-conditioned for it; step back instead of letting an inexact multiplier steer omega
            self.eta = max(self.eta / prm.step_growth, prm.step_cold)
            return False
        balanced = True
        if res_p > prm.weight_balance * res_d:
            self.omega *= prm.weight_factor
            balanced = False
        elif res_d > prm.weight_balance * res_p:
            self.omega /= prm.weight_factor
            balanced = False
        if (slow and balanced) or worse:
            # slow with unbalanced residuals is the weight's to fix first (TE ring rounds stalled at primal
            # 3.5e-4 until omega doubled; growing eta there too cost 10-60% more passes on 11 of 12 rounds);
            # no progress at all (cold netlib starts whose error rises) grows eta whatever the balance
            self.eta = min(self.eta * prm.step_growth, prm.step_max)
        return False


def _hand_over(problem, s, warm_start, why, outer, newton_total, cg_total, seconds, t0) -> SolveResult:
    """PDHG (cold, with the time left) on a run the ALM cannot finish; its result, with the reason prefixed."""
    left = s.time_limit_seconds - (time.perf_counter() - t0)
    res = pdhg_solve(problem, replace(s, time_limit_seconds=max(left, 0.0)))
    res.message = (f"ALM handed over to PDHG after {outer} outer steps ({newton_total} Newton steps, {cg_total} "
                   f"CG iterations) because {why}: {res.message}")
    res.seconds = {**{f"alm_{k}": v for k, v in seconds.items()}, **res.seconds,
                   "total": time.perf_counter() - t0}
    res.seconds["solve"] = res.seconds["total"]
    res.warm_started = warm_start is not None
    return res


def _result(problem, s, status, message, x_full, y_min_full, iterations, seconds, t0, warm, ws_msg,
            passes: int = 0, first: dict | None = None, measured: tuple | None = None) -> tuple[SolveResult, tuple]:
    """The SolveResult of (x (n,), y (m,, minimisation form)) measured on the original problem; its state's
    ``engine`` holds ``{"engine": "alm", "passes": passes}`` (the run's matrix passes, ``solver.lp.alm_newton``)
    and, for a warm run, ``first`` (``first_kkt``: the worst relative KKT measure after the first outer step, nan
    when none ran; ``warm_scale``: the one the run used), which ``solver.lp.dispatch`` turns into the full record
    (``solver.lp.engine_choice.EngineRecord.passes`` and ``alm_warm_scale``, :func:`next_warm_scale`).
    ``measured``: ``original_kkt``'s output for (x_full, y_min_full) at ``s.tol`` when the run has it (its last
    measure), else it is measured here. Returns (the result, that measure: the returned x and y measure the same,
    bit for bit, since clipping and projecting them again changes nothing)."""
    sense = int(problem.sense)
    if measured is None:
        measured = original_kkt(problem, x_full, sense * y_min_full, s.tol)
    kkt, x, y, rc, ax = measured
    if ws_msg:
        message = f"{message}; {ws_msg}"
    viol = np.maximum(problem.row_lower - ax, ax - problem.row_upper)
    seconds["solve"] = time.perf_counter() - t0
    seconds["total"] = seconds["solve"]
    infeasible = status == Status.PRIMAL_INFEASIBLE and iterations == 0
    res = SolveResult(
        status=status, x=x, y=y, reduced_cost=rc, row_activity=ax, objective=float(problem.cost @ x + problem.offset),
        dual_objective=math.nan if infeasible else sense * kkt.dual_objective,
        primal_residual_rel=math.inf if infeasible else kkt.primal_residual_rel,
        dual_residual_rel=math.inf if infeasible else kkt.dual_residual_rel,
        gap_rel=math.inf if infeasible else kkt.gap_rel, iterations=iterations, seconds=seconds,
        point_feasible=bool(not infeasible and kkt.primal_residual_rel <= s.tol),
        state=SolverState(x=x.copy(), y=y.copy(), iterations=iterations,
                          engine={"engine": "alm", "passes": float(passes), **(first or {})}),
        warm_started=warm, message=message,
        max_row_violation=float(np.max(np.maximum(viol, 0.0), initial=0.0)))
    return res, measured


def stream_warm_scale(scale) -> float:
    """A stream's stored ``warm_scale`` (the engine record's ``alm_warm_scale``) made usable: clipped to
    [the default, WARM_SCALE_MAX]; the default when it is not a finite positive number (none stored, or a
    hand-edited state). Dimensionless."""
    base = ALMParameters.warm_scale
    try:
        value = float(scale)
    except (TypeError, ValueError):
        return base
    return min(max(value, base), max(WARM_SCALE_MAX, base)) if math.isfinite(value) and value > 0 else base


def next_warm_scale(scale: float, first_kkt: float, tol: float, outer_steps: int) -> float:
    """The ``ALMParameters.warm_scale`` a stream's next warm ALM run starts with, after a warm run that used
    ``scale`` and ended OPTIMAL (see :data:`WARM_NEAR_MISS`).

    Args:
        scale: the warm_scale the run used (:func:`stream_warm_scale` makes it usable first).
        first_kkt: the worst relative KKT measure after its first outer step (original units; nan: none ran).
        tol: the run's relative tolerance (> 0).
        outer_steps: the run's outer steps.
    Returns:
        ``scale`` x WARM_SCALE_GROWTH (at most WARM_SCALE_MAX) when the run took more than one outer step and the
        first ended within WARM_NEAR_MISS x tol; ``scale`` x WARM_SCALE_DECAY, at least the default, when it took
        one; else ``scale``. Dimensionless.
    """
    scale = stream_warm_scale(scale)
    if outer_steps > 1 and tol < first_kkt <= WARM_NEAR_MISS * tol:
        scale *= WARM_SCALE_GROWTH
    elif outer_steps == 1:
        scale *= WARM_SCALE_DECAY
    return stream_warm_scale(scale)  # within [the default, WARM_SCALE_MAX], as every stored scale is read
