"""The one exit-code table of copter: :data:`TABLE`, each code in a clause (repeated in README.md, "Exit codes"), and
:data:`DETAILS`, every case each covers (in docs/statuses-and-exit-codes.md); tests keep both equal to them. The table below is written from :data:`TABLE` when the module loads (:func:`markdown`), so this
docstring cannot fall behind it.

"""

from __future__ import annotations

from solver.model.errors import (
    CopterError,
    EnvironmentFaultError,
    InputError,
    MissingDependencyError,
    PartWorkerError,
    StateBusyError,
    UsageError,
)
from solver.model.status import Status

OK = 0
INTERNAL = 1
USAGE = 2
BAD_INPUT = 3
INFEASIBLE_OR_UNBOUNDED = 4
LIMIT_OR_NUMERICAL = 5
BUSY = 6
ENVIRONMENT = 7
MISSING_DEPENDENCY = 8
INTERRUPTED = 130
HANGUP = 129  #: 128 + SIGHUP: ``copter_cli.entry`` handles it as SIGINT
TERMINATED = 143  #: 128 + SIGTERM: ``copter_cli.entry`` handles it as SIGINT
BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a writer killed by a closed pipe

TABLE = {
    OK: "success: OPTIMAL, or FEASIBLE (\"What the statuses promise\"); also a no-op re-apply of such a round",
    INTERNAL: "internal error (a bug): report it with the command and its stderr",
    USAGE: "usage error: an option, argument, round number or path is wrong; fix the command (nothing was done)",
    BAD_INPUT: ("bad input: an input file or the state is unreadable, malformed, invalid or for another round; fix the "
                "file named (it changed nothing; a batch keeps the rounds it stored before it)"),
    INFEASIBLE_OR_UNBOUNDED: ("the model is infeasible or unbounded; the report says which and why (CURRENT stays, "
                              "unless `--accept-failed`)"),
    LIMIT_OR_NUMERICAL: ("a limit, or numerical trouble, left no usable point; NO_INTEGER_SOLUTION; a part's worker "
                         "died twice (CURRENT stays, unless `--accept-failed`)"),
    BUSY: "state busy: another writer holds the lock; retry later (or `--wait SECONDS`)",
    ENVIRONMENT: ("environment fault: permission, disk full, I/O error, too many open files, out of memory, the worker "
                  "could not start, stdout failed; the message names the path or resource (alert someone)"),
    MISSING_DEPENDENCY: "an optional extra is not installed; the message names the `pip install`",
    INTERRUPTED: "interrupted; the state is unchanged (an interrupt after a round was stored says so)",
    HANGUP: "SIGHUP (a closed terminal), handled as SIGINT",
    TERMINATED: ("SIGTERM (a scheduler, `timeout`), handled as SIGINT; coreutils `timeout` itself exits 124 unless "
                 "given `--preserve-status`"),
    BROKEN_PIPE: "stdout closed early (`copter history --csv` piped into `head -1`); nothing more is printed",
}
"""Each code's meaning in a clause (README.md's table); :data:`DETAILS` lists every case each covers."""

DETAILS = {
    OK: ("success: OPTIMAL, or FEASIBLE (an integer point not proven within `--mip-gap`, or a partitioned LP round's "
         "merged point: primal feasible, its gap to the bound it proves in `partitions.gap_rel`); also a no-op "
         "re-apply of such a round"),
    INTERNAL: "internal error (a bug)",
    USAGE: ("usage error: unknown option or command (click's message and suggestion, one line, also without "
            "`--json`), bad option value (a number of the wrong kind such as "
            "`--k 1e20` or not in ASCII digits such as `--k 1_000`, or outside the option's range: one line naming the option), a round number that is not kept "
            "(the message says when that round failed, naming its record under `failed/`, or was pruned), "
            "an output path inside a state directory, an empty `--state`, `--dir`, `--png`, `--out` or `-o`, an `-o` "
            "ending in /, a path that is not UTF-8, a file name longer than the file system takes (255 bytes), "
            "a model file name whose extension names no format (`.mps`, `.mps.gz`, `.parquet`, `.pq`; `step` reads "
            "any name as Parquet), `solve -o` not ending in `.parquet`/`.pq`, "
            "a `compare` option that none of its baselines reads"),
    BAD_INPUT: ("bad input: unreadable file, format or validation error, delta for another round, missing or "
                "damaged state; a null in config.json where copter never writes one (`\"tol\": null`) names the key, "
                "and so does a config.json without `format` (`copter-state`), `version` or `settings`; a model HiGHS "
                "refuses to write (a coefficient of magnitude >= 1e15) names HiGHS's line and the coefficient's "
                "row/column"),
    INFEASIBLE_OR_UNBOUNDED: "the model is infeasible or unbounded",
    LIMIT_OR_NUMERICAL: ("limit reached or numerical trouble without a usable point; NO_INTEGER_SOLUTION; a part's "
                         "worker died twice"),
    BUSY: "state busy: another writer holds the lock; retry later (or `--wait SECONDS`)",
    ENVIRONMENT: ("environment fault: permission denied, read-only file system, disk full or over quota, I/O "
                  "error, too many open files (`ulimit -n`; part workers that cannot start for it say so), an output folder that accepts no new file or a state directory that cannot be created there (`/proc`), unusable `.lock`; the message names the path; out of memory (a model, or a `demo --scale`, larger than the machine's memory: nothing stored); "
                  "the working directory was removed (reason `working_directory`: nothing is done); the state directory was moved or removed while a round ran (reason `state_moved`: the round is not stored, nothing is made at the old path); no folder numba can "
                  "keep the compiled kernels in is writable for this user (reason `kernel_cache`: set `NUMBA_CACHE_DIR`); `copter worker "
                  "start` could not start "
                  "the worker (its log is quoted); a command's process in the worker was killed by a signal "
                  "(the state holds the previous or the complete new round); stdout itself (a file over `ulimit -f`, a "
                  "full disk, closed when copter started: `>&-`), also when an answer (table, CSV or JSON) is cut "
                  "after its first bytes; the message says so when the round was stored"),
    MISSING_DEPENDENCY: ("an optional extra is not installed (`copter report`: matplotlib, the extra `plot`; "
                         "`--executor ray`: Ray, the extra `ray`); the message names the `pip install` of the extra's "
                         "requirements, and `pip install '.[plot]'` (or `'.[ray]'`) from a checkout"),
    INTERRUPTED: "interrupted; the state is unchanged (an interrupt after a round was stored says so)",
    HANGUP: ("interrupted by SIGHUP (a closed terminal), handled as SIGINT: the state is unchanged or the message "
             "says the round is stored"),
    TERMINATED: ("terminated by SIGTERM (a scheduler, `timeout`), handled as SIGINT: the state is unchanged or the "
                 "message says the round is stored. Under coreutils `timeout` the script sees `timeout`'s own 124 "
                 "unless it passes `--preserve-status` (then 143); copter's `error` line says 143 either way"),
    BROKEN_PIPE: ("stdout closed early (broken pipe: `copter history --csv` piped into `head -1`); nothing more "
                  "is printed"),
}
"""Every case each code covers (docs/statuses-and-exit-codes.md, "What each code covers")."""


def markdown(table: dict | None = None) -> str:
    """:data:`TABLE` (or ``table``, e.g. :data:`DETAILS`) as a Markdown table (``| code | meaning |``, one row per
    code, in its order): README.md's, and docs/statuses-and-exit-codes.md's."""
    rows = (TABLE if table is None else table).items()
    return "\n".join(["| code | meaning |", "|---|---|", *(f"| {code} | {text} |" for code, text in rows)])


__doc__ = (__doc__ or "") + markdown() + "\n"


def for_error(err: BaseException) -> int:
    """Exit code for an exception raised by the library (anything unknown is an internal error)."""
    if isinstance(err, StateBusyError):
        return BUSY
    if isinstance(err, MissingDependencyError):
        return MISSING_DEPENDENCY
    if isinstance(err, EnvironmentFaultError):
        return ENVIRONMENT
    if isinstance(err, BrokenPipeError):
        return BROKEN_PIPE
    if isinstance(err, OSError):
        from formats.faults import is_environment_fault

        return ENVIRONMENT if is_environment_fault(err) else INTERNAL
    if isinstance(err, UsageError):
        return USAGE
    if isinstance(err, PartWorkerError):  # no usable point: a failed round's exit code
        return LIMIT_OR_NUMERICAL
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
    """Exit code of a round report (``solver.rounds.init``/``step``): :func:`for_status` of its status (a report
    without a status: limit or numerical trouble). A no-op re-apply reports the round its delta produced: 0, or
    that round's code when it failed and ``--accept-failed`` stored it (a cron job retrying the run saw 0 for a
    round that exited 4 the first time). A round that succeeded but whose ``--out`` copy failed (``out_error``)
    exits 7 (the machine refused) or 2."""
    if report.get("no_op"):
        status = report.get("status")
        code = for_status(Status[status]) if status in Status.__members__ else OK
    elif report.get("status") is None:
        code = LIMIT_OR_NUMERICAL
    else:
        code = for_status(Status[report["status"]])
    out_error = report.get("out_error")
    if code == OK and out_error:
        return ENVIRONMENT if out_error.get("kind") == "environment" else USAGE
    return code
