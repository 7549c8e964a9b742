"""The round loop: ``init`` (round 0, cold) and ``step`` (one delta, warm).

A round (:func:`step`) = load the current generation -> read + validate the delta -> apply it
(``solver.differential.apply_delta``) -> map the previous iterate onto the new index space
(``solver.differential.map_state``) -> solve warm (``solver.api.solve_problem``) -> save a new generation
(``formats.checkpoint``) -> advance ``CURRENT``. Every phase is timed (seconds) into the report.
The failure behaviour is documented in :mod:`solver.rounds` (package docstring).
"""

from __future__ import annotations

import hashlib
import math
import os
import shutil
import time
from pathlib import Path

from formats import reports, undo
from formats.checkpoint import DEFAULT_KEEP, STATE_VERSION, Generation, StateStore, load_failure
from formats.faults import environment_faults, fault_point
from formats.regular import read_regular_text
from formats.state_config import STATE_FORMAT
from solver import kernel_clock
from solver.model.delta import Delta
from solver.model.errors import (
    CopterError,
    EnvironmentFaultError,
    InputError,
    RoundMismatchError,
    StateBusyError,
    StateError,
    UsageError,
)
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.rounds.commit import save_round, solve_phases
from solver.rounds.config import settings_from_json, settings_to_json, state_dir_or_default
from solver.rounds.hashing import delta_hash, file_sha256
from solver.rounds.inside_state import refuse_inside_state
from solver.rounds.limit_warning import time_limit_gap_warning
from solver.rounds.outputs import check_out_dir, copy_out


def init(base, state_dir=None, settings: Settings | None = None, keep: int = DEFAULT_KEEP, out_dir=None,
         wait: float = 0.0, partition: dict | None = None, accept_failed: bool = False,
         milp_options: tuple[str, ...] = ()) -> dict:
    """Create a state directory from a base problem and solve round 0 (cold); see :func:`solver.rounds.init`."""
    t0 = time.perf_counter()
    if keep < 1:
        raise UsageError(f"--keep must be at least 1, got {keep}")
    refuse_inside_state(state_dir_or_default(state_dir), "--state", parents_only=True)
    check_out_dir(out_dir, state_dir_or_default(state_dir), (("base problem", base),))
    if partition:
        from solver.rounds.partitioned import config_of

        cfg = config_of(partition)  # UsageError before anything is written
        partition = None if cfg is None else cfg.to_json()  # k = 1: the monolithic rounds, unchanged
    store = StateStore(state_dir_or_default(state_dir))
    settings = settings or Settings()
    if store.root.is_dir():  # read before the lock: a bad base leaves nothing in the folder, not even .lock
        base = _read_base(store, base)
        _refuse_foreign_entries(store)  # after the base: a bad base is the error to name first
    created = not store.root.exists()
    try:
        # an interrupt that ends the process at once (copter_cli.entry) still removes the folder created here
        with undo.on_interrupt(lambda: _remove_if_created_empty(store.root, created)):
            report = _init_locked(store, base, settings, keep, t0, wait, partition, accept_failed, milp_options)
    except StateBusyError:
        raise  # the folder is another writer's now
    except BaseException:
        _remove_if_created_empty(store.root, created)
        raise
    return copy_out(store.root, report, out_dir)


def _refuse_foreign_entries(store: StateStore) -> None:
    """Refuse to make a state in a folder that holds entries of the user's (``StateStore.foreign_entries``): a state
    folder is copter's, which refuses outputs written inside it and never cleans up what it did not write (user
    trial 38: ``init --state .`` in the folder of the deltas, after which ``export -o`` and ``diff -o`` there were
    refused). An initialised state is left to :func:`_refuse_initialised`'s message.

    Raises:
        UsageError: the message names the folder and its first foreign entries (exit 2; nothing is written).
    """
    if store.initialised:
        return  # a state: init refuses an initialised one with its own words (a stray gen-* folder is no state)
    foreign = store.foreign_entries()
    if foreign:
        shown = ", ".join(foreign[:3]) + (f", ... ({len(foreign)} in all)" if len(foreign) > 3 else "")
        raise UsageError(f"the state folder {store.root} holds entries that are not a copter state's ({shown}); a "
                         "state needs a folder of its own (copter writes no output inside one): give a new or empty "
                         "folder")


def _remove_if_created_empty(root: Path, created: bool) -> None:
    """After a failed ``init``, remove the state folder it created when nothing but the lock (and config)
    is in it, so a typo'd base file leaves no half-made state behind."""
    try:
        if created and set(os.listdir(root)) <= {".lock", "config.json"}:
            shutil.rmtree(root, ignore_errors=True)
    except OSError:
        pass


def _refuse_initialised(store: StateStore) -> None:
    """Raise StateError when ``store`` is already an initialised state (init never overwrites one)."""
    if store.initialised:
        raise StateError(f"already an initialised state directory (current round {store.current()[0]}); use "
                         "`copter step` or another --state", file=str(store.root))


def _read_base(store: StateStore, base) -> tuple[Problem, str | None, float, list[str]]:
    """``init``'s base problem read before the writer lock: (problem, the file's SHA-256 or None for a
    Problem given, seconds reading took, the reader's warnings: ``formats.read_notes``, round 0's first
    ``warnings``). An initialised state is refused first (no large base is read for nothing); the lock's own
    check repeats it.

    Raises:
        StateError: ``store`` is already initialised. InputError: the base is missing or bad (nothing is
            created: no folder, no ``.lock``).
    """
    if isinstance(base, Problem):
        return base, None, 0.0, []
    if store.root.is_dir():
        _refuse_initialised(store)
    from formats.io import read_problem
    from formats.read_notes import collect

    t = time.perf_counter()
    with collect() as notes:  # kept for round 0's report (printed once with its warnings), not printed here
        problem = read_problem(base)
    return problem, file_sha256(base), time.perf_counter() - t, notes


def _init_locked(store: StateStore, base, settings: Settings, keep: int, t0: float, wait: float = 0.0,
                 partition: dict | None = None, accept_failed: bool = False,
                 milp_options: tuple[str, ...] = ()) -> dict:
    """The part of :func:`init` that runs under the writer lock (``base``: :func:`_read_base`'s result when
    the folder existed, else the base itself, read here once the lock has created the folder); returns the
    round-0 report."""
    with store.recovery_said(), store.lock(create=True, wait=wait), environment_faults(store.root):
        t_lock = time.perf_counter()  # the time waiting for another writer's lock is its own phase, "wait"
        _refuse_initialised(store)
        store.cleanup()
        if isinstance(base, tuple):  # read before the lock (the folder existed): its seconds count too
            problem, base_sha, t_read, notes = base
        else:  # read here, under the lock: already inside the time since t_lock
            (problem, base_sha, _, notes), t_read = _read_base(store, base), 0.0
        notes = [*notes, *store.recovery_warnings()]  # a killed init's round 0, set aside by the lock (helper-196)
        seconds = {"wait": store.lock_wait, "load": time.perf_counter() - t_lock + t_read, "apply": 0.0}
        from solver.api import solve_problem

        k0, t = kernel_clock.seconds(), time.perf_counter()
        hook, pextra, core_note = None, {}, []
        if partition:  # issue #18: k > 1 parts (solver.rounds.partitioned)
            from solver.partition.clients import grouping_warnings
            from solver.partition.cores import cores_warning
            from solver.partition.round import default_update_every
            from solver.rounds.partitioned import config_of, solve_base

            if partition.get("update_every") is None:  # stored as the number it stands for
                partition = {**partition, "update_every": default_update_every(problem, partition["whole_below_nnz"])}
            cfg = config_of(partition)
            core_note = cores_warning(cfg.k, cfg.round_executor(problem), cfg.workers) + grouping_warnings(
                problem, partition.get("client_regex"), partition.get("shared_rows_regex"))
            result, hook, pextra = solve_base(problem, settings, cfg)
            core_note += pextra["partitions"].get("worker_retries") or []  # part workers that died, run again
        else:
            result = solve_problem(problem, settings, None)
        solve_phases(seconds, result, time.perf_counter() - t, k0)
        if not result.status.is_success and not accept_failed:
            return _record_init_failure(store, problem, result, t0, seconds, base_sha, keep,
                                        {**pextra, **({"warnings": notes} if notes else {})})
        store.write_config({"format": STATE_FORMAT, "version": STATE_VERSION, "keep": int(keep),
                            "settings": settings_to_json(settings), **({"partition": partition} if partition else {})})
        extra = {"accepted": True, "base_sha256": base_sha, **pextra}
        from solver.differential.intent import base_unwritable_names
        from solver.rounds.unread_options import milp_only_warning

        warnings = notes + base_unwritable_names(problem) + milp_only_warning(
            milp_options, problem.is_mip, f"the base {_base_label(base)}", stored=True) + time_limit_gap_warning(
            result, settings, 0) + core_note
        if not result.status.is_success:
            warnings.insert(0, f"round 0 ended {result.status.name} and was stored anyway (--accept-failed)")
        if warnings:
            extra["warnings"] = warnings
        report = save_round(store, 0, problem, result, None, None, t0, seconds, None, extra, keep, settings.tol,
                            write_extra=hook)
        report = _now_current(report)
        try:  # round 0 is stored and current: a fault here is a warning, never the command's error (review 38)
            _set_aside_other_bases(store, base_sha)
        except (OSError, EnvironmentFaultError) as err:
            report = {**report, "warnings": [*report.get("warnings", []), f"the failed round 0s of another base "
                                             f"under {store.root / 'failed'} were not moved into abandoned/ ({err}): "
                                             "history lists them until they are moved out of failed/ by hand"]}
        return report


def _now_current(report: dict) -> dict:
    """The command's answer for a round it stored: its report with ``current_round`` (the round itself), as the
    answers for a failed round and a re-applied delta carry it, so a script reads the state's current round from one
    key whatever happened (helper-226: after ``--accept-failed`` it was absent, ``jq .current_round`` null). Not in
    the stored report.json, which ``show --round`` reads long after other rounds became current."""
    return {**report, "current_round": report["round"]}


def _set_aside_other_bases(store: StateStore, base_sha: str | None) -> None:
    """After a successful init, move the failed round 0s of another base file (their report's ``base_sha256``
    differs) into ``abandoned/``: they are earlier attempts at initialising the folder with another model, which
    ``history`` listed as this state's failed round 0 (user trial 38: box1's PRIMAL_INFEASIBLE above afiro's
    round 0). Failed attempts at the same base stay: they are this state's first round's history."""
    if base_sha is None:
        return
    other = [p for p in _failures(store)
             if (rep := load_failure(p)).get("round") == 0 and rep.get("base_sha256") not in (None, base_sha)]
    store.set_aside_failures(other)


def _base_label(base) -> str:
    """The base's file name for a message (``base``: the path, a Problem, or :func:`_read_base`'s tuple)."""
    if isinstance(base, tuple):
        base = base[0]
    if isinstance(base, Problem):
        return base.name or "problem"
    return Path(base).name


def _record_init_failure(store: StateStore, problem: Problem, result, t0: float, seconds: dict,
                         base_sha: str | None, keep: int, pextra: dict) -> dict:
    """Round 0 failed (status not OPTIMAL/FEASIBLE) and ``accept_failed`` is off: keep its report under
    ``failed/`` as a failed step's, write no config.json, CURRENT or generation (the folder stays
    uninitialised, so ``init`` can run again), and return the report (``"accepted": false``)."""
    seconds["save"] = 0.0
    seconds["total"] = time.perf_counter() - t0
    extra = {**pextra, "accepted": False, "current_round": None, "base_sha256": base_sha}
    report = reports.round_report(
        round_=0, result=result, seconds=seconds, delta_sha256=None, problem=problem,
        message=f"round 0 ended {result.status.name}: {result.message or 'no usable point'}; no state was "
                "initialised (run init again once the base problem or the options are fixed, or "
                "--accept-failed to store round 0 anyway)",
        extra=extra)
    path = _keep_failure_record(store, 0, report, keep, result.status, "no state was initialised")
    report["failure_record"] = str(path.relative_to(store.root))
    return report


def _keep_failure_record(store: StateStore, round_: int, report: dict, keep: int, status, outcome: str) -> Path:
    """``store.record_failure`` of a failed round's report; returns the record's folder.

    Raises:
        EnvironmentFaultError: the machine refused the record (``ulimit -f``, a full disk): the message says first
            how the round ended and ``outcome`` (what the state holds), then what could not be written, so the
            operator learns of an infeasible round too (helper-167: only "cannot write: File too large", exit 7);
            JSON ``error.round`` and ``error.round_status``. The state is as it was (the record is removed).
    """
    try:
        with environment_faults(store.root / "failed"):
            return store.record_failure(round_, report, keep)
    except EnvironmentFaultError as err:
        fault = EnvironmentFaultError(
            f"round {round_} ended {status.name} ({outcome}), and its failure record under failed/ could not be "
            f"kept: {err}", reason=err.reason, errno_name=err.errno_name)
        fault.context = {**(err.context or {}), "round": round_, "round_status": status.name,
                         **({"file": err.file} if err.file is not None else {})}
        raise fault from err


def _read_delta(delta, sha: str | None = None) -> Delta:
    """The delta (a Delta as is, else read from its file). ``sha``: the file's SHA-256 taken before the read
    (the round's ``delta_sha256``). The file is read once into memory, those bytes hashed again and parsed, so a
    producer that replaced or rewrote it in between cannot get other content recorded under the hash (a later
    retry of either file would then be taken for the other). Reading the path twice, as it did, let a file
    replaced B, A, B during one step (a producer's ``os.replace`` loop) store A's round under B's hash: 9 of 40
    runs, after which ``copter step B`` said "already produced round 1; nothing done" (helper-170).

    Raises:
        InputError: the file changed while it was read (nothing was applied); the reader's errors.
    """
    if isinstance(delta, Delta):
        return delta
    from formats.io import read_delta

    if sha is None or str(delta) == "-":
        return read_delta(Path(delta))
    try:
        data = Path(delta).read_bytes()  # a regular file (delta_hash checked it)
    except (FileNotFoundError, IsADirectoryError):  # removed or replaced by a folder since: as a changed file
        data = None
    if data is None or hashlib.sha256(data).hexdigest() != sha:
        raise InputError("the delta file changed while copter read it (another program is still writing or "
                         "replaced it); nothing was applied: run the step again once the file is complete "
                         "(write it under another name and rename it into place)", file=str(delta))
    return read_delta(Path(delta), data=data)


def step(delta, state_dir=None, settings: Settings | None = None, force: bool = False,
         accept_failed: bool = False, out_dir=None, wait: float = 0.0, executor: str | None = None,
         ray_address: str | None = None, _waited: float = 0.0, _later=None,
         milp_options: tuple[str, ...] = ()) -> dict:
    """Apply one delta to the current round, solve warm, store the next round; see :func:`solver.rounds.step`.
    ``_waited``: seconds :func:`step_many` already waited for the lock (added to this round's ``wait``);
    ``_later``: returns the SHA-256 of the batch's following deltas, for :func:`_is_retry` (None: a single
    delta)."""
    t0 = time.perf_counter() - _waited  # the round's total includes that wait
    check_out_dir(out_dir, state_dir_or_default(state_dir), (("delta", delta),))
    store = StateStore(state_dir_or_default(state_dir))
    with store.recovery_said(), store.lock(wait=wait), environment_faults(store.root):
        t_lock = time.perf_counter()  # the time waiting for another writer's lock is its own phase, "wait"
        if not store.initialised:
            raise store.not_initialised()
        config = store.config(required=True)  # missing/damaged: exit 3, not a round at the default options
        from solver.rounds.unread_options import (
            milp_only_warning,
            refuse_executor_on_monolithic,
            refuse_ray_address_off_ray,
        )

        refuse_executor_on_monolithic(config.get("partition"), executor, ray_address, store.root)
        refuse_ray_address_off_ray(config.get("partition"), executor, ray_address, store.root)
        if ray_address is not None:  # its form before anything, a no-op re-apply too (helper-214: exit 0 there)
            from solver.partition.executor import ray_address_target

            ray_address_target(ray_address)
        keep = int(config.get("keep", DEFAULT_KEEP))
        settings = settings or settings_from_json(config.get("settings"))
        _prestart_parts(config.get("partition"), executor, settings, store)
        gen = store.load(read=("solution.parquet",))  # the previous allocation, for changes.parquet
        sha = delta_hash(delta)
        done = store.applied_in(sha, gen.round)
        if done is not None and _is_retry(store, done, gen.round, _later):
            return _no_op_out(store, gen, _no_op_report(store, gen, done, sha), out_dir)
        d = _read_delta(delta, sha)
        if done is not None and d.base_round is not None:  # written for round done - 1: applied there
            return _no_op_out(store, gen, _no_op_report(store, gen, done, sha), out_dir)
        if done is None and d.base_round is not None and d.base_round < gen.round:
            row = _logged_round(store, sha, d.base_round + 1)  # its round pruned since: the log still has it
            if row is not None:
                return _no_op_out(store, gen, _no_op_report(store, gen, row["round"], sha, row), out_dir)
        if done is None and d.base_round is None and _later is not None:
            row = _logged_batch_retry(store, sha, gen.round, _later)  # a batch longer than --keep run again
            if row is not None:
                return _no_op_out(store, gen, _no_op_report(store, gen, row["round"], sha, row), out_dir)
        seconds = {"wait": _waited + store.lock_wait, "load": time.perf_counter() - t_lock}
        warnings = [gen.warning] if gen.warning else []
        if done is not None:
            warnings.append(f"delta {sha[:16]}... already produced round {done}; applied again to the current "
                            f"round {gen.round}: it has no copter.base_round, so a change that comes back (a "
                            f"bound toggled back) cannot be told from a late retry (a retry of the delta that "
                            f"produced the current round is a no-op)")
        _check_base_round(d, gen.round, force, warnings, gen.warning, store)
        _check_base_problem(d, gen, force, warnings)
        from solver.rounds.partitioned import config_of

        part_cfg = config_of(config.get("partition"), executor, ray_address,  # None: monolithic rounds
                             file=store.root / "config.json")
        hook, pextra = None, {}
        if part_cfg is not None:
            from solver.rounds.partitioned import apply_and_solve

            problem, info, result, hook, pextra = apply_and_solve(gen, d, settings, part_cfg, seconds, warnings,
                                                                  stored_address=ray_address is None)
        else:
            problem, info, result = _apply_and_solve(gen, d, settings, seconds, warnings)
        warnings.extend(milp_only_warning(milp_options, problem.is_mip, f"round {gen.round + 1}'s model",
                                          stored=False))
        warnings.extend(time_limit_gap_warning(result, settings, gen.round + 1))
        extra = {**_round_extra(store, gen.round, result.status.is_success or accept_failed, warnings), **pextra}
        if not result.status.is_success and not accept_failed:
            report = _record_failure(store, gen.round, problem, result, t0, seconds, sha, extra, keep, info)
            store.recovery_warnings()  # said by the record's report
            return copy_out(store.root, report, out_dir)  # only report.json: the round has no outputs
        report = _now_current(save_round(store, gen.round + 1, problem, result, gen, info, t0, seconds, sha, extra,
                                         keep, settings.tol, write_extra=hook))
        store.recovery_warnings()  # said by the round's report
    return copy_out(store.root, report, out_dir)


def _prestart_parts(partition: dict | None, executor: str | None, settings: Settings,
                    store: StateStore | None = None) -> None:
    """A partitioned state whose parts run in local processes: start their workers' forkserver before the state
    is loaded (``solver.partition.executor.prestart``), so its preload overlaps the load and the round's set-up.
    Not when the parts' time left (``settings.time_limit_seconds`` from the command's start) is already below
    ``POOL_START_SECONDS``: the parts then run in this process (``solver.partition.deadline``), and a preload beside
    them would only take a core from them; nor when the current round's model is small enough for its parts to run
    in this process (``partition.inline_below_nnz``, without ``--executor``: :func:`_current_nnz` of ``store``).
    Best effort: a stored value that is not what it should be is left to the round's own checks."""
    try:
        k = int((partition or {}).get("k", 1))
        chosen = executor if executor is not None else (partition or {}).get("executor", "process")
        workers = (partition or {}).get("workers")
        if k > 1 and chosen == "process" and (workers is None or int(workers) >= 1):
            from solver.partition.deadline import POOL_START_SECONDS, Deadline
            from solver.partition.small import INLINE_BELOW_NNZ, parts_inline

            if Deadline.of(settings).parts_left() < POOL_START_SECONDS:
                return
            limit = int((partition or {}).get("inline_below_nnz", INLINE_BELOW_NNZ))
            nnz = None if executor is not None or store is None else _current_nnz(store)
            if nnz is not None and parts_inline(nnz, limit):
                return
            from solver.partition.executor import prestart

            prestart(k, None if workers is None else int(workers))
    except (TypeError, ValueError, AttributeError):
        return


def _current_nnz(store: StateStore) -> int | None:
    """The nonzeros of the current round's model, from its ``report.json``; None when it cannot be read: the
    state's own load says why."""
    import json

    from formats.generation import gen_name

    try:
        text = read_regular_text(store.root / "CURRENT").strip()
        rep = json.loads(read_regular_text(store.root / gen_name(int(text)) / "report.json"))
        return int(rep["nnz"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _is_retry(store: StateStore, done: int, current: int, later) -> bool:
    """Whether applying the delta that produced kept round ``done`` again is a retry (a no-op): it produced the
    current round, or a batch is being run again: the rounds after ``done`` up to ``current`` were produced, in
    order, by the batch's following deltas (``later()``: their SHA-256, None where unreadable; called only
    here, as the hashing reads those files). Otherwise the same bytes are a new change back to earlier values
    (only a delta without ``copter.base_round`` gets there: :func:`step` checks)."""
    if done == current:
        return True
    if later is None:
        return False
    hashes = later()
    n = current - done
    if len(hashes) < n:
        return False
    return all(hashes[j] is not None and (store.manifest(done + j + 1) or {}).get("delta_sha256") == hashes[j]
               for j in range(n))


def _hashes_of(deltas: list) -> list:
    """SHA-256 of each delta (:func:`delta_hash`), None for one that cannot be read (its own step reports it)."""
    out = []
    for d in deltas:
        try:
            out.append(delta_hash(d))
        except CopterError:
            out.append(None)
    return out


def _logged_round(store: StateStore, sha: str, round_: int) -> dict | None:
    """The round log's row of round ``round_`` on the live branch when the delta with SHA-256 ``sha`` produced
    it (a generation, not a failed attempt), else None: how a retry of a delta whose round was pruned since
    (``--keep``) is known, the log outliving the generations. Called only for a delta written for an older
    round than the current one, which is refused otherwise."""
    from solver.rounds.log_history import history

    for row in history(store.root):
        if row["round"] == round_ and row["kind"] == "generation" and row["delta_sha256"] == sha:
            return row
    return None


def _logged_batch_retry(store: StateStore, sha: str, current: int, later) -> dict | None:
    """The round log's row of the round that the delta with SHA-256 ``sha`` (without ``copter.base_round``)
    produced, when a batch is being run again and that round was pruned since: the live branch's rounds after it,
    up to ``current``, were produced in order by the batch's following deltas (``later()``), as :func:`_is_retry`
    asks of kept rounds. Else None (the delta is applied, as a change that comes back is). helper-233: with the
    default ``--keep 5``, a cron job's six-delta catch-up batch run again made six new rounds without a word."""
    from formats.round_log import RoundLog
    from solver.rounds.log_history import history

    try:  # one column first (milliseconds): a new delta, the common case, never reads the whole history
        logged = RoundLog(store.root).read(columns=["delta_sha256"]).column("delta_sha256").to_pylist()
    except (OSError, KeyError):
        logged = [sha]
    if sha not in logged:
        return None
    rows = {row["round"]: row for row in history(store.root) if row["kind"] == "generation"}
    done = max((r for r, row in rows.items() if r < current and row["delta_sha256"] == sha), default=None)
    if done is None:
        return None
    hashes, n = later(), current - done
    if len(hashes) < n or not all(hashes[j] is not None and (rows.get(done + j + 1) or {}).get("delta_sha256")
                                  == hashes[j] for j in range(n)):
        return None
    return rows[done]


def _no_op_report(store: StateStore, gen: Generation, done: int, sha: str, logged: dict | None = None) -> dict:
    """The answer to a re-applied delta: ``round`` is the round this delta produced (``done``), with that
    round's status and objective (from the round log's row ``logged`` when the round is no longer kept);
    ``current_round`` the state's current round. No warnings or timings of either round: nothing was loaded,
    applied or solved; ``warnings`` only when CURRENT was unusable (the current round is then the newest
    complete generation)."""
    kept = logged if logged is not None else gen.report if done == gen.round else _kept_report(store, done)
    gone = "; that round is no longer kept, the round log has it" if logged is not None else ""
    report = {"round": done, "no_op": True, "current_round": gen.round, "accepted": True,
              "delta_sha256": sha, **{k: kept[k] for k in ("status", "objective") if k in kept},
              "message": f"delta {sha[:16]}... already produced round {done} (current round {gen.round}{gone}); "
                         "nothing done"}
    if gen.warning:
        report["warnings"] = [gen.warning]
    return report


def _no_op_out(store: StateStore, gen: Generation, report: dict, out_dir) -> dict:
    """A no-op re-apply with ``out_dir``: copy the round the delta produced (its outputs and its stored
    report.json, as the first run would have) into ``out_dir``, so a retry after a run that stored the round
    but never wrote ``--out`` (killed after CURRENT moved; its copy failed, exit 7) leaves the round's files
    there, not an older round's. A round no longer kept has no files: a warning says nothing was copied. A
    failed copy adds the warning and ``out_error`` of :func:`solver.rounds.outputs.copy_out` (the CLI exits
    7 or 2)."""
    said = store.recovery_warnings()  # a killed command's commit the lock undid (helper-196: a no-op said nothing)
    if said:
        report = {**report, "warnings": [*report.get("warnings", []), *said]}
    if out_dir is None:
        return report
    done = report["round"]
    kept = gen.report if done == gen.round else _kept_report(store, done)
    if not kept.get("solution_path"):  # pruned (or unreadable): its files are gone
        report = dict(report)
        report["warnings"] = [*report.get("warnings", []),
                              f"round {done} is no longer kept: nothing copied to --out {out_dir}"]
        return report
    copied = copy_out(store.root, kept, out_dir)
    if "out_error" in copied:
        report = {**report, "warnings": [*report.get("warnings", []), copied["warnings"][-1]],
                  "out_error": copied["out_error"]}
    return report


def _kept_report(store: StateStore, round_: int) -> dict:
    """A kept round's report.json without loading its problem ({} when unreadable)."""
    import json

    from formats.checkpoint import gen_name

    try:
        return json.loads(read_regular_text(store.root / gen_name(round_) / "report.json"))
    except (OSError, ValueError):
        return {}


def _check_base_round(d: Delta, current: int, force: bool, warnings: list[str],
                      fallback: str | None = None, store: StateStore | None = None) -> None:
    """Refuse a delta written for another round unless ``force`` (then add a warning); a delta without
    ``copter.base_round`` applies to whatever round is current, with a warning saying so. ``fallback``: the
    warning of an unusable CURRENT (``current`` is then the newest complete generation), which the refusal
    repeats so the mismatch is explained. ``store``: the state, whose failed-round records the refusal of a
    delta for a later round names (:func:`_missing_rounds`).

    Raises:
        RoundMismatchError: ``copter.base_round`` is set, differs from ``current`` and not ``force``; its JSON
            context has ``base_round`` (the delta's) and ``current_round``.
    """
    if d.base_round is None:
        warnings.append(f"delta{f' {d.source}' if d.source else ''} has no copter.base_round: applied to the "
                        f"current round {current} unchecked (write base_round, e.g. `copter diff --base-round "
                        f"{current}`, so a delta meant for another round is refused)")
        return
    if d.base_round == current:
        return
    if not force:
        err = RoundMismatchError(
            f"delta is for round {d.base_round} (copter.base_round) but the state's current round "
            f"is {current}{f' ({fallback})' if fallback else ''}"
            f"{_missing_rounds(store, current, d.base_round, damaged=bool(fallback))}",
            file=d.source or None)
        err.context = {"base_round": d.base_round, "current_round": current}
        raise err
    warnings.append(f"applied with --force: copter.base_round {d.base_round} != current round {current}")


def _missing_rounds(store: StateStore | None, current: int, base_round: int, damaged: bool = False) -> str:
    """What :func:`_check_base_round`'s refusal adds: for a delta made for a later round, which rounds are missing
    and, when the next one failed and was not stored, its record (user trial 38: after one failed round every later
    cron step was refused with only ``--force`` offered, which drops the failed round's changes); for an older
    round, that the state has moved on. Ends with what ``--force`` does. ``damaged``: CURRENT named a round whose
    generation is incomplete or damaged (``current`` is the newest complete one), so the rounds kept above it are
    that damage, not a rollback's: they are made again (a user's trial, session 52: the hint sent them to
    ``rollback --to``, which found the round already current)."""
    if base_round < current:
        return (f"; the state has moved on since this delta was made: write it again from round {current} (copter "
                f"diff --base-round {current}), or --force applies it to round {current} as it is")
    nxt = current + 1
    one = base_round == nxt
    theirs = f"round {nxt}'s" if one else "their"
    above = _kept_above(store, current)
    records = [] if store is None or above else [p for p in _failures(store) if load_failure(p).get("round") == nxt]
    bad = _damaged_above(store, above) if damaged else []
    left = [r for r in above if r not in bad]  # kept above by a rollback, intact
    if bad and base_round not in left:  # CURRENT's round, damaged, cannot be made current: made again
        top = base_round - 1
        deltas = (f"the delta with copter.base_round {current}" if top == current
                  else f"the deltas with copter.base_round {current}-{top}")
        why = (f"{'round' if len(bad) == 1 else 'rounds'} {', '.join(map(str, bad))} cannot be made current (the "
               f"damage above): step {deltas} again, which makes {'it' if top == current else 'them'} anew from "
               f"round {current} and moves the damaged generation into abandoned/"
               + (f" with round(s) {', '.join(map(str, left))}, kept above from a rollback" if left else ""))
    elif above:  # undone by a rollback, still kept (review 38: named as failed or missing, whose retry abandons them)
        above = left
        top = min(base_round, above[-1])
        why = (f"{'round' if len(above) == 1 else 'rounds'} {above[0]}{'' if len(above) == 1 else f'-{above[-1]}'} "
               f"{'is' if len(above) == 1 else 'are'} kept above the current round (a rollback moved back): `copter "
               f"rollback --to {top}` makes round {top} current again"
               + (f", then step the deltas with copter.base_round {top}-{base_round - 1}" if top < base_round - 1 else
                  f", then step the delta with copter.base_round {top}" if top < base_round else ""))
    elif records:  # the newest attempt's record
        status = load_failure(records[-1]).get("status") or "without a status"
        why = (f"round {nxt} failed ({status}) and was not stored (its report: {records[-1] / 'report.json'}): step "
               f"the delta with copter.base_round {current} again first (other options, or --accept-failed to store "
               "it as it is)")
    else:
        why = (f"round {nxt} is missing: step the delta with copter.base_round {current} first" if one else
               f"rounds {nxt}-{base_round} are missing: step the deltas with copter.base_round {current}-"
               f"{base_round - 1} first")
    return f"; {why}; --force applies this delta to round {current} without {theirs} changes"


def _damaged_above(store: StateStore | None, above: list[int]) -> list[int]:
    """Of the rounds ``above`` (kept above the current round), those that cannot be made current: the round CURRENT
    names (the step fell back from it: damaged or incomplete) and any other that is incomplete; the others are a
    rollback's, intact (helper-206: all of them were called damage)."""
    if store is None:
        return list(above)
    return [r for r in above if store.names_current(r) or not store.is_complete(r)]


def _kept_above(store: StateStore | None, current: int) -> list[int]:
    """The kept rounds above ``current`` on its branch (a rollback's undone rounds), in order; [] when unknown."""
    if store is None:
        return []
    try:
        return [r for r in store.lineage(current) if r > current]
    except (OSError, ValueError):
        return []


def _failures(store: StateStore) -> list:
    """The state's failed-round records (none when ``failed/`` cannot be read: the refusal keeps its plain words)."""
    try:
        return store.failures()
    except OSError:
        return []


def _check_base_problem(d: Delta, gen: Generation, force: bool, warnings: list[str]) -> None:
    """Refuse (unless ``force``: then a warning) a delta diffed against an export of round N
    (``copter.base_problem_sha256``, written by ``copter diff``) when the current round N holds another problem:
    after ``rollback`` a new branch makes round N again from other deltas, and the old branch's export still says
    round N, so ``copter.base_round`` matched and the delta was applied to a problem it was not made from (the
    result was neither the diff's NEW nor anything asked for). A delta without the key is not checked; one whose
    ``copter.base_round`` is not the current round was refused or forced by :func:`_check_base_round` already.

    Raises:
        RoundMismatchError: the digest differs and not ``force``.
    """
    from formats.exported_round import BASE_DIGEST_KEY, problem_digest

    want = (d.meta or {}).get(BASE_DIGEST_KEY)
    if not want or d.base_round != gen.round or want == problem_digest(gen.problem):
        return
    why = (f"delta is for round {d.base_round} as it was exported ({BASE_DIGEST_KEY}), but the state's round "
           f"{gen.round} holds another problem (the delta was made from another state's export, or this round was "
           "made again after a rollback)")
    if not force:
        raise RoundMismatchError(f"{why}; diff against an export of the current round, or use --force to apply "
                                 "it anyway", file=d.source or None)
    warnings.append(f"applied with --force: {why}")


def _apply_and_solve(gen: Generation, d: Delta, settings: Settings, seconds: dict, warnings: list[str]):
    """Apply ``d`` to the generation's problem, map its solver state, solve warm; fill the apply, solve and
    integerize seconds; return (problem, ApplyInfo, result)."""
    from solver.api import solve_problem
    from solver.differential import apply_delta, map_state

    t = time.perf_counter()
    problem, info = apply_delta(gen.problem, d)
    warnings.extend(info.warnings)
    warm = None
    ray = ray_status(gen)
    if gen.state is not None and ray:
        warnings.append(f"cold start: the previous round ended {ray} (stored with --accept-failed), "
                        "so its iterate was driven along an infeasibility ray and is no start for this round")
    elif gen.state is not None:
        try:
            warm = map_state(gen.state, info, problem)
            if problem.is_mip and warm.integer_x is not None:
                # the previous integer point by name, with no value where it has none (map_state projects
                # onto the bounds): the MILP round checks it exactly as a candidate incumbent
                from solver.integer.incumbent import map_previous_point

                warm.integer_x = map_previous_point(gen.state.integer_x, info.col_map, problem)
                warm.proven_bound = _bound_if_unchanged(gen, info)
        except StateError as err:
            warnings.append(f"cold start: {err}")
    else:
        warnings.append("cold start: the previous round saved no usable solver state")
    if gen.state is not None and gen.state.scaling is not None and not info.matrix_changed:
        # the previous round's matrix scaling still holds: the ALM starts from it (solver.lp.alm_scaling)
        from solver.lp.alm_scaling import seed

        seed(problem.a_indptr, problem.a_indices, problem.a_data, problem.n_rows, gen.state.scaling)
    seconds["apply"] = time.perf_counter() - t
    seconds["apply_linear"] = info.seconds_linear
    k0, t = kernel_clock.seconds(), time.perf_counter()
    fault_point("sigint_before_solve")  # tests: an interrupt while a round solves (``@N``: the N-th round)
    result = solve_problem(problem, settings, warm)
    solve_phases(seconds, result, time.perf_counter() - t, k0)
    return problem, info, result


#: the statuses of a stored round whose iterate the next round does not start from: an unbounded or infeasible LP's
#: iterates diverge along a ray (its primal or its dual), and a warm start there took the next round, the same model
#: as round 0 again, to 1,000,000 iterations and ITERATION_LIMIT, where a cold solve ends OPTIMAL at once (helper-205;
#: failed parts of a partitioned round start cold for the same reason, solver.partition.round)
RAY_STATUSES = ("DUAL_INFEASIBLE", "PRIMAL_INFEASIBLE")


def ray_status(gen: Generation) -> str | None:
    """The stored round ``gen``'s status when it is one of :data:`RAY_STATUSES` (its iterate is no warm start for
    the next round, monolithic or partitioned), else None."""
    status = (gen.report or {}).get("status")
    return status if status in RAY_STATUSES else None


def _bound_if_unchanged(gen: Generation, info) -> float:
    """The previous round's proven MILP bound (its report's ``lp_bound``) when the delta left the model as it
    was (no array, size, sense or offset changed: ``ApplyInfo.changed_fields`` empty), else nan. The same
    model has the same optimum, so the bound still holds; without it a time-limited unchanged round kept the
    previous point but proved only its own, looser relaxation bound, and OPTIMAL became FEASIBLE."""
    bound = (gen.report or {}).get("lp_bound")
    if info.changed_fields or isinstance(bound, bool) or not isinstance(bound, (int, float)):
        return math.nan
    return float(bound) if math.isfinite(bound) else math.nan


def _round_extra(store: StateStore, current: int, stored: bool, warnings: list[str]) -> dict:
    """The report's extra fields of the round after ``current``; a stored round abandons the branch a
    rollback left (the rounds after ``current``), which the report and a warning name."""
    extra = {"accepted": True, "previous_round": current}
    # a killed command's commit its lock undid: in the report, and still said by an error if the round fails to store
    warnings.extend(w for w in store.recovery_warnings(consume=False) if w not in warnings)
    # a branch left by a rollback, or damaged rounds (incomplete ones too: storing this round moves every gen-*
    # folder after ``current``, and a missing or resized file's round was moved without a word, helper-164)
    later = sorted(r for r in store.gen_entries() if r > current)  # a stray file of such a name too (helper-211)
    if later and stored:
        extra["abandoned_rounds"] = later
        # a rollback leaves them, and so does a step killed after its generation was in place but before
        # CURRENT named it: "left by a rollback" alone told of a rollback nobody ran
        # helper-184: "round(s) 2 after the current round 1 ... moved" in round 2's own report read as this round
        # being moved; say which rounds (the earlier ones) and that abandoned/ is pruned too
        warnings.append(f"the earlier round(s) {', '.join(map(str, later))} after round {current} (the branch left "
                        "by a rollback, a step that ended before it made its round current, or a damaged round) "
                        f"moved into {store.root / 'abandoned'}, which keeps its newest batches, as many as the "
                        "state's --keep; this round takes their place")
    if warnings:
        extra["warnings"] = warnings
    return extra


def _record_failure(store: StateStore, current: int, problem: Problem, result, t0: float, seconds: dict,
                    sha: str, extra: dict, keep: int, info=None) -> dict:
    """Store the report of a failed, not accepted round under ``failed/`` (CURRENT stays) and append it to
    the round log (``solver.rounds.log``; a failed append only adds a warning); return it."""
    round_ = current + 1
    seconds["save"] = 0.0
    seconds["total"] = time.perf_counter() - t0
    extra.update(accepted=False, current_round=current)
    report = reports.round_report(
        round_=round_, result=result, seconds=seconds, delta_sha256=sha, problem=problem,
        message=f"round {round_} ended {result.status.name}: {result.message or 'no usable point'}; "
                f"CURRENT stays at round {current} (use --accept-failed to advance)",
        extra=extra)
    path = _keep_failure_record(store, round_, report, keep, result.status,
                                f"CURRENT stays at round {current}, nothing was stored")
    report["failure_record"] = str(path.relative_to(store.root))
    from solver.rounds.log import log_failure

    try:
        log_failure(store, report, path, (store.manifest(current) or {}).get("id"), info)
    except (OSError, EnvironmentFaultError, ValueError) as err:  # a generation it may not read; ValueError: pyarrow's
        why = str(err) if isinstance(err, (EnvironmentFaultError, ValueError)) else (err.strerror or str(err))
        report.setdefault("warnings", []).append(
            f"appending round {round_} to the round log failed: {why}; the next round adds it "
            "from its failed/ record")
    return report


def step_many(deltas, state_dir=None, settings: Settings | None = None, force: bool = False,
              accept_failed: bool = False, out_dir=None, wait: float = 0.0, executor: str | None = None,
              ray_address: str | None = None, on_round=None, milp_options: tuple[str, ...] = ()) -> list[dict]:
    """Apply several deltas in order, each its own round (stored atomically by :func:`step`); see
    :func:`solver.rounds.step_many`."""
    deltas = list(deltas)
    hashes: list = []  # every delta's SHA-256, read once when a re-applied delta first needs them (_is_retry)

    def later(i: int) -> list:
        if not hashes:
            hashes.extend(_hashes_of(deltas))
        return hashes[i + 1:]

    check_out_dir(out_dir, state_dir_or_default(state_dir), tuple(("delta", d) for d in deltas))
    store = StateStore(state_dir_or_default(state_dir))
    reports_: list[dict] = []
    with store.lock(wait=wait):  # held across the batch (re-entrant): no other writer interleaves
        waited = store.lock_wait  # charged to the first round's "wait"
        for i, delta in enumerate(deltas):
            try:
                report = step(delta, store.root, settings, force, accept_failed, out_dir, executor=executor,
                              ray_address=ray_address, _waited=waited if i == 0 else 0.0,
                              _later=lambda i=i: later(i), milp_options=milp_options)
            except Exception as raw:  # noqa: BLE001 - typed here or re-raised as it is
                from formats.faults import typed_fault

                err = raw if isinstance(raw, CopterError) else typed_fault(raw)  # a name too long, a full disk
                if err is None:
                    raise
                suffix, context = batch_stop(deltas, reports_)
                err.message += suffix
                err.context = {**(err.context or {}), **context}
                err.reports = reports_  # the CLI prints them with the error: those rounds are stored
                err.current_round = _current_after(store, reports_)
                if err is raw:
                    raise
                raise err from raw
            report = {**report, "delta": _label(delta), "delta_index": i + 1}
            reports_.append(report)
            if on_round is not None:
                on_round(report)
            if report.get("accepted") is False or "out_error" in report:
                break
    return reports_


def batch_stop(deltas: list, reports_: list[dict]) -> tuple[str, dict]:
    """What an error that stops :func:`step_many` at the delta after ``reports_`` (the reports of the deltas
    done) adds: the message's suffix ``" [delta K of N: PATH; round(s) ... stored before it]"`` and the
    context ``{"delta", "delta_index", "deltas", "stored_rounds"}`` (the CLI's JSON error carries it).
    ``("", {})`` when every delta was done."""
    i = len(reports_)
    if i >= len(deltas):
        return "", {}
    stored = [r["round"] for r in reports_ if r.get("accepted", True) and not r.get("no_op")]
    label = _label(deltas[i])
    suffix = (f" [delta {i + 1} of {len(deltas)}: {label}; "
              + (f"round(s) {', '.join(map(str, stored))} stored before it]" if stored else "nothing stored before it]"))
    return suffix, {"delta": label, "delta_index": i + 1, "deltas": len(deltas), "stored_rounds": stored}


def _current_after(store: StateStore, reports_: list[dict]) -> int | None:
    """The current round after the batch's ``reports_`` (a failed step leaves the state as it was): the last
    stored round, a no-op's current round, or CURRENT as it reads (None when the state cannot say)."""
    if reports_:
        last = reports_[-1]
        return last.get("current_round") if last.get("no_op") else last.get("round")
    try:
        return store.current()[0]
    except (CopterError, OSError):
        return None


def _label(delta) -> str:
    """How a delta is named in reports: its path, or ``<Delta>`` for an in-memory one."""
    return str(delta) if not isinstance(delta, Delta) else (delta.source or "<Delta>")
