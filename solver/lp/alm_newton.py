"""Semismooth Newton with conjugate gradients on the active set: the inner solver of ``solver.lp.alm``.

One proximal-ALM step needs the minimiser of the strongly convex, once-differentiable, piecewise
quadratic Psi (``solver.lp.alm_kernels`` docstring). Following SNIPAL (Li, Sun & Toh, "An asymptotically
superlinearly convergent semismooth Newton augmented Lagrangian method for linear programming", SIAM J.
Optim. 30(3), 2020, Algorithm SSN): the direction solves V d = -grad Psi with the generalised Hessian
V = tau A_J A_J' + diag(tau_s [i in I] + 1/sigma), J the columns strictly inside their bounds, by
preconditioned CG (matrix-free: one pass over the active columns per CG iteration; no factorisation);
the CG forcing term is min(0.1, ||grad|| / ||grad_0||) (inexact Newton, Eisenstat & Walker 1996); the
step is Armijo backtracking on Psi (mu = 1e-4, halving); within Psi's round-off (1e-12 relative) a step
that shrinks ||grad Psi|| is accepted as well.

The loop stops at the first point meeting ``grad_target(ax_minus_s_norm)`` (the outer loop's inexactness
criterion), after ``max_steps`` Newton steps, at ``deadline`` (time.perf_counter() seconds), once it has made
``pass_limit`` matrix passes (the work budget: a Psi evaluation is two passes, A' w and A x; a CG iteration
one fused pass over the active columns), or when the line search cannot decrease Psi any more (round-off:
the point is as good as this precision allows).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from solver.lp import alm_kernels as K

EVAL_PASSES = 2  #: matrix passes of one Psi evaluation (A' w for x(w), then A x(w))


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

    def swap(self) -> None:
        """Make the trial evaluation (``*2`` arrays) the current one."""
        self.x, self.x2 = self.x2, self.x
        self.s, self.s2 = self.s2, self.s
        self.ax, self.ax2 = self.ax2, self.ax
        self.grad, self.grad2 = self.grad2, self.grad
        self.col_active, self.col_active2 = self.col_active2, self.col_active
        self.row_active, self.row_active2 = self.row_active2, self.row_active


@dataclass
class NewtonStats:
    """What one inner solve did: Newton steps, CG iterations, matrix passes (module docstring), final
    ||grad Psi||_2, whether it met its target, and why it stopped ("target", "done", "steps", "time", "work",
    "line search", "not finite")."""

    steps: int = 0
    cg_iterations: int = 0
    passes: int = 0
    grad_norm: float = math.inf
    converged: bool = False
    reason: str = ""


def evaluate(sp: Subproblem, w: np.ndarray, ws: Workspace, trial: bool = False) -> float:
    """Psi(w); fills the workspace's current arrays (or the trial ``*2`` arrays when ``trial``)."""
    if trial:
        return K.dual_eval(sp.cp, sp.ci, sp.cv, w, sp.c, sp.xbar, sp.lv, sp.uv, sp.tau, sp.sbar, sp.lc, sp.uc,
                           sp.tau_s, sp.y, sp.sigma, ws.x2, ws.s2, ws.ax2, ws.grad2, ws.col_active2,
                           ws.row_active2)
    return K.dual_eval(sp.cp, sp.ci, sp.cv, w, sp.c, sp.xbar, sp.lv, sp.uv, sp.tau, sp.sbar, sp.lc, sp.uc,
                       sp.tau_s, sp.y, sp.sigma, ws.x, ws.s, ws.ax, ws.grad, ws.col_active, ws.row_active)


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
    g0 = None
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
        if g0 is None:
            g0 = gn
        cols = K.active_columns(ws.col_active)
        K.hessian_diagonal(sp.cp, sp.ci, sp.cv, cols, sp.tau, ws.row_active, sp.tau_s, sp.sigma, ws.diag, ws.prec)
        np.negative(ws.grad, out=ws.rhs)
        cg_tol = max(1e-8, min(0.1, gn / g0 if g0 > 0 else 0.1))
        cg = K.pcg(sp.cp, sp.ci, sp.cv, cols, sp.tau, ws.diag, ws.prec, ws.rhs, cg_tol, cg_max,
                   ws.d, ws.r, ws.z, ws.q, ws.p)
        st.cg_iterations += cg
        st.passes += cg
        slope = K.dot(ws.grad, ws.d)
        if not (slope < 0.0):
            ws.d[:] = -ws.grad / ws.prec  # CG gave no descent (round-off): a preconditioned gradient step
            slope = K.dot(ws.grad, ws.d)
        alpha = 1.0
        accepted = False
        for _ in range(30):
            np.add(w, alpha * ws.d, out=ws.w2)
            psi2 = evaluate(sp, ws.w2, ws, trial=True)
            st.passes += EVAL_PASSES
            if psi2 <= psi + 1e-4 * alpha * slope:
                accepted = True
                break
            # Psi is a difference of large terms: within its round-off, a step that shrinks the
            # gradient is a descent step too (Psi is convex, its gradient vanishes only at the minimiser)
            if psi2 - psi <= 1e-12 * (1.0 + abs(psi)) and math.sqrt(K.dot(ws.grad2, ws.grad2)) < gn:
                accepted = True
                break
            alpha *= 0.5
        st.steps += 1
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
