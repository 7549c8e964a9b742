"""The one exit-code table of copter (repeated in README.md, "Exit codes").

| code | meaning |
|---|---|
| 0 | success: OPTIMAL, or FEASIBLE integer point; also a no-op re-apply |
| 1 | internal error (a bug) |
| 2 | usage error: unknown option or command, bad option value, a round number that is not kept |
| 3 | bad input: unreadable file, format or validation error, delta for another round, missing or damaged state |
| 4 | the model is infeasible or unbounded |
| 5 | limit reached or numerical trouble without a usable point; NO_INTEGER_SOLUTION |
| 6 | state busy: another writer holds the lock; retry later |
| 130 | interrupted; the state is unchanged |
"""

from __future__ import annotations

from solver.model.errors import CopterError, InputError, StateBusyError, UsageError
from solver.model.status import Status

OK = 0
INTERNAL = 1
USAGE = 2
BAD_INPUT = 3
INFEASIBLE_OR_UNBOUNDED = 4
LIMIT_OR_NUMERICAL = 5
BUSY = 6
INTERRUPTED = 130

TABLE = {
    OK: "success: OPTIMAL, or FEASIBLE integer point; also a no-op re-apply",
    INTERNAL: "internal error (a bug)",
    USAGE: "usage error: unknown option or command, bad option value, a round number that is not kept",
    BAD_INPUT: ("bad input: unreadable file, format or validation error, delta for another round, missing or "
                "damaged state"),
    INFEASIBLE_OR_UNBOUNDED: "the model is infeasible or unbounded",
    LIMIT_OR_NUMERICAL: "limit reached or numerical trouble without a usable point; NO_INTEGER_SOLUTION",
    BUSY: "state busy: another writer holds the lock; retry later",
    INTERRUPTED: "interrupted; the state is unchanged",
}


def for_error(err: BaseException) -> int:
    """Exit code for an exception raised by the library (anything unknown is an internal error)."""
    if isinstance(err, StateBusyError):
        return BUSY
    if isinstance(err, UsageError):
        return USAGE
    if isinstance(err, InputError):
        return BAD_INPUT
    if isinstance(err, KeyboardInterrupt):
        return INTERRUPTED
    if isinstance(err, CopterError):
        return INTERNAL
    return INTERNAL


def for_status(status: Status) -> int:
    """Exit code for a solve's final status."""
    if status.is_success:
        return OK
    if status.is_model_failure:
        return INFEASIBLE_OR_UNBOUNDED
    return LIMIT_OR_NUMERICAL


def for_report(report: dict) -> int:
    """Exit code of a round report (``solver.rounds.init``/``step``): 0 for a no-op, else
    :func:`for_status` of its status (a report without a status: limit or numerical trouble)."""
    if report.get("no_op"):
        return OK
    status = report.get("status")
    if status is None:
        return LIMIT_OR_NUMERICAL
    return for_status(Status[status])
