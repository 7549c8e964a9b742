"""Storing a solved round: write its generation (problem, solver state, outputs, report) and make it
current, atomically with respect to SIGINT once the replacement of ``CURRENT`` has started."""

from __future__ import annotations

import time

from formats import reports, undo
from formats.checkpoint import Generation, StateStore
from formats.faults import as_environment_fault, fault_point, is_environment_fault
from solver.model.errors import EnvironmentFaultError
from solver.model.problem import Problem
from solver.rounds.outputs import previous_allocation, write_outputs
from solver.rounds.signals import signals_deferred


def phase_seconds(result, t_solve: float) -> tuple[float, float]:
    """(solve, integerize) seconds of a wall time ``t_solve``: the solver's own split when it reports one
    (``integerize``), else for a MILP everything after the LP ``relaxation``."""
    s = dict(getattr(result, "seconds", {}) or {})
    if "integerize" in s:
        integ = float(s["integerize"])
    elif result.mip is not None and "relaxation" in s:
        integ = max(t_solve - float(s["relaxation"]), 0.0)
    else:
        integ = 0.0
    return max(t_solve - integ, 0.0), integ


def solve_phases(seconds: dict, result, t_solve: float, kernels_before: float) -> None:
    """Fill ``seconds`` ``solve``, ``integerize`` and ``kernels`` of a solve that took ``t_solve`` wall
    seconds (:func:`phase_seconds`), ``kernels_before`` being ``solver.kernel_clock.seconds()`` read just
    before it started.

    ``kernels`` = the seconds the solve spent on kernels' first calls (loading them from numba's cache,
    lazily: a fresh process's start-up cost, not solver work; user trial 18: a 5-row LP's warm rounds read
    0.11-0.16 s of solve, 0.02 s through the worker), taken out of ``solve`` (and out of ``integerize`` for
    what ``solve`` cannot hold: a MILP round's integer kernels load there), so solve + integerize + kernels
    is the solve's wall time as before. ``iis``, when the solve searched an IIS (an infeasible round), is the
    part of ``solve`` (and ``integerize``) that search took, not a phase of its own."""
    from solver import kernel_clock

    solve, integ = phase_seconds(result, t_solve)
    kern = min(max(kernel_clock.seconds() - kernels_before, 0.0), solve + integ)
    from_solve = min(kern, solve)
    seconds["solve"], seconds["integerize"], seconds["kernels"] = solve - from_solve, integ - (kern - from_solve), kern
    iis = (getattr(result, "seconds", None) or {}).get("iis")
    if iis is not None:  # HiGHS's IIS search of an infeasible round: a part of solve, said apart (user trial 37:
        seconds["iis"] = min(float(iis), seconds["solve"] + seconds["integerize"])  # 10 of a 10.5 s solve)


def save_round(store: StateStore, round_: int, problem: Problem, result, prev: Generation | None,
               info, t0: float, seconds: dict, delta_sha: str | None, extra: dict, keep: int,
               tol: float | None = None, write_extra=None) -> dict:
    """Write generation ``round_`` and make it current; return its report.

    Args:
        store: the state store (its writer lock held by the caller).
        round_, problem, result: the round number, its problem and its solve result.
        prev: the generation it follows (None for round 0); info: the delta's ApplyInfo or None.
        t0: ``time.perf_counter()`` at the start of the round; seconds: phase seconds so far (save and
            total are added here); delta_sha: the delta's SHA-256 or None; extra: report fields to add.
        keep: number of generations to keep.
        tol: the round's relative solve tolerance, the move threshold of changes.parquet and
            ``changed_variables`` (``solver.rounds.outputs.write_outputs``); None = the default 1e-4.
        write_extra: optional ``callable(folder) -> bytes written`` that writes further files into the
            temporary generation folder before the manifest (a partitioned round's per-part state,
            ``solver.rounds.partitioned``); they are listed in generation.json and committed atomically.
    Raises:
        EnvironmentFaultError: a write failed for a reason of the machine (permission, read-only file
            system, disk full): before CURRENT names the round everything this round wrote or moved is
            undone (the state is as it was) and the message says so; after it (syncing the folder) the
            message says the round is stored and current. Failing to remove old generations (pruning)
            only adds a warning. Any other OSError, and a KeyboardInterrupt before the commit, likewise
            leave the state as it was. Reason ``state_moved``: the state folder was moved or removed since the
            lock was taken (``formats.state_lock.StateLocking.moved_fault``), before or during the writes.
    """
    # a generation is being written: an interrupt anywhere here unwinds (formats.undo), so the except
    # clause below removes it
    with undo.region():
        t = time.perf_counter()
        moved = store.moved_fault()
        if moved is not None:
            raise moved
        try:
            writer = store.begin(round_)
        except OSError as err:
            moved = store.moved_fault()
            if moved is not None:
                raise moved from err
            if is_environment_fault(err):
                raise _fault(err, store, round_, stored=False) from err
            raise
        try:
            writer.save_problem(problem, prev, None if info is None else set(info.changed_fields))
            fault_point("sigint_during_save")
            writer.save_state(with_scaling(result.state, problem))
            if write_extra is not None:
                writer.written_bytes += write_extra(writer.tmp)
            old_x = None if prev is None else previous_allocation(prev)
            changed_vars = write_outputs(writer, problem, result, None if prev is None else prev.problem, old_x, info,
                                         **({} if tol is None else {"tol": tol}))
            seconds["save"] = time.perf_counter() - t
            seconds["total"] = time.perf_counter() - t0
            paths = {"solution_path": writer.rel("solution.parquet"), "duals_path": writer.rel("duals.parquet"),
                     "changes_path": writer.rel("changes.parquet")}
            report = reports.round_report(round_=round_, result=result, seconds=seconds, delta_sha256=delta_sha,
                                          changed_variables=changed_vars, paths=paths, problem=problem,
                                          extra=extra)
            parent = {"parent_id": None if prev is None else prev.manifest.get("id"),
                      "parent_round": None if prev is None else prev.round}
            # from here the round is finished, SIGINT or not: moving an abandoned branch aside, the rename
            # and CURRENT belong together
            with signals_deferred():
                writer.commit(report, {"delta_sha256": delta_sha, "status": report["status"], **parent})
                store.set_current(round_)
                writer.close()  # the commit's journal (formats.checkpoint.StateStore.open_commit)
                undo.done(f"round {round_} is stored and current", report)
                fault_point("sigint_while_current_moves")  # tests: a signal held back until the round is stored
                _log(store, round_, report, prev, info)  # before pruning: a reconciliation still sees the old rounds
                _prune(store, keep, round_, report)
        except BaseException as err:
            stored = store.names_current(round_)
            if not stored:
                writer.abort()
            moved = store.moved_fault() if isinstance(err, OSError) and not stored else None
            if moved is not None:
                raise moved from err
            if is_environment_fault(err):
                raise _fault(err, store, round_, stored) from err
            raise
    return report


def with_scaling(state, problem: Problem):
    """``state`` (a SolverState or None) with the scaling factors of ``problem``'s matrix when this process
    computed or carried them (``solver.lp.alm_scaling.factors_of``), so the next round's process can start from
    them when its delta leaves the matrix unchanged. A process that never scaled for the ALM (the module is
    not loaded: a partitioned round's main process, a MILP solved by HiGHS) stores none."""
    import sys

    scaling = sys.modules.get("solver.lp.alm_scaling")
    return state if scaling is None else scaling.with_scaling(state, problem)


def _fault(err: OSError, store: StateStore, round_: int, stored: bool):
    """The EnvironmentFaultError of a failed write of round ``round_``, saying whether it is stored."""
    if stored:
        note = f"; round {round_} is nevertheless stored and current"
    else:
        note = f"; round {round_} was not stored, the state directory is unchanged"
    fault = as_environment_fault(err, store.root, "write")
    fault.message += note
    fault.context = {"round_stored": stored}
    return fault


def _prune(store: StateStore, keep: int, round_: int, report: dict) -> None:
    """Remove generations beyond ``keep``; a failure only adds a warning (the round is stored and current,
    the next round prunes again)."""
    try:
        store.prune(keep, round_)
    except (OSError, EnvironmentFaultError) as err:  # the latter: an old generation it may not read
        report["warnings"] = [*report.get("warnings", []),
                              f"round {round_} is stored and current, but removing old generations failed: "
                              f"{_failure(err, store)}; the next round retries"]


def _log(store: StateStore, round_: int, report: dict, prev: Generation | None, info) -> None:
    """Append the round's row to the round log (``solver.rounds.log``) once CURRENT names it; a failed
    append only adds a warning (the round is stored and current; the next round or reader rebuilds the row
    from its report.json)."""
    from solver.rounds.log import log_round

    try:
        log_round(store, report, (store.manifest(round_) or {}).get("id"),
                  None if prev is None else prev.manifest.get("id"), info)
    except (OSError, EnvironmentFaultError, ValueError) as err:  # ValueError: pyarrow's ArrowInvalid, say
        # a log file damaged in a way its reader does not catch: the round is stored all the same (it ended exit 1,
        # "internal error", before the reader skipped a damaged base: hunt 50)
        why = str(err) if isinstance(err, ValueError) else _failure(err, store)
        report["warnings"] = [*report.get("warnings", []),
                              f"round {round_} is stored and current, but appending it to the round log "
                              f"failed: {why}; the next round adds it from its report.json"]


def _failure(err: OSError | EnvironmentFaultError, store: StateStore) -> str:
    """What went wrong for a warning: the OS's words and the path (an EnvironmentFaultError says both: a file of
    an older round copter may not read, ``formats.checkpoint.read_fault``)."""
    if isinstance(err, EnvironmentFaultError):
        return str(err)
    return f"{err.strerror or err} ({err.filename or store.root})"
