"""The round log as the round loop writes and reads it (storage: :mod:`formats.round_log`).

Writers (each under the state's writer lock, after the round's own files are durable):

* :func:`log_round`: ``init``/``step`` after ``CURRENT`` names the new generation (``solver.rounds.commit``);
* :func:`log_failure`: a failed round that was not accepted, after its ``failed/`` record is stored;
* :func:`log_compare`: ``copter compare``'s rows (copter and every baseline) for the compared generation.

Consistency with the generations: a row is appended only after what it describes is stored, so the log
never claims a round that is not on disk (or was not, before pruning). A crash between the commit and
the append loses that row; it is rebuilt from the generation's report.json (``recovered = true``): by the
next writer (:func:`reconcile`, run when the newest row is not the generation being built on, i.e.
after such a crash or a rollback) and by every reader (:func:`history` adds rows for kept generations
and failed records the log lacks). Rounds of a branch abandoned by a rollback stay in the log; readers
show the live branch: the generations reachable from ``CURRENT`` through ``parent_id`` (plus the kept
rounds above ``CURRENT`` that a rollback left) and the failed rounds attempted on them.
"""

from __future__ import annotations

import math
import time
from datetime import UTC, datetime

from formats.checkpoint import StateStore, gen_name, load_failure
from formats.regular import read_regular_text
from formats.round_log import PHASES, RoundLog


def _utc(text: str | None = None) -> datetime:
    """Now (or the manifest's ``created_utc`` text) as an aware UTC datetime."""
    if text:
        try:
            return datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
        except ValueError:
            pass
    return datetime.fromtimestamp(time.time(), tz=UTC)


def _num(v) -> float | None:
    """A report number (JSON may hold "inf"/"-inf" strings) as float, None when absent."""
    if v is None:
        return None
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def _int(v) -> int | None:
    return None if v is None else int(v)


def round_row(report: dict, *, generation_id: str | None, parent_id: str | None, record_id: str | None = None,
              info=None, utc: datetime | None = None, recovered: bool = False) -> dict:
    """One rounds-table row (:data:`formats.round_log.ROUND_COLUMNS`) from a round report.

    Args:
        report: the round report (``formats.reports.round_report``).
        generation_id, parent_id: the stored generation's ``id`` (None for a failed round not stored) and
            the ``id`` of the generation it was derived from.
        record_id: the ``failed/`` record folder name of a failed round.
        info: the delta's ``solver.differential.ApplyInfo`` (entity counts), or None.
        utc: when the round was stored (default: now).
        recovered: the row is rebuilt from a report.json by reconciliation.
    Returns:
        The row; ``lp_bound`` is the MILP's LP bound, else the LP's dual objective, and ``gap_rel``
        |objective - bound| / (1 + |objective| + |bound|) when the report has none (the LP definition of
        ``solver.model.result.SolveResult.gap_rel``).
    """
    sec = report.get("seconds") or {}
    obj = _num(report.get("objective"))
    bound = _num(report.get("lp_bound", report.get("dual_objective")))
    gap = _num(report.get("gap_rel"))
    if gap is None and obj is not None and bound is not None and math.isfinite(obj) and math.isfinite(bound):
        gap = abs(obj - bound) / (1.0 + abs(obj) + abs(bound))
    mip = report.get("mip") or {}
    counts = {}
    for key in ("vars_added", "vars_removed", "cons_added", "cons_removed"):
        counts[key] = len(getattr(info, key)) if info is not None else _int(report.get(key))
    return {"round": _int(report.get("round")), "generation_id": generation_id, "parent_id": parent_id,
            "record_id": record_id, "utc": utc or _utc(), "status": report.get("status"),
            "accepted": bool(report.get("accepted", generation_id is not None)), "objective": obj,
            "lp_bound": bound, "gap_rel": gap, "iterations": _int(report.get("iterations")),
            "warm_started": report.get("warm_started"), "engine": report.get("engine") or mip.get("lp_engine"),
            **{f"seconds_{p}": _num(sec.get(p)) for p in PHASES},
            "changed_variables": _int(report.get("changed_variables")), **counts,
            "n_cols": _int(report.get("n_cols")), "n_rows": _int(report.get("n_rows")),
            "nnz": _int(report.get("nnz")), "delta_sha256": report.get("delta_sha256"),
            "message": report.get("message") or "", "recovered": recovered}


def _generation_row(store: StateStore, r: int, damaged: list[str] | None = None) -> dict | None:
    """The row of kept generation ``r`` rebuilt from its report.json and manifest.

    A report.json that cannot be read or whose content is not the one written (its CRC-32, hunt 50) gives None, or,
    with ``damaged`` (a reader's list, which gets the sentence), a row of the manifest alone: its ids, time and
    status, no numbers. A reader needs that row: without it the branch's lineage broke there and every earlier
    round vanished from ``history`` without a word (helper-195); a writer's reconciliation stores no such row.
    """
    import json

    from formats.checkpoint import read_fault
    from formats.faults import is_environment_fault

    man = store.manifest(r) or {}
    path = store.root / gen_name(r) / "report.json"
    why = store.damage(r, lambda rel: rel == "report.json")  # another content than written: not its numbers
    rep = None
    if not why:
        try:
            rep = json.loads(read_regular_text(path))
            if not isinstance(rep, dict):
                why = "report.json is not a JSON object"
                rep = None
        except OSError as err:
            if is_environment_fault(err):  # permission denied, EIO: not a damaged report (exit 7, or a step's warning)
                raise read_fault(err, path) from err
            why = f"report.json cannot be read ({err.strerror or err})"
        except ValueError as err:
            why = f"report.json is not JSON ({err})"
    if rep is not None:
        return round_row(rep, generation_id=man.get("id"), parent_id=man.get("parent_id"),
                         utc=_utc(man.get("created_utc")), recovered=True)
    if damaged is None:
        return None
    damaged.append(f"round {r}'s {why}: its row shows no numbers (the round log lacks it too)")
    return round_row({"round": r, "status": man.get("status"),
                      "message": f"report.json is damaged ({why}); the numbers of this round are not shown"},
                     generation_id=man.get("id"), parent_id=man.get("parent_id"),
                     utc=_utc(man.get("created_utc")), recovered=True)


def _failure_row(path, parent_id: str | None) -> dict:
    """The row of a failed-round record ``failed/round-NNNNNN-<utc>-<id>`` rebuilt from its report.json; its
    time is the one in the folder's name (else the report's modification time)."""
    rep = load_failure(path)
    parts = path.name.split("-")
    try:
        utc = datetime.strptime(parts[2], "%Y%m%dT%H%M%SZ").replace(tzinfo=UTC)
    except (IndexError, ValueError):
        try:
            utc = datetime.fromtimestamp((path / "report.json").stat().st_mtime, tz=UTC)
        except OSError:
            utc = None
    return round_row(rep, generation_id=None, parent_id=parent_id, record_id=path.name, utc=utc, recovered=True)


def reconcile(store: StateStore, log: RoundLog | None = None, skip: str | None = None) -> int:
    """Append the rows the log lacks: every kept generation and failed record not in it (a crash between a
    commit and its append), except ``skip`` (the generation id or record name about to be appended). Call
    under the writer lock. Returns the number of rows added."""
    log = log or RoundLog(store.root)
    t = log.read(["generation_id", "record_id"])
    have = set(t.column("generation_id").to_pylist()) | set(t.column("record_id").to_pylist()) | {skip}
    rows = []
    for r in store.generations():
        row = None if (store.manifest(r) or {}).get("id") in have else _generation_row(store, r)
        if row is not None and row["generation_id"] is not None:
            rows.append(row)
    for p in store.failures():
        if p.name not in have:
            rep = load_failure(p)
            prev = rep.get("previous_round", rep.get("current_round"))
            parent = (store.manifest(int(prev)) or {}).get("id") if prev is not None else None
            rows.append(_failure_row(p, parent))
    rows.sort(key=lambda row: row["round"] if row["round"] is not None else -1)
    log.append(rows)
    return len(rows)


def _in_step(store: StateStore, log: RoundLog, parent_id: str | None, skip: str | None) -> None:
    """Before appending a round derived from ``parent_id``: reconcile when the newest row is neither that
    generation nor a failed round attempted on it (a lost append, a rollback, a log started mid-way)."""
    last = log.last_row()
    if parent_id is None and last is None:
        return
    if last is not None and parent_id is not None and parent_id in (last["generation_id"], last["parent_id"]):
        return
    reconcile(store, log, skip)


def log_round(store: StateStore, report: dict, generation_id: str | None, parent_id: str | None,
              info=None) -> None:
    """Append the row of a stored round (called by ``solver.rounds.commit.save_round`` under the lock)."""
    log = RoundLog(store.root)
    _in_step(store, log, parent_id, generation_id)
    log.append([round_row(report, generation_id=generation_id, parent_id=parent_id, info=info)])


def log_failure(store: StateStore, report: dict, record_path, parent_id: str | None, info=None) -> None:
    """Append the row of a failed round that was not accepted (its ``failed/`` record is stored)."""
    log = RoundLog(store.root)
    _in_step(store, log, parent_id, record_path.name)
    log.append([round_row(report, generation_id=None, parent_id=parent_id, record_id=record_path.name,
                          info=info)])


def log_compare(store: StateStore, result: dict, generation_id: str | None) -> None:
    """Append ``copter compare``'s rows (``solver.rounds.compare``'s result: copter + baselines) keyed by
    the compared round and generation. Call under the writer lock."""
    utc = _utc()
    rows = []
    for row in [result["copter"], *result["baselines"]]:
        rows.append({"round": result["round"], "generation_id": generation_id, "utc": utc,
                     "method": row.get("name"), "status": row.get("status"),
                     "objective": _num(row.get("objective")), "objective_diff_rel": _num(row.get("objective_diff_rel")),
                     "seconds": _num(row.get("seconds")), "time_ratio": _num(row.get("time_ratio")),
                     "pop_seconds": _num(row.get("pop_seconds")), "hit_limit": row.get("hit_limit"),
                     "violates_tol": row.get("violates_tol"), "max_violation_rel": _num(row.get("max_violation_rel")),
                     "message": str(row.get("message") or "")})
    RoundLog(store.root, "compare").append(rows)


__all__ = ["log_compare", "log_failure", "log_round", "reconcile", "round_row"]
