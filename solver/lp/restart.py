"""Restart decisions and primal-weight updates of restarted Halpern PDHG.

- Fixed-point residual in the PDHG metric (cuPDLPx ``docs/algorithm/restart.md``; Lu & Yang,
  arXiv 2407.16144): for z = (x, y) and its PDHG step T(z) = (xh, yh), dx = x - xh, dy = y - yh,
  r(z)^2 = (w/eta) ||dx||^2 + ||dy||^2 / (eta w) + 2 dy'A dx.
- Restart when r <= beta_sufficient r(anchor), or r <= beta_necessary r(anchor) and r rose since the
  previous check, or the epoch has lasted >= beta_artificial of all iterations.
- Primal weight by a PID controller on log w (cuPDLPx ``docs/algorithm/primal-weight.md``):
  e = log(w ||dx_epoch|| / ||dy_epoch||), log w <- log w - (Kp e + Ki sum_i rho^(n-i) e_i + Kd (e - e_prev)),
  with a reset to the best-seen w (best: relative primal and dual residuals closest to balanced) when the
  displacements leave [1e-16, 1e12], and to the weight of the best restart so far when the residuals
  have grown DIVERGENCE_FACTOR-fold since it (the weight feeding a divergence).
"""

from __future__ import annotations

import math

import numpy as np

from solver.model.settings import Settings

#: epoch displacements (scaled 2-norms) below this leave w to its best-seen value instead of updating it
#: (PDLP's eps_zero gate): once one side has converged to round-off, ||dy|| / ||dx|| says nothing and the PID
#: drove w to its clamp (a 3x4 LP at tol 1e-8: w 0.18 -> 1e-10 and the primal residual 4e-8 -> 5e-6)
DISPLACEMENT_MIN = 1e-10


#: a restart whose max(relative primal, dual residual) exceeds this factor times the best one seen at a
#: restart resets w to the weight of that best epoch (a badly scaled 6x7 LP: w 9.9 -> 1e10 in five restarts
#: while the dual residual grew from 0.1 to 1e8, and the run never came back). 1e3 also fired on the normal
#: early excursions of grow7 (restart residuals up to 1.7e4 x the best; 3,022 -> 10,460 iterations); at 1e5
#: it fires on none of the 38 shared LPs and saves 2 of 4 runs of 400 fuzzed LPs that hit the limit.
DIVERGENCE_FACTOR = 1e5


def fixed_point_residual(dx: np.ndarray, dy: np.ndarray, adx: np.ndarray, eta: float, w: float) -> float:
    """r(z) in the PDHG metric; dx (n,), dy (m,), adx = A dx (m,) (scaled space)."""
    v = (w / eta) * float(dx @ dx) + float(dy @ dy) / (eta * w) + 2.0 * float(dy @ adx)
    return math.sqrt(max(v, 0.0))


class RestartController:
    """Holds the restart reference residuals and the PID state of the primal weight.

    Attributes:
        w: current primal weight; r_anchor: residual at the epoch's start; r_last: at the last check.
    """

    def __init__(self, settings: Settings, w: float):
        self.s = settings
        self.w = float(w)
        self.best_w = float(w)
        self.best_balance = math.inf
        self.best_error = math.inf  # smallest max(relative primal, dual residual) seen at a restart
        self.best_error_w = float(w)  # the weight the epoch that reached it ran with
        self.integral = 0.0
        self.last_error = None
        self.r_anchor = math.nan
        self.r_last = math.nan

    def start_epoch(self, r: float) -> None:
        """Record the residual at the new anchor."""
        self.r_anchor = r
        self.r_last = r

    def should_restart(self, r: float, epoch_iterations: int, total_iterations: int) -> bool:
        """Decide a restart from the current residual r (call once per check)."""
        s = self.s
        ra = self.r_anchor
        go = False
        if not math.isfinite(ra) or ra <= 0.0:
            go = epoch_iterations > 0
        elif r <= s.restart_sufficient * ra:
            go = True
        elif r <= s.restart_necessary * ra and r > self.r_last:
            go = True
        elif epoch_iterations >= s.restart_artificial * total_iterations:
            go = True
        self.r_last = r
        return go

    def update_weight(self, dx_norm: float, dy_norm: float, rel_primal: float, rel_dual: float) -> float:
        """PID update of w from the epoch's primal/dual displacement norms (scaled 2-norms)."""
        s = self.s
        ok = DISPLACEMENT_MIN <= dx_norm <= 1e12 and DISPLACEMENT_MIN <= dy_norm <= 1e12
        # Only the displacements gate the update. A residual-ratio gate (HPR-LP) froze w whenever the
        # iterate was exactly primal feasible (rel. primal residual ~1e-20, ratio > 1e8 at every restart):
        # on the load-balancing LPs that kept w at its start value for thousands of iterations.
        ratio = rel_dual / rel_primal if rel_primal > 0 else math.inf
        error = max(rel_primal, rel_dual)
        if error < self.best_error:
            self.best_error, self.best_error_w = error, self.w
        elif error > DIVERGENCE_FACTOR * self.best_error:
            # the residuals grew DIVERGENCE_FACTOR-fold since the best restart: the weight is feeding a
            # divergence (large w -> large dual steps -> larger ||dy|| -> larger w); go back to the
            # weight that reached the best point and forget the PID's history
            self.w = self.best_error_w
            self.integral = 0.0
            self.last_error = None
            return self.w
        if not ok:
            self.w = self.best_w
            self.integral = 0.0
            self.last_error = None
            return self.w
        e = math.log(self.w * dx_norm / dy_norm)
        self.integral = s.pid_discount * self.integral + e
        de = 0.0 if self.last_error is None else e - self.last_error
        self.last_error = e
        self.w = self.w * math.exp(-(s.pid_kp * e + s.pid_ki * self.integral + s.pid_kd * de))
        self.w = min(max(self.w, s.primal_weight_min), s.primal_weight_max)
        balance = abs(math.log10(ratio)) if ratio > 0 else math.inf
        if balance < self.best_balance:
            self.best_balance = balance
            self.best_w = self.w
        return self.w
