"""Reading and moving a state directory's rounds: show, history, rollback, export (documented in
:mod:`solver.rounds`)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from formats.checkpoint import StateStore, gen_name, load_failure, read_fault
from formats.faults import is_environment_fault
from formats.regular import read_regular_text
from solver.model.errors import StateError, UsageError
from solver.model.status import Status
from solver.rounds.config import state_dir_or_default
from solver.rounds.signals import signals_deferred


def show(state_dir=None, round_: int | None = None, warnings: list[str] | None = None) -> dict:
    """The current (or a kept) round's report; see :func:`solver.rounds.show`."""
    if round_ is not None:
        return _show(state_dir, round_, warnings)

    def read() -> dict:  # each try appends to its own copy of ``warnings``
        mine = None if warnings is None else list(warnings)
        out = _show(state_dir, None, mine)
        if warnings is not None:
            warnings[:] = mine
        return out

    # the current round pruned while read (a step beside it): read the new one
    return StateStore(state_dir_or_default(state_dir)).while_current_moves(read)


def _report_only(rel: str) -> bool:
    """The file whose content ``show`` checks (``formats.checkpoint.StateStore.damage``): the report it prints."""
    return rel == "report.json"


def _show(state_dir, round_: int | None, warnings: list[str] | None) -> dict:
    store = StateStore(state_dir_or_default(state_dir))
    # the report's content checked too (a few kB): a same-size edit of its objective printed as the round's (hunt 50)
    r, warning = store.current(verify=_report_only if round_ is None else False)
    if round_ is not None:
        require_round(store, round_, store.generations())
        if why := store.damage(round_, _report_only):
            raise StateError(f"round {round_} is damaged: {why}", file=str(store.root))
        warning, r = _undone(store, round_, r), round_
    report = _report(store, r)
    pending = store.pending_warning()  # a killed step's commit, which the next writer undoes
    for w in (warning, pending, store.config_missing()):
        if w:
            (warnings if warnings is not None else report.setdefault("warnings", [])).append(w)
    fails = store.failures() if round_ is None else []
    if fails:
        last = load_failure(fails[-1])
        if last.get("round", -1) > r:
            report["last_failed"] = last
    return report


def _undone(store: StateStore, round_: int, current: int) -> str | None:
    """The warning of ``show --round N`` (with ``--solution`` too) for a round a rollback undid, or None (helper-184:
    an undone round read as a live one; helper-211: ``--solution`` did not say it)."""
    if round_ > current and round_ in store.lineage(current):
        return (f"round {round_} is not current: a rollback undid it (the current round is {current}); "
                f"`copter rollback --to {round_}` makes it current again, and the next step moves it into "
                "abandoned/")
    return None


def _report(store: StateStore, r: int) -> dict:
    """report.json of round ``r``.

    Raises:
        StateError: it is missing or not JSON (exit 3).
        EnvironmentFaultError: the machine will not let copter read it (permission, I/O error: exit 7 naming
            the file, ``formats.checkpoint.read_fault``).
    """
    path = store.root / gen_name(r) / "report.json"
    try:
        return json.loads(read_regular_text(path))
    except OSError as err:
        if is_environment_fault(err):
            raise read_fault(err, path) from err
        raise StateError(f"cannot read the report of round {r}: {err}", file=str(store.root)) from err
    except ValueError as err:
        raise StateError(f"cannot read the report of round {r}: {err}", file=str(store.root)) from err


def show_solution(state_dir=None, round_: int | None = None, *, top: int = 10, entries: int = 3,
                  changes: bool = False, client_regex: str | None = None, zero_tol: float | None = None) -> dict:
    """The current (or a kept) round's allocation at a glance; see :func:`solver.rounds.show_solution`."""
    def read() -> dict:
        return _show_solution(state_dir, round_, top=top, entries=entries, changes=changes,
                              client_regex=client_regex, zero_tol=zero_tol)

    if round_ is None:  # the current round pruned while read (a step beside it): read the new one
        return StateStore(state_dir_or_default(state_dir)).while_current_moves(read)
    return read()


def _show_solution(state_dir, round_: int | None, *, top: int, entries: int, changes: bool,
                   client_regex: str | None, zero_tol: float | None) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from solver.rounds import allocation as alloc
    from solver.rounds.outputs import file_round

    alloc.check_limits(top, entries, 0.0 if zero_tol is None else zero_tol)
    store = StateStore(state_dir_or_default(state_dir))
    names = ("solution.parquet", "changes.parquet") if changes else ("solution.parquet",)
    reads = {"report.json", *names}  # their content checksums are verified (a damaged one: fallback / exit 3)
    r, warning = store.current(verify=(lambda rel: rel in reads) if round_ is None else False)
    if round_ is not None:
        require_round(store, round_, store.generations())
        r, warning = round_, _undone(store, round_, r)
        if why := store.damage(r, lambda rel: rel in reads):
            raise StateError(f"round {r} is damaged: {why}", file=str(store.root))
    gen = store.root / gen_name(r)
    report = _report(store, r)
    if zero_tol is None:
        zero_tol = float((store.config().get("settings") or {}).get("tol", 1e-4))
    if client_regex is None:  # a partitioned state's own grouping (init --client-regex), else the '/' prefix
        client_regex = (store.config().get("partition") or {}).get("client_regex")
    tables = {}
    for name in names:
        path = gen / name
        try:
            carried = file_round(path)
            # ParquetFile.read, not read_table: read_table imports pyarrow.dataset (~0.4 s of CPU at start-up)
            tables[name] = pq.ParquetFile(path).read(columns=(["name", "value"] if name == "solution.parquet"
                                                              else ["kind", "name", "old_value", "new_value"]))
        except (OSError, ValueError, KeyError, pa.ArrowException) as err:
            if is_environment_fault(err):  # permission denied, EIO: exit 7, not damage (read_fault)
                raise read_fault(err, path) from err
            raise StateError(f"cannot read {name} of round {r}: {err}", file=str(path)) from err
        if carried is not None and carried != r:
            raise StateError(f"{path} says it holds round {carried}, but it is in the folder of round {r}",
                             file=str(path))
    out = {"round": r, "status": report.get("status"), "objective": report.get("objective"),
           **alloc.allocation(tables["solution.parquet"], top=top, entries=entries, zero_tol=zero_tol,
                              client_regex=client_regex)}
    if changes:
        out["changes"] = {"previous_round": report.get("previous_round"),
                          **alloc.moves(tables["changes.parquet"], top=top)}
    warnings = [w for w in (warning, store.config_missing(), _regex_matched_nothing(out), _no_allocation(r, report))
                if w]
    if warnings:
        out["warnings"] = warnings
    return out


def _no_allocation(round_: int, report: dict) -> str | None:
    """The warning for a round whose status is not OPTIMAL or FEASIBLE (stored with ``--accept-failed``): its
    solution file holds the last iterate, which is no allocation (helper-166: ``show --solution`` printed it with
    only the header saying PRIMAL_INFEASIBLE)."""
    status = report.get("status")
    if status in ("OPTIMAL", "FEASIBLE"):
        return None
    return (f"round {round_} ended {status or 'without a status'}: these values are its solver's last iterate, "
            "not a feasible allocation")


def _regex_matched_nothing(out: dict) -> str | None:
    """The warning for a client regex that no nonzero variable's name matches (a mistyped one: one group without
    a client, and no word about why); None otherwise. In the result, so ``--json`` says it too (it was a note of the
    human view alone)."""
    regex = out.get("client_regex")
    if regex is None or not out["clients"] or out["clients_omitted"] or any(c["client"] is not None
                                                                             for c in out["clients"]):
        return None
    return (f"no nonzero variable's name matches the client regex {shlex.quote(regex)}, so all are in the group "
            "without a client ((no client), JSON null; the regex is searched anywhere in a name: its group "
            "'client', else its whole match)")


def history(state_dir=None) -> list[dict]:
    """One row per kept generation on CURRENT's lineage and per failed round; see :func:`solver.rounds.history`."""
    store = StateStore(state_dir_or_default(state_dir))
    cur, _ = store.current()
    rows = []
    for r in store.lineage(cur):
        try:
            rep = json.loads(read_regular_text(store.root / gen_name(r) / "report.json"))
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
    pending = store.pending_warning()
    if pending and store.pending_round(round_):  # a killed command's round, never reported (helper-195)
        raise StateError(f"round {round_} is no round of this state: {pending}", file=str(store.root))
    if round_ in kept:
        return
    if (store.root / gen_name(round_)).is_dir() and not store.is_complete(round_):
        raise StateError(f"round {round_} is damaged: {store.damage(round_)}", file=str(store.root))
    # with an unfinished commit, the rounds it moved aside come back with the next writer: not "a later step" (196)
    why = f"; {pending}" if pending else _why_not_kept(store, round_, kept)
    raise UsageError(f"round {round_} is not kept in {store.root} (kept rounds: "
                     f"{', '.join(map(str, kept)) or 'none'}){why}")


def _why_not_kept(store: StateStore, round_: int, kept: list[int]) -> str:
    """What became of a round that is not kept, for :func:`require_round`'s message: a failed round's record
    under ``failed/`` (its report, which ``show --round`` cannot give), or a round older than every kept one
    (pruned by ``--keep``; the round log still has its row); '' otherwise."""
    failed = [(p, rep) for p in store.failures() if (rep := load_failure(p)).get("round") == round_]
    status = failed[-1][1].get("status") or "without a status" if failed else None
    if failed and not (kept and 0 <= round_ < min(kept)):
        return (f"; round {round_} failed ({status}) and was not stored: its report is "
                f"{failed[-1][0] / 'report.json'}, and `copter history` lists it")
    # below the kept rounds, a round on their branch was stored (a branch numbers its rounds one by one), even when
    # an attempt at it failed first (user trial 38: a round failed, stored on its retry, then pruned, was called
    # "not stored")
    also = (f" (an earlier attempt at it failed ({status}): its report is {failed[-1][0] / 'report.json'})"
            if failed else "")
    if kept and 0 <= round_ < min(kept) and store.is_complete(round_):  # on disk, not pruned: cut off above it
        gap = [r for r in range(round_ + 1, min(kept)) if not store.is_complete(r)]
        what = ", ".join(f"round {r} is damaged ({store.damage(r)})" if (store.root / gen_name(r)).is_dir()
                         else f"round {r} is missing" for r in gap) or "the rounds above it do not name it as parent"
        return (f"; round {round_}'s generation is complete, but it is not on the current round's branch: {what}")
    if kept and 0 <= round_ < min(kept):
        return (f"; round {round_} was pruned (the state keeps its newest generations, init --keep); its row "
                f"is still in `copter history`{also}")
    moved = store.abandoned_generation(round_)
    if moved is not None:  # helper-183: a rolled-back branch's round, moved aside by the step that replaced it
        return (f"; a rollback left the branch that held round {round_} and a later step started a new one, so its "
                f"generation was moved to {moved} (only the current branch's rounds can be made current)")
    # helper-184: a round never made (above every kept one, no folder, no failed record) read as a lost one
    if kept and round_ > max(kept) and not failed and not (store.root / gen_name(round_)).exists():
        return f"; the newest round is {max(kept)}: round {round_} has not been made yet"
    return ""


def rollback(state_dir=None, to: int | None = None, wait: float = 0.0) -> dict:
    """Make an earlier kept round current; see :func:`solver.rounds.rollback`."""
    from formats import undo
    from formats.faults import as_environment_fault, environment_faults, is_environment_fault

    store = StateStore(state_dir_or_default(state_dir))
    with store.recovery_said(), store.lock(wait=wait), environment_faults(store.root):
        cur, warning = store.current()
        store.config(required=True)  # a state step refuses (config.json missing) is not moved either (helper-211)
        gens = store.lineage(cur)
        if to is None:
            earlier = [r for r in gens if r < cur]
            if not earlier:
                raise UsageError(f"no kept round before the current round {cur} "
                                 f"(kept rounds: {', '.join(map(str, gens))})")  # require_round's form
            to = earlier[-1]
        require_round(store, to, gens)
        if to == cur and not warning:  # CURRENT already names it: nothing to write (a damaged CURRENT is rewritten)
            said = store.recovery_warnings()  # the lock undid a killed command's commit: not "nothing changed"
            return {"round": to, "previous_round": cur, "later_rounds": [r for r in gens if r > to],
                    "message": f"round {to} is already current; nothing changed" + (" by the rollback" if said else ""),
                    "unchanged": not said, **({"warnings": said} if said else {})}
        with signals_deferred():
            try:
                store.set_current(to)
            except OSError as err:
                if not is_environment_fault(err):
                    raise
                if not store.names_current(to):  # refused before the replace: nothing changed, and it says so
                    fault = as_environment_fault(err, store.root)
                    fault.message += f"; CURRENT still names round {cur}, the state directory is unchanged"
                    fault.context = {"round_stored": False, "current_round": cur}
                    raise fault from err
                fault = as_environment_fault(err, store.root)  # failed after the replace (folder sync)
                fault.message += f"; CURRENT nevertheless names round {to} now"
                fault.context = {"round_stored": True, "current_round": to}
                raise fault from err
            undo.done(f"CURRENT names round {to}")
    later = [r for r in gens if r > to]
    msg = f"CURRENT moved from round {cur} to round {to}"
    if later:
        msg += (f"; later round(s) {', '.join(map(str, later))} stay until the next step, which moves them into "
                f"{store.root / 'abandoned'}")
    res = {"round": to, "previous_round": cur, "later_rounds": later, "message": msg}
    said = ([warning] if warning else []) + store.recovery_warnings()  # a killed step's commit the lock undid
    if said:  # CURRENT was unusable: previous_round is the newest complete generation
        res["warnings"] = said
    return res


def export(state_dir=None, output=None, round_: int | None = None) -> dict:
    """Write the current (or a kept) round's problem as MPS or Parquet; see :func:`solver.rounds.export`."""
    from formats.io import write_problem
    from formats.mps_infinity import written_warnings
    from solver.rounds.outputs import check_output_file

    store = StateStore(state_dir_or_default(state_dir))
    if output is not None:  # an unusable -o is a usage error before any work, as for solve and --out
        check_output_file(output, "-o")
    if round_ is not None:
        store.current()  # not initialised -> StateError first
        require_round(store, round_, store.generations())
    gen = store.load(round_, with_state=False)
    out = Path(output) if output is not None else Path(f"round-{gen.round:06d}.mps")
    if output is None:  # the default name in the working directory, which may be a state directory
        check_output_file(out, "-o (default)")
    # the model's name (the MPS NAME line, Parquet's copter.name) says the round exported: the base's name alone
    # passed round 4 off as the base model (the state folder's name stands for a base without one)
    name = f"{gen.problem.name or store.root.resolve().name}-round-{gen.round}"
    from formats.exported_round import round_metadata

    # a Parquet export records its round (copter.round): `copter diff` against it fills copter.base_round
    write_problem(gen.problem.replace(name=name), out, meta=round_metadata(gen.round, gen.problem))
    res = {"round": gen.round, "output": str(out), "n_cols": gen.problem.n_cols, "n_rows": gen.problem.n_rows,
           "nnz": gen.problem.nnz}
    # CURRENT unusable (the newest complete generation was exported); a 5e20 read as infinite from MPS elsewhere
    warnings = ([gen.warning] if gen.warning else []) + written_warnings(gen.problem, out)
    warnings += [w for w in (store.config_missing(),) if w]
    if warnings:
        res["warnings"] = warnings
    return res
