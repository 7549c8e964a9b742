"""Solver settings: one documented dataclass, every limit in seconds.

Defaults follow the r2HPDHG / cuPDLPx recipe (Lu, Peng, Yang 2025, arXiv 2507.14051; Lu & Yang,
arXiv 2407.16144), HPR-LP (Chen et al., arXiv 2408.12179) and PDLP (Applegate et al., arXiv 2106.04756).
The LP core owns and may extend this module.

Values are validated on construction (``__post_init__``, also run by ``dataclasses.replace``): a bad
value raises :class:`solver.model.errors.SettingsError` naming the field. Tolerances (``tol``,
``infeasibility_tol``) must be positive and below 1 (``relaxation_tol`` too, or inf = no looser first
stage: a relative tolerance of 1 or more accepts any point), ``mip_gap_tol`` >= 0 and finite, the
other gaps >= 0 (inf = never), no number may be nan, counts are whole numbers >= 0 (``check_every`` >= 1,
``threads`` None or >= 1) and the string options one of their choices. Time limits (:data:`SECONDS`) and
iteration limits are >= 0: 0 is an exhausted budget, which the library builds itself when a limit is spent
(``solver.clock.budgeted``, ``solver/integer``, ``solver/lp/presolve.py``: they clamp at 0), and such a
solve ends at once at its limit; a negative one is refused (it used to be taken silently as a spent budget).
The CLI checks the values a user gives first (``copter_cli/solver_options.py``), with messages naming
the flag.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, fields

from solver.model.errors import SettingsError

CHOICES = {"integer_fallback": ("highs", "none"), "presolve": ("auto", "on", "off"),
           "warm_primal_weight": ("fresh", "reuse"), "engine": ("auto", "pdhg", "alm")}  #: the string options
POSITIVE_FINITE = ("tol", "infeasibility_tol", "step_safety")
NONNEGATIVE_FINITE = ("mip_gap_tol", "restart_sufficient", "restart_necessary", "restart_artificial",
                      "pid_discount", "reflection")
NONNEGATIVE = ("integer_fallback_gap", "integer_submip_gap")  #: inf allowed (= never)
POSITIVE = ("relaxation_tol", "primal_weight_min", "primal_weight_max")  #: inf allowed
COUNTS = ("iteration_limit", "check_every", "integer_dive_max", "integer_dual_ascent_steps",
          "integer_improve_max_integers", "integer_highs_max_nonzeros", "relaxation_round_iterations", "power_iterations", "ruiz_iterations",
          "threads", "parallel_min_nnz")  #: whole numbers (iteration_limit may also be inf)
SECONDS = ("time_limit_seconds", "integer_fallback_seconds", "integer_submip_seconds", "iis_seconds")  #: inf allowed
RELATIVE = ("tol", "infeasibility_tol", "relaxation_tol")  #: relative tolerances: below 1 (relaxation_tol: or inf)
FLAGS = ("verbose", "verbose_all", "bound_objective_scaling")
OPTIONAL = ("relaxation_tol", "pock_chambolle_alpha", "threads")  #: None is a valid value
#: the smallest relative KKT tolerance (``tol``, ``relaxation_tol``) the CLI's options and a state's config.json take:
#: HiGHS's own floor for its feasibility tolerances. Below it the residuals of a double-precision solve cannot meet the
#: tolerance: ``--tol 1e-17`` and ``5e-324`` were accepted and ran to the iteration limit (exit 5; helper-190, session
#: 49), and a config.json with 1e-12 still was (helper-194). ``Settings`` itself takes smaller ones (the tests' "out of
#: reach" tolerances).
MIN_RELATIVE_TOL = 1e-10
FLOORED = ("tol", "relaxation_tol")  #: the tolerances :data:`MIN_RELATIVE_TOL` applies to


def settings_complaint(name: str, v) -> str | None:
    """Why value ``v`` of Settings field ``name`` is refused ("must be positive and finite, got -1"), or None
    when it is fine (see the module docstring for the rules)."""
    if v is None:
        return None if name in OPTIONAL else "must be set, got None"
    if name in CHOICES:
        return None if v in CHOICES[name] else f"must be one of {', '.join(CHOICES[name])}, got {v!r}"
    if name in FLAGS:
        return None if isinstance(v, bool) or v in (0, 1) else f"must be True or False, got {v!r}"
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        return f"must be a number, got {v!r}"
    if math.isnan(v):
        return "must be a number, got nan"
    if name in COUNTS and not (float(v).is_integer() or (name == "iteration_limit" and v == math.inf)):
        return f"must be a whole number, got {v!r}"
    if name in POSITIVE_FINITE and not 0 < v < math.inf:
        return f"must be positive and finite, got {v!r}"
    if name in NONNEGATIVE_FINITE and not 0 <= v < math.inf:
        return f"must be >= 0 and finite, got {v!r}"
    if name in NONNEGATIVE and not v >= 0:
        return f"must be >= 0, got {v!r}"
    if name in POSITIVE and not v > 0:
        return f"must be positive, got {v!r}"
    if name in RELATIVE and 1 <= v < math.inf:  # inf: tol's is refused above, relaxation_tol's means no stage
        # a relative KKT tolerance of 1 or more accepts any point: a config.json with tol 5 stored an infeasible
        # round as OPTIMAL (hunt 37), where --tol 5 was refused
        return f"must be below 1 (a relative tolerance), got {v!r}"
    if (name in SECONDS or name in COUNTS) and v < 0:
        return f"must be >= 0, got {v!r}"
    if name == "check_every" and v < 1:
        return f"must be at least 1, got {v!r}"
    if name == "threads" and v < 1:
        return f"must be None or at least 1, got {v!r}"
    return None


def _fast_accept(name: str):
    """A predicate that is True only for values :func:`settings_complaint` accepts, written for the common
    exact types (str, bool, float, int, None); False means "ask settings_complaint", which stays the only
    judge and the only author of messages. Why: ``__post_init__`` runs on every ``dataclasses.replace``
    (several per LP solve) and calling settings_complaint on all 39 fields cost ~35 us of a 0.7 ms afiro
    solve; the predicates cost ~5 us."""
    if name in CHOICES:
        choices = CHOICES[name]
        return lambda v: type(v) is str and v in choices
    if name in FLAGS:
        return lambda v: v is True or v is False
    low = -math.inf
    if name in POSITIVE_FINITE or name in POSITIVE:
        low = 0.0  # strict
    strict = name in POSITIVE_FINITE or name in POSITIVE
    if name in NONNEGATIVE_FINITE or name in NONNEGATIVE or name in SECONDS or name in COUNTS:
        low = 0.0
    if name == "check_every" or name == "threads":
        low, strict = 1.0, False
    finite = name in POSITIVE_FINITE or name in NONNEGATIVE_FINITE
    whole = name in COUNTS
    inf_ok = name == "iteration_limit" or name == "relaxation_tol"
    high = 1.0 if name in RELATIVE else math.inf  # strict: a relative tolerance is below 1
    optional = name in OPTIONAL

    def accept(v) -> bool:
        if v is None:
            return optional
        t = type(v)
        if t is int:
            return (v > low if strict else v >= low) and v < high
        if t is not float or v != v:  # another type, or nan: settings_complaint decides
            return False
        if (v <= low) if strict else (v < low):
            return False
        if v == math.inf:
            return inf_ok or not (finite or whole)
        if v >= high:
            return False
        return not whole or v.is_integer()

    return accept


@dataclass
class Settings:
    """Parameters of the proximal-point LP core and of integerization.

    Termination and limits:
        tol: relative KKT tolerance for primal residual, dual residual and gap (default 1e-4); see
            ``solver.lp.termination`` for the exact formulas (original units).
        time_limit_seconds: wall-clock budget of one solve, in seconds (inf = none). Checked every
            ``check_every`` iterations, so a solve can overshoot by one check interval.
        iteration_limit: maximum PDHG iterations (checked every ``check_every`` iterations).
        check_every: iterations between termination / restart / infeasibility checks (cuPDLPx uses
            200, PDLP 64). Between checks the iterations run inside one numba call.
        infeasibility_tol: a ray certifies infeasibility when its max violation divided by its
            objective is at most this (PDLP's normalized test, arXiv 2106.04756 section 3.2).
        verbose: print HiGHS/PDLP-style progress lines (log-spaced iterations) to stderr.
        verbose_all: with ``verbose``, print a line at every check instead of log-spaced ones.

    Restarts (fixed-point residual, cuPDLPx ``docs/algorithm/restart.md``):
        restart_sufficient: restart when r <= this * r(anchor) (beta_sufficient, 0.2).
        restart_necessary: restart when r <= this * r(anchor) and r rose since the last check (0.5).
        restart_artificial: restart when the epoch is >= this fraction of all iterations (0.36).

    Primal weight w (tau = eta / w, sigma = eta * w), PID on log w (cuPDLPx ``primal-weight.md``):
        pid_kp, pid_ki, pid_kd: proportional / integral / derivative gains (0.99, 0.01, 0.0).
        pid_discount: discount rho of the integral term (0.3).
        primal_weight_min, primal_weight_max: clamp of w (scaled problem, where w = 1 is neutral);
            a last guard against a runaway weight (on infeasible problems the primal displacement
            vanishes while the dual one grows); wide by default, tighter clamps slowed fit1d down.

    Step and reflection:
        step_safety: eta = step_safety / ||A_scaled||_2, 0.998. With Pock-Chambolle scaling on,
            ||A_scaled||_2 <= 1 is known exactly (Pock & Chambolle 2011, Lemma 2); otherwise it is
            estimated by power iteration.
        reflection: reflection coefficient gamma of the Halpern update (1 = full reflection,
            0.5 = plain Halpern PDHG).
        power_iterations: maximum power-iteration steps for ||A_scaled||_2.

    Scaling (``solver.lp.scaling``):
        ruiz_iterations: Ruiz equilibration passes (10).
        pock_chambolle_alpha: Pock-Chambolle exponent alpha (1.0); None disables the stage.
        bound_objective_scaling: apply HPR-LP's theta_b = 1/(1+||b||), theta_c = 1/(1+||c||).

    Threads:
        threads: numba threads for the iteration (default 1: the serial kernels). With threads > 1
            problems of at least ``parallel_min_nnz`` nonzeros run the parallel kernels (same results
            bitwise). Measured on the shared 2-core machine under load: 2 threads were 4x SLOWER than 1
            on a 400k-nonzero LP (a barrier per pass), so parallelism is opt-in. Also HiGHS's thread count in
            a MILP round's HiGHS runs (HiGHS first's simplex and MIP, the fallback, the improvement, RENS; None
            = HiGHS's default, 2 on the 2-core machine): mod008's HiGHS MIP took 2.0-2.8 s with 2 threads
            against 1.2-1.8 s with 1 on the loaded machine; of 8 small shared MILPs none was faster with 2
            (dcmulti level).
        parallel_min_nnz: size (nonzeros) from which the parallel kernels are used.

    Presolve (``solver.lp.presolve``):
        presolve: ``"auto"`` (default) runs HiGHS presolve/postsolve around PDHG for COLD solves only
            (a warm start is worth more than presolve for round-to-round re-solves) except a MILP round's
            relaxation stages with an iteration budget (``relaxation_round_iterations``: presolve cost more
            than the budget's iterations, ``solver.integer.pipeline._relax``); ``"on"`` also for those and
            for warm-started solves (the warm start is then dropped); ``"off"`` never.

    Engine (``solver.lp.engine_choice``):
        engine: ``"auto"`` (default) picks per solve: PDHG for cold solves and far warm starts, the proximal
            ALM (``solver.lp.alm``) for a warm start whose relative KKT error is well below a cold start's
            (and PDHG cold when it is no better, or when the ALM runs past half the last cold solve's
            seconds); ``"pdhg"`` / ``"alm"`` pin one. The result and the round report name the engine and why.

    Warm start (``solver.lp.pdhg.solve(..., warm_start=...)``):
        warm_primal_weight: ``"fresh"`` (default) starts a warm-started solve at the cold primal weight
            (w = 1 in scaled space) and lets the PID controller adapt it from the first restart;
            ``"reuse"`` starts at the state's last primal weight. Measured (bench/bench_warm.py): the last
            weight of the previous round is tuned to its end game and slowed the next round down (domain
            rounds median warm/cold 0.78 reused vs 0.67 fresh; transportation 400x500 0.55 vs 0.09).

    Infeasible rounds:
        iis_seconds: wall budget (seconds) of HiGHS's IIS search that names a conflicting set of rows and
            bounds when a solve ends PRIMAL_INFEASIBLE (``solver.highs_bridge.find_iis``; the report's ``iis``
            and message); at least 1 s when the round's time limit is spent, 0 = off (default 10).

    Integerization (solver.integer):
        integer_fallback: ``"highs"`` (HiGHS MIP, time-limited) or ``"none"`` when the integerization
            heuristics find no feasible point.
        integer_fallback_seconds: time limit of the HiGHS MIP steps of one MILP round together (HiGHS first,
            the fallback, the improvement; RENS has its own ``integer_submip_seconds``), in seconds: a step
            gets what the earlier ones left, and one that finds nothing left is skipped (report
            ``fallback_skipped``).
        integer_fallback_gap: also run the fallback (seeded with the heuristic point) when the heuristic
            point's relative gap to the LP bound exceeds this; inf (default) = only when no point is found.
        mip_gap_tol: the round's target: relative gap to the proven bound under which a MILP result is OPTIMAL
            rather than FEASIBLE, as HiGHS's mip_rel_gap (which the HiGHS steps are given). Default 5e-3, the
            paper's "negligible quality loss", chosen by measurement (#15, ``bench/bench_defaults.py``): Sia
            rounds stop at the first 128-iteration stage with a point 0.0-0.5% from HiGHS's optimum; 1e-4 is
            the tight behaviour of earlier versions (more stages, often FEASIBLE with a gap of 0.01-0.1%).
        integer_improve_max_integers: a model with at most this many integer columns whose point stays above
            ``mip_gap_tol`` goes to HiGHS MIP seeded with it after one RENS at most and no more relaxation
            stages, within the fallback's budget, stopping early when branch-and-cut stalls or its pace cannot
            reach the target in that budget (``solver.integer.fallback.StallWatch``; while HiGHS's gap is
            more than 10x the target, neither rule judges before ``pipeline.IMPROVE_FAR_SECONDS`` = 15 s, a
            quarter of the budget at most: an incumbent that far from its bound is not a stall yet) (default
            4096; 0 = never). Small general MILPs have weak LP bounds: rounding left egout 21% and gt2 125%
            worse than the optimum, which HiGHS seeded finds in 0.05-0.3 s (the 13 shared MIPLIB/HiGHS MILPs,
            <= 319 integers: all within 0.07% of the optimum). Load balancing's LP bound is 0: LB 128x16
            (2,048 binaries) with 1000 (and a 2 s stall minimum throughout) ended round 0 of seeds 0-3 at
            66 / 63 / 7 / 7 where HiGHS's optimum is 9 / 8 / 7 / 5; with 4096 and the far minimum all 16
            rounds (seeds 0-3, 3 steps each) are OPTIMAL at HiGHS's optimum, median 9.0 s a round in-process
            vs 4.3 s before and 5.9 s for HiGHS alone (loaded 2-core machine, load 5-6); 4096 with the 2 s
            minimum alone left 4 of the 16 at 22-68. Above it the heuristics stay alone: LB 256x32 (8,192;
            HiGHS > 120 s), Sia 1,024 (38,500) and LB 1024x128 (131,072).
        integer_highs_max_nonzeros: a MILP with at most this many nonzeros goes to HiGHS first, before any
            relaxation stage: its LP relaxation by HiGHS simplex (the round's duals, state and a valid bound),
            then HiGHS MIP at ``mip_gap_tol`` seeded with the previous round's point, within the fallback's
            budget and the improvement's stall rules; the pipeline runs only when HiGHS returns no point (not
            with ``integer_fallback="none"``; 0 = never). The continuous LP left once the integers are fixed
            skips the PDHG warm start below this size too (HiGHS simplex alone). On such models a round spent
            its time loading PDHG and rounding kernels and running stages that a weak LP bound cannot close
            before HiGHS ran anyway. Default 3000, measured through the CLI (``bench/bench_small_milp.py``,
            docs/performance.md "Small MILPs"): the 13 shared MIPLIB/HiGHS MILPs (<= 2,053 nonzeros), Sia 64
            GPUs (1,392) and LB 64x8 (2,560) take as long or less with HiGHS first (mod008 level since HiGHS
            runs on one thread, ``threads``; slower before), Sia 128 GPUs (3,774), whose first 128-iteration
            stage is proven within the target, took longer.
        integer_dive_max: LP re-solves of the relax-and-fix dive when the rounded integers leave the
            continuous LP infeasible (0 = no dive).
        integer_submip_seconds: wall budget (seconds) of RENS, the sub-MIP of the LP point's roundings solved
            by HiGHS (``solver/integer/submip.py``), which runs when rounding finds no point, before the dive
            and the fallback (0 = off). With the HiGHS fallback on it takes at most half the time left.
        integer_submip_gap: also run RENS on a heuristic point whose relative gap to the LP bound is above
            this (default 1%), for at most as long as the relaxation took (>= 1 s), keeping the better point
            (inf = never). Load balancing's LP bound is weak, so there it runs whenever shards move. In
            staged runs (``relaxation_round_iterations`` or a looser ``relaxation_tol``) a point whose gap is
            above ``mip_gap_tol`` qualifies too: a sub-MIP costs less than the next relaxation stage.
        integer_dual_ascent_steps: Lagrangian evaluations per relaxation stage of the dual ascent on the
            coupling rows' duals (``solver/integer/ascent.py``: projected subgradient with Polyak's step), which
            tightens the MILP bound when the problem has choice rows and the gap is above ``mip_gap_tol``
            (0 = off). It takes at most as long as the stage's relaxation (>= 0.1 s).
        relaxation_tol: tolerance of the FIRST LP relaxation solve of a MILP round (None = ``tol``).
            When looser than ``tol``, the relaxation runs in stages relaxation_tol, /10, ... down to
            ``tol``, each warm-started from the previous stage's iterate and rounded; the round stops at
            the first stage whose integer point is within ``mip_gap_tol`` of the tightest Lagrangian bound
            (always a valid bound), so a loose first stage only saves time when mip_gap_tol allows it.
        relaxation_round_iterations: when > 0, relaxation stages also end after this many PDHG
            iterations, doubling per stage (64, 128, 256, ...): the iterate is rounded at geometrically
            spaced iteration counts and the round stops as soon as a rounded point is within
            ``mip_gap_tol`` of the Lagrangian bound (0 = stages end only at their tolerance). Default 128
            (#15): Sia 10,240's warm rounds are proven within 0.5% after the first 128 iterations.
    """

    tol: float = 1e-4
    time_limit_seconds: float = float("inf")
    iteration_limit: int = 1_000_000
    check_every: int = 64
    verbose: bool = False
    verbose_all: bool = False
    integer_fallback: str = "highs"
    integer_fallback_seconds: float = 60.0
    integer_fallback_gap: float = float("inf")
    mip_gap_tol: float = 5e-3
    integer_dive_max: int = 3
    integer_submip_seconds: float = 30.0
    integer_submip_gap: float = 0.01
    integer_dual_ascent_steps: int = 40
    integer_improve_max_integers: int = 4096
    integer_highs_max_nonzeros: int = 3000
    relaxation_tol: float | None = None
    relaxation_round_iterations: int = 128
    infeasibility_tol: float = 1e-8
    restart_sufficient: float = 0.2
    restart_necessary: float = 0.5
    restart_artificial: float = 0.36
    pid_kp: float = 0.99
    pid_ki: float = 0.01
    pid_kd: float = 0.0
    pid_discount: float = 0.3
    primal_weight_min: float = 1e-10
    primal_weight_max: float = 1e10
    step_safety: float = 0.998
    reflection: float = 1.0
    power_iterations: int = 500
    ruiz_iterations: int = 10
    pock_chambolle_alpha: float | None = 1.0
    bound_objective_scaling: bool = True
    threads: int | None = 1
    parallel_min_nnz: int = 200_000
    presolve: str = "auto"
    warm_primal_weight: str = "fresh"
    engine: str = "auto"
    iis_seconds: float = 10.0

    def __post_init__(self) -> None:
        """Check every field (:func:`settings_complaint`).

        Raises:
            SettingsError: the first field with a refused value; the message names ``Settings.<field>``.
        """
        values = self.__dict__
        for name, fast in _FAST_ACCEPT:
            v = values[name]
            if fast(v):
                continue
            complaint = settings_complaint(name, v)
            if complaint is not None:
                raise SettingsError(f"Settings.{name} {complaint}", field=name)
        if self.primal_weight_min > self.primal_weight_max:
            raise SettingsError(f"Settings.primal_weight_min {self.primal_weight_min!r} exceeds primal_weight_max "
                                f"{self.primal_weight_max!r}", field="primal_weight_min")


_FAST_ACCEPT = tuple((f.name, _fast_accept(f.name)) for f in fields(Settings))  #: (field, predicate), field order
