"""Restarted reflected Halpern PDHG (r2HPDHG) for LPs in HiGHS form, warm-startable.

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
    SUSPECT_DUAL_GROWTH,
    SUSPECT_RATIO,
    highs_proves_infeasible,
    primal_infeasibility_ratio,
)
from solver.lp.restart import RestartController, fixed_point_residual
from solver.lp.scaling import ScaledLP, combined_bound_norm, scale_lp_csc
from solver.lp.termination import KKT, OrigLP, TargetSchedule, evaluate
from solver.lp.trivial import reduce_trivial
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


class _Core:
    """One run of the iteration on a reduced, scaled minimisation LP (internal to :func:`solve`)."""

    def __init__(self, lp: OrigLP, csc: tuple, settings: Settings, sense: int, t_start: float):
        """``csc`` = (indptr (n+1,), indices (nnz,), data (nnz,)) of the reduced A (sorted rows)."""
        self.lp, self.s, self.sense, self.t_start = lp, settings, sense, t_start
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

    def run(self, x_init, y_init, w_init, accept=None, confirm_infeasible=None):
        """Iterate from (x_init, y_init) (original units, reduced index order; None = cold) with primal
        weight ``w_init`` (None = cold value) until a termination criterion holds.

        ``accept``: None, or a callable given the original-unit point (x (n,), y (m,)) each time the
        relative KKT measures meet their targets; it returns None to accept the point, or the point's
        (primal, dual, gap) relative measures in the space the caller judges it in (e.g. after a
        postsolve). Each measure above ``settings.tol`` there gets a tighter target here
        (``solver.lp.termination.TargetSchedule``) and the run continues (same iterate, anchor and weight).
        ``confirm_infeasible``: None, or a callable given the seconds elapsed, asked at most once, when the
        dual-ray ratio is at most ``solver.lp.infeasibility.SUSPECT_RATIO`` while ||y~|| has grown past
        SUSPECT_DUAL_GROWTH times its start; True ends the run PRIMAL_INFEASIBLE.
        """
        s, sc, lp = self.s, self.sc, self.lp
        n, m = sc.n, sc.m
        rp, ri, rv = sc.csr
        cp, ci, cv = sc.csc
        c, lc, uc, lv, uv = sc.c, sc.lc, sc.uc, sc.lv, sc.uv
        g = float(s.reflection)
        eta = self.eta
        w = float(w_init) if (w_init is not None and math.isfinite(w_init) and w_init > 0) else 1.0
        w = min(max(w, s.primal_weight_min), s.primal_weight_max)  # a stored weight obeys the same clamp
        tau, sigma = eta / w, eta * w
        x = sc.x_to_scaled(x_init) if x_init is not None else np.minimum(np.maximum(0.0, lv), uv)
        y = sc.y_to_scaled(y_init) if y_init is not None else np.zeros(m)
        x = np.ascontiguousarray(x, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.float64)
        ax, aty = np.empty(m), np.empty(n)
        kernels.spmv_csr(rp, ri, rv, x, ax)
        kernels.spmv_csc_t(cp, ci, cv, y, aty)
        x0, y0, ax0, aty0 = x.copy(), y.copy(), ax.copy(), aty.copy()
        y_start_norm = float(np.linalg.norm(y))
        xh, yh, axh, atyh = np.empty(n), np.empty(m), np.empty(m), np.empty(n)
        kernels.primal_step(x, aty, c, lv, uv, tau, xh)
        block = kernels.run_block
        if s.threads is not None and s.threads > 1 and sc.csr[2].shape[0] >= s.parallel_min_nnz:
            import numba

            numba.set_num_threads(max(1, min(int(s.threads), numba.config.NUMBA_NUM_THREADS)))
            block = kernels.run_block_parallel
        k = block(rp, ri, rv, cp, ci, cv, c, lc, uc, lv, uv, tau, sigma, g, 0, 0,
                  x, y, x0, y0, ax, aty, ax0, aty0, xh, yh, axh, atyh)
        ctrl = RestartController(s, w)
        total = 0
        first = True
        restarts = 0
        next_log = 0
        t_iter = time.perf_counter()
        status, message = Status.ITERATION_LIMIT, ""
        cb = _PROGRESS.get()
        lpa = (lp.c, lp.lc, lp.uc, lp.lv, lp.uv, lp.lc_f, lp.uc_f, lp.lv_f, lp.uv_f, rp, ri, rv)
        work_n, work_m = np.empty(n), np.empty(m)
        pden, dden = 1.0 + lp.b_norm, 1.0 + lp.c_norm
        targets = (s.tol, s.tol, s.tol)  # primal, dual, gap: tightened only by ``accept``
        schedule = TargetSchedule(s.tol)
        while True:
            po, do, pn, dn, r, pinf, dinf = kernels.check_measures(
                c, sc.d1, sc.d2, sc.theta_b, sc.theta_c, tau, eta, w, *lpa,
                x, y, x0, y0, ax, aty, ax0, aty0, xh, yh, axh, atyh, total > 0, work_n, work_m)
            po += lp.offset
            do += lp.offset
            kkt = KKT(po, do, pn, dn, pn / pden, dn / dden, abs(po - do) / (1.0 + abs(po) + abs(do)))
            elapsed = time.perf_counter() - self.t_start
            if cb is not None:
                cb({"iteration": total, "seconds": elapsed,
                    "primal_objective": self.sense * kkt.primal_objective,
                    "dual_objective": self.sense * kkt.dual_objective,
                    "primal_residual_rel": kkt.primal_residual_rel,
                    "dual_residual_rel": kkt.dual_residual_rel, "gap_rel": kkt.gap_rel})
            if s.verbose and total >= next_log:
                print(_log_line(total, elapsed, kkt, self.sense, restarts, w), file=sys.stderr, flush=True)
                next_log = max(2 * next_log, s.check_every) if not s.verbose_all else 0
            if not (math.isfinite(kkt.primal_residual_rel) and math.isfinite(kkt.dual_residual_rel)
                    and math.isfinite(kkt.gap_rel)):
                status, message = Status.NUMERICAL_ERROR, "iterates became NaN or infinite"
                break
            if (kkt.primal_residual_rel <= targets[0] and kkt.dual_residual_rel <= targets[1]
                    and kkt.gap_rel <= targets[2]):
                outside = None if accept is None else accept(*evaluate(lp, sc, x, aty, xh, yh, axh, atyh, tau)[1:3])
                if outside is None:
                    status, message = Status.OPTIMAL, f"relative KKT residuals and gap below {s.tol:g}"
                    break
                tighter = schedule.next_targets(targets, kkt, outside)
                if tighter is None:  # the caller judges (and remedies) this point itself
                    status, message = Status.OPTIMAL, f"relative KKT residuals and gap below {s.tol:g}"
                    break
                targets = tighter
            if pinf <= s.infeasibility_tol:
                status = Status.PRIMAL_INFEASIBLE
                message = "a dual ray certifies that no feasible point exists"
                break
            # the duals diverged; the ray is the iterate differences' or, once the weight guard
            # (solver.lp.restart) has stopped the divergence, the normalised iterate y itself (PDLP's
            # second sequence, arXiv 2102.04592)
            suspect = (confirm_infeasible is not None
                       and float(np.linalg.norm(yh)) > SUSPECT_DUAL_GROWTH * (1.0 + y_start_norm))
            ratio = math.inf
            if suspect:
                with np.errstate(over="ignore", invalid="ignore"):  # huge duals: an overflow means no ray
                    ratio = min(pinf, primal_infeasibility_ratio(lp, sc.y_to_orig(yh), atyh / (sc.d2 * sc.theta_c)))
            if ratio <= SUSPECT_RATIO:
                proved = confirm_infeasible(elapsed)
                confirm_infeasible = None  # asked once per run
                if proved:
                    status = Status.PRIMAL_INFEASIBLE
                    message = (f"the duals diverged along a near-certificate (ray ratio {ratio:.1e}, above the "
                               f"{s.infeasibility_tol:g} a certificate needs) and HiGHS proved that no "
                               f"feasible point exists")
                    break
            if dinf <= s.infeasibility_tol:
                status = Status.DUAL_INFEASIBLE
                message = ("a primal ray certifies that the dual is infeasible: the objective is unbounded "
                           "if any feasible point exists")
                break
            if total >= s.iteration_limit:
                status, message = Status.ITERATION_LIMIT, f"iteration limit {s.iteration_limit} reached"
                break
            if elapsed >= s.time_limit_seconds:
                status, message = Status.TIME_LIMIT, f"time limit {s.time_limit_seconds:g} s reached"
                break
            if first:  # z is the anchor here: its residual is the epoch's reference
                ctrl.start_epoch(r)
                first = False
                restart = False
            else:  # cuPDLPx also restarts unconditionally at the first check after the start
                restart = ctrl.should_restart(r, k, total)
            if restart:
                restarts += 1
                w = ctrl.update_weight(float(np.linalg.norm(xh - x0)), float(np.linalg.norm(yh - y0)),
                                       kkt.primal_residual_rel, kkt.dual_residual_rel)
                tau, sigma = eta / w, eta * w
                for dst, src in ((x, xh), (x0, xh), (y, yh), (y0, yh), (ax, axh), (ax0, axh),
                                 (aty, atyh), (aty0, atyh)):
                    dst[:] = src
                k = 0
                # the new anchor's own residual is the reference of the epoch: one PDHG step from it
                # (it also serves as the epoch's first iteration below)
                kernels.primal_step(x, aty, c, lv, uv, tau, xh)
                block(rp, ri, rv, cp, ci, cv, c, lc, uc, lv, uv, tau, sigma, g, 0, 0,
                      x, y, x0, y0, ax, aty, ax0, aty0, xh, yh, axh, atyh)
                ctrl.start_epoch(fixed_point_residual(x - xh, y - yh, ax - axh, eta, w))
                total += 1
            kernels.halpern_step(k, g, x, y, ax, aty, xh, yh, axh, atyh, x0, y0, ax0, aty0, c, lv, uv, tau)
            k += 1
            count = max(0, min(s.check_every - 1, s.iteration_limit - total - 1))
            k = block(rp, ri, rv, cp, ci, cv, c, lc, uc, lv, uv, tau, sigma, g, k, count,
                      x, y, x0, y0, ax, aty, ax0, aty0, xh, yh, axh, atyh)
            total += count + 1
        _, xo, yo, _ = evaluate(lp, sc, x, aty, xh, yh, axh, atyh, tau)
        if s.verbose:
            print(_log_line(total, time.perf_counter() - self.t_start, kkt, self.sense, restarts, w,
                            f"  {status.name}"), file=sys.stderr, flush=True)
        self.iterate_seconds = time.perf_counter() - t_iter
        self.restarts = restarts
        return status, message, kkt, xo, yo, total, w


def _drop_empty(problem: Problem, kr: np.ndarray, kc: np.ndarray) -> tuple:
    """CSC arrays (indptr, indices, data) of A restricted to rows ``kr`` and columns ``kc``, where every
    dropped row and column is EMPTY (``solver.lp.trivial``): no nonzero is lost, so only the column
    pointers shrink and row indices are renumbered (monotone map: order within columns is kept)."""
    m, n = problem.n_rows, problem.n_cols
    cp, ci, cv = problem.a_indptr, problem.a_indices, problem.a_data
    if kc.size < n:
        cp = np.concatenate((cp[:1], cp[kc + 1]))
    if kr.size < m:
        new_row = np.zeros(m, dtype=np.int32)
        new_row[kr] = np.arange(kr.size, dtype=np.int32)
        ci = new_row[ci]
    return cp, ci, cv


def solve(problem: Problem, settings: Settings | None = None, warm_start=None, *, accept=None) -> SolveResult:
    """Solve the LP (relaxation, integrality ignored) of ``problem`` with restarted Halpern PDHG.

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
    Returns:
        SolveResult with every field filled (original units, problem's sense); ``result.state`` holds
        x, y, step size, primal weight and iterations for the next warm start.
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
    from solver.lp.presolve import presolve_applies, solve_with_presolve  # it calls back into solve()

    if presolve_applies(problem, s, warm_start):
        return solve_with_presolve(problem, s, warm_start)
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
    b_norm = combined_bound_norm(problem.row_lower, problem.row_upper)
    c_norm = float(np.linalg.norm(problem.cost))
    kc, kr = red.keep_cols, red.keep_rows
    all_cols, all_rows = kc.size == n, kr.size == m  # the usual case: no copies of the data below
    if all_cols:
        x = np.zeros(n)
    else:
        removed = np.ones(n, dtype=bool)
        removed[kc] = False
        x = np.where(removed, red.x_fixed, 0.0)
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
        offset_min = sense * problem.offset + (0.0 if all_cols else float(c_min[removed] @ x[removed]))
        # OrigLP is read-only: it may share the problem's arrays
        lp = OrigLP(c=c_min if all_cols else c_min[kc],
                    lc=problem.row_lower if all_rows else problem.row_lower[kr],
                    uc=problem.row_upper if all_rows else problem.row_upper[kr],
                    lv=problem.col_lower if all_cols else problem.col_lower[kc],
                    uv=problem.col_upper if all_cols else problem.col_upper[kc], b_norm=b_norm, c_norm=c_norm,
                    offset=offset_min)
        if kc.size == 0:
            status, message = Status.OPTIMAL, "every column is empty: solved analytically"
            kkt = KKT(offset_min, offset_min, 0.0, 0.0, 0.0, 0.0, 0.0)
        else:
            csc = _drop_empty(problem, kr, kc)
            if s.verbose:
                print(f"copter PDHG: {m} rows, {n} columns, {problem.nnz} nonzeros; "
                      f"tol {s.tol:g}{', warm start' if ws is not None else ''}", file=sys.stderr)
            core = _Core(lp, csc, s, sense, t_start)
            seconds["setup"] = time.perf_counter() - t_start
            if s.verbose:
                print(f"step size {core.eta:.4g} (||A~||_2 = {s.step_safety / core.eta:.4g})",
                      file=sys.stderr)
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
            def confirm(elapsed):
                # HiGHS gets the time left, at most as long as PDHG has run (>= 1 s): a wrong suspicion
                # (a feasible LP) costs at most about what the run had cost already
                left = s.time_limit_seconds - (time.perf_counter() - t_start)
                return highs_proves_infeasible(problem, min(left, max(1.0, elapsed)))

            status, message, kkt, xo, yo, iterations, w = core.run(x_init, y_init, w_init, core_accept, confirm)
            seconds["iterate"] = core.iterate_seconds
            eta = core.eta
            x[kc] = xo
            y_min[kr] = yo
        if red.unbounded_col >= 0 and status in (Status.OPTIMAL, Status.ITERATION_LIMIT, Status.TIME_LIMIT):
            j = red.unbounded_col
            if status == Status.OPTIMAL:
                status = Status.DUAL_INFEASIBLE
                message = (f"variable {problem.col_names[j]!r} appears in no constraint and its cost "
                           f"improves without bound in a direction it has no bound")
    if ws_msg:
        message = f"{message}; {ws_msg}" if message else ws_msg
    y = sense * y_min
    # A x and A'y straight from the CSC arrays (the CSC of A is the CSR of A'); same sums as scipy
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
        dual_obj = sense * kkt.dual_objective
    seconds["solve"] = time.perf_counter() - t_start
    seconds["total"] = seconds["solve"]
    state = SolverState(x=x.copy(), y=y.copy(), step_size=eta, primal_weight=w, iterations=iterations)
    return SolveResult(
        status=status, x=x, y=y, reduced_cost=reduced_cost, row_activity=row_activity,
        objective=float(problem.cost @ x + problem.offset), dual_objective=dual_obj,
        primal_residual_rel=kkt.primal_residual_rel, dual_residual_rel=kkt.dual_residual_rel,
        gap_rel=kkt.gap_rel, iterations=iterations, seconds=seconds,
        point_feasible=bool(kkt.primal_residual_rel <= s.tol), state=state,
        warm_started=ws is not None, message=message, max_row_violation=max_viol)
