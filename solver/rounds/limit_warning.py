"""A MILP round that its time limit stopped far from its target, said in a ``warning:`` line.

Such a round is ``FEASIBLE`` (exit 0: its point holds exactly), and its message already names the limit. But a
cron job reads exit codes and warnings, not messages: user trial 37 set ``init --time-limit 0.4`` on Sia 1,024
GPUs (about 0.35 s of it is the process's start-up, which the limit counts) and got rounds 41-58% below the
unlimited ones, gaps 1.1-2.4 against the 0.5% target, every one exit 0 without a warning.
"""

from __future__ import annotations

import math

from solver.clock import TIME_LIMIT_MSG


def time_limit_gap_warning(result, settings, round_: int) -> list[str]:
    """The warning (a list of at most one) for a MILP round that ended ``FEASIBLE`` because the time limit
    stopped it, its proven relative gap above the round's ``--mip-gap``.

    Args:
        result: the round's SolveResult (``status``, ``message``, ``mip`` with ``gap_rel``).
        settings: the round's Settings (``time_limit_seconds``, ``mip_gap_tol``).
        round_: the round's number, for the sentence.
    Returns:
        ``[]``, or one sentence naming the gap, the target and the limit (seconds, from process start).
    """
    mip = getattr(result, "mip", None) or {}
    gap = mip.get("gap_rel")
    if (result.status.name != "FEASIBLE" or not isinstance(gap, (int, float)) or not math.isfinite(settings.time_limit_seconds)
            or not TIME_LIMIT_MSG.search(result.message or "")):
        return []
    target = float(settings.mip_gap_tol)
    if not (math.isfinite(gap) and gap > target):
        return []
    return [f"round {round_} stopped at its time limit ({settings.time_limit_seconds:g} s from the command's start, "
            f"start-up included) with an integer point {100 * gap:.3g}% from its LP bound, above the --mip-gap "
            f"target {100 * target:g}%: give it a longer --time-limit for a better allocation"]
