"""MILP rounds without branch-and-cut: LP relaxation + integerization heuristics + a proven gap bound.

Pipeline of :func:`solve_milp` (docs/DESIGN.md "Integerization"; the integer "shims" of the COpter authors' code,
REFERENCES.md section 1, generalised by structure detection):

0. a small model (at most ``settings.integer_highs_max_nonzeros`` nonzeros, the HiGHS fallback on, engine
   "auto") goes to HiGHS first (``_highs_first``): after step 1's structure detection and previous point, its LP relaxation by HiGHS
   simplex (duals, state, a valid bound), then HiGHS MIP at ``mip_gap_tol`` seeded with the previous point, with
   the improvement's stall rules (step 5); its point, completed exactly, ends the round (HiGHS MIP is not run
   when the previous point is already within ``mip_gap_tol`` of that bound or of the previous round's, which
   the round loop passes only for an unchanged model: the stages' stop rule, step 1); steps 2-5 run only
   when HiGHS returns none (the ``"fallback"`` step with ``reason`` "small model: HiGHS first"), or when it
   stopped at its time budget (not stalled) above ``mip_gap_tol`` with round time left: then they start from
   its point as the incumbent (``_stages_follow_highs_first``, report ``highs_first``; ``source`` says
   whose point won), and no HiGHS MIP step follows them when HiGHS first spent the budget (step 5);

1. structure detection (``structure.py``): choice rows, capacity rows, variable upper bounds, general
   integers; integer bounds rounded inward; the previous round's point (``warm_start.integer_x``, mapped
   by name) checked exactly on this model (``incumbent.py``; its continuous part re-solved): when feasible
   it is the incumbent from the start, replaced only by a strictly better point, so a round whose first
   stage bound is within ``mip_gap_tol`` of it stops there, and RENS and HiGHS start from it;
2. the LP relaxation by the LP core ``solver.lp.dispatch.solve``, warm-started (``relaxation.py``), in
   stages: each stage ends at its tolerance (``settings.relaxation_tol`` then /10 ... down to ``tol``)
   or, with ``settings.relaxation_round_iterations`` > 0, after a doubling iteration budget; every stage
   is rounded (steps 3-4) and the next stage continues warm from the stage's iterate only while the
   best point is not within ``mip_gap_tol`` of the tightest stage bound (``report["relaxation_stages"]``);
3. ``round`` / ``repair`` / ``fill`` on the integer columns (``rounding.py`` over numba kernels
   ``kernels.py``, numpy twins in ``kernels_ref.py``); with VUB links, sparser VUB thresholds are
   tried first (``rounding.vub_thresholds``: a parent rounds up only when its child's LP value is
   above 0.1, 0.01, ... of its bound), the next one only when step 4 finds the sparser choice infeasible;
4. ``fix_and_resolve``: integers fixed, continuous part re-solved warm by the LP core and finished
   exactly by HiGHS simplex on the small remaining LP (``resolve.py``); the point is re-checked exactly;
   then, per stage, when no point was found or its gap is above ``settings.integer_submip_gap``,
   ``rens`` (``submip.py``, Berthold 2014) has HiGHS solve the sub-MIP of the stage's LP point's roundings
   (integral LP values fixed, fractional ones kept to floor/ceil) within ``settings.integer_submip_seconds``
   (an improvement: at most as long as the relaxation took so far, >= 1 s; at most ``RENS_MAX_PER_ROUND``
   per round): it rounds jointly where independent rounding cannot (LB 1024x128: ~3,000 free binaries of
   131,072, a point in ~4 s) and an early, inexact relaxation already spans near-optimal points (Sia 10,240
   after 256 PDHG iterations: 0.28% from the bound); if no point exists after the last stage, a relax-and-fix
   ``dive`` (``dive.py``) fixes the sure integers, re-solves the LP relaxation warm with the LP core and rounds again (at most
   ``settings.integer_dive_max`` times); once a point exists, ``fill`` runs again with the exact
   (simplex-vertex) continuous values pinned, which frees integers an interior LP point still used
   (step ``"fill"`` with ``"after": "fix_and_resolve"``);
5. ``fallback`` (``settings.integer_fallback == "highs"``): HiGHS MIP for at most
   ``settings.integer_fallback_seconds`` (wall, within the round's time limit; one budget that the round's HiGHS
   MIP steps share: HiGHS first, this fallback and the improvement together, ``_highs_budget``; a step the spent
   budget skips is named in the report's ``fallback_skipped``) with ``Settings.threads`` HiGHS threads and
   ``mip_rel_gap`` = ``mip_gap_tol``, seeded with the rounded integer assignment, when steps 3-4 found no feasible
   point; also, seeded with the heuristic point, when its gap is above ``integer_fallback_gap``, or above
   ``mip_gap_tol`` on a model with at most ``integer_improve_max_integers`` integer columns (such a small model
   skips RENS and further relaxation stages once it has a point: HiGHS closes its weak-LP-bound gap in a fraction
   of a second, which stages cannot); this improvement also stops when branch-and-cut stalls
   (``IMPROVE_STALL_SECONDS``, ``fallback.StallWatch``: a bound HiGHS cannot close, as on dense packing MILPs,
   would otherwise take the whole budget every round);
6. the bound: the Lagrangian dual bound of the relaxation's dual point, valid even when the relaxation
   was not solved exactly (``bound.py``), with the choice rows kept in the inner problem when there are
   any (the tighter of the two); ``gap_rel = sense * (integer_objective - lp_bound) / |integer_objective|``,
   0 within an absolute 1e-6 (HiGHS's mip_gap and mip_abs_gap, ``solver.integer.gap``; inf when no finite bound
   follows); status OPTIMAL when ``gap_rel <= settings.mip_gap_tol``, else FEASIBLE;
   NO_INTEGER_SOLUTION when no point was found (a point is only ever reported when it satisfies bounds
   and integrality exactly and every row to 1e-9 relative to max(1, |bound|)).

Report (``result.mip``): integer_objective, lp_bound, gap_rel, fractional_before (integer columns whose LP
value is more than 1e-6 from an integer), steps (one dict per step run: ``step`` in previous | round | repair |
fill | fix_and_resolve | rens | dive | fallback, ``changed`` columns, ``seconds``, step details), fallback_used,
highs_mip_seconds (HiGHS MIP's seconds in the round's fallback steps, against ``integer_fallback_seconds``),
source (previous | heuristic | fallback | none; the message names which HiGHS MIP step, ``HIGHS_STEP_NAMES``,
when "fallback"), incumbent (which point won: previous | integerization | none),
previous_point (with a previous point: feasible, objective, resolved, reason, seconds), structure counts,
lp_engine, lp_status, lp_objective (of the last relaxation stage), relaxation_stages (one dict per stage: tol, iteration_budget, lp_status, iterations,
seconds, lp_bound, integer_objective, gap_rel, fractional_before; step dicts carry ``stage`` and
``vub_min`` when there are several).
``result.state``: the relaxation's LP iterate (x, y, step size, primal weight) for the next round's warm
start, plus ``integer_x`` = the integer allocation (previous-round tie-breaking).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from dataclasses import replace as dc_replace

import numpy as np

from solver.clock import time_limit_reached
from solver.integer import options
from solver.integer.ascent import FIRST_STEPS, AscentState, coupling_dual_ascent
from solver.integer.bound import ChoiceLagrangian, lagrangian_bound
from solver.integer.gap import abs_gap_of, gap_rel, lattice_bound, objective_step, objective_within
from solver.integer.relaxation import relaxation_tolerances, solve_relaxation
from solver.integer.report import milp_result
from solver.integer.resolve import fix_and_resolve
from solver.integer.rounding import run_rounding
from solver.integer.structure import detect_structure
from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.settings import Settings
from solver.model.state import SolverState
from solver.model.status import Status

__all__ = ["solve_milp", "INTEGRALITY_TOL", "RENS_MAX_PER_ROUND"]

INTEGRALITY_TOL = 1e-6  #: an LP value farther than this from an integer counts as fractional
RENS_MAX_PER_ROUND = 3  #: RENS sub-MIPs per round at most (one per relaxation stage)
#: the improvement's HiGHS (a point above the target, ``_improve_by_fallback``) stops once it has made no progress
#: for max(this, the seconds until its last progress) (``fallback.StallWatch``): a weak LP bound that
#: branch-and-cut cannot close otherwise costs the whole ``integer_fallback_seconds`` per round
IMPROVE_STALL_SECONDS = 2.0
#: ... except while its gap is more than 10x the target (``fallback.FAR_GAP_FACTOR``): then it waits at least this
#: (at most a quarter of its budget): LB 128x16's root holds a 66-vs-9 gap for 4-6 s before HiGHS finds 9
IMPROVE_FAR_SECONDS = 15.0
_INFEASIBLE_LP = (Status.PRIMAL_INFEASIBLE, Status.DUAL_INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED)


@dataclass
class _Round:
    """What the stages of one ``solve_milp`` call share: inputs, timings, report, and the best point so far."""

    problem: Problem
    settings: Settings
    warm_start: SolverState | None
    t_start: float
    fallback_mode: str
    submip_seconds: float
    st: object = None  #: the detected Structure
    seconds: dict = field(default_factory=dict)
    steps: list = field(default_factory=list)
    report: dict = field(default_factory=dict)
    prev: np.ndarray | None = None  #: (n,) the previous round's integer point (rounding tie-breaks)
    x_best: np.ndarray | None = None
    source: str = "none"
    lp_bound: float = math.nan
    iterations: int = 0
    lag: ChoiceLagrangian | None = None  #: the choice-row Lagrangian (built once per round, at the first stage)
    ascent: tuple | None = None  #: (bound, (m,) duals) of the best dual ascent so far
    #: the stage's dual ascent run stopped after its first steps for RENS (``_ascend``), continued after it
    ascent_cut: AscentState | None = None
    rens_runs: int = 0
    small: bool = False  #: at most ``integer_improve_max_integers`` integer columns (HiGHS improves directly)
    x_lp: np.ndarray | None = None  #: the last relaxation stage's primal (n,) and dual (m,) point and state
    y_lp: np.ndarray | None = None
    lp_state: SolverState | None = None
    out: object = None  #: the last RoundingOutcome (seed of dive and fallback)
    step: float | None = None  #: the objective's lattice step (``solver.integer.gap.objective_step``), once
    abs_gap: float | None = None  #: the gap's absolute closure (``solver.integer.gap.abs_gap_of``), once
    #: seconds HiGHS MIP has run in this round's HiGHS MIP steps (HiGHS first, the fallback, the improvement),
    #: which share one ``integer_fallback_seconds`` budget (``_highs_budget``)
    highs_mip_seconds: float = 0.0
    #: the HiGHS MIP step whose point is ``x_best`` when ``source`` is "fallback" (the message names it:
    #: ``HIGHS_STEP_NAMES``)
    highs_step: str | None = None

    def proven_bound(self, bound: float | None = None) -> float:
        """``lp_bound`` (or ``bound``) moved up to the objective's lattice when the objective is integral on
        integer points (``solver.integer.gap.lattice_bound``: a bound of -3e-5 proves an objective of 0)."""
        if self.step is None:
            self.step = objective_step(self.problem.cost, self.problem.integrality)
        return lattice_bound(self.problem.sense, self.lp_bound if bound is None else bound,
                             float(self.problem.offset), self.step)

    def closure(self) -> float:
        """The absolute gap within which this model's MIP gap is closed (``solver.integer.gap.abs_gap_of``)."""
        if self.abs_gap is None:
            self.abs_gap = abs_gap_of(self.problem.cost)
        return self.abs_gap

    def add_highs_seconds(self, seconds: float) -> None:
        """Charge ``seconds`` of a HiGHS MIP step to the round's one HiGHS budget (``highs_mip_seconds``, which
        the report carries)."""
        self.highs_mip_seconds += float(seconds)
        self.report["highs_mip_seconds"] = self.highs_mip_seconds

    def remaining(self) -> float:
        """Seconds left of ``settings.time_limit_seconds`` for the whole round (inf when unlimited)."""
        return float(self.settings.time_limit_seconds) - (time.perf_counter() - self.t_start)

    def resolve_budget(self) -> float:
        """Time for one fix-and-resolve LP: as long as the relaxation took, within what is left (>= 0.5 s)."""
        return max(0.5, min(self.seconds["relaxation"], self.remaining()))

    def improves(self, x: np.ndarray | None) -> bool:
        """``x`` is a point with a strictly better objective than the best so far (or the first one)."""
        p = self.problem
        return x is not None and (self.x_best is None or p.sense * (p.objective(x) - p.objective(self.x_best)) < 0)

    def gap(self, bound: float | None = None) -> float:
        """The best point's relative gap to ``lp_bound``, or to ``bound`` when that is tighter (inf without a
        point)."""
        if self.x_best is None:
            return math.inf
        s = self.problem.sense
        tighter = bound is not None and np.isfinite(bound) and (not np.isfinite(self.lp_bound)
                                                                or s * (bound - self.lp_bound) > 0)
        return gap_rel(s, self.problem.objective(self.x_best), self.proven_bound(bound if tighter else None),
                       self.closure())

    def finish(self, status: Status, x, message: str, *, bound: float | None = None,
               feasible: bool = False) -> SolveResult:
        """The round's SolveResult with the last relaxation's duals and state (``report.milp_result``)."""
        return milp_result(self.problem, status, x, self.y_lp, self.lp_bound if bound is None else bound,
                           self.iterations, self.seconds, self.t_start, self.lp_state, self.warm_start,
                           self.report, message, feasible=feasible)


def solve_milp(problem: Problem, settings: Settings, warm_start: SolverState | None) -> SolveResult:
    """Solve the MILP ``problem`` by LP relaxation + integerization (no branch-and-cut).

    Args:
        problem: a Problem with integer columns (n columns, m rows).
        settings: solver settings; uses the LP core's fields and ``integer_fallback`` ("highs" | "none"),
            ``integer_fallback_seconds`` (seconds), ``mip_gap_tol``.
        warm_start: the previous round's state mapped onto this problem (its x/y warm-start the LP
            relaxation; its ``integer_x`` breaks rounding ties), or None.
    Returns:
        SolveResult: ``x`` the integer point (or the rounded point when none was found, with
        ``point_feasible=False``), ``objective`` its objective (problem's sense, offset included),
        ``dual_objective``/``mip["lp_bound"]`` the valid bound, ``mip`` the report (module doc),
        ``state`` the LP iterate plus ``integer_x``.
    Raises:
        UsageError: unknown ``settings.integer_fallback``, a bad ``integer_submip_seconds``,
            ``integer_dual_ascent_steps`` or ``relaxation_round_iterations``.
        Errors of the LP core for invalid input.
    """
    t_start = time.perf_counter()
    run = _Round(problem, settings, warm_start, t_start, options.fallback_mode(settings),
                 options.submip_seconds(settings))
    options.ascent_steps(settings)  # a bad value fails before any work, not at the first stage that needs it
    run.small = int(np.count_nonzero(problem.integrality)) <= options.improve_max_integers(settings)
    t0 = time.perf_counter()
    run.st = st = detect_structure(problem)
    run.seconds["structure"] = time.perf_counter() - t0
    run.report = {"integer_objective": math.nan, "lp_bound": math.nan, "gap_rel": math.inf,
                  "fractional_before": 0, "steps": run.steps, "fallback_used": False, "source": "none",
                  "structure": st.summary()}
    if st.integer_infeasible_bounds.any():
        j = int(np.flatnonzero(st.integer_infeasible_bounds)[0])
        lo, up = float(problem.col_lower[j]), float(problem.col_upper[j])
        res = milp_result(problem, Status.PRIMAL_INFEASIBLE,
                          np.clip(np.zeros(problem.n_cols), problem.col_lower, problem.col_upper),
                          np.zeros(problem.n_rows), math.nan, 0, run.seconds, t_start, None, warm_start, run.report,
                          f"integer column {problem.col_names[j]!r} has no integer in its bounds [{lo:.10g}, "
                          f"{up:.10g}]: its own bounds conflict with its integrality, whatever the rows")
        # the conflict is that column's box: no IIS search, whose "the LP relaxation is feasible: integrality
        # itself conflicts with the rows" blamed rows that play no part (helper-228)
        res.iis = {"found": True, "status": "irreducible", "rows": [], "n_rows": 0, "n_columns": 1, "seconds": 0.0,
                   "columns": [{"name": str(problem.col_names[j]), "bound": "boxed", "lower": lo, "upper": up}]}
        return res
    _start(run)
    for stage in (_highs_first, _relaxation_stages, _dive, _fill_pinned, _fallback, _improve_by_fallback):
        done = stage(run)
        if done is not None:
            return done
    return _assemble(run)


def _start(run: _Round) -> None:
    """What every path of the round starts from: the previous round's point checked as the incumbent, the
    report's stage list and timers, and the bound (-inf, or the previous round's for the same model)."""
    problem, ws = run.problem, run.warm_start
    if ws is not None and ws.integer_x is not None and ws.integer_x.shape == (problem.n_cols,):
        run.prev = np.asarray(ws.integer_x, dtype=np.float64)
        _previous_incumbent(run)
    run.report["relaxation_stages"] = []
    run.seconds["relaxation"] = run.seconds["bound"] = run.seconds["rounding"] = 0.0
    run.seconds["fix_and_resolve"] = 0.0
    run.lp_bound = -math.inf * problem.sense
    if ws is not None and math.isfinite(ws.proven_bound):  # the same model's bound from the previous round
        run.lp_bound = float(ws.proven_bound)
        run.report["lp_bound"] = run.lp_bound
        run.report["bound_from_previous_round"] = run.lp_bound


# ---- stage 0: a small model goes to HiGHS first

def _highs_first(run: _Round) -> SolveResult | None:
    """A model with at most ``integer_highs_max_nonzeros`` nonzeros (the HiGHS fallback on, ``engine`` "auto": a
    pinned pdhg/alm keeps the relaxation stages): the LP relaxation by
    HiGHS simplex (``relaxation.solve_relaxation_highs``: duals, next round's state, a valid bound), then HiGHS
    MIP seeded with the incumbent (the previous round's point) at ``mip_gap_tol``, within the fallback's budget
    and the improvement's stall rules. HiGHS MIP is skipped when the previous point (exactly feasible here) is
    within ``mip_gap_tol`` of the bound (the relaxation's, or ``warm_start.proven_bound``, which the round loop
    sets only when the delta left the model unchanged), as a relaxation stage stops: an empty delta's round
    keeps its point (report ``highs_first``). Returns the round's SolveResult when HiGHS gives a point or a proof
    (infeasible / unbounded), or the previous point is proven, else None: the relaxation stages follow, from the
    bound found here.

    Why (#15): on such a model the stages load the PDHG and rounding kernels and end, above the target, in
    this same HiGHS MIP (``_improve_by_fallback``): egout took 0.29 s of a CLI round for HiGHS's 0.01 s."""
    problem, settings = run.problem, run.settings
    limit = options.highs_max_nonzeros(settings)
    # an LP engine pinned by the user (--engine pdhg|alm) keeps the relaxation stages with that engine: only
    # engine "auto" takes this path (a pinned engine silently replaced by HiGHS was a reported defect)
    if settings.engine != "auto":
        return None
    if run.fallback_mode != "highs" or problem.nnz > limit or run.remaining() <= 0:
        return None
    res = _highs_first_round(run, limit)
    if res is not None:  # the report's engine: HiGHS (the state carries no LP engine record for the next round)
        res.engine, res.engine_reason = "highs", f"small model: HiGHS first (nnz {problem.nnz} <= {limit})"
    return res


def _highs_first_round(run: _Round, limit: int) -> SolveResult | None:
    """The work of :func:`_highs_first` (``limit``: the nonzeros limit it passed)."""
    problem = run.problem
    from solver.integer.relaxation import relaxed_problem, solve_relaxation_highs

    t0 = time.perf_counter()
    lp = solve_relaxation_highs(relaxed_problem(problem, run.st.lower, run.st.upper),
                                time_limit_seconds=max(run.remaining(), 0.0), threads=run.settings.threads)
    run.seconds["relaxation"] += time.perf_counter() - t0
    run.report.update(lp_engine="highs", lp_status=lp.status.name, lp_objective=float(lp.objective),
                      lp_dual_residual_rel=0.0)
    _say(run, f"HiGHS first (small MILP: nnz {problem.nnz} <= {limit}): LP relaxation by HiGHS simplex "
              f"{lp.status.name}, objective {float(lp.objective):.10g}, {time.perf_counter() - t0:.3f} s")
    run.x_lp, run.y_lp = np.asarray(lp.x, dtype=np.float64), np.asarray(lp.y, dtype=np.float64)
    run.lp_state = lp.state
    if lp.status in _INFEASIBLE_LP:
        return _infeasible_relaxation(run, lp)
    if lp.status == Status.OPTIMAL:  # the Lagrangian bound of simplex's duals (their objective when it is -inf)
        bound = lagrangian_bound(problem, run.y_lp, run.st.lower, run.st.upper)
        if not np.isfinite(bound):
            bound = float(lp.dual_objective)
        if np.isfinite(bound) and (not np.isfinite(run.lp_bound) or problem.sense * (bound - run.lp_bound) > 0):
            run.lp_bound = bound
        run.report["lp_bound"] = float(run.lp_bound)
    if run.source == "previous" and run.gap() <= run.settings.mip_gap_tol:
        # the stages' rule (a stage whose bound proves the incumbent within the target ends the round): the
        # previous point, exactly feasible here, is proven by a bound valid for THIS model (the relaxation's,
        # or the previous round's when the round loop found the model unchanged: ``proven_bound``)
        run.report["highs_first"] = "previous round's point proven within the target: HiGHS MIP not run"
        return _assemble(run)
    it = problem.integrality
    seed = np.where(it, run.x_best, np.nan) if run.x_best is not None else np.full(problem.n_cols, np.nan)
    t1 = time.perf_counter()
    xf, finfo, rinfo = _highs_fallback(run, seed, stall_seconds=IMPROVE_STALL_SECONDS,
                                       far_seconds=IMPROVE_FAR_SECONDS)
    if xf is None and rinfo:
        finfo["reason_no_point"] = rinfo.get("reason", "")
    _say(run, f"HiGHS MIP ({'seeded with the incumbent' if finfo.get('seeded') else 'unseeded'}): "
              f"{finfo.get('highs_status')}, {'objective ' + format(float(problem.cost @ xf + problem.offset), '.10g') if xf is not None else 'no point'}"
              f", dual bound {finfo.get('mip_dual_bound', math.nan):.10g}, {finfo.get('seconds', 0.0):.3f} s")
    verdict = _take_highs_step(run, xf, finfo, t1, f"small model: HiGHS first (nnz {problem.nnz} <= {limit})",
                               run.x_best if run.x_best is not None else run.x_lp, run.x_lp,
                               "HiGHS MIP (small model)", "highs_first")
    if verdict is not None:
        return verdict
    if run.x_best is None:
        return None
    if _stages_follow_highs_first(run, finfo):
        run.report["highs_first"] = "stopped above the target at its time budget: relaxation stages follow"
        return None  # the stages keep HiGHS's point unless they beat it, and every bound only tightens
    return _assemble(run)


def _say(run: _Round, line: str) -> None:
    """``line`` on stderr under ``settings.verbose`` (``--verbose``: the solver's log): the small-MILP path runs
    no PDHG, whose iteration log was all ``--verbose`` printed, so it printed nothing there (helper-226)."""
    if run.settings.verbose:
        import sys

        print(line, file=sys.stderr)


def _stages_follow_highs_first(run: _Round, finfo: dict) -> bool:
    """HiGHS first stopped at its own budget (``integer_fallback_seconds``, not a proof, not a stall) with a
    point above ``mip_gap_tol`` while the round has time left: the relaxation stages run next, seeded with that
    point as the incumbent (HiGHS's last point is not the round's answer: bell5 with 0.05 s ended at gap 0.865,
    the stages reach 0.053; misc03 0.3 s 5,070 vs 3,360). A stalled HiGHS keeps its point (the stall rule is
    the verdict that more search does not pay), as does one that closed its gap ("Optimal")."""
    if finfo.get("highs_status") == "Optimal" or finfo.get("stalled"):
        return False
    return run.remaining() > 0 and run.gap() > run.settings.mip_gap_tol


# ---- stage 1: LP relaxation + rounding, in stages (tolerance ladder x doubling iteration budgets)

def _relaxation_stages(run: _Round) -> SolveResult | None:
    """Relax, bound, round, resolve, ascend and RENS, stage after stage; a SolveResult when the relaxation
    proves the MILP infeasible or unbounded, else None (``run`` holds the best point and the last stage)."""
    problem, settings, ws = run.problem, run.settings, run.warm_start
    stages: list = run.report["relaxation_stages"]
    state_in = ws
    tols = relaxation_tolerances(settings)
    every = options.round_every(settings)
    staged = len(tols) > 1 or every > 0
    ti, k, budget = 0, 0, every
    while True:
        t_stage = time.perf_counter()
        lp, engine, cap = _relax(run, tols[ti], budget if every else None, state_in)
        if lp.status in _INFEASIBLE_LP:
            return _infeasible_relaxation(run, lp)
        bound_k = _stage_bound(run, lp, engine)
        x_k, gap_k, rens_here = _integerize_stage(run, bound_k, t_stage, {"stage": k} if staged else {}, staged)
        stages.append({"tol": float(tols[ti]), "iteration_budget": cap,
                       "lp_status": lp.status.name, "iterations": int(lp.iterations),
                       "seconds": time.perf_counter() - t_stage, "lp_bound": float(bound_k),
                       "integer_objective": float(problem.objective(x_k)) if x_k is not None else math.nan,
                       "rens": bool(rens_here), "gap_rel": float(gap_k),
                       "fractional_before": run.report["fractional_before"]})
        if gap_k <= settings.mip_gap_tol or run.remaining() <= 0:
            return None
        if _highs_improves(run):
            return None  # small model: HiGHS seeded with this point (_improve_by_fallback) costs less than
            # more stages, which do not close a gap that is the LP relaxation's own (p0033: 18%, bell5: 5-33%)
        if lp.status == Status.OPTIMAL:  # this stage's tolerance is met: tighten, or stop at settings.tol
            if ti == len(tols) - 1:
                return None
            ti += 1
        elif not (every and lp.status == Status.ITERATION_LIMIT and run.iterations < settings.iteration_limit):
            return None  # time limit, numerical trouble, or the caller's own iteration limit
        k += 1
        budget *= 2
        s = run.lp_state
        state_in = SolverState(x=s.x, y=s.y, step_size=s.step_size, primal_weight=s.primal_weight,
                               iterations=s.iterations, integer_x=run.prev)


def _previous_incumbent(run: _Round) -> None:
    """The previous round's point (``run.prev``), checked exactly on this round's model
    (``incumbent.previous_point``), is the incumbent from the start when feasible: the stages replace it only
    with a strictly better point, and stop as soon as the gap to their bound is within ``mip_gap_tol``."""
    from solver.integer.incumbent import previous_point

    x, info = previous_point(run.problem, run.warm_start, run.settings,
                             resolve_seconds=max(0.5, min(1.0, run.remaining())))
    run.steps.append({**info, "changed": 0})
    run.report["previous_point"] = {k: v for k, v in info.items() if k != "step"}
    run.seconds["previous"] = info["seconds"]
    if x is not None:
        run.x_best, run.source = x, "previous"


def _relax(run: _Round, tol: float, budget: int | None, state_in: SolverState | None):
    """One relaxation stage at tolerance ``tol`` (and an iteration ``budget`` when staged by iterations);
    returns (lp SolveResult, engine, the stage's iteration cap or None) and records the point in ``run``."""
    settings = run.settings
    t0 = time.perf_counter()
    stage_settings = dc_replace(settings, tol=tol, time_limit_seconds=max(run.remaining(), 0.0))
    cap = max(1, min(budget, int(settings.iteration_limit) - run.iterations)) if budget is not None else None
    if cap is not None:
        stage_settings = dc_replace(stage_settings, iteration_limit=cap)
        if settings.engine == "auto":
            # a budgeted stage rounds PDHG's iterate after 128, 256, ... iterations; the ALM's outer steps
            # run to the tolerance (Sia 1,024 warm rounds: 2.4-8.4 s in the ALM, 0.7-1.9 s with 128 PDHG iterations)
            stage_settings = dc_replace(stage_settings, engine="pdhg")
        if settings.presolve == "auto":
            # nor HiGHS presolve in front of a cold budgeted stage: it cost more than the budget's iterations
            # (Sia 10,240 round 0: 0.30 s against 0.27 s for the stage without it) and on 7 bases (Sia 64 to
            # 10,240, Gavel, LB 256x32, 1024x128) every round 0 found the same point with the same gap
            stage_settings = dc_replace(stage_settings, presolve="off")
    lp, engine = solve_relaxation(run.problem, stage_settings, state_in, run.st.lower, run.st.upper)
    run.seconds["relaxation"] += time.perf_counter() - t0
    run.iterations += int(lp.iterations)
    run.report["lp_engine"] = engine
    run.report["lp_status"] = lp.status.name
    run.report["lp_objective"] = float(lp.objective)
    run.report["lp_dual_residual_rel"] = float(lp.dual_residual_rel)
    run.x_lp = np.asarray(lp.x, dtype=np.float64)
    run.y_lp = np.asarray(lp.y, dtype=np.float64)
    run.lp_state = lp.state if lp.state is not None else SolverState(x=run.x_lp.copy(), y=run.y_lp.copy())
    return lp, engine, cap


def _infeasible_relaxation(run: _Round, lp: SolveResult) -> SolveResult:
    """The result of a relaxation proven infeasible (no integer point) or unbounded/infeasible (no optimum: which
    of the two, :func:`_no_optimum` settles when it can)."""
    if lp.status == Status.PRIMAL_INFEASIBLE:
        return run.finish(lp.status, run.x_lp, f"LP relaxation: {lp.status.name}; no integer point exists",
                          bound=math.nan)
    return _no_optimum(run, run.x_best, _incumbent_name(run), f"LP relaxation ended {lp.status.name}", run.x_lp)


def _incumbent_name(run: _Round) -> str:
    """What ``run.x_best`` is, for a message: the previous round's point it started from, or the incumbent."""
    return "the previous round's point" if run.source == "previous" else "the incumbent"


def _no_optimum(run: _Round, point: np.ndarray | None, point_name: str, said: str, x_out: np.ndarray) -> SolveResult:
    """The round's result when ``said`` (the relaxation's or HiGHS MIP's verdict) rules out an optimum
    (``solver.integer.unbounded``): DUAL_INFEASIBLE, the MILP is unbounded, at an integer-feasible point (``point``
    (n,) when it holds exactly, else one HiGHS MIP finds for the zero objective within the round's HiGHS MIP budget,
    none with ``--integer-fallback none``); PRIMAL_INFEASIBLE when HiGHS proves that no integer point exists;
    else INFEASIBLE_OR_UNBOUNDED, reported at ``x_out`` (n,)."""
    from solver.integer.unbounded import settle_no_optimum

    budget = _highs_budget(run) if run.fallback_mode == "highs" else 0.0
    v = settle_no_optimum(run.problem, point, budget, run.settings.threads, point_name)
    if v.step is not None:
        run.steps.append(v.step)
        run.add_highs_seconds(v.step.get("seconds", 0.0))
    run.report["source"] = "none"
    run.report["integer_objective"] = math.nan
    if v.status == Status.DUAL_INFEASIBLE:
        return run.finish(v.status, v.x, f"{said}, and {v.clause}: the MILP is unbounded (no optimum)",
                          bound=math.nan, feasible=True)
    if v.status == Status.PRIMAL_INFEASIBLE:
        return run.finish(v.status, x_out, f"{said}; {v.clause}: no integer-feasible point exists", bound=math.nan)
    return run.finish(v.status, x_out, f"{said}: the MILP has no optimum; {v.clause}", bound=math.nan)


def _stage_bound(run: _Round, lp: SolveResult, engine: str) -> float:
    """The stage's valid bound (Lagrangian of its duals, the choice-row one when tighter); tightens
    ``run.lp_bound`` and counts the fractional integer columns."""
    problem, st = run.problem, run.st
    t0 = time.perf_counter()
    bound_k = lagrangian_bound(problem, run.y_lp, st.lower, st.upper)
    if run.lag is None:  # (also the reduced costs of RENS's last neighbourhood, the core)
        run.lag = ChoiceLagrangian(problem, st.lower, st.upper, st.choice_rows, st.choice_kind,
                                   st.csr_indptr, st.csr_indices)
    if st.choice_rows.size:  # choice rows kept in the inner problem: never weaker, often tighter
        bound_c = run.lag.evaluate(run.y_lp)[0]
        if not np.isfinite(bound_k) or (np.isfinite(bound_c) and problem.sense * (bound_c - bound_k) > 0):
            bound_k = bound_c
    if lp.status == Status.OPTIMAL and engine == "highs" and not np.isfinite(bound_k):
        bound_k = float(lp.dual_objective)  # exact simplex duals; only reached in development mode
    lp_bound = run.lp_bound
    if np.isfinite(bound_k) and (not np.isfinite(lp_bound) or problem.sense * (bound_k - lp_bound) > 0):
        run.lp_bound = bound_k  # every stage's bound is valid: keep the tightest
    run.seconds["bound"] += time.perf_counter() - t0
    run.report["lp_bound"] = float(run.lp_bound)
    xi_lp = run.x_lp[problem.integrality]
    run.report["fractional_before"] = int(np.count_nonzero(np.abs(xi_lp - np.round(xi_lp)) > INTEGRALITY_TOL))
    return bound_k


def _integerize_stage(run: _Round, bound_k: float, t_stage: float, tag: dict, staged: bool):
    """Round / repair / fill + fix-and-resolve the stage's LP point, then dual ascent and RENS when the gap
    asks for them; returns (the stage's own rounded point or None, the round's gap, RENS ran)."""
    x_k, run.out = _round_and_resolve(run, tag)
    if run.improves(x_k):
        run.x_best, run.source = x_k, "heuristic"
    gap_k = run.gap()
    # dual ascent on the coupling rows: the bound that PDHG's duals give after a few hundred iterations
    # can be 2% loose while the rounded point is already within 0.3% (Sia 10,240, warm rounds); a point that
    # is still far after the first steps goes to RENS first, the ascent goes on after it (``_ascend``)
    run.ascent_cut = None
    if run.x_best is not None and gap_k > run.settings.mip_gap_tol:
        gap_k = _ascend(run, bound_k, tag, rens_first=lambda g: _wants_rens(run, g, staged))
    rens_here = _wants_rens(run, gap_k, staged)
    if rens_here:
        gap_k = _rens_stage(run, gap_k, bound_k, t_stage, tag)
    run.ascent_cut = None
    return x_k, gap_k, rens_here


def _round_and_resolve(run: _Round, tag: dict):
    """Round ``run.x_lp`` (round / repair / fill) and complete the integers exactly (fix_and_resolve), for
    each VUB threshold of ``vub_thresholds`` (sparsest first) until a point is found.

    Returns:
        (x, out): the exact point ((n,) or None) and the last RoundingOutcome (seed of dive/fallback).
    """
    from solver.integer.rounding import vub_thresholds

    problem, seconds = run.problem, run.seconds
    x_k, out = None, None
    ths = vub_thresholds(run.st)
    for th in ths:
        t0 = time.perf_counter()
        out = run_rounding(problem, run.st, run.x_lp, run.prev, vub_min=th, free_vub_up=len(ths) > 1)
        seconds["rounding"] += time.perf_counter() - t0
        extra = {**tag, **({"vub_min": th} if len(ths) > 1 else {})}
        for d in out.steps:
            d.update(extra)
        run.steps.extend(out.steps)
        t0 = time.perf_counter()
        x_k, resolve_info = _resolve_rounded(run, out, last=th == ths[-1])
        run.steps.append({"step": "fix_and_resolve", "changed": int(resolve_info.get("changed", 0)),
                          "seconds": time.perf_counter() - t0, **extra,
                          **{k2: v for k2, v in resolve_info.items()
                             if k2 in ("lp_columns", "lp_rows", "highs_status", "pdhg_iterations", "reason")}})
        seconds["fix_and_resolve"] += time.perf_counter() - t0
        if x_k is not None:
            break
    return x_k, out


def _resolve_rounded(run: _Round, out, last: bool):
    """fix_and_resolve of a rounding outcome (also of its point before fill, at the last threshold)."""
    x_k, resolve_info = None, {}
    # a sparser threshold is a cheap probe: one candidate and a fifth of the PDHG budget (an infeasible
    # fixed LP otherwise burns the whole budget before HiGHS says so; LB 1024x128: about a minute each)
    budget = run.resolve_budget() * (1.0 if last else 0.2)
    if out.rows_violated == 0:
        for cand in ((out.x, out.x_before_fill) if last else (out.x,)):
            x_k, resolve_info = fix_and_resolve(run.problem, cand, run.settings, run.x_lp, run.y_lp,
                                                resolve_seconds=max(0.5, budget))
            if x_k is not None:
                break
            if np.array_equal(out.x, out.x_before_fill):
                break
    return x_k, resolve_info


def _ascend(run: _Round, stage_bound: float, tag: dict, rens_first=None) -> float:
    """Run ``coupling_dual_ascent`` when the round has a choice-row Lagrangian and steps are allowed.

    Starts from the duals of ``run.ascent`` = (bound, (m,) duals), the best earlier ascent, when its bound is
    tighter than ``stage_bound``, the bound of the stage's LP duals ``run.y_lp`` (m,), else from those;
    budget ``integer_dual_ascent_steps`` evaluations within the round's remaining time (a count, not the
    stage's seconds as before: the same round gives the same bound, and so the same stop, on any load).
    With ``rens_first`` (gap -> bool: RENS would run at that gap) the run stops after
    :data:`solver.integer.ascent.FIRST_STEPS` evaluations when the point is still that far from the bound
    (``run.ascent_cut`` keeps the run): in every Sia 10,240 round of sessions 28-29 whose rounded point was
    about 1% from the bound, 40 evaluations moved the bound by 0.01-0.1% and RENS followed anyway (0.065 s of
    a 1.7 s round). Nearer, the same run goes on for the rest of the budget. A call while ``run.ascent_cut``
    is set (after RENS) continues that run for the evaluations it has left.
    Tightens ``run.lp_bound``, keeps the best ``run.ascent``, appends a ``"dual_ascent"`` step; returns the
    round's gap.
    """
    settings, lag = run.settings, run.lag
    n_steps = options.ascent_steps(settings)
    cut, run.ascent_cut = run.ascent_cut, None
    if lag is None or lag.rows_k.size == 0 or n_steps <= 0 or run.remaining() <= 0:
        run.report["lp_bound"] = float(run.lp_bound)
        return run.gap()
    t0 = time.perf_counter()
    s = run.problem.sense
    tol = float(settings.mip_gap_tol)
    before = run.lp_bound
    if cut is not None:
        left, y0 = max(n_steps - cut.evaluations, 0), None
    else:
        left, y0 = n_steps, run.y_lp
        if run.ascent is not None and (not np.isfinite(stage_bound) or s * (run.ascent[0] - stage_bound) > 0):
            y0 = run.ascent[1]  # the earlier ascent is tighter than this stage's duals
    first = left if rens_first is None or cut is not None else min(left, FIRST_STEPS)
    bound, y_best, info = coupling_dual_ascent(lag, y0, run.problem.objective(run.x_best), tol, max_steps=first,
                                               seconds=run.remaining(), resume=cut)
    state, evals = info["state"], int(info["steps"])
    if first < left and not state.done and evals >= first:
        if rens_first(run.gap(bound)):
            run.ascent_cut = state  # RENS next; the run goes on after it
        else:
            bound, y_best, info = coupling_dual_ascent(lag, None, run.problem.objective(run.x_best), tol,
                                                       max_steps=left - first, seconds=run.remaining(),
                                                       resume=state)
            evals += int(info["steps"])
    if np.isfinite(bound) and (not np.isfinite(before) or s * (bound - before) > 0):  # tighter
        run.lp_bound = bound
    if np.isfinite(bound) and (run.ascent is None or s * (bound - run.ascent[0]) > 0):
        run.ascent = (bound, y_best)
    run.steps.append({"step": "dual_ascent", **tag, "changed": 0, "evaluations": evals,
                      "bound_before": float(before), "bound_after": float(run.lp_bound),
                      **({"continued": True} if cut is not None else {}),
                      **({"stopped_for_rens": True} if run.ascent_cut is not None else {}),
                      "seconds": time.perf_counter() - t0})
    run.seconds["bound"] += time.perf_counter() - t0
    run.report["lp_bound"] = float(run.lp_bound)
    return run.gap()


def _wants_rens(run: _Round, gap_k: float, staged: bool) -> bool:
    """RENS on this stage's LP point: when rounding found no point (joint rounding: LB's heavy shards) or
    one whose gap is above integer_submip_gap (Sia 10,240 after 256 iterations: 2.4% -> 0.28% in 1.4 s;
    LB 256x32: 24 -> 18 moves). In staged runs a point above mip_gap_tol also qualifies: the alternative is
    another relaxation stage, which costs more (Sia 10,240 round 7: the dual ascent put the gap at 0.87%,
    under the 1% rule, and four more stages ran to 2,048 iterations, 16 s, to reach 0.5%)."""
    settings = run.settings
    rens_gap = settings.integer_submip_gap
    if staged and math.isfinite(rens_gap):
        rens_gap = min(rens_gap, settings.mip_gap_tol)
    return (run.submip_seconds > 0 and run.rens_runs < RENS_MAX_PER_ROUND and run.remaining() > 0
            and (run.x_best is None or (gap_k > rens_gap and not (_highs_improves(run) and run.rens_runs))))


def _highs_improves(run: _Round) -> bool:
    """A small model's point above the target goes to HiGHS seeded with it (``_improve_by_fallback``) after one
    RENS at most and without more relaxation stages (``integer_improve_max_integers``): RENS first makes the
    seed better (LB 128x16: HiGHS seeded with the rounded point took 17.5 s, after RENS 1 s)."""
    # only with a finite bound: a relaxation that has not bounded the MILP yet may be on its way to an
    # unboundedness certificate, which the next stages give (random MILPs: -1.9e78 "points" otherwise)
    # and only while the round's HiGHS MIP budget is not spent (``_highs_budget``: HiGHS first stopped at it), else
    # the improvement does not follow and the stages go on
    return (run.small and run.x_best is not None and run.fallback_mode == "highs" and math.isfinite(run.gap())
            and _highs_budget(run) > 0)


def _rens_stage(run: _Round, gap_k: float, bound_k: float, t_stage: float, tag: dict) -> float:
    """RENS within its budget (improving: as long as the relaxation took, >= 1 s; finding: half of what is
    left when the fallback may follow); a better point also gets another dual ascent. Returns the gap."""
    settings = run.settings
    run.rens_runs += 1
    found = run.x_best is not None
    if found:
        budget = min(run.submip_seconds, run.remaining(), max(1.0, run.seconds["relaxation"]))
        reason = ("gap above integer_submip_gap" if gap_k > settings.integer_submip_gap
                  else "gap above mip_gap_tol (staged)")
    else:
        budget = min(run.submip_seconds, run.remaining() * (0.5 if run.fallback_mode == "highs" else 1.0))
        reason = None
    x_r = _rens_step(run, run.x_best if found else run.out.x, budget, reason, tag,
                     y_rank=run.ascent[1] if run.ascent is not None else run.y_lp)
    improved = run.improves(x_r)
    if improved:
        run.x_best, run.source = x_r, "heuristic"
        gap_k = run.gap()
    # a better point is a closer Polyak target: ascend again; an ascent stopped for RENS goes on either way
    if gap_k > settings.mip_gap_tol and (improved or run.ascent_cut is not None):
        gap_k = _ascend(run, bound_k, tag)
    return gap_k


def _rens_step(run: _Round, x_ref: np.ndarray, budget: float, reason: str | None, tag: dict,
               y_rank: np.ndarray) -> np.ndarray | None:
    """Run RENS (``submip.py``) for at most ``budget`` seconds and complete its point exactly.

    With the round's choice-row Lagrangian ``run.lag`` and duals ``y_rank`` (m,), the Lagrangian core
    (``submip.core_bounds``) is the last neighbourhood, tried when HiGHS proves RENS's infeasible.

    Returns the exact point ((n,)) or None; appends a ``"rens"`` step (``changed`` = integer columns that
    differ from ``x_ref``) and adds the time to ``seconds["rens"]``.
    """
    from solver.integer.submip import core_bounds, presolve_pays, rens

    problem, x_lp, lag = run.problem, run.x_lp, run.lag
    t0 = time.perf_counter()
    core = None
    if lag is not None:  # built only if RENS's own neighbourhoods fail
        def core():
            return core_bounds(problem, x_lp, lag, y_rank)
    # HiGHS stops the sub-MIP at half of the round's gap target (never below its own default, 1e-4): its
    # bound is on the sub-MIP only, and proving that optimal does not move the round's gap; and it stops at
    # its first point that the round's own bound proves within the target (HiGHS's objective_target): Sia
    # 10,240 (seed 9377, round 2), the root LP's point is 0.32% from the Lagrangian bound, and the root cuts
    # that took the sub-MIP's gap to 0.25% doubled its time (0.15 -> 0.27 s) for a round gap of 0.28%
    # the previous round's point, when it is the incumbent, is HiGHS's start in every neighbourhood that holds it
    target = objective_within(problem.sense, run.proven_bound(), float(run.settings.mip_gap_tol), run.closure())
    xr, rinfo = rens(problem, x_lp, budget, mip_rel_gap=max(1e-4, 0.5 * float(run.settings.mip_gap_tol)),
                     core=core, seed=run.x_best if run.source == "previous" else None,
                     threads=run.settings.threads, presolve=presolve_pays(problem, run.st),
                     objective_target=target)
    if xr is not None:
        xr, finfo = fix_and_resolve(problem, xr, run.settings, x_lp, run.y_lp,
                                    resolve_seconds=run.resolve_budget())
        if xr is None:
            rinfo["reason"] = finfo.get("reason", "")
    it = problem.integrality
    run.steps.append({"step": "rens", **tag, **({"reason": reason} if reason else {}),
                      "changed": int(np.count_nonzero(xr[it] != x_ref[it])) if xr is not None else 0,
                      "seconds": time.perf_counter() - t0, **rinfo})
    run.seconds["rens"] = run.seconds.get("rens", 0.0) + time.perf_counter() - t0
    return xr


# ---- stages 2-5 after the relaxation: dive, fill with exact continuous values, fallback, improvement

def _dive(run: _Round) -> None:
    """No point yet: fix the sure integers, re-solve the LP warm, round again (``dive.py``)."""
    settings = run.settings
    if run.x_best is not None or settings.integer_dive_max <= 0 or run.remaining() <= 0:
        return None
    from solver.integer.dive import dive

    it = run.problem.integrality
    t0 = time.perf_counter()
    # with the HiGHS fallback on, the dive may use half of the time left: the rest stays for the fallback
    # (LB 1024x128: a dive that used all of a 120 s limit left the round with no point at all)
    dive_seconds = run.remaining() * (0.5 if run.fallback_mode == "highs" else 1.0)
    x_best, dinfo = dive(run.problem, run.st, run.x_lp, run.y_lp, run.out.x,
                         dc_replace(settings, time_limit_seconds=max(dive_seconds, 0.0)), run.prev, run.lp_state,
                         max_dives=int(settings.integer_dive_max), resolve_seconds=run.resolve_budget())
    run.steps.append({"step": "dive", "changed": int(np.count_nonzero(x_best[it] != run.out.x[it]))
                      if x_best is not None else 0, "seconds": time.perf_counter() - t0, **dinfo})
    run.seconds["dive"] = time.perf_counter() - t0
    run.x_best = x_best
    if x_best is not None:
        run.source = "heuristic"
    return None


def _fill_pinned(run: _Round) -> None:
    """Fill again with the exact continuous values pinned (a vertex frees integers the LP point used)."""
    problem = run.problem
    if run.x_best is None or problem.integrality.all():
        return None
    from solver.integer.rounding import fill_pinned

    t0 = time.perf_counter()
    x_fill, k = fill_pinned(problem, run.st, run.x_best, run.prev)
    if k:
        x_new, _ = fix_and_resolve(problem, x_fill, run.settings, run.x_best, run.y_lp,
                                   resolve_seconds=run.resolve_budget())
        if x_new is not None and problem.sense * (problem.objective(x_new) - problem.objective(run.x_best)) < 0:
            run.x_best = x_new
        else:
            k = 0
    run.steps.append({"step": "fill", "changed": int(k), "seconds": time.perf_counter() - t0,
                      "after": "fix_and_resolve"})
    return None


def _highs_budget(run: _Round) -> float:
    """Seconds HiGHS MIP may still run in this round: what is left of ``integer_fallback_seconds`` after the
    round's earlier HiGHS MIP steps (``run.highs_mip_seconds``), within the round's time left. One budget for
    the round: HiGHS first that stopped at its budget above the target, followed by the stages, left the
    improvement step (seeded with their point) a second full budget, 2x ``--integer-fallback-seconds`` in one
    round."""
    return min(float(run.settings.integer_fallback_seconds) - run.highs_mip_seconds, run.remaining())


def _budget_spent(run: _Round, step: str) -> bool:
    """True (and the report's ``fallback_skipped`` says so) when ``_highs_budget`` leaves nothing for ``step``,
    a HiGHS MIP step that would run now."""
    if _highs_budget(run) > 0:
        return False
    run.report["fallback_skipped"] = (f"{step}: the round's integer_fallback_seconds "
                                      f"({float(run.settings.integer_fallback_seconds):g} s) already spent by "
                                      f"HiGHS MIP ({run.highs_mip_seconds:.3g} s)")
    return True


def _highs_fallback(run: _Round, seed: np.ndarray, stall_seconds: float | None = None,
                    far_seconds: float | None = None):
    """HiGHS MIP (``fallback.py``) seeded with ``seed`` ((n,), NaN = unset) for at most what is left of the
    round's ``integer_fallback_seconds`` (``_highs_budget``; and, with ``stall_seconds`` / ``far_seconds``, until
    it stalls: ``fallback.StallWatch``), with ``Settings.threads`` HiGHS threads, its point completed exactly;
    returns (x or None, info, fix_and_resolve info). Adds HiGHS's seconds to ``run.highs_mip_seconds`` (and the
    report's ``highs_mip_seconds``)."""
    from solver.integer.fallback import highs_mip

    # HiGHS stops at the round's own target (mip_rel_gap = mip_gap_tol): its "Optimal" then means what
    # copter's OPTIMAL means, and a looser target lets branch-and-cut stop earlier
    xf, finfo = highs_mip(run.problem, _highs_budget(run), seed,
                          mip_rel_gap=float(run.settings.mip_gap_tol), stall_seconds=stall_seconds,
                          far_seconds=far_seconds, threads=run.settings.threads)
    run.add_highs_seconds(finfo.get("seconds", 0.0))
    rinfo: dict = {}
    if xf is not None:
        xf, rinfo = fix_and_resolve(run.problem, xf, run.settings, run.x_lp, run.y_lp,
                                    resolve_seconds=run.resolve_budget())
    run.report["fallback_used"] = True
    run.report["fallback_highs_status"] = finfo["highs_status"]
    return xf, finfo, rinfo


def _fallback(run: _Round) -> SolveResult | None:
    """No point after the heuristics: the HiGHS MIP fallback, seeded with the rounded integers. A SolveResult
    when HiGHS proves the MILP infeasible (or unbounded), else None."""
    if run.x_best is not None or run.fallback_mode != "highs" or run.remaining() <= 0:
        return None
    if _budget_spent(run, "fallback"):
        return None
    it = run.problem.integrality
    t0 = time.perf_counter()
    xf, finfo, rinfo = _highs_fallback(run, np.where(it, run.out.x, np.nan))
    if xf is None and rinfo:
        finfo["reason"] = rinfo.get("reason", "")
    run.steps.append({"step": "fallback", "changed": int(np.count_nonzero(xf[it] != run.out.x[it]))
                      if xf is not None else 0, "seconds": time.perf_counter() - t0, **finfo})
    run.seconds["fallback"] = time.perf_counter() - t0
    if xf is not None:
        run.x_best, run.source, run.highs_step = xf, "fallback", "fallback"
    else:  # the relaxation never certified infeasibility (e.g. a diverged iterate hit the limit); HiGHS may have
        verdict = _highs_verdict(run, None, finfo["highs_status"], run.out.x, "the HiGHS MIP fallback")
        if verdict is not None:
            return verdict
    run.lp_bound = _tighter_bound(run, finfo)
    return None


def _improvement_reason(run: _Round) -> str | None:
    """Why the heuristic point goes to HiGHS seeded with it, or None: its gap is above
    ``integer_fallback_gap``, or above ``mip_gap_tol`` on a model with at most ``integer_improve_max_integers``
    integer columns (small general MILPs: rounding the relaxation of p0033, egout, gt2 or a 10-item
    knapsack leaves a point 2-125% worse, which HiGHS improves to the optimum in 0.01-0.3 s; above a few
    thousand integers, branch-and-cut is what the round is meant to avoid: Sia 10,240 takes HiGHS minutes)."""
    settings = run.settings
    if run.x_best is None or run.fallback_mode != "highs" or run.remaining() <= 0:
        return None
    gap = run.gap()
    if gap > settings.integer_fallback_gap:
        return "gap above integer_fallback_gap"
    if run.small and gap > settings.mip_gap_tol:
        return "gap above mip_gap_tol (small model)"
    return None


def _improve_by_fallback(run: _Round) -> SolveResult | None:
    """Improvement: HiGHS MIP seeded with the heuristic point, when ``_improvement_reason`` gives a reason, until
    it proves ``mip_gap_tol``, stalls (``IMPROVE_STALL_SECONDS``) or spends its budget. A SolveResult when HiGHS
    finds the MILP unbounded (a feasible point exists, so "infeasible or unbounded" means unbounded), else None."""
    reason = _improvement_reason(run)
    if reason is None or _budget_spent(run, "improvement"):
        return None
    it = run.problem.integrality
    t0 = time.perf_counter()
    xf, finfo, _ = _highs_fallback(run, np.where(it, run.x_best, np.nan), stall_seconds=IMPROVE_STALL_SECONDS,
                                   far_seconds=IMPROVE_FAR_SECONDS)
    return _take_highs_step(run, xf, finfo, t0, reason, run.x_best, run.x_best, "the HiGHS MIP step", "improvement")


def _take_highs_step(run: _Round, xf: np.ndarray | None, finfo: dict, t0: float, reason: str, ref: np.ndarray,
                     x_out: np.ndarray, who: str, step: str) -> SolveResult | None:
    """After a seeded HiGHS MIP run (HiGHS first, the improvement) started at ``t0`` (perf_counter seconds): its
    ``fallback`` step in the report (``changed``: integer columns that differ from ``ref`` (n,) when its point
    ``xf`` (n,) improves the incumbent), then :func:`_highs_verdict` (``x_out``, ``who``) when HiGHS proved there
    is no optimum, else None with the bound tightened by HiGHS's and a better point taken as the incumbent
    (``run.highs_step`` = ``step``, a key of ``HIGHS_STEP_NAMES``)."""
    it = run.problem.integrality
    better = run.improves(xf)
    run.steps.append({"step": "fallback", "reason": reason,
                      "changed": int(np.count_nonzero(xf[it] != ref[it])) if better else 0,
                      "seconds": time.perf_counter() - t0, **finfo})
    run.seconds["fallback"] = run.seconds.get("fallback", 0.0) + time.perf_counter() - t0
    verdict = _highs_verdict(run, xf, finfo["highs_status"], x_out, who)
    if verdict is not None:
        return verdict
    run.lp_bound = _tighter_bound(run, finfo)
    if better:
        run.x_best, run.source, run.highs_step = xf, "fallback", step
    return None


#: what the round's message says found the point when ``source`` is "fallback" (``run.highs_step``): the report's
#: ``source`` does not tell the three HiGHS MIP steps apart (``mip.steps``' ``reason`` does)
HIGHS_STEP_NAMES = {
    "highs_first": "HiGHS first: HiGHS MIP on the small model",
    "fallback": "HiGHS MIP fallback: the heuristics found no point",
    "improvement": "improvement step: HiGHS MIP seeded with the heuristic point",
}

#: HiGHS MIP statuses that rule out an optimum; with an integer-feasible point both mean unbounded
_NO_OPTIMUM = ("Primal infeasible or unbounded", "Unbounded")


def _highs_verdict(run: _Round, xf: np.ndarray | None, status_text: str, x_out: np.ndarray,
                   who: str) -> SolveResult | None:
    """The round's result when HiGHS MIP (``status_text``, its model status) proved the MILP has no optimum, else
    None; one rule for every HiGHS MIP step (HiGHS first, the fallback, the improvement). Without any integer
    point (``xf`` (n,) HiGHS's and the incumbent both None), "Infeasible" is PRIMAL_INFEASIBLE (exit 4, not 5)
    and the two ``_NO_OPTIMUM`` statuses go to :func:`_no_optimum`: unbounded (DUAL_INFEASIBLE) at the incumbent,
    else HiGHS's point, when it holds exactly, else at a point HiGHS finds for the zero objective; otherwise
    INFEASIBLE_OR_UNBOUNDED (PRIMAL_INFEASIBLE on HiGHS's proof), reported at ``x_out`` (n,). ``who`` names the
    step in the message."""
    point = run.x_best if run.x_best is not None else xf
    if status_text not in _NO_OPTIMUM and (point is not None or status_text != "Infeasible"):
        return None
    if status_text == "Infeasible":
        run.report["source"] = "none"
        run.report["integer_objective"] = math.nan
        return run.finish(Status.PRIMAL_INFEASIBLE, x_out, f"{who} proved that no integer-feasible point exists")
    name = _incumbent_name(run) if run.x_best is not None else "HiGHS's point"
    return _no_optimum(run, point, name, f"{who} found the MILP {status_text.lower()}",
                       point if point is not None else x_out)


def _tighter_bound(run: _Round, finfo: dict) -> float:
    """HiGHS's branch-and-cut dual bound when it is finite and tighter than ``run.lp_bound`` (both are valid)."""
    mip_bound = float(finfo.get("mip_dual_bound", math.nan))
    lp_bound = run.lp_bound
    if np.isfinite(mip_bound) and (not np.isfinite(lp_bound) or run.problem.sense * (mip_bound - lp_bound) > 0):
        run.report["lp_bound"] = mip_bound
        run.report["bound_source"] = "highs_mip"
        return mip_bound
    return lp_bound


def _assemble(run: _Round) -> SolveResult:
    """The report's verdict: NO_INTEGER_SOLUTION without a point, else OPTIMAL when the reported gap is within
    ``mip_gap_tol``, FEASIBLE otherwise (a HiGHS step's own "Optimal" included: the message then says so)."""
    run.report["source"] = source = run.source
    run.report["incumbent"] = ("none" if run.x_best is None else "previous" if source == "previous"
                               else "integerization")
    if run.x_best is None:
        run.report["integer_objective"] = math.nan
        return run.finish(Status.NO_INTEGER_SOLUTION, run.out.x, "no integer-feasible point found"
                          + ("" if run.fallback_mode == "highs" else " (fallback disabled)") + _limit_note(run))
    obj = run.problem.objective(run.x_best)
    run.lp_bound = run.proven_bound()  # the report's bound is the one the gap is proven with
    run.report["lp_bound"] = float(run.lp_bound)
    gap = gap_rel(run.problem.sense, obj, run.lp_bound, run.closure())
    run.report["integer_objective"] = obj
    run.report["gap_rel"] = gap
    # OPTIMAL only on the gap the report proves: HiGHS's own "Optimal" (its mip_rel_gap is mip_gap_tol) is not taken
    # on its word, since the dual bound it hands over can prove less than its stop rule used (helper-216: misc03 and
    # p0201 with costs x 1e6, "Optimal" at gap 0.00595 and 0.00525 against the 0.005 target, reported OPTIMAL)
    status = Status.OPTIMAL if gap <= run.settings.mip_gap_tol else Status.FEASIBLE
    highs_short = (source == "fallback" and run.report.get("fallback_highs_status") == "Optimal"
                   and status == Status.FEASIBLE)
    origin = ("previous round's point (still feasible, not improved)" if source == "previous"
              else f"fallback ({HIGHS_STEP_NAMES[run.highs_step]})" if source == "fallback" and run.highs_step
              else source)
    msg = f"integer point from the {origin}; objective {obj:.10g}, LP bound {run.lp_bound:.10g}, gap {gap:.3g}"
    if highs_short:
        msg += (f" (HiGHS called its point optimal within its stop rule, but the dual bound it returned proves gap "
                f"{gap:.3g}, above the target {run.settings.mip_gap_tol:g})")
    return run.finish(status, run.x_best, msg + (_limit_note(run) if status == Status.FEASIBLE else ""),
                      feasible=True)


def _limit_note(run: _Round) -> str:
    """"; time limit X s reached" (``solver.clock.time_limit_reached``, X = ``settings.time_limit_seconds``,
    which ``solver.api`` rewrites into the user's whole limit) when the round's time is spent, else "": a round
    the limit stopped above its target gap, or without a point, says that the limit did it (docs/usage.md, "Using it",
    on `--time-limit`)."""
    limit = float(run.settings.time_limit_seconds)
    if not math.isfinite(limit) or run.remaining() > 0:
        return ""
    return "; " + time_limit_reached(limit)
