"""A MILP round that its time limit (or its relaxation's iteration limit) stopped far from its target, said in a
``warning:`` line.

Such a round is ``FEASIBLE`` (exit 0: its point holds exactly), and its message already names the limit. But a
cron job reads exit codes and warnings, not messages: user trial 37 set ``init --time-limit 0.4`` on Sia 1,024
GPUs (about 0.35 s of it is the process's start-up, which the limit counts) and got rounds 41-58% below the
unlimited ones, gaps 1.1-2.4 against the 0.5% target, every one exit 0 without a warning.
"""

from __future__ import annotations

import math

from solver import clock
from solver.clock import TIME_LIMIT_MSG


def time_limit_gap_warning(result, settings, round_: int | None) -> list[str]:
    """The warning (a list of at most one) for a MILP round that ended ``FEASIBLE`` because the time limit
    stopped it, its proven relative gap above the round's ``--mip-gap``. Stopped: its message says "time limit ...
    reached", or (a CLI command, whose start ``solver.clock`` holds) the command has spent its limit but the
    partitioned round's merge reserve (``solver.partition.deadline.merge_reserve``).

    Args:
        result: the round's SolveResult (``status``, ``message``, ``mip`` with ``gap_rel``).
        settings: the round's Settings (``time_limit_seconds``, ``mip_gap_tol``).
        round_: the round's number, for the sentence; None: a ``copter solve`` ("the solve stopped ...", which
            warned of nothing where ``init`` of the same model warned: helper-193).
    Returns:
        ``[]``, or one sentence naming the gap, the target and the limit (seconds, from process start).
    """
    mip = getattr(result, "mip", None) or {}
    gap = mip.get("gap_rel")
    limit = float(settings.time_limit_seconds)
    if result.status.name != "FEASIBLE" or not isinstance(gap, (int, float)):
        return []
    if mip.get("lp_status") == "ITERATION_LIMIT" and math.isfinite(gap) and gap > float(settings.mip_gap_tol):
        return [_iteration_limit_sentence(gap, settings, round_)]
    if not math.isfinite(limit):
        return []
    # stopped by the limit: an engine's message says so; a partitioned round's merged one does not (helper-174), so
    # a command that has spent its limit up to the merge's reserve counts too (the parts' deadline cut them short)
    from solver.partition.deadline import merge_reserve

    cli = clock.command_start() is not None  # the library's limit counts from the solve: only the message says
    if not (TIME_LIMIT_MSG.search(result.message or "") or (cli and clock.elapsed() >= limit - merge_reserve(limit))):
        return []
    target = float(settings.mip_gap_tol)
    if not (math.isfinite(gap) and gap > target):
        return []
    since = " from the command's start, start-up included" if cli else ""
    who = "the solve" if round_ is None else f"round {round_}"
    return [f"{who} stopped at its time limit ({limit:g} s{since}) with an integer point {100 * gap:.3g}% "
            f"from its LP bound, above the --mip-gap "
            f"target {100 * target:g}%: give it a longer --time-limit for a better allocation"]


def _iteration_limit_sentence(gap: float, settings, round_: int | None) -> str:
    """The warning of a MILP round whose LP relaxation stopped at ``--iteration-limit`` (``mip.lp_status``
    ITERATION_LIMIT) and whose integer point is ``gap`` (relative) from its bound, above ``--mip-gap``: such a round
    was FEASIBLE, exit 0, without a word where a time limit's warned (helper-221: Sia 1,024 with ``--iteration-limit
    20``, a gap of 30%)."""
    who = "the solve" if round_ is None else f"round {round_}"
    return (f"{who}'s LP relaxation stopped at its iteration limit ({float(settings.iteration_limit):g} iterations) "
            f"and its integer point is {100 * gap:.3g}% from its LP bound, above the --mip-gap target "
            f"{100 * float(settings.mip_gap_tol):g}%: give it a higher --iteration-limit for a better allocation")
