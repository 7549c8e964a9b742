"""A PDHG point whose only miss is the gap counted through real bounds: HiGHS is asked once for the optimum.

``solver.lp.termination.near_bound`` counts a reduced cost in the dual objective through a bound below
``FAR_COLUMN_BOUND`` (1e15) wherever x_j is (``original_kkt``, the judge of every LP OPTIMAL), as HiGHS's PDLP
and a simplex certificate do; PDLP's rule (only near the bound) stays for bounds of 1e15 or more. That judge refutes
a point that PDLP's rule accepts in two kinds of LP that no local measure tells apart:

- the optimum is elsewhere: ``min -x + 0.99999 w, x - w <= 0, 0 <= x, w <= 1e12`` stopped at x = w = 0, objective
  ~0, where the optimum is -1e7 at x = w = 1e12 (w's reduced cost -1e-5, 1e12 from its bound);
- the point is optimal but its approximate duals cannot certify it through the bounds: adlittle with every upper
  bound capped at 1e9 or 1e12 (finite stand-ins for 'no bound') ends at the optimum, but the reduced costs of
  1e-7..1e-6 its interior columns keep are a gap of 1e6 through those bounds (HiGHS's PDLP, which counts them
  the same way, does not finish it in 15 s).

So when a direct run's returned point meets every measure but that gap (the run ended NUMERICAL_ERROR, or
ITERATION_LIMIT at the default limit: :data:`GAP_ONLY_STATUSES`), HiGHS (presolve + simplex, integrality dropped) is
asked once, for at most as long as PDHG has run (at least 1 s, within the time left), and its point, judged by the
same ``original_kkt``, is returned when it meets ``tol`` (both LPs above: -1e7 and adlittle's optimum). Otherwise the run ends NUMERICAL_ERROR naming the column, as before the question.

Bounds of 1e15 or more keep PDLP's rule, so the first LP with its bounds written as 9.99e19 (optimum -9.99e14) met
every measure at 0. A point that does, while its reduced costs counted through every finite bound could move the
objective by more than 1 + |p| (``solver.lp.reach.column_reach`` at tol 0), gets the same question: HiGHS's point
replaces it when HiGHS's optimum is another objective (beyond tol), and the message says whether HiGHS confirmed
the objective (adlittle with its open bounds written as 9.99e19: the same optimum). The same sentinel written as a
row (w <= 9.99e19, w open above) is left out of ||b||, and x = w = 0.026 met every measure (residuals -1.2e-5 on x,
+1.8e-6 on w): the residuals on open sides times the room a far row bound leaves (``reach.far_row_reach``, an
upper estimate) count in the same test.

One judge for every verdict: :func:`judged` runs once per LP core solve (``solver.lp.dispatch``), on the result of
whichever path produced it: PDHG direct or through presolve, the ALM, or a warm start kept because it already meets
tol. Before, only a direct PDHG run asked: the 9.99e19 LP ended OPTIMAL at ~0 under ``--engine alm`` (7 outer steps),
and a warm round whose delta moved the optimum out to those bounds (w's cost 1.00001 -> 0.99999, the start
x = w = 0, y = -1 meeting every measure) kept its start as OPTIMAL at 0 under every engine. HiGHS's point becomes
the result's and its state's (the next round starts from it).
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

from solver.lp.infeasibility import PRIMAL_RAY_CERTIFIES
from solver.lp.original_kkt import measured_result, original_kkt
from solver.lp.reach import exact_reach, far_row_reach
from solver.lp.termination import KKT, relative_gap, row_tolerance
from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.state import SolverState
from solver.model.status import Status

#: HiGHS's budget is at least this many seconds (within the time left), else as long as PDHG has run
MIN_HIGHS_SECONDS = 1.0
#: the run's statuses that ask HiGHS when the gap is their only miss: a NUMERICAL_ERROR, and an ITERATION_LIMIT (an LP
#: whose costs span 16 decades, min x + 1e16 y: PDHG held the optimum, residuals 1e-16 relative to ||c||, but duals
#: too coarse at x's scale to close the gap, and ran its 1,000,000 iterations to exit 5 where HiGHS solves it at once,
#: helper-209)
GAP_ONLY_STATUSES = (Status.NUMERICAL_ERROR, Status.ITERATION_LIMIT)


def only_the_gap_misses(kkt: KKT, tol: float) -> bool:
    """True when the residuals and every row meet ``tol`` (:func:`row_tolerance` for rows) and the gap does not."""
    return bool(kkt.primal_residual_rel <= tol and kkt.dual_residual_rel <= tol
                and kkt.row_violation_rel <= row_tolerance(tol) and not kkt.gap_rel <= tol)


def highs_point(problem: Problem, tol: float, seconds: float):
    """HiGHS's optimal point of ``problem`` (integrality dropped) within ``seconds``, judged by
    :func:`original_kkt` at ``tol``: (x (n,), y (m,, problem's sense), its ``original_kkt`` output, HiGHS's wall
    seconds) when HiGHS ends Optimal with primal and dual values and that measure meets ``tol``, else None."""
    from solver.highs_bridge import is_optimal, read_duals, read_point
    from solver.lp.infeasibility import relaxed_run

    if not seconds > 0.0:
        return None
    t = time.perf_counter()
    h = relaxed_run(problem, seconds)
    took = time.perf_counter() - t
    if not is_optimal(h):
        return None
    x, y = read_point(h, problem.n_cols, is_mip=False), read_duals(h, problem.n_rows)
    if x is None or y is None:
        return None
    measured = original_kkt(problem, x, y, tol)
    return (measured[1], measured[2], measured, took) if measured[0].converged(tol) else None


def highs_budget(elapsed: float, left: float) -> float:
    """Seconds HiGHS may take: max(MIN_HIGHS_SECONDS, ``elapsed`` (PDHG's seconds so far)) within ``left``."""
    return min(max(MIN_HIGHS_SECONDS, elapsed), left) if math.isfinite(left) else max(MIN_HIGHS_SECONDS, elapsed)


def objective_gap_sentence(whose: str, p_run: float, p_highs: float, took: float, tol: float,
                           status: Status = Status.NUMERICAL_ERROR, constant: float = 0.0) -> str:
    """The message of a run whose result is HiGHS's point after the gap-only miss (objectives in the problem's
    sense; ``whose``: the point's origin, "PDHG's", "the ALM's", "the warm start's"; ``status``: the run's own, one
    of :data:`GAP_ONLY_STATUSES`)."""
    same = _same(p_run, p_highs, tol, constant)
    missed = ("met its measures, but not the gap counted through bounds below 1e15" if status == Status.NUMERICAL_ERROR
              else "met every measure but the gap when the run reached its iteration limit (duals too coarse to "
                   "close it, as costs spanning many decades leave them)")
    return (f"relative KKT residuals and gap below {tol:g} at HiGHS's point: {whose} point (objective {p_run:.10g}) "
            f"{missed}, so HiGHS (simplex) was asked ({took:.2f} s): optimum {p_highs:.10g}, "
            + ("the same objective within tol" if same else f"not {whose} objective"))


def _same(p: float, q: float, tol: float, constant: float = 0.0) -> bool:
    """p and q (objectives carrying the objective constant ``constant``) agree within ``tol`` relative: the gap's
    measure, ``termination.relative_gap`` <= tol (the constant left out of the denominator)."""
    return relative_gap(p, q, constant) <= tol


def second_opinion(problem: Problem, tol: float, status: Status, measured: tuple, elapsed: float, left: float,
                   whose: str = "PDHG's"):
    """HiGHS's verdict on a returned point (module docstring), or None when it is not asked or changes nothing.
    ``status``: the run's (OPTIMAL, or NUMERICAL_ERROR with only the gap missing); ``measured``: ``original_kkt``'s
    output for the point (kkt, x (n,), y (m,), ...); ``elapsed``, ``left``: the run's seconds so far and the time
    left; ``whose``: the point's origin for the message. Returns (status, message or a clause to append (starts
    with "; "), HiGHS's point as ``original_kkt`` measured it (kkt, x (n,), y (m,, problem's sense), rc, ax) or
    None to keep the run's)."""
    kkt, x = measured[0], measured[1]  # the run's point as original_kkt measured it
    sense = float(problem.sense)
    p = sense * kkt.primal_objective
    if status in GAP_ONLY_STATUSES:
        if not only_the_gap_misses(kkt, tol):
            return None
        got = highs_point(problem, tol, highs_budget(elapsed, left))
        if got is None:
            return None
        hmeasured, took = got[2], got[3]
        return (Status.OPTIMAL, objective_gap_sentence(whose, p, sense * hmeasured[0].primal_objective, took, tol,
                                                       status, problem.offset), hmeasured)
    if status != Status.OPTIMAL or not kkt.converged(tol):
        return None
    rc = exact_reach(problem, x, measured[3])  # every nonzero reduced cost through its finite bound
    rr = far_row_reach(problem, x, measured[3], measured[4])  # open sides' residuals through a far row (estimate)
    if not rc.reach + rr.reach > 1.0 + abs(p - problem.offset):  # the objective constant left out, as the gap's
        return None
    got = highs_point(problem, tol, highs_budget(elapsed, left))
    top = rr if rr.reach > rc.reach else rc
    where = (f"of room under the bound of row {problem.row_names[top.row]!r}" if top.row >= 0 else "from its bound")
    why = (f"; counted through every finite bound (PDLP's rule reads those of 1e15 or more as 'no bound'), the "
           f"reduced costs could move the objective by {rc.reach + rr.reach:.3g} (variable "
           f"{problem.col_names[top.column]!r}, {top.distance:.3g} {where})")
    if got is None:
        return Status.OPTIMAL, why + ": HiGHS, asked, gave no point within its budget", None
    hmeasured, took = got[2], got[3]
    q = sense * hmeasured[0].primal_objective
    if _same(p, q, tol, problem.offset):
        return Status.OPTIMAL, why + f": HiGHS (simplex, {took:.2f} s) has the same optimum, {q:.10g}", None
    return (Status.OPTIMAL, f"relative KKT residuals and gap below {tol:g} at HiGHS's point: {whose} point "
            f"(objective {p:.10g}) met every measure, but" + why[1:] + f", so HiGHS (simplex) was asked ({took:.2f} "
            f"s): optimum {q:.10g}", hmeasured)


def judged(problem: Problem, tol: float, res: SolveResult, whose: str, t0: float, time_limit: float,
           measured: tuple | None = None, limit_asks: bool = True):
    """``res`` (an LP core result, any engine or path: PDHG direct or presolved, the ALM, a kept warm point) as
    :func:`second_opinion` rules on it: the one place where an OPTIMAL, or a NUMERICAL_ERROR or ITERATION_LIMIT
    missing only the gap (:data:`GAP_ONLY_STATUSES`), meets HiGHS's word. ``whose``: the point's origin for the message; ``t0``: the solve's start
    (``time.perf_counter()``); ``time_limit``: its limit in seconds from ``t0``; ``measured``: ``original_kkt``'s
    output for ``res``'s point at ``tol`` when the caller has it (else it is measured here: one pass);
    ``limit_asks``: whether an ITERATION_LIMIT may ask (False when the user set the limit: ``--iteration-limit 1``
    from a start that meets every measure but the gap, as x = 0, y = 0 does on an LP with positive costs, would
    otherwise come back OPTIMAL from HiGHS; the default limit reached is a stalled run).

    Returns (result, replaced): ``res`` itself when nothing changed; a copy with the status and message changed
    (the point kept, ``replaced`` False); or HiGHS's point as a new result (its measures, ``iterations`` and the
    state's step size, primal weight and engine record kept, the state's x and y HiGHS's: the next round starts
    from the point returned, ``replaced`` True)."""
    if res.status == Status.DUAL_INFEASIBLE and PRIMAL_RAY_CERTIFIES in res.message:
        return ray_confirmed(problem, tol, res, t0, time_limit)
    if res.status not in (Status.OPTIMAL, *GAP_ONLY_STATUSES) or res.x is None or res.y is None:
        return res, False
    if res.status == Status.ITERATION_LIMIT and not limit_asks:
        return res, False  # a limit the user set is the run's budget: it ends as its limit says
    elapsed = time.perf_counter() - t0
    if measured is None:
        measured = original_kkt(problem, res.x, res.y, tol)
    opinion = second_opinion(problem, tol, res.status, measured, elapsed, time_limit - elapsed, whose)
    if opinion is None:
        return res, False
    status, said, hmeasured = opinion
    message = res.message + said if said.startswith("; ") else said
    seconds = _with_second_opinion(res.seconds, time.perf_counter() - t0 - elapsed)
    if hmeasured is None:
        return replace(res, status=status, message=message, seconds=seconds), False
    return _highs_result(problem, tol, res, hmeasured, status, message, seconds), True


def _with_second_opinion(seconds: dict, spent: float) -> dict:
    """``seconds`` (a result's) with HiGHS's ``spent`` seconds as ``second_opinion``, added to ``solve`` and ``total``."""
    out = {**seconds, "second_opinion": spent}
    out["solve"] = out.get("solve", 0.0) + spent
    out["total"] = out.get("total", 0.0) + spent
    return out


def _highs_result(problem: Problem, tol: float, res: SolveResult, hmeasured: tuple, status: Status, message: str,
                  seconds: dict) -> SolveResult:
    """HiGHS's point (``hmeasured``: ``original_kkt``'s output for it) as the result in place of ``res``: its measures,
    ``res``'s iterations, engine and state record (the state's x and y HiGHS's: the next round starts from it)."""
    x, y = hmeasured[1], hmeasured[2]
    st = res.state
    state = (replace(st, x=x.copy(), y=y.copy()) if st is not None
             else SolverState(x=x.copy(), y=y.copy(), iterations=res.iterations))
    out = measured_result(problem, hmeasured, status, message, tol, res.iterations, seconds, state, res.warm_started)
    for k in ("engine", "engine_reason"):
        setattr(out, k, getattr(res, k))
    return out


def ray_confirmed(problem: Problem, tol: float, res: SolveResult, t0: float, time_limit: float):
    """A DUAL_INFEASIBLE that a primal ray of PDHG certified (its test is norm-wise, relative to the objective's
    improvement), put to HiGHS once (:func:`highs_budget`): kept when HiGHS proves the LP unbounded, or cannot
    decide in the time; when HiGHS finds an optimum instead that ``original_kkt`` accepts at ``tol``, that point is the
    result, OPTIMAL. A free column held back only by a coefficient of 2e-9 (helper-239, session 60: max -2 y + 1e6 u
    - 7 z, 2e-9 x - 3 z <= 26.5, 0 <= x + y <= 1000, ...) gave a ray whose 2e-9 violation of that row the test
    reads as none, at ``--tol 1e-6``: DUAL_INFEASIBLE, exit 4, for an LP whose optimum HiGHS finds at 6.55e10.
    Returns (result, replaced) as :func:`judged` does."""
    from solver.lp.infeasibility import highs_proves_unbounded

    elapsed = time.perf_counter() - t0
    budget = highs_budget(elapsed, time_limit - elapsed)
    if not budget > 0.0 or highs_proves_unbounded(problem, budget):
        return res, False
    spent = time.perf_counter() - t0 - elapsed
    got = highs_point(problem, tol, budget - spent)
    if got is None:
        return res, False
    hmeasured, took = got[2], got[3]
    q = float(problem.sense) * hmeasured[0].primal_objective
    message = (f"relative KKT residuals and gap below {tol:g} at HiGHS's point: PDHG ended DUAL_INFEASIBLE ({res.message}),"
               f" but HiGHS (simplex, {took:.2f} s) did not find the LP unbounded and found its optimum {q:.10g} (the "
               "ray test is norm-wise: it allows a violation of a row whose coefficients are tiny)")
    seconds = _with_second_opinion(res.seconds, time.perf_counter() - t0 - elapsed)
    return _highs_result(problem, tol, res, hmeasured, Status.OPTIMAL, message, seconds), True
