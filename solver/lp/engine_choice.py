"""Which LP engine runs a solve: restarted Halpern PDHG (``solver.lp.pdhg``, with HiGHS presolve when cold) or
the proximal ALM (``solver.lp.alm``), decided per solve from numbers that cost two passes over A.

Why a choice at all (issue #17, bench/bench_alm.py): the ALM is a proximal-point method whose outer steps
are implicit, so a start close to the new optimum is finished in one to a few outer steps (TE Cogentco
round: 0.07x a cold PDHG solve), but its own cold solves are slow (Cogentco 142 s against PDHG's 20 s) and
a far start (LB rounds, relative KKT ~1) zigzags in the Newton solves (1.9x PDHG cold). Restarted PDHG
converges linearly from anywhere, so it takes cold solves and far starts.

Rules of ``Settings.engine = "auto"`` (:func:`choose_engine`), in order:

1. no (usable) warm start -> PDHG cold (presolve as ``Settings.presolve`` says);
2. the warm point already meets ``tol`` -> returned unchanged, no engine runs (``solver.lp.dispatch``; PDHG's
   first check would return one step T(z) from it, the ALM its scaled-space round trip: both move it);
3. the warm point is no better than a cold start (x = 0 projected onto the column bounds, y = 0) on ANY
   of the three relative KKT measures (``solver.lp.original_kkt``, original units: primal residual, dual
   residual, gap), each compared with the same measure of the cold start: an abrupt change; the warm start
   is dropped and PDHG solves cold. Like with like: the rule compared the two points' WORST measures, which
   are different measures. A cold start's gap is 0 by construction (x = 0 and y = 0 give both objectives 0)
   and its worst measure is its primal residual, while a warm point after a change of costs is usually
   primal feasible and off in its gap, which saturates at 1 (|p - d| / (1 + |p| + |d|)). On LB 256x32
   (every load and the placement costs redrawn each round, ``solver.workloads.lb``) the warm point measured
   primal 0-5e-2, gap 0.998 (primal objective 242, dual -270, optimum 4.9) against the cold start's primal
   0.67, gap 0: the old rule solved every LB round cold, also when the costs follow the solver's own point
   (``bench/bench_warm.py --feedback``), where the start is optimal in objective, off only in its duals, and
   PDHG warm took 0.24x the cold passes. The warm point's dual objective is already the repaired one (the
   bound part of c - A'y taken at the NEW column bounds, x clipped to them), so the gap is real. PDLP and
   cuPDLPx judge points the same way in their own runs (a restart compares a candidate with the last restart
   point on the same measure: Applegate et al., arXiv 2106.04756, the normalized duality gap; Lu & Yang,
   arXiv 2407.16144, the fixed-point residual). That residual after one PDHG step on the scaled LP, tried
   here, put every LB start at 0.02-0.2x a cold start's and predicted no better (rule 4);
3a. the warm DUALS carry nothing (:func:`stale_duals`): the warm point's dual residual is above ``STALE_DUALS``
   (0.5) x a cold start's (y = 0), which is above 0 (y = 0 is not dual feasible, so the measure can tell), and its
   gap is no smaller than the cold start's; only its primal point is closer. Where PDHG would run warm (rules 4 and 7), it runs cold
   instead (the ALM, rules 6 / 6b, keeps such a start: its multiplier steps rebuild the duals from the primal
   point). This is what a change of the costs by orders of magnitude leaves: afiro with every cost x 1e-5, then
   x 1e6 (a delta), keeps its optimal x while its duals are 1e-6 of the new ones, so PDHG starts from (x*, ~0):
   324 iterations against a cold solve's 194 (tol 1e-6: 777 = the ``WARM_OVER`` cap, against 259), the primal
   weight swinging 1e-5-22 across its restarts. The shared LP set after the same change (38 LPs, tol 1e-4):
   the 21 rounds of this signature that ran PDHG warm took 0.35-30x a cold solve's iterations (median 1.45;
   vtpbase 19,474 against 645, agg 44,696 against 8,076); LB's "x only (y = 0)" starts took 5.8-39x
   (``bench/bench_warm.py``). The measures of the start cannot tell the 0.35x rounds from the 30x ones, and a
   cold solve costs 1x. A cold dual residual of 0 (Sia, LB: y = 0 is dual feasible) says nothing about the
   duals: the rule stays out, and no domain round of ``bench/bench_warm.py`` meets it (TE's warm duals are at
   1e-5-1e-4 against the cold start's 0.97);
3b. a start far only in its gap while the ALM backs off after a loss (rule 4's ``skip_alm``): the warm point's gap
   is its largest measure and above ``ALM_MAX_KKT``, its primal and dual residuals are below a cold start's ->
   the warm start is dropped and PDHG solves cold (issue #17 point 2: "a warm start that is worse than a cold one
   switches to a cold solve by itself"). The start's measures cannot tell a primal point far in objective (LB
   256x32 with simulated decisions: the old point costs 33-271 against optima of 0-22; primal residual 3e-16-0.28,
   dual <= 1.4e-6, gap 0.985-0.999, a cold start 0.67 / 0 / 0) from one that is optimal with stale duals
   (``--feedback``: the same signature); the ALM's outcome on it can (rule 6b): it finishes stale-dual starts in
   0.02-0.41 of the cold passes and runs out of its budget on far ones. On LB 256x32 (15 rounds, tol 1e-4,
   passes over the presolved cold solve's) PDHG warm took 0.60-6.39x (median 1.13, total 2.20), the ALM pinned
   1.41-5.30x (median 3.30), and from parts of the start (rounds 1, 4, 8, 12) the warm duals with x cold 2.0-4.5x,
   the warm x with y = 0 30-39x: no part of the start pays, and the rounds where PDHG warm wins look the same at
   the start and over its first ~500 iterations (session 16 traces). With the rule, 13 of 15 rounds cost their
   cold solve exactly: median 1.13 -> 1.00, total 1.84 -> 0.99, worst 6.39 -> 1.10 (rounds 1 and 10: the ALM's
   6b round, lost). LB 128x16: median 1.63 -> 1.00, the 13 ruled rounds' total 1.08 -> 1.00 (their PDHG warm runs
   took 0.11-3.98x), the stream's 1.16 -> 1.21 (round 10, the ALM's next 6b round, from the cold-solved point:
   PDHG after the ALM 1.63 -> 4.08x); LB 64x8 and ``--feedback`` unchanged (the ALM wins, no back-off);
4. the last rounds' outcome (:class:`EngineRecord`, carried in ``SolverState.engine``): when the ALM lost
   within the last :data:`ALM_BACKOFF` rounds (it ran past its budget or stalled, and PDHG finished the
   round; or it finished but made more than :data:`ALM_OVER` times the passes of the last cold solve, as on
   small TE rounds, where its budget's floor of ``ALM_MIN_NONZEROS`` lets it run on; or it finished but made
   more than :data:`ALM_VS_PDHG` times the passes of the stream's last PDHG warm round, ``EngineRecord.
   pdhg_warm_passes``: the engines compared on their own warm rounds), PDHG runs warm. PDHG
   warm rounds are not judged against the cold solve: the last cold solve was another round's LP, often
   presolved, and cold passes swing 4x between rounds (a partitioned TE part: 518 in round 0, 1,930 in round
   2), so a warm round at 0.9x its own cold cost would look past it. Nor could the start's measures tell a bad
   warm round apart: on LB 256x32 with simulated decisions PDHG warm took 0.67-4.5x the cold passes, and the
   4.5x round's start was closer than a cold one on the KKT measures and on one PDHG step's fixed-point
   residual alike;
5. a warm start without a record (a point the integer heuristics built for a partial re-solve whose
   iteration budget is counted in PDHG iterations, or a bare (x, y)) -> PDHG warm;
6. the warm point's error ``e_w`` is well below the cold start's ``e_c`` (``e_w <= ALM_RATIO e_c``) and
   small in itself (``e_w <= ALM_MAX_KKT``: from a larger one the ALM's first proximal step is short and
   it proceeds like its slow cold solve) -> ALM, with a work budget of ``ALM_BUDGET`` times the matrix
   passes of the last cold solve, at least ``ALM_MIN_NONZEROS / nnz`` (``EngineRecord.cold_passes``; none
   known: the round's own limits). The budget counts passes over A (a PDHG iteration is two: A x and A' y; see
   ``solver.lp.alm_newton`` for the ALM's), not seconds, so a round's outcome does not depend on the load
   of the machine or on kernels being loaded in a fresh worker process: the same state and delta give the
   same point (a wall-clock budget made a partitioned round on Ray differ from the same round inline). An
   ALM run that uses its budget, stalls or diverges hands the round to PDHG, WARM from the same start
   point, with the time left, and is recorded as lost (``solver.lp.dispatch``; the ALM's own point instead when it
   is closer, a cold solve when its whole outer steps moved away from the start: ``dispatch._hand_over_start``).
   Once the stream's ALM has finished a warm round the budget is ``ALM_BUDGET_PROVEN`` x the cold passes. A lost
   round is charged against the cold cost: it backs the ALM off (rule 4) only when the round, the ALM's passes and
   PDHG's together, made more than the last cold solve's passes; and a PDHG warm round of a back-off that makes
   more than ``ALM_VS_PDHG`` x the stream's last finished ALM round's passes (or hits its ``WARM_OVER`` cap) ends
   the back-off. Measured on TE UsCarrier (``pop_UsCarrier.graphml``, 25,184 x 36,242, every demand +-10%, tol
   1e-4, 15 rounds, passes against the same round's presolved cold solve): the ALM gave up at 0.5 x on round 2
   with its point at 0.3 x the start's error, PDHG warm then ran from the start (0.81x the round's cold passes in
   all), the ALM backed off for 8 rounds, and PDHG warm took 0.36-3.4x (round 10: capped, then cold); the stream
   0.78x the cold passes, 0.88x its time. With these rules the ALM finished 12 of 15 rounds (0.12-0.76x), one
   round (PDHG warm after a charged loss) took 1.70x, the stream 0.44x the cold passes and 0.36x the time
   (docs/performance.md, #17). The budget's floor is capped
   at ``ALM_OVER`` x the cold passes, where a finished run counts as lost anyway; a cold solve of 0 passes
   (HiGHS presolve solved the LP) is no yardstick: the budget is the floor alone, and neither ``ALM_OVER``
   nor 6a judges the run against it (a zero budget gave up at once and pinned PDHG for 8 rounds);
6a. ... unless the previous round was an ALM run that made more than :data:`ALM_PROBE` times the last cold
   solve's passes and the stream has no PDHG warm round yet: then PDHG runs warm once, and when it makes fewer
   than 1 / ``ALM_VS_PDHG`` of that ALM run's passes, the ALM backs off for ``ALM_BACKOFF`` rounds
   (:func:`next_record`). The start's measures cannot tell these rounds apart. Measured on the TE default ring
   (624 x 1,440, every demand +-10%, tol 1e-4; bench/bench_warm.py): the warm point is at relative KKT 6-7e-3
   (primal residual: the changed demand bounds; Cogentco's rounds start at 5e-4, Sia's at 0.1-0.26, where the
   ALM wins). Until commit 3b19736 the ALM made 1,363-3,140 passes there against PDHG warm's 1,032-1,802 (cold
   1,160-2,186): it grew its proximal step 4x after every outer step (eta 83, 331, 1,324), and at the larger
   steps its Newton directions overshot (the line search cut them to 2.4e-4-2e-3; ``solver.lp.alm`` and
   ``solver.lp.alm_newton`` say why). With eta grown only after slow progress it made 654-1,968 passes on the
   10 of 15 rounds where ``auto`` ran it, 0.62-0.96 of the same round's PDHG warm passes; the probe still runs
   after its rounds above ``ALM_PROBE`` (round 3: 1,043 against cold 2,186, then PDHG warm 1,802 on round 4:
   the ALM stays).
   PDHG warm from the same start spends ~400 of its ~500 iterations on the tail from 1e-3 to 1e-4, as its
   cold solve does (cold reaches the start's 1e-3 in ~130 iterations);
6b. the warm point's primal and dual residuals (the gap left out) are as close as rule 6 asks, the gap is not,
   and a cold solve's passes are known (a budget) -> ALM warm, budgeted as in rule 6, rules 4 and 6a judging
   the outcome. The start's measures cannot tell why the gap is large. On LB 256x32 with ``--feedback`` (the
   costs follow the solver's own point) the old primal point is optimal and its duals are stale: rounds
   starting at primal 3e-16, dual 0, gap 1.0 and 0.47 took the ALM 0.09 and 0.04 of the cold passes, PDHG
   warm 0.24 and 0.87. With simulated decisions (the default stream) the same signature (primal 2.9e-16, dual
   0, gap 1.0) is a primal point far off in objective (242 against 4.9): the ALM, unbudgeted, took 3.8-7.1x the
   cold passes (PDHG warm 0.67-4.5x); with the budget such a round costs about 0.5x more than PDHG warm and
   the ALM backs off for ``ALM_BACKOFF`` rounds;
7. otherwise PDHG warm.

Warm PDHG rounds that run past their cold cost (issue #17): under ``"auto"``, a PDHG warm round in a stream
whose record knows a cold solve's passes stops at :data:`WARM_OVER` times them (``solver.lp.dispatch``) and the
round is solved cold with the time left (the record's ``warm_lost``). Why: on LB 256x32 with simulated
decisions every round is a new LP (every load redrawn, the placement costs following a placement the solver
did not choose); the mapped point is primal feasible but its objective is far off (242 against 4.9), and PDHG
warm took 0.55-11x the cold passes over 15 rounds with the same step size and restart schedule as cold; the
carried primal weight (``warm_primal_weight="reuse"``: 0.44-2.1x on rounds 1-6) and the old duals alone (x
cold: 0.50-5.0x) did not help. Neither the start's KKT measures nor the first ~500 iterations' errors told
the 4.5x round apart from the 0.67x one (in-process traces), so only the outcome can. The margin is 3, not 1:
the last cold solve was another round's LP and LB cold passes swing 2,322-8,854 between rounds; at 1 the
cap plus the cold re-solve cost more than it saved (LB 64x8, 12 rounds: total warm/cold passes 0.45 ->
0.55; 128x16: 0.88 -> 1.44), and so did backing the stream off to cold solves after a capped round (0.45 ->
1.21: the small streams' later warm and ALM rounds win 0.03-0.6x). The cap bounds the tail (LB 256x32 round
13: 11.2x the cold passes uncapped), it does not lower the LB median. The PDHG warm run that finishes a lost ALM
round is not capped: seba with every cost x 1e-5, then x 1e6 (rule 6b's signature, the ALM lost) makes 780 ALM
passes and 1,800 PDHG warm iterations, 4,380 passes against a cold solve's 388, and the same cap there (tried,
session 15) brought it to 2,332, but it turned vtpbase after ``bench/bench_warm.py --netlib``'s 1% perturbation
from 2,888 PDHG iterations after the ALM into 1,935 capped + 48,097 cold: that round's cold solve needs 48,097
iterations where the last cold solve, round 0's, needed 645. The last cold solve is a poor yardstick for another
round's LP, here by 75x.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from solver.lp.original_kkt import original_kkt
from solver.lp.pdhg import parse_warm_start
from solver.model.errors import UsageError
from solver.model.problem import Problem
from solver.model.result import SolveResult
from solver.model.settings import Settings
from solver.model.state import SolverState

ENGINES = ("auto", "pdhg", "alm")  #: values of ``Settings.engine``
ALM_RATIO = 0.3  #: the ALM needs e_w <= ALM_RATIO * e_c ("well below" a cold start; e_c is ~1 on the domains)
ALM_MAX_KKT = 0.3  #: ... and e_w <= this (the ALM's first step is eta = 0.5 / e_w, ALMParameters.warm_scale;
#: measured: Sia rounds start at 0.1-0.26 and the ALM wins 13x, LB rounds at ~1 and it loses 2x)
ALM_BUDGET = 0.5  #: an ALM run may make this multiple of the last cold solve's matrix passes before PDHG takes over
#: (an ALM pass costs about half a PDHG one: its CG passes touch only the active columns; measured 12 us against
#: 20 us per pass on TE rounds, 120 ms against 227 ms on Kdl, so this is about a quarter of the cold solve's time;
#: the ALM's wins take far less: Sia rounds 0.05-0.11x, Cogentco 0.07x of a cold solve, while its Kdl loss used
#: up a whole budget of 1.0 (620 s) in one outer step)
ALM_BUDGET_PROVEN = 1.0  #: ... this multiple once the stream's ALM has finished a warm round (``EngineRecord.
#: alm_passes`` known): rule 6's close starts of a stream where the ALM wins take it one to a few outer steps more.
#: TE UsCarrier (pop_UsCarrier.graphml, 25,184 x 36,242, every demand +-10%, tol 1e-4): the ALM unbudgeted made
#: 0.41-0.78 of the same round's cold passes on 7 of 8 rounds (1,634-2,851 passes, 0.2-0.5 of the cold time),
#: at 0.5 it gave up on each of them and the rounds cost 0.44-2.8x the cold passes with PDHG's hand-over
#: (PDHG warm on that LP: 0.4-3x a cold solve). A stream's first ALM round (TE Kdl: a loss that used its whole
#: budget in one outer step), and streams where it never finished (LB 256x32), keep ``ALM_BUDGET``
ALM_MIN_NONZEROS = 5e7  #: ... but at least this many nonzeros visited, i.e. ALM_MIN_NONZEROS / nnz passes (small
#: LPs, where a cold solve needs few passes after presolve and every pass is cheap: ~0.1 s of work)
PDHG_ITERATION_PASSES = 2  #: matrix passes of one PDHG iteration (A x and A' y)
ALM_BACKOFF = 8  #: rounds PDHG runs after an ALM loss before the ALM is tried again
ALM_OVER = 2.0  #: an ALM run that made more than this multiple of the last cold solve's passes counts as lost
#: (a margin: that solve was another round's LP, and cold passes swing 2-4x from round to round)
ALM_PROBE = 0.5  #: an ALM run past this multiple of the last cold solve's passes, in a stream with no PDHG warm
#: round yet, leaves the next round to PDHG warm, so the two engines' warm rounds can be compared (rule 6a);
#: the ALM's wins stay below it (Sia rounds 0.07-0.18, Cogentco 0.05), its TE ring rounds do not (0.7-1.6)
STALE_DUALS = 0.5  #: rule 3a: warm duals whose dual residual is above this multiple of a cold start's carry nothing (a
#: start under 2x better saves PDHG less than one halving of its error; after a cost change by a factor f the old
#: duals leave 1 - 1/f of it: 0.999999 on the shared LP set after x 1e6, while TE rounds' warm duals leave 1e-5-1e-4)
WARM_OVER = 3.0  #: a PDHG warm round under ``"auto"`` stops at this multiple of the last cold solve's passes and the
#: round is solved cold (the issue's "a round that runs past its cold cost switches to a cold solve"; a margin: the
#: module docstring, after rule 7)
ALM_VS_PDHG = 1.5  #: an ALM run that made more than this multiple of the stream's last PDHG warm round's passes
#: counts as lost (rule 4), and so does the ALM's last run when a rule-6a PDHG warm round made fewer than 1 / this
#: of its passes. A margin, not 1: that PDHG round was another round's LP (PDHG warm passes on the TE ring's rounds:
#: 774-2,574), and an ALM pass costs 0.55-0.85 of a PDHG one in wall time (bench/bench_warm.py, TE ring and Sia).
#: At 1.0, TE ring round 11 (ALM 1,968 passes against round 4's PDHG warm 1,802) backed the ALM off for 8 rounds
#: although PDHG warm made 2,314 on round 11 itself; the ring's ALM rounds made 0.62-0.96 of the same round's
#: PDHG warm passes (10 rounds, after commit 3b19736)


@dataclass
class EngineRecord:
    """What a solve leaves for the next round's choice (``SolverState.engine`` holds it as a dict).

    Attributes:
        engine: the engine that produced the point, ``"pdhg"`` or ``"alm"``.
        reason: the choice's sentence (the report's ``engine_reason``).
        converged: the solve ended OPTIMAL.
        lost: the ALM ran and PDHG had to finish the round (budget, stall or divergence).
        cold_seconds: wall seconds of the last cold solve in this stream (nan = none seen; reported).
        cold_passes: matrix passes of that solve (``PDHG_ITERATION_PASSES`` per iteration; nan = none seen,
            or a record written before copter counted them): the ALM's work budget is based on it.
        skip_alm: rounds left during which ``auto`` keeps PDHG after an ALM loss.
        passes: matrix passes this solve made (:func:`solve_passes`; nan = not counted), the work measure
            ``bench/bench_warm.py`` reports next to wall time.
        alm_passes: passes of the stream's last ALM warm run that finished itself (nan = none), carried on.
        pdhg_warm_passes: passes of the stream's last PDHG warm round under ``"auto"`` (nan = none), carried on:
            rule 4 compares an ALM run with it, rule 6a runs one to have it.
        warm_lost: this solve's PDHG warm run ran past that cap and the round was solved cold.
        alm_warm_scale: the ``ALMParameters.warm_scale`` the stream's next warm ALM run starts with (nan = the
            default), set after each warm ALM run that finished OPTIMAL (``solver.lp.alm.next_warm_scale``), else
            carried on.
    """

    engine: str
    reason: str
    converged: bool
    lost: bool = False
    cold_seconds: float = math.nan
    skip_alm: int = 0
    cold_passes: float = math.nan
    passes: float = math.nan
    alm_passes: float = math.nan
    pdhg_warm_passes: float = math.nan
    warm_lost: bool = False
    alm_warm_scale: float = math.nan

    def to_dict(self) -> dict:
        """A plain dict (JSON-ready: strings, bools, float, int)."""
        return {"engine": self.engine, "reason": self.reason, "converged": self.converged, "lost": self.lost,
                "cold_seconds": self.cold_seconds, "skip_alm": self.skip_alm, "cold_passes": self.cold_passes,
                "passes": self.passes, "alm_passes": self.alm_passes, "pdhg_warm_passes": self.pdhg_warm_passes,
                "warm_lost": self.warm_lost, "alm_warm_scale": self.alm_warm_scale}

    @classmethod
    def from_state(cls, state) -> EngineRecord | None:
        """The record a warm start carries (a SolverState's ``engine`` dict), None when it has none or it is
        malformed (an older state)."""
        d = getattr(state, "engine", None)
        if not isinstance(d, dict):
            return None
        try:
            return cls(engine=str(d["engine"]), reason=str(d.get("reason", "")), converged=bool(d["converged"]),
                       lost=bool(d.get("lost", False)), cold_seconds=float(d.get("cold_seconds", math.nan)),
                       skip_alm=int(d.get("skip_alm", 0)), cold_passes=float(d.get("cold_passes", math.nan)),
                       passes=float(d.get("passes", math.nan)), alm_passes=float(d.get("alm_passes", math.nan)),
                       pdhg_warm_passes=float(d.get("pdhg_warm_passes", math.nan)),
                       warm_lost=bool(d.get("warm_lost", False)),
                       alm_warm_scale=float(d.get("alm_warm_scale", math.nan)))
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True)
class Choice:
    """The engine one solve runs (:func:`choose_engine`).

    Attributes:
        engine: ``"pdhg"`` or ``"alm"``.
        reason: one sentence with the numbers used (the report's ``engine_reason``).
        use_warm: False when the warm start is dropped (rule 2: solve cold).
        alm_passes: work budget of an ALM run, in matrix passes, before PDHG takes over (inf = the round's
            own limits).
        warm_kkt, cold_kkt: worst relative KKT measure of the warm point and of a cold start (nan = not
            measured).
        warm_measures, cold_measures: (primal residual, dual residual, gap), relative, of the warm point and
            of a cold start (empty = not measured): rule 3 compares them measure by measure.
        previous: the warm start's record, or None.
        warm_point_kkt: the ``solver.lp.termination.KKT`` of the warm point at the solve's tol (``original_kkt``),
            or None (not measured): the ALM's run starts from it instead of measuring the same point again
            (``solver.lp.alm.solve_alm_measured``'s ``start_kkt``; TE Kdl: one 0.1-0.15 s pass a round).
        probe: rule 6a: PDHG runs warm where the ALM was eligible, to measure a PDHG warm round of the stream
            (:func:`next_record` compares it with the ALM's last run).
    """

    engine: str
    reason: str
    use_warm: bool = True
    alm_passes: float = math.inf
    warm_kkt: float = math.nan
    cold_kkt: float = math.nan
    previous: EngineRecord | None = None
    warm_measures: tuple = ()
    cold_measures: tuple = ()
    probe: bool = False
    warm_point_kkt: object = None


def kkt_measures(problem: Problem, x: np.ndarray, y: np.ndarray, tol: float) -> tuple[float, float, float]:
    """(relative primal residual, relative dual residual, relative gap) of (x (n,), y (m,)) on the original
    problem (``solver.lp.original_kkt`` at ``tol``; one pass over A); a measure that is not finite is inf."""
    return _measures(original_kkt(problem, x, y, tol)[0])


def _measures(k) -> tuple[float, float, float]:
    """:func:`kkt_measures` of an ``original_kkt`` KKT."""
    return tuple(v if math.isfinite(v) else math.inf for v in (k.primal_residual_rel, k.dual_residual_rel, k.gap_rel))


def no_better(warm: tuple, cold: tuple) -> bool:
    """Rule 3: the warm point's measures (p, d, g) are each >= the cold start's same measure (module docstring:
    like with like). False when the warm point is better on at least one measure."""
    return all(w >= c for w, c in zip(warm, cold, strict=True))


def stale_duals(warm: tuple, cold: tuple) -> bool:
    """Rule 3a: the warm point's (p, d, g) has a dual residual above ``STALE_DUALS`` x the cold start's, which is
    above 0, and a gap no smaller than the cold start's: its duals do not even halve what y = 0 leaves where y = 0
    is not dual feasible, and only its primal point is closer (module docstring)."""
    return warm[1] > STALE_DUALS * cold[1] and cold[1] > 0.0 and warm[2] >= cold[2]


def cold_point(problem: Problem) -> tuple[np.ndarray, np.ndarray]:
    """PDHG's and the ALM's cold start: x = 0 projected onto the column bounds (n,), y = 0 (m,)."""
    return np.minimum(np.maximum(0.0, problem.col_lower), problem.col_upper), np.zeros(problem.n_rows)


def _state_of(warm_start):
    if isinstance(warm_start, SolverState):
        return warm_start
    if isinstance(warm_start, (tuple, list)) and len(warm_start) == 3:
        return warm_start[2]
    return None


def choose_engine(problem: Problem, settings: Settings, warm_start) -> Choice:
    """The engine of one solve of ``problem`` from ``warm_start`` (module docstring: the rules).

    Args:
        problem: the LP (integrality ignored), n columns, m rows.
        settings: ``settings.engine`` is ``"auto"``, ``"pdhg"`` or ``"alm"``.
        warm_start: None, a SolverState or (x (n,), y (m,)[, state]) as ``solver.lp.dispatch.solve`` takes it.
    Returns:
        :class:`Choice`. Cost: two passes over A (the KKT measures of the warm and of the cold point), only
        for a usable warm start under ``"auto"``.
    Raises:
        UsageError: ``settings.engine`` is not one of :data:`ENGINES` (``Settings`` refuses it at construction
            with a SettingsError, itself a UsageError).
    """
    mode = settings.engine
    if mode not in ENGINES:  # Settings refuses it at construction; an attribute set afterwards lands here
        raise UsageError(f"settings.engine must be one of {', '.join(ENGINES)}, got {mode!r}")
    parsed, _ = parse_warm_start(warm_start, problem.n_cols, problem.n_rows)
    previous = EngineRecord.from_state(_state_of(warm_start)) if parsed is not None else None
    if mode in ("pdhg", "alm"):
        return Choice(mode, f"pinned: Settings.engine = {mode} (--engine {mode}, or a MILP relaxation stage with an "
                            "iteration budget, which solver/integer runs with PDHG)", previous=previous)
    if parsed is None:
        why = "no warm start" if warm_start is None else "the warm start was refused"
        return Choice("pdhg", f"cold solve ({why}): PDHG, HiGHS presolve {settings.presolve}", previous=previous)
    k_w = original_kkt(problem, parsed[0], parsed[1], settings.tol)[0]
    m_w = _measures(k_w)
    m_c = kkt_measures(problem, *cold_point(problem), settings.tol)
    e_w, e_c = max(m_w), max(m_c)
    nums = (f"warm KKT {e_w:.1e}, cold {e_c:.1e} (primal/dual/gap warm {m_w[0]:.1e}/{m_w[1]:.1e}/{m_w[2]:.1e}, "
            f"cold {m_c[0]:.1e}/{m_c[1]:.1e}/{m_c[2]:.1e})")
    pick = dict(warm_kkt=e_w, cold_kkt=e_c, previous=previous, warm_measures=m_w, cold_measures=m_c,
                warm_point_kkt=k_w)
    if e_w <= settings.tol:
        return Choice("pdhg", f"{nums}: the warm point already meets tol {settings.tol:g} (returned unchanged, "
                              "no engine runs)", **pick)
    if no_better(m_w, m_c):
        return Choice("pdhg", f"{nums}: the warm point is no better than a cold start on any measure (abrupt "
                              "change), solved cold by PDHG", use_warm=False, **pick)
    stale = stale_duals(m_w, m_c)
    cold_why = (f": the warm duals carry nothing (dual residual {m_w[1]:.1e} > {STALE_DUALS:g} x a cold start's "
                f"{m_c[1]:.1e}, gap {m_w[2]:.1e} >= {m_c[2]:.1e}; only the primal point is closer, and PDHG from an old "
                "primal point with useless duals can take many times a cold solve): solved cold by PDHG")
    r_w, r_c = max(m_w[0], m_w[1]), max(m_c[0], m_c[1])  # the residuals alone (rule 6b): the gap left out
    close = e_w <= ALM_RATIO * e_c and e_w <= ALM_MAX_KKT
    gap_sig = not close and r_w <= ALM_RATIO * r_c and r_w <= ALM_MAX_KKT  # rule 6b's signature
    far_objective = m_w[2] > ALM_MAX_KKT and m_w[2] >= r_w and r_w < r_c  # rule 3b: far only in the gap
    if previous is not None and previous.skip_alm > 0:
        if stale:
            return Choice("pdhg", f"{nums}; the ALM lost a recent round (PDHG for {previous.skip_alm} more rounds)"
                                  f"{cold_why}", use_warm=False, **pick)
        if far_objective:
            return Choice("pdhg", f"{nums}; the ALM lost a recent round (PDHG for {previous.skip_alm} more rounds) and "
                                  f"this start is far only in its gap ({m_w[2]:.1e} > {ALM_MAX_KKT:g}; residuals "
                                  f"{r_w:.1e} below the cold start's {r_c:.1e}): far in objective, not stale in its "
                                  "duals (rule 3b: PDHG warm from such starts took 0.6-6x a cold solve): solved cold "
                                  "by PDHG", use_warm=False, **pick)
        return Choice("pdhg", f"{nums}; the ALM lost a recent round (PDHG for {previous.skip_alm} more rounds): "
                              "PDHG warm", **pick)
    if previous is None:
        return Choice("pdhg", f"{nums}; a start without a previous solve's record (a partial re-solve): PDHG warm",
                      **pick)
    gap_only = gap_sig and math.isfinite(previous.cold_passes)  # 6b needs a budget: its losses cost 3.8-7x
    if close or gap_only:
        cold_p = previous.cold_passes
        if (previous.engine == "alm" and not previous.lost and math.isnan(previous.pdhg_warm_passes)
                and cold_p > 0 and previous.alm_passes > ALM_PROBE * cold_p):
            return Choice("pdhg", f"{nums}; the ALM's last round made {previous.alm_passes:.0f} matrix passes, more "
                                  f"than {ALM_PROBE:g} x the last cold solve's {cold_p:.0f}, and no PDHG warm round of "
                                  "this stream is known: PDHG warm, to compare", probe=True, **pick)
        floor = math.ceil(ALM_MIN_NONZEROS / max(problem.nnz, 1))
        # the floor never lets a run go past ALM_OVER x the cold passes, where it counts as lost anyway
        # ... except after a cold solve of 0 passes (HiGHS presolve solved it): no yardstick, the floor alone
        share = ALM_BUDGET_PROVEN if math.isfinite(previous.alm_passes) else ALM_BUDGET  # the ALM finished a round
        budget = (math.inf if not math.isfinite(cold_p) else floor if cold_p <= 0 else
                  max(share * cold_p, min(floor, ALM_OVER * cold_p)))
        btxt = ("no cold solve's passes known: budget = the round's limits" if not math.isfinite(budget) else
                f"budget {budget:.0f} matrix passes ({floor} = {ALM_MIN_NONZEROS:.0e} nonzeros: the last cold solve "
                "made 0, HiGHS presolve solved it)" if cold_p <= 0 else
                f"budget {budget:.0f} matrix passes (max of {share:g} x the last cold solve's {cold_p:.0f} and "
                f"min({floor} = {ALM_MIN_NONZEROS:.0e} nonzeros, {ALM_OVER:g} x it)"
                f"{'; the ALM finished a warm round of this stream' if share == ALM_BUDGET_PROVEN else ''})")
        why = (f"ratio {e_w / e_c:.2g} <= {ALM_RATIO:g}, <= {ALM_MAX_KKT:g}" if close else
               f"only the gap is large: residuals {r_w:.1e} against the cold start's {r_c:.1e}, ratio <= {ALM_RATIO:g}, "
               f"<= {ALM_MAX_KKT:g}; stale duals or a far primal objective, the outcome decides")
        # the ALM runs next: its import is paid anyway
        from solver.lp.alm import ALMParameters, stream_warm_scale

        sc, base = stream_warm_scale(previous.alm_warm_scale), ALMParameters.warm_scale
        scale = (f"; first proximal step's warm_scale {sc:.3g}, not {base:g}: a recent first outer step of this "
                 "stream missed tol narrowly (solver.lp.alm.next_warm_scale)" if sc > base else "")
        return Choice("alm", f"{nums} ({why}): ALM warm, {btxt}{scale}", alm_passes=budget, **pick)
    not_alm = f"{nums} (ratio {e_w / e_c:.2g}; the ALM needs <= {ALM_RATIO:g} and a warm KKT <= {ALM_MAX_KKT:g})"
    if stale:
        return Choice("pdhg", not_alm + cold_why, use_warm=False, **pick)
    return Choice("pdhg", f"{not_alm}: PDHG warm", **pick)


def solve_passes(pdhg_iterations: int, alm_passes: float = 0.0) -> float:
    """Matrix passes of one solve: ``PDHG_ITERATION_PASSES`` per PDHG iteration (a presolved cold solve's
    iterations run on the reduced LP, plus its polish on the original one) plus the ALM's own count
    (``solver.lp.alm_newton``: a Psi evaluation two, a CG iteration one)."""
    return float(PDHG_ITERATION_PASSES * pdhg_iterations + alm_passes)


def warm_cap(choice: Choice, settings: Settings) -> int | None:
    """PDHG iterations a warm round may run before it is solved cold (module docstring: ``WARM_OVER``), None when
    uncapped: not an ``"auto"`` PDHG warm round, no cold solve's passes known, or the round's own
    ``iteration_limit`` is lower."""
    prev = choice.previous
    if not (choice.engine == "pdhg" and choice.use_warm and math.isfinite(choice.warm_kkt) and prev is not None
            and math.isfinite(prev.cold_passes) and prev.cold_passes > 0):
        return None
    cap = max(1, math.ceil(WARM_OVER * prev.cold_passes / PDHG_ITERATION_PASSES))
    return cap if cap < settings.iteration_limit else None


def next_record(choice: Choice, converged: bool, lost: bool, cold: SolveResult | None,
                passes: float = math.nan, warm_lost: bool = False, alm_scale: float = math.nan) -> EngineRecord:
    """The record a solve leaves (``SolverState.engine``) after running ``choice``.

    Args:
        choice: what ran.
        converged: the solve ended OPTIMAL.
        lost: the ALM ran and PDHG finished the round.
        cold: the OPTIMAL cold PDHG solve this call ran (its ``seconds["total"]`` and ``iterations`` become
            the record's ``cold_seconds`` and ``cold_passes``), None when it ran none (the previous record's
            figures are carried on).
        passes: matrix passes this solve made (:func:`solve_passes`). An ALM run under ``"auto"`` that made more
            than ``ALM_OVER`` x the previous record's ``cold_passes``, or more than ``ALM_VS_PDHG`` x its
            ``pdhg_warm_passes``, counts as lost for ``skip_alm``; so does the ALM's last run when a rule-6a
            PDHG warm round made fewer than 1 / ``ALM_VS_PDHG`` of its passes.
        warm_lost: the PDHG warm run hit :func:`warm_cap` and the round was solved cold (its passes are not a
            PDHG warm round's for rule 4; the cold solve's become the record's ``cold_passes``).
        alm_scale: the next warm ALM run's ``warm_scale`` when this solve's warm ALM run set it
            (``solver.lp.alm.next_warm_scale``); nan: the previous record's is carried on.
    """
    prev = choice.previous
    if cold is not None:
        seconds = float(cold.seconds.get("total", math.nan))
        cold_p = solve_passes(cold.iterations)
    else:
        seconds = prev.cold_seconds if prev else math.nan
        cold_p = prev.cold_passes if prev else math.nan
    base = prev.cold_passes if prev else math.nan
    alm_p = prev.alm_passes if prev else math.nan
    pdhg_p = prev.pdhg_warm_passes if prev else math.nan
    warm_ran = choice.use_warm and math.isfinite(choice.warm_kkt)  # an "auto" solve from a warm start
    alm_ran = warm_ran and choice.engine == "alm" and not lost
    over = alm_ran and math.isfinite(base) and base > 0 and passes > ALM_OVER * base  # 0: presolve solved it
    beaten = alm_ran and passes > ALM_VS_PDHG * pdhg_p  # False while no PDHG warm round is known (nan)
    probe_lost = choice.probe and ALM_VS_PDHG * passes < alm_p  # the PDHG warm round did clearly less than the ALM's
    if alm_ran:
        alm_p = float(passes)
    elif warm_ran and choice.engine == "pdhg" and passes > 0 and not lost and not warm_lost:  # not rule 2, not the ALM's passes too
        pdhg_p = float(passes)
    # a lost ALM round is charged against the cold cost: one PDHG finished within the last cold solve's passes
    # (from the ALM's point, solver.lp.dispatch) did not burn the budget, and backing off would (rule 4: lost)
    charged = lost and not (math.isfinite(base) and base > 0 and passes <= base)
    # ... and the back-off ends when a PDHG warm round run in it made more than ALM_VS_PDHG x the stream's last
    # finished ALM round's passes (rule 4's comparison the other way round) or ran into its WARM_OVER cap
    pdhg_beaten = (warm_ran and choice.engine == "pdhg" and not lost and prev is not None and prev.skip_alm > 0
                   and (warm_lost or passes > ALM_VS_PDHG * prev.alm_passes))  # False while alm_passes is nan
    skip = (ALM_BACKOFF if charged or over or beaten or probe_lost else 0 if pdhg_beaten else
            max((prev.skip_alm if prev else 0) - 1, 0))
    return EngineRecord(engine=choice.engine, reason=choice.reason, converged=bool(converged), lost=bool(lost),
                        cold_seconds=seconds, skip_alm=skip, cold_passes=cold_p, passes=float(passes),
                        alm_passes=alm_p, pdhg_warm_passes=pdhg_p, warm_lost=bool(warm_lost),
                        alm_warm_scale=alm_scale if math.isfinite(alm_scale) else
                        prev.alm_warm_scale if prev else math.nan)
