"""Semismooth Newton with conjugate gradients on the active set: the inner solver of ``solver.lp.alm``.

One proximal-ALM step needs the minimiser of the strongly convex, once-differentiable, piecewise
quadratic Psi (``solver.lp.alm_kernels`` docstring). Following SNIPAL (Li, Sun & Toh, "An asymptotically
superlinearly convergent semismooth Newton augmented Lagrangian method for linear programming", SIAM J.
Optim. 30(3), 2020, Algorithm SSN): the direction solves V d = -grad Psi with the generalised Hessian
V = tau A_J A_J' + diag(tau_s [i in I] + 1/sigma), J the columns strictly inside their bounds, by
preconditioned CG (matrix-free: one pass over the active columns per CG iteration; no factorisation)
to SNIPAL's accuracy ||V d + grad|| <= min(eta_bar, ||grad||^(1 + tau)), here in relative form:
||V d + grad|| <= min(``CG_ETA``, ||grad||^``CG_POWER``) ||grad|| (tau = 0.2; SNIPAL's tau is in (0, 1]);
where the rows with pairwise disjoint supports leave a small Schur complement (``Workspace.schur``), the
direction is exact instead: block elimination with a dense Cholesky factor of the coupling rows only
(``solver.lp.alm_schur``: no factorisation of A; TE ring warm rounds 0.58 -> 0.18 of a cold solve's passes; a
factorisation that fails is charged its work and PCG takes the rest of that inner solve);
the step is Armijo backtracking on Psi (mu = 1e-4: SNIPAL's line search), from the unit step, then from the
exact minimiser of Psi along d (``line_minimum``), halving from there; within Psi's round-off (1e-12
relative) a step that shrinks ||grad Psi|| is accepted as well. The unit step is evaluated in full (two
passes); when it is cut, A'd = v(w + d) - v(w) (v = A'w - c, which every evaluation keeps) is known without
a pass, so the minimiser (``alm_kernels.line_root``) and each shorter trial (``alm_kernels.psi_on_line``) are
a pass over the columns and rows only, and the accepted step costs one scatter pass (A x;
``alm_kernels.dual_on_line``). Before, every trial
evaluated Psi from scratch: TE Kdl's slowest part (K = 4, 7.7M nonzeros) made 29 evaluations in 9 Newton
steps, 0.76 s of a 3.6 s solve.

Why the forcing term is not the relative decrease ||grad|| / ||grad_0|| any more (measured, TE default ring,
warm rounds, tol 1e-4): that term asks the CG for 1e-2 to 1e-3 of the gradient once the gradient has
fallen 10-1000x within a solve, while the direction's accuracy pays only near the solution; SNIPAL's term,
in scaled units where ||b~|| <= 1, stays at 0.1 until ||grad|| < 1e-5 and tightens from there (the
superlinear rate needs only that it vanish with the gradient). Same rounds (eta held): 10-14% fewer CG
iterations, the same Newton steps; Cogentco TE warm rounds (one outer step each): 206, 90, 110 -> 194, 61, 50
matrix passes.

Why a Newton step can be cut short at all (measured on the same rounds, ``solver.lp.alm`` on eta): the
generalised Hessian is nearly singular on binding rows that the active columns do not span (TE: link
prices that leave every active path's cost unchanged: d'Vd / ||d||^2 measured 7.59e-4 against 1/sigma =
7.56e-4). There the only curvature is the multiplier term 1/sigma, so the direction moves those prices by
sigma times the residual: with sigma = 1,324, ||d|| = 3.2 in scaled units, while the first columns change
side at 1e-4 of it (402 columns at the unit step, where Psi rises by 1.5e3; alpha 2.4e-4 is accepted). A
regularised direction (V + eps I)^-1 grad (eps = c ||grad||, c = 1 to 100, or eps = 0.01 to 0.1) had unit
steps accepted (up to 56 of 64) but cost about as many matrix passes or more: the same columns still have
to enter, a few per step. What removes the cut steps is a smaller sigma, where the step is decided (``solver.lp.alm``).

Why the first shorter trial is Psi's minimiser along d and not the unit step's half (measured, session 43): past
the kinks where clipped rows enter their boxes Psi along d rises with curvature tau_s, so the minimiser of a cut
step lies anywhere in (0, 1), and halving lands up to 2x short of it, or further once the Armijo test has to
hold (then the next direction repeats most of this one). Psi along d is piecewise quadratic: its minimiser is
the root of a continuous piecewise-linear slope, found exactly by sorting the breakpoints in (0, 1) (one pass
over the columns and rows, 7 ms on a TE Kdl K = 4 part against 30 ms for a Psi evaluation). TE Kdl rounds 3
and 4, K = 4 parts replayed in-process (second run in the process): Newton steps 8 / 10 / 7 / 15 -> 7 / 11 / 9
/ 8 and 10 / 14 / 12 / 9 -> 10 / 11 / 9 / 9, the slowest part 2.30 -> 1.58 s and 2.11 -> 1.64 s; the
monolithic round 4 (5 Newton steps, 2 -> 4 of them unit steps) 2.66 -> 2.39 s. ``bench/bench_alm.py
--workloads te-ring sia te-cogentco lb --rounds 4 --alm-cold-rounds 0``: the ring and Cogentco made the same
Newton steps and passes (within one), Sia 1,024 GPUs the same within one step, LB 256 x 32 (whose engine is
PDHG) rounds 3-4 874 / 984 -> 332 / 571 Newton steps, 4.1-4.6 -> 1.3-2.9 s a round, its rounds 1-2 no longer
handed to PDHG. A bracketing root search (regula falsi, Illinois) on the slope took 15 evaluations a cut step and gave up
most of the gain; stopping it at |slope| <= 0.1 |slope(0)| cost Newton steps.

The loop stops at the first point meeting ``grad_target(ax_minus_s_norm)`` (the outer loop's inexactness
criterion), after ``max_steps`` Newton steps, at ``deadline`` (time.perf_counter() seconds), once it has made
``pass_limit`` matrix passes (the work budget: a Psi evaluation is two passes, A' w and A x; a cut step's
shorter trials none, the one accepted one, its A x; a CG iteration one fused pass over the active columns), or when the line search cannot decrease Psi any more (round-off:
the point is as good as this precision allows).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from solver.lp import alm_kernels as K
from solver.lp.alm_schur import SchurSystem

EVAL_PASSES = 2  #: matrix passes of one Psi evaluation (A' w for x(w), then A x(w))
ON_LINE_PASSES = 1  #: matrix passes of the accepted shorter step (its A x); the trials before it make none
CG_ETA = 0.1  #: the CG's relative residual at most (SNIPAL's eta_bar, relative to ||grad||)
CG_POWER = 0.2  #: ... and at most ||grad||^CG_POWER (SNIPAL's tau: the forcing term vanishes with the gradient)


@dataclass(eq=False)
class Subproblem:
    """Data of one inner problem (scaled space; see ``solver.lp.alm_kernels``).

    Attributes:
        cp (n+1,), ci (nnz,), cv (nnz,): CSC of A. c, lv, uv (n,): cost and column bounds.
        lc, uc (m,): row bounds. xbar (n,), sbar (m,): proximal centres. y (m,): multiplier estimate.
        tau, tau_s: proximal steps of columns and rows (> 0). sigma: penalty (> 0).
    """

    cp: np.ndarray
    ci: np.ndarray
    cv: np.ndarray
    c: np.ndarray
    lv: np.ndarray
    uv: np.ndarray
    lc: np.ndarray
    uc: np.ndarray
    xbar: np.ndarray
    sbar: np.ndarray
    y: np.ndarray
    tau: float
    tau_s: float
    sigma: float


class Workspace:
    """Work arrays of one problem size, reused by every inner solve (no allocation per step)."""

    def __init__(self, n: int, m: int):
        self.x, self.s, self.ax, self.grad = np.empty(n), np.empty(m), np.empty(m), np.empty(m)
        self.col_active, self.row_active = np.zeros(n, dtype=np.uint8), np.zeros(m, dtype=np.uint8)
        self.x2, self.s2, self.ax2, self.grad2 = np.empty(n), np.empty(m), np.empty(m), np.empty(m)
        self.col_active2, self.row_active2 = np.zeros(n, dtype=np.uint8), np.zeros(m, dtype=np.uint8)
        self.diag, self.prec = np.empty(m), np.empty(m)
        self.d, self.r, self.z, self.q, self.p = (np.empty(m) for _ in range(5))
        self.w2, self.rhs = np.empty(m), np.empty(m)
        self.v, self.v2, self.gd = np.empty(n), np.empty(n), np.empty(n)  # A'w - c (current, trial), A'd
        self.schur: SchurSystem | None = None  # set: Newton directions by block elimination (alm_schur), not PCG

    def swap(self) -> None:
        """Make the trial evaluation (``*2`` arrays) the current one."""
        self.x, self.x2 = self.x2, self.x
        self.v, self.v2 = self.v2, self.v
        self.s, self.s2 = self.s2, self.s
        self.ax, self.ax2 = self.ax2, self.ax
        self.grad, self.grad2 = self.grad2, self.grad
        self.col_active, self.col_active2 = self.col_active2, self.col_active
        self.row_active, self.row_active2 = self.row_active2, self.row_active


@dataclass
class NewtonStats:
    """What one inner solve did: Newton steps, of them ``unit_steps`` that the line search accepted at
    length 1, ``direct_solves`` of them whose direction came from ``solver.lp.alm_schur``, CG iterations, matrix passes (module docstring), final ||grad Psi||_2, whether it met its
    target, and why it stopped ("target", "done", "steps", "time", "work", "line search", "not finite")."""

    steps: int = 0
    unit_steps: int = 0
    direct_solves: int = 0
    cg_iterations: int = 0
    passes: int = 0
    grad_norm: float = math.inf
    converged: bool = False
    reason: str = ""


def line_minimum(sp: Subproblem, w: np.ndarray, ws: Workspace, slope: float) -> float:
    """The step in (0, 1) to try first once the unit Newton step was cut: the minimiser of the convex
    phi(alpha) = Psi(w + alpha ws.d) (``alm_kernels.line_root``: exact, one pass over the columns and rows, no
    matrix pass; ws.v = A'w - c and ws.gd = A' ws.d must hold), or 0.5 when phi falls all along [0, 1]
    (the unit step then failed the Armijo test only by Psi's round-off, which the halving handles as before).

    Args:
        sp: the inner problem. w (m,): the point. ws: its workspace (v, gd, d as above).
        slope: phi'(0) = grad Psi(w)' ws.d < 0.
    Returns:
        alpha in (0, 1).
    """
    alpha = K.line_root(ws.v, ws.gd, sp.xbar, sp.lv, sp.uv, sp.tau, w, ws.d, sp.sbar, sp.lc, sp.uc, sp.tau_s,
                        sp.sigma, slope)
    return alpha if 0.0 < alpha < 1.0 else 0.5


def cg_forcing(grad_norm: float) -> float:
    """The CG's relative residual target for a Newton step at ||grad Psi||_2 = ``grad_norm`` (scaled units):
    min(CG_ETA, grad_norm^CG_POWER), at least 1e-8 (module docstring; SNIPAL Algorithm SSN, step 1)."""
    return max(1e-8, min(CG_ETA, grad_norm ** CG_POWER))


def evaluate(sp: Subproblem, w: np.ndarray, ws: Workspace, trial: bool = False) -> float:
    """Psi(w) (two matrix passes); fills the workspace's current arrays (v, x, s, ax, grad, active sets), or
    the trial ``*2`` arrays when ``trial``."""
    if trial:
        return K.dual_eval(sp.cp, sp.ci, sp.cv, w, sp.c, sp.xbar, sp.lv, sp.uv, sp.tau, sp.sbar, sp.lc, sp.uc,
                           sp.tau_s, sp.y, sp.sigma, ws.v2, ws.x2, ws.s2, ws.ax2, ws.grad2, ws.col_active2,
                           ws.row_active2)
    return K.dual_eval(sp.cp, sp.ci, sp.cv, w, sp.c, sp.xbar, sp.lv, sp.uv, sp.tau, sp.sbar, sp.lc, sp.uc,
                       sp.tau_s, sp.y, sp.sigma, ws.v, ws.x, ws.s, ws.ax, ws.grad, ws.col_active, ws.row_active)


def psi_on_line(sp: Subproblem, w: np.ndarray, ws: Workspace, alpha: float) -> float:
    """Psi(w + alpha ws.d) from ws.v = A'w - c and ws.gd = A' ws.d: no matrix pass."""
    return K.psi_on_line(alpha, ws.v, ws.gd, sp.xbar, sp.lv, sp.uv, sp.tau, w, ws.d, sp.sbar, sp.lc, sp.uc,
                         sp.tau_s, sp.y, sp.sigma)


def evaluate_on_line(sp: Subproblem, w: np.ndarray, ws: Workspace, alpha: float) -> float:
    """Psi at ws.w2 = w + alpha ws.d, filling the trial ``*2`` arrays (one scatter pass: A x)."""
    return K.dual_on_line(sp.cp, sp.ci, sp.cv, alpha, ws.v, ws.gd, w, ws.d, sp.xbar, sp.lv, sp.uv, sp.tau,
                          sp.sbar, sp.lc, sp.uc, sp.tau_s, sp.y, sp.sigma, ws.w2, ws.v2, ws.x2, ws.s2, ws.ax2,
                          ws.grad2, ws.col_active2, ws.row_active2)


def newton_solve(sp: Subproblem, w: np.ndarray, ws: Workspace, grad_target, *, max_steps: int = 50,
                 cg_max: int = 500, deadline: float = math.inf, pass_limit: float = math.inf,
                 done=None) -> tuple[float, NewtonStats]:
    """Minimise Psi from ``w`` (m,), updated in place; the workspace ends holding x(w), s(w), A x(w).

    Args:
        sp: the inner problem. w: (m,) start (the multiplier estimate, or a previous round's duals).
        ws: work arrays sized for sp. grad_target: callable ||A x - s||_2 -> the ||grad Psi||_2 at
            which the point is accepted. max_steps: Newton steps at most. cg_max: CG iterations per
            step at most. deadline: time.perf_counter() value after which no new step starts.
            pass_limit: matrix passes (module docstring) after which no new step starts.
        done: None, or a callable (w, ws) -> bool asked after every Newton step whether the point
            (x(w) = ws.x, w) already solves the caller's problem (the outer loop's KKT test); True stops
            the solve with reason "done" (converged).
    Returns:
        (Psi(w), NewtonStats).
    """
    st = NewtonStats()
    psi = evaluate(sp, w, ws)
    st.passes = EVAL_PASSES
    direct = ws.schur is not None
    while True:
        gn = math.sqrt(K.dot(ws.grad, ws.grad))
        st.grad_norm = gn
        if not math.isfinite(gn):
            st.reason = "not finite"
            return psi, st
        pres = K.diff_norm(ws.ax, ws.s)
        if gn <= grad_target(pres):
            st.converged, st.reason = True, "target"
            return psi, st
        if st.steps >= max_steps:
            st.reason = "steps"
            return psi, st
        if time.perf_counter() >= deadline:
            st.reason = "time"
            return psi, st
        if st.passes >= pass_limit:
            st.reason = "work"
            return psi, st
        cols = K.active_columns(ws.col_active)
        K.hessian_diagonal(sp.cp, sp.ci, sp.cv, cols, sp.tau, ws.row_active, sp.tau_s, sp.sigma, ws.diag, ws.prec)
        np.negative(ws.grad, out=ws.rhs)
        solved = direct and ws.schur.solve(sp.cp, sp.ci, sp.cv, ws.col_active, sp.tau, ws.diag, ws.prec, ws.rhs,
                                           ws.d)
        if direct:
            st.passes += ws.schur.passes  # a failed factorisation was assembled and attempted too: charged
        if solved:
            st.direct_solves += 1
        else:
            # S was not numerically positive definite: at this tau and sigma the same round-off would defeat
            # the next steps' factorisations too, so the rest of this inner solve runs PCG (ws.d: from 0)
            direct = False
            cg = K.pcg(sp.cp, sp.ci, sp.cv, cols, sp.tau, ws.diag, ws.prec, ws.rhs, cg_forcing(gn), cg_max,
                       ws.d, ws.r, ws.z, ws.q, ws.p)
            st.cg_iterations += cg
            st.passes += cg
        slope = K.dot(ws.grad, ws.d)
        if not (slope < 0.0):
            ws.d[:] = -ws.grad / ws.prec  # CG gave no descent (round-off): a preconditioned gradient step
            slope = K.dot(ws.grad, ws.d)
        alpha = tried = filled = 1.0  # tried: the last step tested; filled: the one the trial arrays hold
        accepted = False
        for _ in range(30):
            tried = alpha
            if alpha == 1.0:
                np.add(w, ws.d, out=ws.w2)
                psi2 = evaluate(sp, ws.w2, ws, trial=True)
                st.passes += EVAL_PASSES
            else:
                if alpha == 0.5:  # the unit step was cut: A'd = v(w + d) - v(w), no pass; then Psi's minimiser
                    np.subtract(ws.v2, ws.v, out=ws.gd)  # along d (no pass either), halving from there if need be
                    alpha = tried = line_minimum(sp, w, ws, slope)
                psi2 = psi_on_line(sp, w, ws, alpha)
            if psi2 <= psi + 1e-4 * alpha * slope:
                accepted = True
                break
            # Psi is a difference of large terms: within its round-off, a step that shrinks the
            # gradient is a descent step too (Psi is convex, its gradient vanishes only at the minimiser)
            if psi2 - psi <= 1e-12 * (1.0 + abs(psi)):
                if filled != alpha:
                    psi2, filled = evaluate_on_line(sp, w, ws, alpha), alpha
                    st.passes += ON_LINE_PASSES
                if math.sqrt(K.dot(ws.grad2, ws.grad2)) < gn:
                    accepted = True
                    break
            alpha *= 0.5
        if filled != tried:  # the accepted step (or, if none, the last one tried) with its gradient
            psi2 = evaluate_on_line(sp, w, ws, tried)
            st.passes += ON_LINE_PASSES
        st.steps += 1
        st.unit_steps += accepted and alpha == 1.0
        if not accepted:
            # Psi cannot be decreased at this precision; take the trial step only if it shrinks the gradient
            if math.sqrt(K.dot(ws.grad2, ws.grad2)) < gn:
                w[:] = ws.w2
                ws.swap()
                psi = psi2
            st.grad_norm = math.sqrt(K.dot(ws.grad, ws.grad))
            st.reason = "line search"
            return psi, st
        w[:] = ws.w2
        ws.swap()
        psi = psi2
        if done is not None and done(w, ws):
            st.grad_norm = math.sqrt(K.dot(ws.grad, ws.grad))
            st.converged, st.reason = True, "done"
            return psi, st
