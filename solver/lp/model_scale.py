"""Normalising a model whose costs or row bounds are uniformly far below 1 before the LP core solves it.

The relative KKT test (``solver.lp.termination``, PDLP / cuPDLPx) divides the dual residual by 1 + ||c||_2,
the primal residual by 1 + ||b||_2 and the gap by 1 + |p| + |d|. It is PDLP's eps_abs + eps_rel * norm
(Applegate et al., arXiv 2106.04756, termination criteria) with eps_abs = eps_rel = tol: when a norm is
far below 1, the absolute part decides and the test no longer measures the model against its own scale.
afiro with every cost times 1e-5 (||c||_2 = 1e-4) ended OPTIMAL after 0 iterations at objective -2.8e-8
(optimum -4.65e-3): presolve's postsolve of x = 0 is feasible, and any dual residual or gap is small next to
the "1 +" when ||c|| is (7.6e-6 and 2.4e-5 at the point returned). Row bounds times 1e-7 made x = 0 pass the
primal test (violation 4.4e-6, ||b||_2 = 8.4e-5) and, without presolve, the run ended at objective 0
(optimum -4.6e-5). A warm round after a cost change kept the previous point (the same absolute test).

The cure is to solve the model in its own units: with sigma_c = 2^floor(log2 ||c||_2) when
0 < ||c||_2 < 1 (else 1) and sigma_b likewise from the finite row bounds' norm
(``solver.lp.scaling.combined_bound_norm``), the core solves

    min (c / sigma_c)' x~ + offset / (sigma_c sigma_b),
    row_lower / sigma_b <= A x~ <= row_upper / sigma_b,   col_lower / sigma_b <= x~ <= col_upper / sigma_b

whose norms lie in [1, 2), so every "1 +" is of the order of the model's own data, and maps its point back:
x = sigma_b x~, y = sigma_c y~, reduced costs sigma_c r~, A x = sigma_b (A x)~, objectives sigma_c sigma_b p~.
Powers of two make both ways exact (no rounding; barring subnormals), so a warm start that is scaled in and a
result scaled out keep their bits, and a model whose norms are >= 1 (scale 1) runs bitwise as before. The
relative measures a result carries are those of the normalised model: the ones its status rests on. A
bound scaling whose column bounds would reach 1e20 (no bound) or whose offset would reach 1e30 (infinity) is not
applied.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

import numpy as np

from solver.lp.scaling import combined_bound_norm
from solver.model.problem import INF_BOUND, INF_VALUE, Problem
from solver.model.result import SolveResult
from solver.model.state import SolverState


@dataclass(frozen=True)
class ModelScale:
    """cost = sigma_c, bound = sigma_b: powers of two in (0, 1] (1.0: that side is left alone), with the norms
    they came from (``cost_norm`` = ||c||_2, ``bound_norm`` = ||b||_2 of the finite row bounds, or inf when a
    finite row bound of magnitude >= 1 settles it without the norm)."""

    cost: float = 1.0
    bound: float = 1.0
    cost_norm: float = math.nan
    bound_norm: float = math.nan

    @property
    def identity(self) -> bool:
        return self.cost == 1.0 and self.bound == 1.0

    @property
    def objective(self) -> float:
        """Factor from the normalised model's objective to the original's (sigma_c sigma_b, exact)."""
        return self.cost * self.bound

    def note(self) -> str:
        """One clause for the result's message."""
        parts = []
        if self.cost != 1.0:
            parts.append(f"costs by 2^{int(math.log2(self.cost))} (||c||_2 = {self.cost_norm:.3g})")
        if self.bound != 1.0:
            parts.append(f"row bounds by 2^{int(math.log2(self.bound))} (||b||_2 = {self.bound_norm:.3g})")
        return ("solved in the model's own units, normalising " + " and ".join(parts)
                + ": the relative measures are against them")


def power_below(norm: float) -> float:
    """2^floor(log2 norm) for a finite 0 < norm < 1, else 1.0 (norm / result lies in [1, 2)); also the MIP gap's and
    HiGHS MIP's cost scale (``solver.integer.gap.cost_scale``)."""
    if not (0.0 < norm < 1.0):  # also nan
        return 1.0
    _, e = math.frexp(norm)  # norm = mant * 2^e, mant in [0.5, 1)
    return math.ldexp(1.0, e - 1)


def _finite_max(v: np.ndarray) -> float:
    a = np.abs(v[np.isfinite(v)])
    return float(a.max()) if a.size else 0.0


def _some_finite_at_least_one(v: np.ndarray) -> bool:
    """Whether a finite entry of v has magnitude >= 1 (then ||b||_2 >= 1: no bound normalisation)."""
    a = np.abs(v)
    return bool(((a >= 1.0) & (a < math.inf)).any())


def model_scale(problem: Problem) -> ModelScale:
    """The normalisation of ``problem`` (module docstring); O(n + m). Never raises: a model with NaN or
    infinite data gets the identity and meets the core's own checks unchanged."""
    cn = math.sqrt(float(problem.cost @ problem.cost)) if problem.n_cols else 0.0
    bn = math.inf if _some_finite_at_least_one(problem.row_lower) or _some_finite_at_least_one(problem.row_upper) \
        else combined_bound_norm(problem.row_lower, problem.row_upper)  # the common case costs no norm
    sc, sb = power_below(cn), power_below(bn)
    if sb != 1.0 and not (max(_finite_max(problem.col_lower), _finite_max(problem.col_upper)) / sb < INF_BOUND):
        sb = 1.0  # a finite column bound would become infinite
    if not (abs(problem.offset) / (sc * sb) < INF_VALUE):
        sc = sb = 1.0
    return ModelScale(cost=sc, bound=sb, cost_norm=cn, bound_norm=bn)


def scaled_problem(problem: Problem, sc: ModelScale) -> Problem:
    """The normalised model (shares A, names and integrality with ``problem``)."""
    if sc.identity:
        return problem
    changes = {"cost": problem.cost / sc.cost, "offset": problem.offset / sc.objective}
    if sc.bound != 1.0:
        changes.update(row_lower=problem.row_lower / sc.bound, row_upper=problem.row_upper / sc.bound,
                       col_lower=problem.col_lower / sc.bound, col_upper=problem.col_upper / sc.bound)
    return problem.replace(**changes)


def scaled_warm_start(warm_start, sc: ModelScale):
    """A warm start (None, a SolverState, or (x (n,), y (m,)[, state]) in original units) in the normalised
    model's units: x / sigma_b, y / sigma_c (the state's step size and primal weight are the normalised
    runs' already). Anything else is passed on unchanged for the core to refuse."""
    if warm_start is None or sc.identity:
        return warm_start
    try:
        if isinstance(warm_start, SolverState):
            return replace(warm_start, x=np.asarray(warm_start.x, dtype=np.float64) / sc.bound,
                           y=np.asarray(warm_start.y, dtype=np.float64) / sc.cost)
        if isinstance(warm_start, (tuple, list)) and len(warm_start) in (2, 3):
            x = np.asarray(warm_start[0], dtype=np.float64) / sc.bound
            y = np.asarray(warm_start[1], dtype=np.float64) / sc.cost
            return (x, y, *warm_start[2:])
    except (TypeError, ValueError):
        pass
    return warm_start


def unscaled_state(state: SolverState | None, sc: ModelScale) -> SolverState | None:
    """A normalised run's state in original units (x * sigma_b, y * sigma_c)."""
    if state is None or sc.identity:
        return state
    return replace(state, x=state.x * sc.bound, y=state.y * sc.cost)


def unscaled_result(res: SolveResult, sc: ModelScale) -> SolveResult:
    """The normalised model's result in the original model's units (in place; returned). The relative
    measures, status, iterations and seconds are kept: they are what the status rests on."""
    if sc.identity:
        return res
    res.x = res.x * sc.bound
    res.row_activity = res.row_activity * sc.bound
    res.y = res.y * sc.cost
    res.reduced_cost = res.reduced_cost * sc.cost
    res.objective = res.objective * sc.objective
    res.dual_objective = res.dual_objective * sc.objective
    res.max_row_violation = res.max_row_violation * sc.bound
    res.state = unscaled_state(res.state, sc)
    res.message = "; ".join(m for m in (res.message, sc.note()) if m)
    return res


def unscaled_progress(fn, sc: ModelScale):
    """A progress callback (``solver.lp.pdhg.progress_callback``) that reports objectives in original units."""
    if fn is None or sc.identity:
        return fn
    f = sc.objective

    def report(info: dict):
        out = dict(info)
        for k in ("primal_objective", "dual_objective"):
            if k in out:
                out[k] = out[k] * f
        return fn(out)

    return report
