"""A partitioned round whose part is infeasible under its shares is solved whole: a part's infeasibility proves
nothing about the model.

Why a part can be infeasible while the whole model is feasible: a shared row ``l <= sum_p a_p x_p <= u`` is
split into ``s_p l <= a_p x_p <= s_p u`` per part (:mod:`solver.partition.split`). Every feasible point of the
whole model splits the row's activity ``T = sum_p t_p`` (``t_p = a_p x_p``) among the parts, but only a split
with ``t_p = s_p T`` for one common ``T`` and shares ``s_p >= 0`` fits the scaled bounds. A balance row with a
zero right-hand side (what one part's columns ship, another's receive) gives every part the allocation 0 and
so pins each part's own flows in it at zero; a row that then asks the part for a positive allocation makes it
infeasible under any share. afiro split by ``--client-regex '^X(?P<client>\\d)'``: R12 and R22 (= 0) pin part
0's X14, X15, X28, X29 at zero, and R23 (X28 + X29 + ... = 44) asks part 0 for its share of 44.
Resource-directive decomposition assumes every part can live within some allocation
(Geoffrion 1970, the feasibility condition of the master problem); the parts' statuses then say nothing
about the model.

So when a part ends PRIMAL_INFEASIBLE, DUAL_INFEASIBLE or INFEASIBLE_OR_UNBOUNDED, the round solves the whole
model monolithically right after the parts, merging nothing (``solver.api.solve_problem``, cold: the parts'
points are no start for it) and that
result is the round's: its status (a PRIMAL_INFEASIBLE here is the model's, exit code 4), point and bound. The
report's ``partitions.fallback`` says which part failed how and what the whole solve took; the parts' shares
and states are kept for the next round, which tries the parts again.

A MILP round whose merged point is still far from the whole model's bound after the parts' improvement (its
proven gap above ``FAR_GAP`` x ``mip_gap_tol``, ``solver.partition.round``) is compared with a whole solve too
(:func:`compare_whole`): the shares confine each part to its allocation of the shared rows, and what the parts
cannot reach within them only the whole model can (the Sia demo split into one job per part: 2.4% from the
bound; monolithic: 0.03%). The better of the two points is the round's; the report says which. Both solves prove
a bound on the same model (the merge its Lagrangian bound, the whole solve its own), so the round's bound is the
tighter of the two, and its gap and status (OPTIMAL within ``mip_gap_tol``) are the kept point's against it: a
merged point kept at the whole solve's OPTIMAL objective was reported FEASIBLE 3.38% from the merge's looser
bound (the Sia demo without 6 of its 12 jobs, K = 2).

An LP round whose whole model is small (``--whole-below-nnz``, :mod:`solver.partition.small`) is compared with a
whole solve after every merge (:func:`compare_small_lp`): its first split is the probe's, every part's demand at
price 0, which left TE ring 24's merge 5.7% / 25% below the monolithic optimum at K = 4 / 16, and the parts'
LP bound (10-19% loose there) cannot tell a poor merge from a good one; solving it whole costs about what the
partitioned round's fixed costs do.
"""

from __future__ import annotations

import math
import time
from dataclasses import replace

from solver.integer.gap import abs_gap_of, lattice_bound, objective_step, signed_gap
from solver.model.result import SolveResult
from solver.model.settings import Settings
from solver.model.status import Status
from solver.partition.small import SMALL_LP_NNZ

#: an LP merge whose gap to its own Lagrangian bound is above this (relative) is compared with a whole solve: partition
#: losses are 0.05% (TE Kdl, K = 4) to 1.5% (Cogentco, K = 8) and 4% (TE ring 24, K = 2, the probe's shares); a
#: part starved of capacity is far above that: after a delta that dropped every client of part 0 and one that added
#: 552 new clients (413 of them to part 0, which kept 6% of the links), TE ring 24, K = 2, fixed shares, stayed 18%
#: below the optimum round after round, gap 0.50 (helper-188, session 47)
LP_FAR_GAP = 0.10

#: a part's statuses that say nothing about the whole model, whose round is then solved whole: infeasible or
#: unbounded under its shares, no answer within its iteration limit or in floating point, or (a MILP part) no
#: integer point (helper-191, session 49: an LB 64 x 8 LP part at K = 4, likely infeasible under its shares but never
#: certified, ran PDHG to 1,000,000 iterations; the round ended ITERATION_LIMIT, exit 5, on a model HiGHS solved in
#: milliseconds). A part out of time is not one: the whole solve would have no time left either
PART_FAILURES = (Status.PRIMAL_INFEASIBLE, Status.DUAL_INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED,
                 Status.ITERATION_LIMIT, Status.NUMERICAL_ERROR, Status.NO_INTEGER_SOLUTION)


#: a whole solve's statuses that say the model has no optimum although the merged point is feasible: unbounded (a
#: feasible point and no optimum). Such a round's answer is the whole solve's, exit 4 as a monolithic round's; a
#: partitioned state kept a feasible merged point of an unbounded LP as OPTIMAL (K = 2, 3, 4: objectives 1.0030e6,
#: 1.0031e6, 1.0030e6 for a model HiGHS finds unbounded) and of a MILP as FEASIBLE, exit 0 (helper-239, session 60)
NO_OPTIMUM = (Status.DUAL_INFEASIBLE, Status.INFEASIBLE_OR_UNBOUNDED)


def no_optimum_answer(whole: SolveResult, head: str, rep: dict) -> tuple[SolveResult, dict]:
    """The round's result when the whole solve compared with a merge proved :data:`NO_OPTIMUM`: the whole solve's
    (its status, point and certificate), its message after ``head``; ``rep`` (the report's ``fallback``) says
    ``kept`` "whole"."""
    rep["kept"] = "whole"
    return replace(whole, message=f"{head}: the whole model has no optimum ({whole.status.name}), which is the "
                                  f"round's answer: {whole.message}"), rep


def failed_parts(part_rep: list[dict]) -> dict[int, str]:
    """``{part: status name}`` of the parts whose status is one of :data:`PART_FAILURES` (report rows)."""
    names = {s.name for s in PART_FAILURES}
    return {int(pr["part"]): str(pr["status"]) for pr in part_rep if pr.get("status") in names}


def solve_whole(problem, settings: Settings, failed: dict[int, str]) -> tuple[SolveResult, dict]:
    """Solve ``problem`` (the whole model, n columns, m rows) monolithically after the parts ``failed``, right
    after the parts (nothing is merged: the parts' points say nothing about the model).

    Args:
        problem: the round's whole model; settings: the round's settings (threads as given).
        failed: ``{part: status name}`` (:func:`failed_parts`).
    Returns:
        (the whole solve's SolveResult with the fallback said in its message, the report's ``fallback``
        section: ``failed_parts``, ``status`` of the whole solve, ``seconds`` (wall, this process), ``iterations``).
    """
    from solver.api import solve_problem

    t = time.perf_counter()
    whole = solve_problem(problem, settings, None)
    seconds = time.perf_counter() - t
    which = ", ".join(f"part {p} {s}" for p, s in sorted(failed.items()))
    msg = (f"partitioned round: {which} under its share of the shared rows, which says nothing about the whole "
           f"model; the round was solved whole (monolithic, {seconds:.2f} s): {whole.message}")
    rep = {"failed_parts": {str(p): s for p, s in failed.items()}, "status": whole.status.name,
           "seconds": round(seconds, 6), "iterations": int(whole.iterations)}
    return replace(whole, message=msg), rep


def solve_without_clients(problem, settings: Settings) -> tuple[SolveResult, dict]:
    """Solve ``problem`` whole (``solver.api.solve_problem``, cold) when no part has a client: a delta dropped
    every client, so every part is EMPTY and what is left of the model (n global columns, m rows; possibly
    none) belongs to no part. The split itself stands: the next delta's new clients go to the parts again.

    Args:
        problem: the round's whole model; settings: the round's settings.
    Returns:
        (the whole solve's SolveResult, its status the round's, with the reason said in its message; the
        report's ``fallback`` section: ``reason`` "no_clients", ``status``, ``seconds`` (wall), ``iterations``).
    """
    from solver.api import solve_problem

    t = time.perf_counter()
    whole = solve_problem(problem, settings, None)
    seconds = time.perf_counter() - t
    msg = (f"partitioned round: no part has a client (the deltas dropped them all), every part is EMPTY; what "
           f"is left of the model ({problem.n_cols} columns, {problem.n_rows} rows) was solved whole: "
           f"{whole.message}")
    rep = {"reason": "no_clients", "status": whole.status.name, "seconds": round(seconds, 6),
           "iterations": int(whole.iterations)}
    return replace(whole, message=msg), rep


def compare_whole(problem, settings: Settings, merged: SolveResult, gap: float | None,
                  reason: str = "gap") -> tuple[SolveResult, dict]:
    """Solve ``problem`` whole (``solver.api.solve_problem``, cold: warm from the merged point's state it ended
    0.13% below the cold solve on the Sia demo, K = 16) after a merge whose proven gap ``gap`` is far above
    ``settings.mip_gap_tol``, and keep the better feasible point.

    Args:
        problem: the round's whole model; settings: the round's settings (a ``--time-limit`` counts from the
            command's start, so the whole solve gets what is left of it).
        merged: the partitioned merge's result (feasible); gap: its relative gap to the whole model's bound (None:
            no bound was proven; the report's ``merged_gap_rel`` is then null).
        reason: the report's ``reason``: ``"gap"`` (far from the bound after the parts' improvement) or
            ``"small"`` (a small MILP above its target, :func:`solver.partition.small.small_milp`, at once).
    Returns:
        (the round's result: the whole solve's when it proves the model has no optimum (:data:`NO_OPTIMUM`); else
        the whole solve's point when it is feasible and better, else ``merged``'s, against
        the tighter of the two bounds (:func:`with_bound`), with the comparison said in its message; the report's
        ``fallback`` section: ``reason``, ``merged_gap_rel``, ``merged_objective``, ``status`` and
        ``objective`` of the whole solve, ``seconds``, ``iterations``, ``kept`` "whole" or "merged", ``bound_from``
        "whole" or "merged").
    """
    from solver.api import solve_problem

    t = time.perf_counter()
    whole = solve_problem(problem, settings, None)
    seconds = time.perf_counter() - t
    better = better_point(problem, whole, merged)
    how_far = ("had no proven bound" if gap is None else f"was {gap:.3%} from the whole model's bound")
    head = (f"partitioned round: the merged point {how_far} (target {settings.mip_gap_tol:.3%}), so the round was "
            f"also solved whole (monolithic, {seconds:.2f} s, {whole.status.name})")
    rep = {"reason": reason, "merged_gap_rel": None if gap is None else float(gap),
           "merged_objective": float(merged.objective),
           "status": whole.status.name,
           "objective": float(whole.objective) if math.isfinite(whole.objective) else None,
           "seconds": round(seconds, 6), "iterations": int(whole.iterations), "kept": "whole" if better else "merged",
           "merged_message": merged.message}
    if whole.status in NO_OPTIMUM:
        return no_optimum_answer(whole, head, rep)
    whole_bound = _bound_of(whole)
    from_whole = whole_bound is not None and not problem.sense * (merged.dual_objective - whole_bound) > 0
    rep["bound_from"] = "whole" if from_whole else "merged"
    bound = whole_bound if from_whole else float(merged.dual_objective)
    if better:
        # the merged point's bound judges the whole point when it is the tighter one (none when neither has one)
        rebound = not from_whole and math.isfinite(bound)
        kept = with_bound(problem, settings, whole, bound) if rebound else whole
        # the whole solve's own message names its own bound: say which bound and gap the round reports instead
        note = (f" (bound and gap: the merged point's bound {kept.dual_objective:.10g}, the tighter, gap "
                f"{kept.mip['gap_rel']:.3%})"
                if rebound and kept.mip and kept.mip.get("gap_rel") is not None else "")
        return replace(kept, message=f"{head}, whose point is kept{note}: {whole.message}"), rep
    kept = with_bound(problem, settings, merged, bound) if from_whole else merged
    note = f" (bound and gap: the whole solve's bound, gap {kept.mip['gap_rel']:.3%})" if from_whole else ""
    return replace(kept, message=f"{head}; the merged point is kept{note}: {merged.message}"), rep


def violates_whole(problem, result: SolveResult, part_rep: list[dict]) -> bool:
    """A round whose parts all ended OPTIMAL or FEASIBLE (or EMPTY) but whose merged point failed the whole
    model's re-check: the merge's NUMERICAL_ERROR. A MILP's re-check is exact (a row or bound off by more than
    ``solver.partition.merge.MILP_FEASIBLE_REL_TOL`` relative, or an integer off): a part without an integer column
    is an LP solved to ``tol`` norm-wise, whose columns can overshoot a shared row by more (an LP state whose delta
    added integer clients to the other parts: 1.1e-6), so the round failed on a model a monolithic round solves. An
    LP's is the monolithic LP's (norm-wise and per row, ``solver.lp.termination.row_tolerance``), K times as loose:
    parts each within their own tolerance can still overshoot a shared row together."""
    return (result.status == Status.NUMERICAL_ERROR and not result.point_feasible
            and bool(part_rep) and all(pr.get("status") in ("OPTIMAL", "FEASIBLE", "EMPTY") for pr in part_rep))


def whole_after_violation(problem, settings: Settings, merged: SolveResult, rep: dict) -> tuple[SolveResult, dict]:
    """Solve ``problem`` (the whole model) monolithically after a merge :func:`violates_whole` (cold, as
    :func:`compare_whole`): the round's result is the whole solve's, its status the round's.

    Args:
        problem: the round's whole model; settings: the round's settings (a ``--time-limit`` counts from the
            command's start); merged: the merge's result; rep: the merge's report (``max_row_violation_rel``).
    Returns:
        (the whole solve's SolveResult with the fallback said in its message; the report's ``fallback`` section:
        ``reason`` "merged_violates", ``merged_max_violation_rel``, ``merged_message``, ``status`` and
        ``objective`` of the whole solve, ``seconds`` (wall), ``iterations``, ``kept`` "whole").
    """
    from solver.api import solve_problem

    t = time.perf_counter()
    whole = solve_problem(problem, settings, None)
    seconds = time.perf_counter() - t
    viol = rep.get("max_row_violation_rel")
    off = f"largest row violation {viol:.2e} relative" if viol is not None else "a row, bound or integer off"
    allows = ("the re-check allows 1e-06" if problem.is_mip
              else f"the merge's re-check: {merged.message.split('; ', 1)[-1]}")
    msg = (f"partitioned round: the merged point violates the whole model ({off}; {allows}), so "
           f"the round was solved whole (monolithic, {seconds:.2f} s, {whole.status.name}): {whole.message}")
    out = {"reason": "merged_violates", "merged_max_violation_rel": viol, "merged_message": merged.message,
           "status": whole.status.name,
           "objective": float(whole.objective) if math.isfinite(whole.objective) else None,
           "seconds": round(seconds, 6), "iterations": int(whole.iterations), "kept": "whole"}
    return replace(whole, message=msg), out


def compare_small_lp(problem, settings: Settings, merged: SolveResult, limit: int = SMALL_LP_NNZ,
                     warm=None, reason: str = "small", gap: float | None = None) -> tuple[SolveResult, dict]:
    """Solve a small LP round's whole model (``solver.partition.small.small_lp``; ``solver.api.solve_problem``)
    after the merge, warm from the previous round's point as a monolithic round is (``warm``), else cold, and keep
    the better point.

    Why: a part's share of a shared capacity row is fixed while it solves, and the first split (the probe's: every
    part alone wants all of a row) or a few share moves are far from the shares of the whole model's optimum; on
    a small model the whole solve costs about what the partitioned round's fixed costs do, and the parts' dual
    bound (10-19% loose on TE ring 24) cannot tell a poor merge from a good one.

    Args:
        problem: the round's whole LP (n columns, m rows); settings: the round's settings (a ``--time-limit``
            counts from the command's start, so the whole solve gets what is left of it).
        merged: the partitioned merge's result; limit: the state's ``whole_below_nnz`` (said in the report).
        warm: the previous round's SolverState mapped onto ``problem`` (``solver.differential.map_state``), or
            None: a cold solve (round 0; warm from the merged point PDHG took 2,695 iterations instead of 1,350
            on TE ring 40 at K = 4).
        reason: ``"small"`` (the LP is small), ``"no_bound"``: a merged LP point with no proven bound
            (:func:`solver.partition.after_merge.lp_without_bound`), or ``"far"``: one more than
            :data:`LP_FAR_GAP` from it (:func:`solver.partition.after_merge.lp_far`; ``gap``: the merge's), whatever
            its size.
    Returns:
        (the round's result: the whole solve's when it proves the model has no optimum (:data:`NO_OPTIMUM`) or its
        point is feasible and better (:func:`better_point`), with its own status and bound, else ``merged``; the comparison said in its
        message; the report's ``fallback`` section: ``reason`` "small", ``nnz``, ``whole_below_nnz`` (the
        threshold), ``merged_objective``, ``merged_status``, ``status`` and ``objective`` of the whole solve,
        ``seconds``, ``iterations``, ``warm_started``, ``kept`` "whole" or "merged").
    """
    from solver.api import solve_problem

    t = time.perf_counter()
    whole = solve_problem(problem, settings, warm)
    seconds = time.perf_counter() - t
    # the merge's Lagrangian bound (safe: Neumaier-Shcherbina) judges both points' objectives
    proven = float(merged.dual_objective) if math.isfinite(merged.dual_objective) else None
    better = better_lp_point(problem, settings.tol, whole, merged, proven)
    how = "warm" if whole.warm_started else "cold"
    why = {"small": f"the LP has {problem.nnz} nonzeros (at most {limit})",
           "far": (f"the merged point is {gap or 0.0:.1%} from its Lagrangian bound (more than "
                   f"{LP_FAR_GAP:.0%}: the parts' shares confine it)"),
           }.get(reason, "the merged point has no proven bound to judge it by (the parts' prices bound no column "
                         "without finite bounds)")
    head = (f"partitioned round: {why}, so it was also solved whole (monolithic, {how}, {seconds:.2f} s, "
            f"{whole.status.name}, objective {whole.objective:.10g}; merged {merged.objective:.10g})")
    rep = {"reason": reason, "nnz": int(problem.nnz), "whole_below_nnz": int(limit),
           "merged_objective": float(merged.objective) if math.isfinite(merged.objective) else None,
           "merged_status": merged.status.name, "status": whole.status.name,
           "objective": float(whole.objective) if math.isfinite(whole.objective) else None,
           "seconds": round(seconds, 6), "iterations": int(whole.iterations),
           "warm_started": bool(whole.warm_started), "kept": "whole" if better else "merged",
           "merged_message": merged.message}
    if whole.status in NO_OPTIMUM:
        return no_optimum_answer(whole, head, rep)
    if better:
        return replace(whole, message=f"{head}, whose point is kept: {whole.message}"), rep
    return replace(merged, message=f"{head}; the merged point is kept: {merged.message}"), rep


def better_point(problem, a: SolveResult, b: SolveResult) -> bool:
    """``a``'s point is feasible and better than ``b``'s in the problem's sense (or ``b``'s is not feasible)."""
    if not a.point_feasible or not math.isfinite(a.objective):
        return False
    return not b.point_feasible or not math.isfinite(b.objective) or problem.sense * (a.objective - b.objective) < 0


def better_lp_point(problem, tol: float, a: SolveResult, b: SolveResult, bound: float | None = None) -> bool:
    """:func:`better_point` for two LP points, except that an OPTIMAL point beats a feasible one that is not (the
    merge's FEASIBLE: a primal residual within K x ``tol`` but a KKT error above ``tol``), that an objective past
    ``bound`` (a proven bound of the model in its sense, e.g. the merge's Lagrangian one) counts as the bound itself,
    and that objectives within ``tol`` (relative, of max(1, |b's|)) of each other are a tie, won by the smaller
    ``primal_residual_rel``.

    Why: an OPTIMAL point's objective is within ``tol`` of the optimum, and no feasible point passes a proven bound,
    so an objective past either by more is bought with row violations, not found. A new user's TE B4 round 0 at K = 2
    kept a merged point 8.4e-5 above the whole solve's, and above HiGHS's optimum, over the whole solve's more accurate
    one (the tie); helper-190 (session 49), TE scale 12 at K = 2: a merged FEASIBLE point 1.6e-4 above the OPTIMAL
    whole solve's, with a primal residual of 1.2e-4 (above ``tol``) and a capacity row 0.96% over, was kept over it
    (the ranking); helper-191, TE ring 12 at K = 3: a merged OPTIMAL point 1.6e-4 above HiGHS's maximum and 1.1e-4
    past its own Lagrangian bound was kept over the whole solve's, 1.1e-6 below it (the bound)."""
    if not (a.point_feasible and b.point_feasible and math.isfinite(a.objective) and math.isfinite(b.objective)):
        return better_point(problem, a, b)
    a_opt, b_opt = a.status == Status.OPTIMAL, b.status == Status.OPTIMAL
    if a_opt != b_opt:
        return a_opt
    oa, ob = float(a.objective), float(b.objective)
    if bound is not None and math.isfinite(bound):  # minimise: nothing below the bound; maximise: nothing above
        oa, ob = ((max(oa, bound), max(ob, bound)) if problem.sense > 0 else (min(oa, bound), min(ob, bound)))
    if abs(oa - ob) <= tol * max(1.0, abs(ob)):
        return a.primal_residual_rel < b.primal_residual_rel
    return problem.sense * (oa - ob) < 0


def _bound_of(res: SolveResult) -> float | None:
    """The proven bound of a whole MILP solve (its ``dual_objective``), when it ended OPTIMAL or FEASIBLE (the
    statuses whose bound a monolithic round reports) with a finite one; else None."""
    b = float(res.dual_objective)
    return b if res.status.is_success and math.isfinite(b) else None


def with_bound(problem, settings: Settings, res: SolveResult, bound: float) -> SolveResult:
    """``res`` (a feasible MILP point's result) judged against ``bound``, a proven bound of ``problem`` in its
    sense: ``dual_objective`` and ``mip["lp_bound"]`` the bound, ``gap_rel`` the signed MIP gap
    (``solver.integer.gap.signed_gap``, as a monolithic round's; ``gap_rel`` of the result is its absolute value), the
    status OPTIMAL when the gap is within ``settings.mip_gap_tol``, else FEASIBLE. A result whose status is
    neither OPTIMAL nor FEASIBLE keeps its status."""
    bound = lattice_bound(problem.sense, bound, float(problem.offset), objective_step(problem.cost, problem.integrality))
    gap = signed_gap(problem.sense, float(res.objective), bound, abs_gap_of(problem.cost))
    status = res.status
    if status.is_success and res.point_feasible:
        status = Status.OPTIMAL if gap <= settings.mip_gap_tol else Status.FEASIBLE
    mip = {**(res.mip or {}), "lp_bound": float(bound), "gap_rel": float(gap)}
    return replace(res, status=status, dual_objective=float(bound), gap_rel=float(abs(gap)), mip=mip)


def not_paying_warning(report: dict, kept_before: bool, kept_now: bool) -> str | None:
    """The warning of a MILP round whose whole solve's point was kept for the second round running, or None. Such a
    round solves its parts and merges them before the whole solve that wins: on LB 256 x 32, K = 2, 10-19 s a round
    against 1.7-4.4 s for the same rounds monolithic (helper-215, session 54), and Sia 64 at K = 4 kept the whole
    point every round (helper-219), without a word saying partitioning did not pay.

    Args:
        report: the round's ``partitions`` section (``fallback``: its ``seconds`` and ``merged_gap_rel``;
            ``seconds.wall``: seconds).
        kept_before, kept_now: the previous round's and this round's
            :attr:`~solver.partition.store.PartitionData.whole_kept` (the whole point kept after a merge above target).
    """
    if not (kept_before and kept_now):
        return None
    fb = report.get("fallback") or {}
    whole, wall = float(fb.get("seconds") or 0.0), float((report.get("seconds") or {}).get("wall") or 0.0)
    gap = fb.get("merged_gap_rel")
    merged = "had no proven bound" if gap is None else f"was {gap:.2%} from the bound"
    return (f"partitioning did not pay this round: as in the round before, the parts' merged point {merged}, above "
            f"--mip-gap, and the whole model's solve ({whole:.2f} s) found the point kept; the parts and their merge "
            f"added {max(wall - whole, 0.0):.2f} s. A model whose whole solve wins round after round is faster as a "
            "monolithic state (copter init without --partitions)")
