"""One direct solve of an LP in HiGHS form by restarted reflected Halpern PDHG (r2HPDHG), warm-startable.

No presolve here: ``solver.lp.dispatch.solve`` chooses between this run and ``solver.lp.presolve`` (which
calls :func:`solve` on the reduced LP), so this module never imports presolve. Steps of :func:`solve`:
trivial reductions, scaling and step size (``_Core``), the iteration loop (``_Core.run``: one check
interval per pass through ``_Run``'s measure / report / verdict / restart / advance), result assembly.

Algorithm: cuPDLPx (Lu, Peng, Yang, arXiv 2507.14051) = Halpern PDHG with reflection and
fixed-point-residual restarts (Lu & Yang, arXiv 2407.16144), HPR-LP's bound/objective scaling
(arXiv 2408.12179) and PDLP's preconditioning and infeasibility detection (arXiv 2106.04756).
Pieces: ``solver.lp.scaling`` (Ruiz + Pock-Chambolle + theta_b/theta_c), ``solver.lp.kernels`` (numba
passes), ``solver.lp.restart`` (restarts, PID primal weight), ``solver.lp.termination`` (relative KKT in
original units), ``solver.lp.infeasibility`` (ray certificates), ``solver.lp.trivial`` (empty boxes, empty
rows and columns, decided before iterating).

Sign conventions (HiGHS): reduced cost = c - A'y; a row dual is >= 0 at an active lower bound of a
minimisation. A maximisation (sense = -1) is solved as ``min -c'x``; its duals are reported negated
so that ``reduced_cost = c - A'y`` still holds with the problem's own c (HiGHS does the same): for a
maximisation a row dual is <= 0 at an active lower bound. Objectives are reported in the problem's
sense and include its constant.
"""

from __future__ import annotations

import math
import sys
import time
from contextlib import contextmanager
from contextvars import ContextVar

import numpy as np

from solver.lp import kernels
from solver.lp.infeasibility import (
    PRIMAL_RAY_CERTIFIES,
    SUSPECT_DUAL_GROWTH,
    SUSPECT_RATIO,
    highs_proves_infeasible,
    highs_proves_unbounded,
    primal_infeasibility_ratio,
)
from solver.lp.original_kkt import original_kkt, row_sentence
from solver.lp.reach import column_reach, refuted_kkt
from solver.lp.restart import RestartController, fixed_point_residual
from solver.lp.scaling import ScaledLP, combined_bound_norm, scale_lp_csc
from solver.lp.termination import KKT, OrigLP, TargetSchedule, evaluate, relative_gap, row_tolerance
from solver.lp.trivial import drop_empty, reduce_trivial
from solver.model.errors import UsageError
from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status

_PROGRESS: ContextVar = ContextVar("copter_pdhg_progress", default=None)
WARM_PRIMAL_WEIGHTS = ("fresh", "reuse")  # values of Settings.warm_primal_weight


@contextmanager
def progress_callback(fn):
    """Within the ``with`` block, every solve calls ``fn(info)`` at each termination check.

    ``info`` is a dict: iteration, seconds (since the solve started), primal_objective, dual_objective
    (problem's sense), primal_residual_rel, dual_residual_rel, gap_rel. Used by ``copter solve`` for its
    progress line; works through ``solver.api.solve_problem`` (also inside MILP relaxations).
    """
    token = _PROGRESS.set(fn)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def current_progress_callback():
    """The ``fn`` of the innermost :func:`progress_callback` block in effect in this context (thread, task), or
    None outside any: what a solve reports its termination checks to. A caller that wraps the reports (the
    presolve's polish continues the reduced run's iteration count) reads it here and registers its wrapper with
    :func:`progress_callback`."""
    return _PROGRESS.get()


LOG_HEADER = (f"{'iter':>9} {'time':>8} {'primal obj':>15} {'dual obj':>15} "
              f"{'rel p res':>9} {'rel d res':>9} {'rel gap':>9} {'restarts':>8} {'weight':>9}")


def _log_line(it: int, sec: float, kkt: KKT, sense: int, restarts: int, w: float, tag: str = "") -> str:
    return (f"{it:9d} {sec:7.2f}s {sense * kkt.primal_objective:15.8e} {sense * kkt.dual_objective:15.8e} "
            f"{kkt.primal_residual_rel:9.2e} {kkt.dual_residual_rel:9.2e} {kkt.gap_rel:9.2e} "
            f"{restarts:8d} {w:9.2e}{tag}")


def parse_warm_start(warm_start, n: int, m: int):
    """Normalise ``warm_start`` to (x (n,), y (m,), SolverState | None) or explain why it is refused.

    Accepts a SolverState, a tuple (x, y, state) or (x, y). Returns ((x, y, state) | None, message).
    """
    if warm_start is None:
        return None, ""
    if isinstance(warm_start, SolverState):
        x, y, st = warm_start.x, warm_start.y, warm_start
    elif isinstance(warm_start, (tuple, list)) and len(warm_start) in (2, 3):
        x, y = warm_start[0], warm_start[1]
        st = warm_start[2] if len(warm_start) == 3 else None
    else:
        return None, f"warm start ignored: expected a SolverState or (x, y, state), got {type(warm_start).__name__}"
    x = np.asarray(x, dtype=np.float64).reshape(-1)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if x.shape[0] != n or y.shape[0] != m:
        return None, (f"warm start ignored: it has {x.shape[0]} variables and {y.shape[0]} constraints, "
                      f"the problem has {n} and {m}; solved cold")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        return None, "warm start ignored: it contains NaN or infinite values; solved cold"
    return (x, y, st), ""


def suspicion_sentence(ratio: float, tol: float) -> str:
    """The message of a PRIMAL_INFEASIBLE that HiGHS proved after the duals diverged (``ratio``: the best ray ratio
    seen, of the iterate differences or of the normalised duals, PDLP's second sequence; ``tol``: the certificate's).
    The normalised duals' ratio may meet the certificate's test itself, which read "ray ratio 0.0e+00, above the
    1e-08 a certificate needs" (helper-242, session 60)."""
    how = (f"a near-certificate (ray ratio {ratio:.1e}, above the {tol:g} a certificate needs)" if ratio > tol else
           f"a ray of the normalised duals (ratio {ratio:.1e}, within the {tol:g} a certificate needs)")
    return f"the duals diverged along {how} and HiGHS proved that no feasible point exists"


class _Core:
    """One run of the iteration on a reduced, scaled minimisation LP (internal to :func:`solve`)."""

    def __init__(self, lp: OrigLP, csc: tuple, settings: Settings, sense: int, t_start: float):
        """``csc`` = (indptr (n+1,), indices (nnz,), data (nnz,)) of the reduced A (sorted rows)."""
        self.lp, self.s, self.sense, self.t_start = lp, settings, sense, t_start
        with np.errstate(over="ignore", invalid="ignore"):  # an overflow is reported by scaling_trouble
            self.sc: ScaledLP = scale_lp_csc(lp.c, lp.lc, lp.uc, lp.lv, lp.uv, *csc, lp.lc.shape[0],
                                             ruiz_iterations=settings.ruiz_iterations,
                                             pock_chambolle_alpha=settings.pock_chambolle_alpha,
                                             bound_objective_scaling=settings.bound_objective_scaling)
        sc = self.sc
        if settings.pock_chambolle_alpha is not None and 0.0 <= settings.pock_chambolle_alpha <= 2.0:
            # Pock & Chambolle (2011, Lemma 2): after their diagonal scaling ||A~||_2 <= 1 exactly
            # (Schur test), and power iteration lands within 1e-5 of 1 on the netlib set, so the bound
            # IS the norm for our purposes and costs nothing (power iteration took 0.1 s on woodw).
            smax = 1.0
        else:
            v = np.random.default_rng(12345).standard_normal(sc.n)
            smax, _ = kernels.power_iteration(*sc.csr, *sc.csc, v, settings.power_iterations, 1e-7)
        self.eta = settings.step_safety / smax if smax > 0 else 1.0

    def run(self, x_init, y_init, w_init, accept=None, confirm_infeasible=None, confirm_unbounded=None):
        """Iterate from (x_init, y_init) (original units, reduced index order; None = cold) with primal
        weight ``w_init`` (None = cold value) until a termination criterion holds.

        ``accept``: None, or a callable given the original-unit point (x (n,), y (m,)) each time the
        relative KKT measures meet their targets; it returns None to accept the point, or the point's
        (primal, dual, gap) relative measures in the space the caller judges it in (e.g. after a
        postsolve). Each measure above ``settings.tol`` there gets a tighter target here
        (``solver.lp.termination.TargetSchedule``) and the run continues (same iterate, anchor and weight).
        ``confirm_infeasible``: None, or a callable given the seconds elapsed, asked at most once, when the
        dual-ray ratio is at most ``solver.lp.infeasibility.SUSPECT_RATIO`` while ||y~|| has grown past
        SUSPECT_DUAL_GROWTH times its start; True ends the run PRIMAL_INFEASIBLE. ``confirm_unbounded``: the
        same for unboundedness, asked at most once when ||x~|| has grown past SUSPECT_DUAL_GROWTH times 1 +
        its start; True ends the run DUAL_INFEASIBLE.
        Returns (status, message, KKT, x (n,), y (m,) in original units, iterations, primal weight).
        """
        run = _Run(self, x_init, y_init, w_init, accept, confirm_infeasible, confirm_unbounded)
        t_iter = time.perf_counter()
        while True:  # one check interval per pass: measure, report, decide, restart if due, iterate
            kkt, r, pinf, dinf = run.measure()
            elapsed = time.perf_counter() - self.t_start
            run.report(kkt, elapsed)
            verdict = run.verdict(kkt, pinf, dinf, elapsed)
            if verdict is not None:
                status, message = verdict
                break
            run.restart_if_due(kkt, r)
            run.advance()
        return run.finish(status, message, kkt, t_iter)


class _Run:
    """The state of one :meth:`_Core.run` in scaled space and its steps: the current iterate z = (x, y),
    the Halpern anchor z0 = (x0, y0), A x, A'y and the anchor's, the PDHG step T(z) = (xh, yh) with A xh,
    A'yh (arrays (n,) or (m,)); the primal weight w, step sizes tau = eta / w, sigma = eta w, the Halpern
    counter k, the total iteration count and the restart controller."""

    def __init__(self, core: _Core, x_init, y_init, w_init, accept, confirm_infeasible, confirm_unbounded=None):
        """Setup: the start point in scaled space, its products, the first PDHG step (``run_block`` with
        count 0) and the check's fixed arguments."""
        s, sc, lp = core.s, core.sc, core.lp
        self.core, self.s, self.sc, self.lp = core, s, sc, lp
        self.accept, self.confirm_infeasible = accept, confirm_infeasible
        self.confirm_unbounded = confirm_unbounded
        n, m = sc.n, sc.m
        rp, ri, rv = sc.csr
        cp, ci, cv = sc.csc
        self.g = float(s.reflection)
        self.eta = eta = core.eta
        w = float(w_init) if (w_init is not None and math.isfinite(w_init) and w_init > 0) else 1.0
        w = min(max(w, s.primal_weight_min), s.primal_weight_max)  # a stored weight obeys the same clamp
        self.w = w
        self.tau, self.sigma = eta / w, eta * w
        x = sc.x_to_scaled(x_init) if x_init is not None else np.minimum(np.maximum(0.0, sc.lv), sc.uv)
        y = sc.y_to_scaled(y_init) if y_init is not None else np.zeros(m)
        self.x = x = np.ascontiguousarray(x, dtype=np.float64)
        self.y = y = np.ascontiguousarray(y, dtype=np.float64)
        self.ax, self.aty = np.empty(m), np.empty(n)
        kernels.spmv_csr(rp, ri, rv, x, self.ax)
        kernels.spmv_csc_t(cp, ci, cv, y, self.aty)
        self.x0, self.y0, self.ax0, self.aty0 = x.copy(), y.copy(), self.ax.copy(), self.aty.copy()
        self.y_start_norm = float(np.linalg.norm(y))
        self.x_start_norm = float(np.linalg.norm(x))
        self.xh, self.yh, self.axh, self.atyh = np.empty(n), np.empty(m), np.empty(m), np.empty(n)
        kernels.primal_step(x, self.aty, sc.c, sc.lv, sc.uv, self.tau, self.xh)
        self.block = kernels.run_block
        if s.threads is not None and s.threads > 1 and sc.csr[2].shape[0] >= s.parallel_min_nnz:
            import numba

            numba.set_num_threads(max(1, min(int(s.threads), numba.config.NUMBA_NUM_THREADS)))
            self.block = kernels.run_block_parallel
        self.k = self._run_block(0, 0)
        self.ctrl = RestartController(s, w)
        self.total = 0
        self.first = True
        self.restarts = 0
        self.next_log = 0
        self.progress = current_progress_callback()
        self.lpa = (lp.c, lp.lc, lp.uc, lp.lv, lp.uv, lp.lc_f, lp.uc_f, lp.lv_f, lp.uv_f, rp, ri, rv)
        self.work_n, self.work_m = np.empty(n), np.empty(m)
        self.pden, self.dden = 1.0 + lp.b_norm, 1.0 + lp.c_norm
        self.targets = (s.tol, s.tol, s.tol)  # primal, dual, gap: tightened only by ``accept``
        # the reach check's measure is thresholded: only the floor ends its tightening (TargetSchedule)
        self.schedule = TargetSchedule(s.tol, follow=not getattr(accept, "thresholded", False))
        # evaluate()'s output at the point ``accept`` took: the run stops there, and finish() reuses it
        # instead of unscaling the same arrays again (~20 us of a 0.6 ms afiro solve)
        self.accepted = None

    def _state(self) -> tuple:
        """The twelve PDHG arrays in the order the kernels take them."""
        return (self.x, self.y, self.x0, self.y0, self.ax, self.aty, self.ax0, self.aty0,
                self.xh, self.yh, self.axh, self.atyh)

    def _run_block(self, k: int, count: int) -> int:
        sc = self.sc
        return self.block(*sc.csr, *sc.csc, sc.c, sc.lc, sc.uc, sc.lv, sc.uv, self.tau, self.sigma, self.g,
                          k, count, *self._state())

    def measure(self) -> tuple:
        """One pass of ``kernels.check_measures``: (KKT in original units, fixed-point residual r(z),
        primal- and dual-infeasibility ratios)."""
        sc, lp = self.sc, self.lp
        po, do, pn, dn, r, pinf, dinf = kernels.check_measures(
            sc.c, sc.d1, sc.d2, sc.theta_b, sc.theta_c, self.tau, self.eta, self.w, *self.lpa,
            *self._state(), self.total > 0, self.work_n, self.work_m)
        po += lp.offset
        do += lp.offset
        pden = self.pden
        if lp.far_rows.size:  # a far row bound counts where the row is near it (OrigLP.b_norm_at)
            far = lp.far_rows
            pden = 1.0 + lp.b_norm_at(self.axh[far] / (sc.d1[far] * sc.theta_b))
        kkt = KKT(po, do, pn, dn, pn / pden, dn / self.dden, relative_gap(po, do, lp.constant),
                  objective_constant=lp.constant)
        return kkt, r, pinf, dinf

    def report(self, kkt: KKT, elapsed: float) -> None:
        """The progress callback (:func:`progress_callback`) and the verbose log line of this check."""
        s, sense, total = self.s, self.core.sense, self.total
        if self.progress is not None:
            self.progress({"iteration": total, "seconds": elapsed,
                           "primal_objective": sense * kkt.primal_objective,
                           "dual_objective": sense * kkt.dual_objective,
                           "primal_residual_rel": kkt.primal_residual_rel,
                           "dual_residual_rel": kkt.dual_residual_rel, "gap_rel": kkt.gap_rel})
        if s.verbose and total >= self.next_log:
            print(_log_line(total, elapsed, kkt, sense, self.restarts, self.w), file=sys.stderr, flush=True)
            self.next_log = max(2 * self.next_log, s.check_every) if not s.verbose_all else 0

    def verdict(self, kkt: KKT, pinf: float, dinf: float, elapsed: float):
        """The termination decision of this check: (status, message), or None to go on. In order:
        non-finite measures, optimality, a dual-ray certificate, a suspicion HiGHS proves, a primal-ray
        certificate, the iteration limit, the time limit."""
        s = self.s
        if not (math.isfinite(kkt.primal_residual_rel) and math.isfinite(kkt.dual_residual_rel)
                and math.isfinite(kkt.gap_rel)):
            return Status.NUMERICAL_ERROR, "iterates became NaN or infinite"
        if self._optimal(kkt):
            return Status.OPTIMAL, f"relative KKT residuals and gap below {s.tol:g}"
        if pinf <= s.infeasibility_tol:
            return Status.PRIMAL_INFEASIBLE, "a dual ray certifies that no feasible point exists"
        ratio = self._proved_suspicion(pinf, elapsed)
        if ratio is not None:
            return Status.PRIMAL_INFEASIBLE, suspicion_sentence(ratio, s.infeasibility_tol)
        if dinf <= s.infeasibility_tol:
            return Status.DUAL_INFEASIBLE, PRIMAL_RAY_CERTIFIES
        if self._proved_unbounded(elapsed):
            return Status.DUAL_INFEASIBLE, ("the primal iterates diverged without a ray that certifies it, and "
                                            "HiGHS proved the objective unbounded")
        if self.total >= s.iteration_limit:
            return Status.ITERATION_LIMIT, f"iteration limit {s.iteration_limit} reached"
        if elapsed >= s.time_limit_seconds:
            return Status.TIME_LIMIT, f"time limit {s.time_limit_seconds:g} s reached"
        return None

    def _optimal(self, kkt: KKT) -> bool:
        """True when the measures meet their targets and ``accept`` (if any) takes the point or leaves the
        remedy to its caller; a point it rejects tightens the targets instead (False)."""
        targets = self.targets
        if not (kkt.primal_residual_rel <= targets[0] and kkt.dual_residual_rel <= targets[1]
                and kkt.gap_rel <= targets[2]):
            return False
        if self.accept is None:
            return True
        point = evaluate(self.lp, self.sc, self.x, self.aty, self.xh, self.yh, self.axh, self.atyh, self.tau)
        outside = self.accept(*point[1:3])
        if outside is None:
            self.accepted = point
            return True
        tighter = self.schedule.next_targets(targets, kkt, outside)
        if tighter is None:  # the caller judges (and remedies) this point itself
            self.accepted = point
            return True
        self.targets = tighter
        return False

    def _proved_suspicion(self, pinf: float, elapsed: float):
        """The ray ratio when the duals diverged along a near-certificate and ``confirm_infeasible`` (asked
        once per run) proved infeasibility, else None. The ray is the iterate differences' or, once the
        weight guard (``solver.lp.restart``) has stopped the divergence, the normalised iterate y itself
        (PDLP's second sequence, arXiv 2102.04592)."""
        sc = self.sc
        suspect = (self.confirm_infeasible is not None
                   and float(np.linalg.norm(self.yh)) > SUSPECT_DUAL_GROWTH * (1.0 + self.y_start_norm))
        ratio = math.inf
        if suspect:
            with np.errstate(over="ignore", invalid="ignore"):  # huge duals: an overflow means no ray
                ratio = min(pinf, primal_infeasibility_ratio(self.lp, sc.y_to_orig(self.yh),
                                                             self.atyh / (sc.d2 * sc.theta_c)))
        if ratio <= SUSPECT_RATIO:
            proved = self.confirm_infeasible(elapsed)
            self.confirm_infeasible = None  # asked once per run
            if proved:
                return ratio
        return None

    def _proved_unbounded(self, elapsed: float) -> bool:
        """True when the primal iterates diverged (||x~|| past SUSPECT_DUAL_GROWTH times 1 + its start) and
        ``confirm_unbounded`` (asked once per run) proved the LP unbounded. The dual-ray test alone cannot
        always decide: on gas11 (costs 0.01 to 2.5e10) the iterate differences violate rows by 17 times their
        own size, no ray, while the objective runs off."""
        if self.confirm_unbounded is None:
            return False
        if not float(np.linalg.norm(self.xh)) > SUSPECT_DUAL_GROWTH * (1.0 + self.x_start_norm):
            return False
        proved = self.confirm_unbounded(elapsed)
        self.confirm_unbounded = None  # asked once per run
        return bool(proved)

    def restart_if_due(self, kkt: KKT, r: float) -> None:
        """The restart decision (``solver.lp.restart``); on a restart: a new primal weight, z and z0 both
        move to T(z), and one PDHG step from the new anchor gives the epoch's reference residual (it also
        counts as the epoch's first iteration)."""
        ctrl = self.ctrl
        if self.first:  # z is the anchor here: its residual is the epoch's reference
            ctrl.start_epoch(r)
            self.first = False
            restart = False
        else:  # cuPDLPx also restarts unconditionally at the first check after the start
            restart = ctrl.should_restart(r, self.k, self.total)
        if not restart:
            return
        self.restarts += 1
        self.w = w = ctrl.update_weight(float(np.linalg.norm(self.xh - self.x0)),
                                        float(np.linalg.norm(self.yh - self.y0)),
                                        kkt.primal_residual_rel, kkt.dual_residual_rel)
        self.tau, self.sigma = self.eta / w, self.eta * w
        for dst, src in ((self.x, self.xh), (self.x0, self.xh), (self.y, self.yh), (self.y0, self.yh),
                         (self.ax, self.axh), (self.ax0, self.axh), (self.aty, self.atyh), (self.aty0, self.atyh)):
            dst[:] = src
        self.k = 0
        sc = self.sc
        kernels.primal_step(self.x, self.aty, sc.c, sc.lv, sc.uv, self.tau, self.xh)
        self._run_block(0, 0)
        ctrl.start_epoch(fixed_point_residual(self.x - self.xh, self.y - self.yh, self.ax - self.axh, self.eta, w))
        self.total += 1

    def advance(self) -> None:
        """The Halpern update the check left out, then the iterations up to the next check (or the limit)."""
        s, sc = self.s, self.sc
        kernels.halpern_step(self.k, self.g, self.x, self.y, self.ax, self.aty, self.xh, self.yh, self.axh,
                             self.atyh, self.x0, self.y0, self.ax0, self.aty0, sc.c, sc.lv, sc.uv, self.tau)
        self.k += 1
        count = max(0, min(s.check_every - 1, s.iteration_limit - self.total - 1))
        self.k = self._run_block(self.k, count)
        self.total += count + 1

    def finish(self, status: Status, message: str, kkt: KKT, t_iter: float) -> tuple:
        """Result assembly of the run: the original-unit point, the final log line, the core's timings."""
        core = self.core
        point = self.accepted if status == Status.OPTIMAL and self.accepted is not None else None
        if point is None:
            point = evaluate(self.lp, self.sc, self.x, self.aty, self.xh, self.yh, self.axh, self.atyh, self.tau)
        _, xo, yo, _ = point
        if self.s.verbose:
            print(_log_line(self.total, time.perf_counter() - core.t_start, kkt, core.sense, self.restarts,
                            self.w, f"  {status.name}"), file=sys.stderr, flush=True)
        core.iterate_seconds = time.perf_counter() - t_iter
        core.restarts = self.restarts
        return status, message, kkt, xo, yo, self.total, self.w


def solve(problem: Problem, settings: Settings | None = None, warm_start=None, *, accept=None,
          objective_constant: float | None = None) -> SolveResult:
    """Solve the LP (relaxation, integrality ignored) of ``problem`` with restarted Halpern PDHG, without
    presolve (``settings.presolve`` is not read here: ``solver.lp.dispatch.solve`` decides presolve vs
    this direct run, and ``solver.lp.presolve`` calls this function on the reduced LP).

    Args:
        problem: the model in HiGHS form (any mix of ranged/equality/free rows, free/fixed/boxed
            columns, minimise or maximise, objective constant, empty rows/columns, no rows).
        settings: tolerances, limits (seconds), restart/primal-weight parameters; defaults if None.
        warm_start: None (cold), a SolverState, or a tuple (x (n,), y (m,), state | None) in original
            units and this problem's index order. It sets BOTH the current iterate and the Halpern
            anchor (in scaled space). The primal weight starts at the cold value (w = 1, the default
            ``settings.warm_primal_weight = "fresh"``, measured faster) or at the state's last weight
            (``"reuse"``). The step size is always 0.998 / ||A~||_2 for the CURRENT scaled matrix
            (||A~||_2 <= 1 by the Pock-Chambolle lemma, or power iteration when that stage is off), so
            eta ||A~|| < 1 holds even when the matrix changed; with unchanged scaling it equals the
            state's step size. A warm start of the wrong length is refused: the solve runs cold and
            ``result.message`` says why.
        accept: None, or a callable ``accept(x (n,), y (m,))`` (original units, problem's sense) called
            each time the point meets the tolerances; it returns None to accept it or the point's
            (primal, dual, gap) relative measures elsewhere (``solver.lp.presolve`` passes the original LP's
            after postsolve), and the run goes on with the measures that missed ``settings.tol`` there
            tightened here (``_Core.run``). A run whose targets reach their floor, or whose missed measure
            does not follow, stops OPTIMAL in its own space and leaves the remedy to the caller.
        objective_constant: the part of ``problem.offset`` that is the model's own objective constant, which the
            relative gap's denominator leaves out (``termination.relative_gap``); None: all of it. A presolved LP
            passes its original model's: the rest of its offset is the cost of the columns presolve removed, part
            of the variable objective (forplan, whose offset is all removed columns' cost, ran to the iteration
            limit with it left out).
    Returns:
        SolveResult with every field filled (original units, problem's sense); ``result.state`` holds
        x, y, step size, primal weight and iterations for the next warm start. A direct run (no
        ``accept``) is OPTIMAL only when the returned (x, y) meets ``settings.tol`` by
        :func:`solver.lp.original_kkt.original_kkt`, whose measures it then reports (``_ReachCheck``);
        PDHG's own check only decides when to ask.
        PRIMAL_INFEASIBLE rests on a dual ray certificate, or, when the ray's ratio stalls at or below
        ``solver.lp.infeasibility.SUSPECT_RATIO`` while the duals diverge, on HiGHS's proof (asked once per
        run, with the time left and at most as long as PDHG has run; ``result.message`` says which).
    Raises:
        Nothing for infeasible/unbounded models (see ``result.status``); ValidationError only if
        ``problem`` breaks its invariants (``Problem.check``); UsageError for an unknown
        ``settings.warm_primal_weight``.
    """
    t_start = time.perf_counter()
    s = settings or Settings()
    if s.warm_primal_weight not in WARM_PRIMAL_WEIGHTS:
        raise UsageError(f"settings.warm_primal_weight must be one of {WARM_PRIMAL_WEIGHTS}, "
                         f"got {s.warm_primal_weight!r}")
    sense = int(problem.sense)
    n, m = problem.n_cols, problem.n_rows
    c_min = sense * problem.cost
    ws, ws_msg = parse_warm_start(warm_start, n, m)
    if ws_msg and s.verbose:
        print(ws_msg, file=sys.stderr)
    red = reduce_trivial(c_min, problem.col_lower, problem.col_upper, problem.row_lower, problem.row_upper,
                         problem.a_indptr, problem.a_indices, problem.col_names, problem.row_names)
    x, removed = _start_point(n, red)
    y_min = np.zeros(m)
    iterations, eta, w = 0, float("nan"), float("nan")
    if ws is not None and ws[2] is not None:
        w = float(ws[2].primal_weight)
    seconds = {}
    if red.infeasible_message:
        status, message = Status.PRIMAL_INFEASIBLE, red.infeasible_message
        x = np.minimum(np.maximum(0.0, problem.col_lower), problem.col_upper)
        x = np.where(np.isfinite(x), x, 0.0)
        kkt = None
    else:
        lp = _reduced_lp(problem, red, c_min, x, removed, objective_constant)
        if red.keep_cols.size == 0:
            status, message = Status.OPTIMAL, "every column is empty: solved analytically"
            kkt = KKT(lp.offset, lp.offset, 0.0, 0.0, 0.0, 0.0, 0.0)
        else:
            # an empty column improving without bound makes the run DUAL_INFEASIBLE below: nothing to judge
            judge = _ReachCheck(problem, s.tol) if accept is None and red.unbounded_col < 0 else None
            status, message, kkt, iterations, w, eta = _iterate(problem, s, lp, red, ws, w, x, y_min,
                                                                accept or judge, seconds, t_start)
            if judge is not None and status == Status.OPTIMAL and judge.missed is not None:
                status, message = Status.NUMERICAL_ERROR, judge.sentence()
                kkt = refuted_kkt(kkt, judge.missed)  # not PDHG's small gap: the reach it just refuted
            elif judge is not None and status == Status.OPTIMAL:
                kkt = judge.measured[0]  # the returned point's own measures (what OPTIMAL promises), not PDHG's
                if not kkt.converged(s.tol):
                    status, message = Status.NUMERICAL_ERROR, judge.kkt_sentence()
                # a gap through far bounds that PDLP's rule does not count, or one through real bounds that a
                # point missed, is ruled on for every engine by solver.lp.dispatch (solver/lp/bound_gap.py)
        status, message = _unbounded_column(problem, red, status, message)
    if ws_msg:
        message = f"{message}; {ws_msg}" if message else ws_msg
    return _assemble(problem, s, status, message, kkt, x, sense * y_min, iterations, eta, w, seconds, t_start,
                     ws is not None)


#: a bound this many times (1 + the largest other |x_j|) away is named as a possible 'no bound' sentinel
FAR_BOUND = 1e3


class _ReachCheck:
    """``accept`` of a direct run (no caller judging its points). PDHG's own measures (``_Run.measure``) take
    the reduced costs from the prox step, r = (x^ - x) / tau + c - A'y at the iterate before the step, not
    c - A'y of the point returned, so they do not measure that point: a point that meets them must also meet
    ``tol`` by :func:`solver.lp.original_kkt.original_kkt` (the returned x, y and r = c - A'y in the model's
    units: the measure the report states and every other OPTIMAL rests on, the ALM's, presolve's judge's
    and a warm start's kept point's). LB 256x32 round 4, warm: PDHG's gap 7.8e-5 at tol 1e-4, the returned
    point's 1.0e-4 (1.3e-4 as the Lagrangian bound of its y), so OPTIMAL was reported above tol and a
    re-solve from it ran 453 iterations instead of returning it. It must also have a relative reach
    (``solver.lp.reach``) within ``tol``: no column inside its box may keep a reduced cost that is
    significant for itself while ||c|| dwarfs it. A miss tightens the run's targets of the missed measures
    (``solver.lp.termination.TargetSchedule``); when iterating does not bring them down, the run is not
    OPTIMAL (:attr:`missed` holds the last point's reach, :attr:`measured` its ``original_kkt`` output)."""

    thresholded = True  #: its measure drops at once, not by halves: TargetSchedule(follow=False)

    def __init__(self, problem: Problem, tol: float):
        self.problem, self.tol = problem, tol
        self.missed = None
        self.measured = None
        self.x_scale = 0.0

    def __call__(self, x: np.ndarray, y: np.ndarray):
        self.measured = original_kkt(self.problem, x, y, self.tol)
        kkt = self.measured[0]
        rc = column_reach(self.problem, x, y, self.tol)
        self.missed = rc if rc.rel > self.tol else None
        if self.missed is not None:  # the largest value the other variables take, for sentence()'s bound clause
            self.x_scale = _largest_other(x, rc.column)
        if self.missed is None and kkt.converged(self.tol):
            return None
        reach = rc.rel if self.missed is not None else 0.0
        return kkt.primal_measure(self.tol), max(kkt.dual_residual_rel, reach), max(kkt.gap_rel, reach)

    def kkt_sentence(self) -> str:
        """Why the run is not OPTIMAL when the returned point's own measures miss ``tol`` (naming the worst
        row when it is a row that misses its own bound, ``solver.lp.termination.row_tolerance``)."""
        k = self.measured[0]
        if k.row_violation_rel > row_tolerance(self.tol) and k.worst_row >= 0:
            return row_sentence(self.problem, self.measured, self.tol) + " and further iterations did not close it"
        return (f"PDHG's relative KKT measures met {self.tol:g}, but the point it returns misses it in the model's "
                f"units (relative primal residual / dual residual / gap {k.primal_residual_rel:.1e} / "
                f"{k.dual_residual_rel:.1e} / {k.gap_rel:.1e} with its reduced costs c - A'y) and further "
                "iterations did not close it" + self._gap_column(k))

    def _gap_column(self, k) -> str:
        """When the gap misses: a clause naming the column whose reduced cost times its distance to the bound it
        points at opens most of it (its bound is below ``termination.FAR_COLUMN_BOUND``, so it counts; PDHG's own
        check counts it only near the bound), with the far-bound clause; else ""."""
        if not k.gap_rel > self.tol:
            return ""
        rc = column_reach(self.problem, self.measured[1], self.measured[2], 0.0)  # every nonzero reduced cost
        if rc.column < 0 or not rc.reach > self.tol * (1.0 + abs(k.primal_objective - k.objective_constant)):
            return ""
        return (f": variable {self.problem.col_names[rc.column]!r} is {rc.distance:.3g} from its bound with reduced "
                f"cost {rc.reduced_cost:.3g}, which the gap counts through that bound (the objective could still "
                f"move by {rc.reach:.3g} with the columns at the bounds their reduced costs point at)"
                + self._far_bound(rc, _largest_other(self.measured[1], rc.column)))

    def sentence(self) -> str:
        """Why the run is not OPTIMAL, naming the column that could gain most."""
        rc = self.missed
        return (f"PDHG's relative KKT measures met {self.tol:g}, but variable "
                f"{self.problem.col_names[rc.column]!r} is {rc.distance:.3g} from its bound with reduced cost "
                f"{rc.reduced_cost:.3g}, which the norm of the costs hides: the objective could still move by "
                f"{rc.reach:.3g} ({rc.rel:.1e} relative) and further iterations did not close it; the costs span "
                "more orders of magnitude than the tolerance resolves (rescale them)"
                + self._far_bound(rc, self.x_scale))

    @staticmethod
    def _far_bound(rc, x_scale: float) -> str:
        """A clause for the bound of ``rc.column`` when it is far beyond the values the other variables take
        (``x_scale``): a finite sentinel such as 1e12 for 'no bound', whose reach is its distance times a reduced
        cost PDHG leaves at its tolerance; else ""."""
        if not rc.distance > FAR_BOUND * (1.0 + x_scale):
            return ""
        return (f"; or, if that bound, {rc.distance:.3g} away while the other variables stay within "
                f"{x_scale:.3g}, only stands for 'no bound', write it as infinite (inf, or any magnitude >= 1e20)")


def _largest_other(x: np.ndarray, j: int) -> float:
    """max_k |x_k| over the columns k != j of x (n,), 0.0 when there are none."""
    others = np.abs(np.delete(x, j)) if x.size > 1 else np.zeros(0)
    return float(others.max()) if others.size else 0.0


def _start_point(n: int, red) -> tuple:
    """The full-length x (n,) before iterating (the removed columns at their fixed values, 0 elsewhere)
    and the mask of removed columns (None when every column is kept, the usual case: no copies)."""
    kc = red.keep_cols
    if kc.size == n:
        return np.zeros(n), None
    removed = np.ones(n, dtype=bool)
    removed[kc] = False
    return np.where(removed, red.x_fixed, 0.0), removed


def _reduced_lp(problem: Problem, red, c_min: np.ndarray, x: np.ndarray, removed,
                objective_constant: float | None = None) -> OrigLP:
    """The minimisation LP over the kept rows and columns (``solver.lp.trivial``), its offset holding
    the removed columns' cost and its ``constant`` the model's own (``objective_constant``, else
    ``problem.offset``); norms are the whole problem's. OrigLP is read-only: it may share the problem's
    arrays."""
    kc, kr = red.keep_cols, red.keep_rows
    all_cols, all_rows = removed is None, kr.size == problem.n_rows
    offset_min = int(problem.sense) * problem.offset + (0.0 if all_cols else float(c_min[removed] @ x[removed]))
    return OrigLP(c=c_min if all_cols else c_min[kc],
                  lc=problem.row_lower if all_rows else problem.row_lower[kr],
                  uc=problem.row_upper if all_rows else problem.row_upper[kr],
                  lv=problem.col_lower if all_cols else problem.col_lower[kc],
                  uv=problem.col_upper if all_cols else problem.col_upper[kc],
                  b_norm=combined_bound_norm(problem.row_lower, problem.row_upper),
                  c_norm=float(np.linalg.norm(problem.cost)), offset=offset_min,
                  constant=int(problem.sense) * (problem.offset if objective_constant is None else objective_constant))


#: how every scaling-failure message starts (``scaling_trouble``); ``solver.lp.dispatch`` looks for it
SCALING_FAILED = "scaling failed"


def scaling_trouble(sc: ScaledLP, a_data: np.ndarray, engine: str = "PDHG's") -> str:
    """Why the scaled LP ``sc`` cannot be iterated ("" when it can), starting with :data:`SCALING_FAILED` and
    naming the range of ``a_data`` (the coefficients, any shape) and whose equilibration (``engine``, e.g.
    "the ALM's") failed: a row or column factor, theta_b or
    theta_c is 0 or not finite, which happens when the coefficients span far more than float64 can equilibrate
    (1e-300 next to 1e29: the column factor overflowed, theta_c became 0 and the termination check divided
    by 0). ``Problem.check`` refuses coefficients of magnitude <= 1e-9, so only a problem built without it
    gets here."""
    # 0 < v < inf is False for 0, negatives, inf and nan alike: one pass per factor array
    if (0.0 < sc.theta_b < math.inf and 0.0 < sc.theta_c < math.inf and bool(np.all((sc.d1 > 0) & (sc.d1 < np.inf)))
            and bool(np.all((sc.d2 > 0) & (sc.d2 < np.inf)))):
        return ""
    mag = np.abs(a_data)
    return (f"{SCALING_FAILED}: the coefficient magnitudes span {mag.min():.3g} to {mag.max():.3g}, more than "
            f"{engine} equilibration can represent in float64 (coefficients of magnitude <= 1e-9 are HiGHS's zero)")


def _iterate(problem: Problem, s: Settings, lp: OrigLP, red, ws, w: float, x: np.ndarray, y_min: np.ndarray,
             accept, seconds: dict, t_start: float) -> tuple:
    """Scale the reduced LP, run PDHG on it (``_Core``) and write its point into ``x`` (n,) and ``y_min``
    (m,, minimisation sign) at the kept positions; fills ``seconds["setup"]`` and ``seconds["iterate"]``.
    Returns (status, message, KKT, iterations, primal weight, step size eta)."""
    sense = int(problem.sense)
    n, m = problem.n_cols, problem.n_rows
    kc, kr = red.keep_cols, red.keep_rows
    csc = drop_empty(problem, kr, kc)
    if s.verbose:
        print(f"copter PDHG: {m} rows, {n} columns, {problem.nnz} nonzeros; "
              f"tol {s.tol:g}{', warm start' if ws is not None else ''}", file=sys.stderr)
    core = _Core(lp, csc, s, sense, t_start)
    seconds["setup"] = time.perf_counter() - t_start
    trouble = scaling_trouble(core.sc, csc[2])
    if trouble:  # a Problem built without Problem.check (an older state): no iteration can run on it
        return Status.NUMERICAL_ERROR, trouble, None, 0, w, core.eta
    if s.verbose:
        print(f"step size {core.eta:.4g} (||A~||_2 = {s.step_safety / core.eta:.4g})", file=sys.stderr)
        print(LOG_HEADER, file=sys.stderr)
    x_init = y_init = None
    w_init = None
    if ws is not None:
        x_init = ws[0][kc]
        y_init = sense * ws[1][kr]
        w_init = w if s.warm_primal_weight == "reuse" else None
    core_accept = None
    if accept is not None:
        def core_accept(xo_, yo_):
            xf, yf = x.copy(), np.zeros(m)
            xf[kc] = xo_
            yf[kr] = sense * yo_
            return accept(xf, yf)

        core_accept.thresholded = getattr(accept, "thresholded", False)  # its TargetSchedule's rule

    def confirm(elapsed):
        # HiGHS gets the time left, at most as long as PDHG has run (>= 1 s): a wrong suspicion
        # (a feasible LP) costs at most about what the run had cost already
        left = s.time_limit_seconds - (time.perf_counter() - t_start)
        return highs_proves_infeasible(problem, min(left, max(1.0, elapsed)))

    def confirm_unbounded(elapsed):
        left = s.time_limit_seconds - (time.perf_counter() - t_start)
        return highs_proves_unbounded(problem, min(left, max(1.0, elapsed)))

    status, message, kkt, xo, yo, iterations, w = core.run(x_init, y_init, w_init, core_accept, confirm,
                                                           confirm_unbounded)
    seconds["iterate"] = core.iterate_seconds
    x[kc] = xo
    y_min[kr] = yo
    return status, message, kkt, iterations, w, core.eta


def _unbounded_column(problem: Problem, red, status: Status, message: str) -> tuple:
    """An OPTIMAL run becomes DUAL_INFEASIBLE when ``solver.lp.trivial`` found an empty column whose cost
    improves without bound (the rest being feasible)."""
    if red.unbounded_col >= 0 and status == Status.OPTIMAL:
        j = red.unbounded_col
        status = Status.DUAL_INFEASIBLE
        message = (f"variable {problem.col_names[j]!r} appears in no constraint and its cost "
                   f"improves without bound in a direction it has no bound")
    return status, message


def _assemble(problem: Problem, s: Settings, status: Status, message: str, kkt, x: np.ndarray, y: np.ndarray,
              iterations: int, eta: float, w: float, seconds: dict, t_start: float,
              warm_started: bool) -> SolveResult:
    """The SolveResult of ``(x (n,), y (m,))`` in the problem's sense: A x and A'y straight from the CSC
    arrays (the CSC of A is the CSR of A'; same sums as scipy), reduced cost, row violation, the state for
    the next warm start; ``kkt`` None (trivially infeasible) reports nan objectives and inf residuals."""
    m, n = problem.n_rows, problem.n_cols
    row_activity, aty = np.empty(m), np.empty(n)
    kernels.spmv_csc(problem.a_indptr, problem.a_indices, problem.a_data, x, row_activity)
    kernels.spmv_csc_t(problem.a_indptr, problem.a_indices, problem.a_data, y, aty)
    reduced_cost = problem.cost - aty
    viol = np.maximum(problem.row_lower - row_activity, row_activity - problem.row_upper)
    max_viol = float(np.max(np.maximum(viol, 0.0), initial=0.0))
    if kkt is None:
        kkt = KKT(math.nan, math.nan, math.inf, math.inf, math.inf, math.inf, math.inf)
        dual_obj = math.nan
    else:
        dual_obj = int(problem.sense) * kkt.dual_objective
    seconds["solve"] = time.perf_counter() - t_start
    seconds["total"] = seconds["solve"]
    state = SolverState(x=x.copy(), y=y.copy(), step_size=eta, primal_weight=w, iterations=iterations)
    return SolveResult(
        status=status, x=x, y=y, reduced_cost=reduced_cost, row_activity=row_activity,
        objective=float(problem.cost @ x + problem.offset), dual_objective=dual_obj,
        primal_residual_rel=kkt.primal_residual_rel, dual_residual_rel=kkt.dual_residual_rel,
        gap_rel=kkt.gap_rel, iterations=iterations, seconds=seconds,
        point_feasible=bool(kkt.primal_residual_rel <= s.tol), state=state,
        warm_started=warm_started, message=message, max_row_violation=max_viol)
