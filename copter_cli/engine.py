"""The continual loop as library functions: what ``copter init/step/show/history/rollback/export`` (and the
demo and the benchmarks) call.

A round (``step_state``) = load the current generation -> read + validate the delta -> apply it
(``solver.differential.apply_delta``) -> map the previous iterate onto the new index space
(``solver.differential.map_state``) -> solve warm (``solver.api.solve_problem``) -> save a new generation
(``formats.checkpoint``) -> advance ``CURRENT``. Every phase is timed (seconds) into the report.

Failure behaviour (the exit code is :func:`exit_code` of the returned report):

* bad input (unreadable delta, validation error, wrong ``copter.base_round``): a typed error from
  ``solver.model.errors`` is raised and the state directory is not touched;
* the same delta file again (same SHA-256 as a kept generation up to the current round): a no-op, the
  report says so (``"no_op": true``), exit 0; checked before ``copter.base_round``;
* a round whose status is not OPTIMAL/FEASIBLE: without ``accept_failed`` its report is stored under
  ``failed/round-N-<utc>/report.json`` (``copter show`` and ``copter history`` list it), ``CURRENT``
  stays where it was, the exit code follows the status (4 infeasible/unbounded, 5 limit/numerical);
  with ``accept_failed`` the round is saved and made current (exit code still follows the status);
* ``init`` always stores round 0 (so a fixing delta can follow), with the exit code of its status;
* KeyboardInterrupt (SIGINT) before ``CURRENT`` is replaced: the temporary generation is removed and
  the interrupt propagates (exit 130, state unchanged); once the replacement has started it is finished.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import signal
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, fields
from pathlib import Path

import pyarrow as pa

from copter_cli import exit_codes
from formats import reports
from formats.checkpoint import DEFAULT_KEEP, Generation, StateStore, fault_point, gen_name, load_failure
from solver.model.delta import Delta
from solver.model.errors import RoundMismatchError, StateBusyError, StateError, UsageError
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.model.status import Status

OUTPUT_FILES = ("solution.parquet", "duals.parquet", "changes.parquet")


def default_state_dir() -> Path:
    """``$COPTER_STATE`` if set, else ``./copter-state``."""
    return Path(os.environ.get("COPTER_STATE") or "copter-state")


def exit_code(report: dict) -> int:
    """Exit code of a round report: 0 for a no-op or OPTIMAL/FEASIBLE, else ``exit_codes.for_status``."""
    if report.get("no_op"):
        return exit_codes.OK
    status = report.get("status")
    if status is None:
        return exit_codes.LIMIT_OR_NUMERICAL
    return exit_codes.for_status(Status[status])


def file_sha256(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file's bytes (read in 1 MiB blocks)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def delta_sha256(delta: Delta) -> str:
    """Hex SHA-256 of an in-memory delta (its Arrow IPC stream plus its metadata)."""
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, delta.table.schema) as w:
        w.write_table(delta.table)
    h = hashlib.sha256(sink.getvalue().to_pybytes())
    h.update(repr((delta.sense, delta.offset, delta.base_round, delta.format)).encode())
    return h.hexdigest()


def settings_to_json(settings: Settings) -> dict:
    """The settings ``init`` stores in config.json for later steps (``verbose`` is per invocation, not kept)."""
    d = asdict(settings)
    d.pop("verbose", None)
    d.pop("verbose_all", None)
    return d


def settings_from_json(d: dict | None) -> Settings:
    """Settings from config.json, ignoring keys this version does not know."""
    known = {f.name for f in fields(Settings)}
    out = {}
    for k, v in (d or {}).items():
        if k not in known or v is None:
            continue
        out[k] = float(v) if v in ("inf", "-inf") else v  # strict JSON stores infinities as strings
    return Settings(**out)


@contextmanager
def _sigint_deferred():
    """Hold SIGINT back while CURRENT is replaced (main thread only); the round then completes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    got = []
    old = signal.signal(signal.SIGINT, lambda *_: got.append(True))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _phase_seconds(result, t_solve: float) -> tuple[float, float]:
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


def _write_outputs(writer, problem: Problem, result, old: Problem | None, old_x, info=None) -> int:
    """solution/duals/changes Parquet files into the generation being written; return changed_variables."""
    reports.write_parquet(writer.path("solution.parquet"),
                          reports.solution_table(problem.col_names, result.x, result.reduced_cost))
    reports.write_parquet(writer.path("duals.parquet"),
                          reports.duals_table(problem.row_names, result.row_activity, result.y))
    changes = reports.changes_table(None if old is None else old.col_names, old_x, problem.col_names, result.x,
                                    None if old is None else old.row_names, problem.row_names,
                                    col_map=None if info is None else info.col_map,
                                    row_map=None if info is None else info.row_map)
    reports.write_parquet(writer.path("changes.parquet"), changes)
    return reports.changed_variable_count(changes)


def check_out_dir(out_dir) -> None:
    """Refuse an ``--out`` folder that cannot be used, before any work (nothing is created here).

    Raises:
        UsageError: ``out_dir`` exists and is not a folder, is not writable, or cannot be created
            (its nearest existing ancestor is a file or not writable).
    """
    if out_dir is None:
        return
    p = Path(out_dir)
    if p.exists():
        if not p.is_dir():
            raise UsageError(f"--out {p}: exists and is not a folder")
        if not os.access(p, os.W_OK | os.X_OK):
            raise UsageError(f"--out {p}: folder is not writable")
        return
    anc = p.parent
    while not anc.exists() and anc != anc.parent:
        anc = anc.parent
    if not anc.is_dir():
        raise UsageError(f"--out {p}: cannot create it, {anc} is not a folder")
    if not os.access(anc, os.W_OK | os.X_OK):
        raise UsageError(f"--out {p}: cannot create it, {anc} is not writable")


def _copy_out(state_dir: Path, report: dict, out_dir) -> dict:
    """Copy the round's outputs and report.json into ``out_dir``; return the report.

    The round is already committed: a failure here never raises, it returns a copy of the report with
    a warning (the exit code stays the round's)."""
    if out_dir is None:
        return report
    out = Path(out_dir)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for key in ("solution_path", "duals_path", "changes_path"):
            if report.get(key):
                shutil.copyfile(state_dir / report[key], out / Path(report[key]).name)
        (out / "report.json").write_text(reports.dumps(report) + "\n")
    except OSError as err:
        report = dict(report)
        report["warnings"] = [*report.get("warnings", []),
                              f"round {report.get('round')} is stored in the state, but copying its outputs "
                              f"to --out {out} failed: {err}"]
    return report


def _save_round(store: StateStore, round_: int, problem: Problem, result, prev: Generation | None,
                info, t0: float, seconds: dict, delta_sha: str | None, extra: dict, keep: int) -> dict:
    """Write generation ``round_`` and make it current; return its report."""
    t = time.perf_counter()
    writer = store.begin(round_)
    try:
        writer.save_problem(problem, prev, None if info is None else set(info.changed_fields))
        fault_point("sigint_during_save")
        writer.save_state(result.state)
        old_x = None if prev is None else _previous_allocation(prev)
        changed_vars = _write_outputs(writer, problem, result, None if prev is None else prev.problem, old_x,
                                      info)
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
        with _sigint_deferred():
            writer.commit(report, {"delta_sha256": delta_sha, "status": report["status"], **parent})
            store.set_current(round_)
            store.prune(keep, round_)
    except BaseException:
        writer.abort()
        raise
    return report


def _previous_allocation(prev: Generation):
    """The previous round's returned point: solution.parquet's values (falls back to the state's x)."""
    import pyarrow.parquet as pq

    path = prev.path / "solution.parquet"
    try:
        return pq.read_table(path, columns=["value"]).column("value").to_numpy()
    except (OSError, pa.ArrowException):
        return prev.state.x if prev.state is not None else None


def init_state(base, state_dir=None, settings: Settings | None = None, keep: int = DEFAULT_KEEP,
               out_dir=None) -> dict:
    """Create a state directory from a base problem and solve round 0 (cold).

    Args:
        base: path of an MPS/Parquet problem file, or a Problem.
        state_dir: state directory (default :func:`default_state_dir`); created if missing.
        settings: solver settings, stored in config.json and used by later steps (defaults when None).
        keep: number of generations to keep (>= 1).
        out_dir: optional folder that receives copies of the round's outputs and report.json.
    Returns:
        The round-0 report (also written to ``gen-000000/report.json``); round 0 is stored and made
        current whatever its status (see the module docstring).
    Raises:
        UsageError: keep < 1, or ``out_dir`` is unusable (checked first, see :func:`check_out_dir`).
        StateError: the directory is already initialised. StateBusyError: another writer holds the
        lock. InputError subclasses: the base file is unreadable or invalid.
    """
    t0 = time.perf_counter()
    if keep < 1:
        raise UsageError(f"--keep must be at least 1, got {keep}")
    check_out_dir(out_dir)
    store = StateStore(state_dir if state_dir is not None else default_state_dir())
    settings = settings or Settings()
    created = not store.root.exists()
    try:
        report = _init_locked(store, base, settings, keep, t0)
    except StateBusyError:
        raise  # the folder is another writer's now
    except BaseException:
        _remove_if_created_empty(store.root, created)
        raise
    report = _copy_out(store.root, report, out_dir)
    return report


def _remove_if_created_empty(root: Path, created: bool) -> None:
    """After a failed ``init``, remove the state folder it created when nothing but the lock (and config)
    is in it, so a typo'd base file leaves no half-made state behind."""
    try:
        if created and set(os.listdir(root)) <= {".lock", "config.json"}:
            shutil.rmtree(root, ignore_errors=True)
    except OSError:
        pass


def _init_locked(store: StateStore, base, settings: Settings, keep: int, t0: float) -> dict:
    """The part of :func:`init_state` that runs under the writer lock; returns the round-0 report."""
    with store.lock(create=True):
        if store.initialised:
            raise StateError(f"already an initialised state directory (current round {store.current()[0]}); use "
                             "`copter step` or another --state", file=str(store.root))
        store.cleanup()
        base_sha = None
        if isinstance(base, Problem):
            problem = base
        else:
            from formats.io import read_problem

            problem = read_problem(base)
            base_sha = file_sha256(base)
        seconds = {"load": time.perf_counter() - t0, "apply": 0.0}
        from solver.api import solve_problem

        t = time.perf_counter()
        result = solve_problem(problem, settings, None)
        seconds["solve"], seconds["integerize"] = _phase_seconds(result, time.perf_counter() - t)
        store.write_config({"format": "copter-state", "version": 1, "keep": int(keep),
                            "settings": settings_to_json(settings)})
        extra = {"accepted": True, "base_sha256": base_sha}
        return _save_round(store, 0, problem, result, None, None, t0, seconds, None, extra, keep)


def _delta_hash(delta) -> str:
    if isinstance(delta, Delta):
        return delta_sha256(delta)
    path = Path(delta)
    if not path.is_file():
        from solver.model.errors import FormatError

        what = "is a directory, not a delta file" if path.is_dir() else "delta file not found"
        raise FormatError(what, file=str(path))
    return file_sha256(path)


def _read_delta(delta) -> Delta:
    if isinstance(delta, Delta):
        return delta
    from formats.io import read_delta

    return read_delta(Path(delta))


def step_state(delta, state_dir=None, settings: Settings | None = None, force: bool = False,
               accept_failed: bool = False, out_dir=None) -> dict:
    """Apply one delta to the current round, solve warm, and store the next round.

    Args:
        delta: path of a delta Parquet file, or a Delta.
        state_dir: state directory (default :func:`default_state_dir`).
        settings: solver settings (default: those stored by ``init``).
        force: apply even when the delta's ``copter.base_round`` is not the current round.
        accept_failed: store and advance to a round whose status is not OPTIMAL/FEASIBLE.
        out_dir: optional folder that receives copies of the round's outputs and report.json.
    Returns:
        The round report (see ``formats.reports.round_report``); ``"no_op": true`` for a re-applied
        delta; ``"accepted": false`` (plus ``"failure_record"``) for a failed round left out of the state.
    Raises:
        StateError: not initialised / damaged. StateBusyError: another writer holds the lock.
        FormatError, ValidationError: the delta is unreadable or invalid (state untouched).
        RoundMismatchError: ``copter.base_round`` differs from the current round and not ``force``.
        UsageError: ``out_dir`` is unusable (checked before anything else; nothing changes). A copy to
            ``out_dir`` that fails after the round is committed only adds a warning to the report.
    """
    t0 = time.perf_counter()
    check_out_dir(out_dir)
    store = StateStore(state_dir if state_dir is not None else default_state_dir())
    with store.lock():
        if not store.initialised:
            raise StateError(f"not an initialised copter state directory (run `copter init BASE --state "
                             f"{store.root}`)", file=str(store.root))
        config = store.config()
        keep = int(config.get("keep", DEFAULT_KEEP))
        settings = settings or settings_from_json(config.get("settings"))
        gen = store.load()
        sha = _delta_hash(delta)
        done = store.applied_in(sha, gen.round)
        if done is not None:
            report = dict(gen.report)
            report.update(no_op=True, message=f"delta {sha[:16]}... was already applied (round {done}); "
                                              f"nothing changed, current round is {gen.round}")
            return report
        d = _read_delta(delta)
        seconds = {"load": time.perf_counter() - t0}
        warnings = [gen.warning] if gen.warning else []
        if d.base_round is not None and d.base_round != gen.round:
            if not force:
                raise RoundMismatchError(
                    f"delta is for round {d.base_round} (copter.base_round) but the state's current round "
                    f"is {gen.round}; use --force to apply it anyway", file=d.source or None)
            warnings.append(f"applied with --force: copter.base_round {d.base_round} != current round {gen.round}")
        from solver.api import solve_problem
        from solver.differential import apply_delta, map_state

        t = time.perf_counter()
        problem, info = apply_delta(gen.problem, d)
        warm = None
        if gen.state is not None:
            try:
                warm = map_state(gen.state, info, problem)
            except StateError as err:
                warnings.append(f"cold start: {err}")
        else:
            warnings.append("cold start: the previous round saved no usable solver state")
        seconds["apply"] = time.perf_counter() - t
        seconds["apply_linear"] = info.seconds_linear
        t = time.perf_counter()
        result = solve_problem(problem, settings, warm)
        seconds["solve"], seconds["integerize"] = _phase_seconds(result, time.perf_counter() - t)
        round_ = gen.round + 1
        extra = {"accepted": True, "previous_round": gen.round}
        later = [r for r in store.generations() if r > gen.round]  # a branch left by a rollback
        if later and (result.status.is_success or accept_failed):
            extra["abandoned_rounds"] = later
            warnings.append(f"round(s) {', '.join(map(str, later))} of the branch left by a rollback moved into "
                            f"{store.root / 'abandoned'}")
        if warnings:
            extra["warnings"] = warnings
        if not result.status.is_success and not accept_failed:
            seconds["save"] = 0.0
            seconds["total"] = time.perf_counter() - t0
            extra.update(accepted=False, current_round=gen.round)
            report = reports.round_report(
                round_=round_, result=result, seconds=seconds, delta_sha256=sha, problem=problem,
                message=f"round {round_} ended {result.status.name}: {result.message or 'no usable point'}; "
                        f"CURRENT stays at round {gen.round} (use --accept-failed to advance)",
                extra=extra)
            path = store.record_failure(round_, report, keep)
            report["failure_record"] = str(path.relative_to(store.root))
            return _copy_out(store.root, report, out_dir)  # only report.json: the round has no outputs
        report = _save_round(store, round_, problem, result, gen, info, t0, seconds, sha,
                             extra, keep)
    report = _copy_out(store.root, report, out_dir)
    return report


def show(state_dir=None, round_: int | None = None) -> dict:
    """The current round's report (``report.json``), plus ``warnings`` when CURRENT was unusable and
    ``last_failed`` (the newest failed-round report) when a later round failed and was not accepted.
    With ``round_``: that kept round's report (no ``last_failed``).

    Raises:
        StateError: not initialised, or the round is damaged. UsageError: ``round_`` is not kept.
    """
    store = StateStore(state_dir if state_dir is not None else default_state_dir())
    r, warning = store.current()
    if round_ is not None:
        require_round(store, round_, store.generations())
        r, warning = round_, None
    try:
        import json

        report = json.loads((store.root / gen_name(r) / "report.json").read_text())
    except (OSError, ValueError) as err:
        raise StateError(f"cannot read the report of round {r}: {err}", file=str(store.root)) from err
    if warning:
        report.setdefault("warnings", []).append(warning)
    fails = store.failures() if round_ is None else []
    if fails:
        last = load_failure(fails[-1])
        if last.get("round", -1) > r:
            report["last_failed"] = last
    return report


def history(state_dir=None) -> list[dict]:
    """One row per kept generation on CURRENT's lineage and per failed-round record, oldest first.

    Row keys: round, status, objective, iterations, warm_started, seconds, delta_sha256, current
    (bool), kind (``"generation"`` or ``"failed"``).
    """
    import json

    store = StateStore(state_dir if state_dir is not None else default_state_dir())
    cur, _ = store.current()
    rows = []
    for r in store.lineage(cur):
        try:
            rep = json.loads((store.root / gen_name(r) / "report.json").read_text())
        except (OSError, ValueError):
            rep = {}
        rows.append(_history_row(rep, r, "generation", r == cur))
    for p in store.failures():
        rep = load_failure(p)
        rows.append(_history_row(rep, rep.get("round"), "failed", False))
    rows.sort(key=lambda row: (row["round"] if row["round"] is not None else -1, row["kind"] == "failed"))
    return rows


def _history_row(rep: dict, r, kind: str, current: bool) -> dict:
    """One history row; ``objective`` only for an OPTIMAL/FEASIBLE round (as in ``compare``: the last iterate
    of an infeasible or limited round is no allocation; its report.json keeps the number)."""
    status = rep.get("status")
    ok = status is not None and status in Status.__members__ and Status[status].is_success
    return {"round": r, "kind": kind, "current": current, "status": status,
            "objective": rep.get("objective") if ok else None, "iterations": rep.get("iterations"),
            "warm_started": rep.get("warm_started"), "seconds": rep.get("seconds", {}),
            "changed_variables": rep.get("changed_variables"), "delta_sha256": rep.get("delta_sha256")}


def require_round(store: StateStore, round_: int, kept: list[int]) -> None:
    """Check that ``round_`` (a user's ``--to``/``--round``) is one of ``kept``.

    One rule for every command that takes a round number (show, rollback, export): a round that is not
    kept is a usage error (exit 2, the option names something that does not exist); a round whose
    generation folder exists but is incomplete or damaged is a StateError (exit 3, bad input on disk).

    Raises:
        UsageError: ``round_`` has no generation in the state (the message lists the kept rounds).
        StateError: its generation folder exists but is damaged (the message says what is wrong).
    """
    if round_ in kept:
        return
    if (store.root / gen_name(round_)).is_dir() and not store.is_complete(round_):
        raise StateError(f"round {round_} is damaged: {store.damage(round_)}", file=str(store.root))
    raise UsageError(f"round {round_} is not kept in {store.root} (kept rounds: "
                     f"{', '.join(map(str, kept)) or 'none'})")


def rollback(state_dir=None, to: int | None = None) -> dict:
    """Make an earlier kept round current (default: the newest kept round before the current one).

    Later generations stay on disk (``--to`` can move forward to them again) until the next ``step``
    starts a new branch: it moves them into ``abandoned/`` before its round becomes visible. Only rounds
    on CURRENT's lineage (:meth:`StateStore.lineage`) can be chosen.

    Returns:
        {"round": new current, "previous_round": old current, "later_rounds": kept rounds after the new
        current one (moved into ``abandoned/`` by the next step), "message": ...}.
    Raises:
        UsageError: the requested round is not kept (the message lists the kept rounds), or there is
        no earlier round. StateError: the requested round is damaged. StateBusyError: another writer
        holds the lock.
    """
    store = StateStore(state_dir if state_dir is not None else default_state_dir())
    with store.lock():
        cur, _ = store.current()
        gens = store.lineage(cur)
        if to is None:
            earlier = [r for r in gens if r < cur]
            if not earlier:
                raise UsageError(f"no kept round before the current round {cur} (kept: {gens})")
            to = earlier[-1]
        require_round(store, to, gens)
        with _sigint_deferred():
            store.set_current(to)
    later = [r for r in gens if r > to]
    msg = f"CURRENT moved from round {cur} to round {to}"
    if later:
        msg += (f"; later round(s) {', '.join(map(str, later))} stay until the next step, which moves them into "
                f"{store.root / 'abandoned'}")
    return {"round": to, "previous_round": cur, "later_rounds": later, "message": msg}


def export(state_dir=None, output=None, round_: int | None = None) -> dict:
    """Write the current (or a kept) round's problem as MPS or Parquet (by the output's extension).

    Returns:
        {"round", "output", "n_cols", "n_rows", "nnz"} (``output``: the file written, as in convert/diff).
    Raises:
        UsageError: ``round_`` is not kept (see :func:`require_round`), or ``output`` is a folder, in a
        missing folder or not writable. StateError: not initialised, or the round is damaged.
    """
    from copter_cli.output import check_output_file
    from formats.io import write_problem

    store = StateStore(state_dir if state_dir is not None else default_state_dir())
    if output is not None:  # an unusable -o is a usage error before any work, as for solve and --out
        check_output_file(output, "-o")
    if round_ is not None:
        store.current()  # not initialised -> StateError first
        require_round(store, round_, store.generations())
    gen = store.load(round_, with_state=False)
    out = Path(output) if output is not None else Path(f"round-{gen.round:06d}.mps")
    write_problem(gen.problem, out)
    return {"round": gen.round, "output": str(out), "n_cols": gen.problem.n_cols, "n_rows": gen.problem.n_rows,
            "nnz": gen.problem.nnz}
