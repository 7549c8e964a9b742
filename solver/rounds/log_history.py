"""``copter history`` as a library: the round log's rows of the live branch (see :mod:`solver.rounds.log`),
completed from the generations on disk, with the compare results of each round.

A state written before the round log existed (no ``STATE/log/``) gives the generation-based history it
always gave: one row per kept generation on ``CURRENT``'s lineage and per failed-round record, rebuilt
from their report.json files (so rounds pruned away are not listed); the first round stored by this
version starts the log with those rows.
"""

from __future__ import annotations

from datetime import datetime

from formats.checkpoint import StateStore
from formats.regular import read_regular_text
from formats.round_log import PHASES, RoundLog
from solver.model.status import Status
from solver.rounds.config import state_dir_or_default
from solver.rounds.log import _failure_row, _generation_row

#: methods whose ``compare_*`` columns ``history --csv`` always holds: copter and every HiGHS baseline of
#: ``solver.baselines.registry.REGISTRY`` (named here: that module imports numpy, which ``history`` keeps out of its
#: process; tests/test_history_compare_runs.py checks the two agree)
CSV_METHODS = ("copter", "highs", "highs-simplex", "highs-ipm", "highs-pdlp", "highs-warm")
#: history's re-based diffs (rows of two compare runs): objectives closer than this, relative to the larger, count as
#: equal: 2^-40 (9.1e-13), 4,096 ulps, far above the 1.49e-15 of one allocation summed in two orders (misc03) and far
#: below any solver tolerance; compare itself bounds the rounding exactly from the points (objective_rounding)
LOGGED_ROUNDING_REL = 2.0 ** -40
COMPARE_FIELDS = ("status", "objective", "objective_diff_rel", "seconds", "time_ratio", "pop_seconds", "hit_limit",
                  "violates_tol", "max_violation_rel")


def current_round(rows: list[dict]) -> int | None:
    """The round of the history row marked current, or None when no row given is."""
    return next((r["round"] for r in rows if r.get("current")), None)


def is_undone(row: dict, current: int | None) -> bool:
    """A history row of a round a rollback undid: stored, after the current round ``current`` (``history``'s mark
    "undone", the report's). A row that says (``row["undone"]``: ``copter report`` sets it from every row before
    ``--last`` cuts them) decides."""
    if "undone" in row:
        return bool(row["undone"])
    return current is not None and row["kind"] != "failed" and row["round"] is not None and row["round"] > current


def _ok(status) -> bool:
    return status is not None and status in Status.__members__ and Status[status].is_success


def _missing_rows(store: StateStore, lineage: list[int], have: set, warnings: list[str] | None = None) -> list[dict]:
    """Rows for kept generations on the lineage and failed records that the log lacks (rebuilt in memory;
    readers never write); a generation whose report.json is damaged gets a row without numbers, said in
    ``warnings``."""
    rows = []
    damaged: list[str] = []
    for r in lineage:
        man = store.manifest(r) or {}
        if man.get("id") is None or man.get("id") not in have:
            row = _generation_row(store, r, damaged)
            if row is not None:
                row["round"] = r
                rows.append(row)
    for p in store.failures():
        if p.name not in have:
            from formats.checkpoint import load_failure

            prev = load_failure(p).get("current_round")
            rows.append(_failure_row(p, (store.manifest(int(prev)) or {}).get("id") if prev is not None else None))
    if warnings is not None:
        warnings.extend(damaged)
    return rows


def _live(rows: list[dict], cur_id: str | None, above: set, records_on_disk: set) -> list[dict]:
    """The rows of the live branch: generations reachable from ``cur_id`` through parent links plus the
    kept ones above CURRENT (``above``: their ids), and the failed rounds attempted on them."""
    parent = {r["generation_id"]: r["parent_id"] for r in rows if r["generation_id"] is not None}
    live, g = set(above), cur_id
    while g is not None and g not in live:
        live.add(g)
        g = parent.get(g)
    out = []
    for r in rows:
        if r["generation_id"] is not None:
            keep = r["generation_id"] in live
        else:
            keep = r["parent_id"] in live if r["parent_id"] is not None else r["record_id"] in records_on_disk
        if keep:
            out.append(r)
    return out


def _iso(utc) -> str | None:
    """A row's time as the log's ISO text (rebuilt rows hold a datetime), comparable as text."""
    return utc.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z" if isinstance(utc, datetime) else utc


def _rebuilt_failures_in_time(rows: list[dict]) -> list[dict]:
    """``rows`` (sorted by round, then log order, rebuilt rows last) with each failed record the log lacks (a
    failed ``init``, whose round 0 initialised no log; a crash before its row) moved before the logged rows of
    its round made after it: a failed init followed by a successful one is not the newest row."""
    out: list[dict] = []
    for r in rows:
        i = len(out)
        if r.get("seq") is None and r["generation_id"] is None and _iso(r["utc"]) is not None:
            while (i > 0 and out[i - 1]["round"] == r["round"] and out[i - 1].get("seq") is not None
                   and _iso(out[i - 1]["utc"]) is not None and _iso(out[i - 1]["utc"]) > _iso(r["utc"])):
                i -= 1
        out.insert(i, r)
    return out


def _say_damage(log: RoundLog, warnings: list[str] | None) -> None:
    """The warnings for the damaged files of ``log``'s table that its last read skipped, and for those an earlier
    compaction kept aside (``formats.round_log.DAMAGED_PREFIX``): damage from outside, whose rows are gone."""
    if warnings is None:
        return
    if log.skipped:  # the rows there (and the lineage through them) are gone
        lost = ("the compare results it held are missing here" if log.table == "compare" else
                "a round it recorded shows only while its generation is kept (rebuilt from it, 'recovered'), and one "
                "pruned since is missing here, with the rounds before it on its branch")
        warnings.append(f"the round log's {', '.join(log.skipped)} cannot be read (damaged) and was skipped: {lost}")
    if log.set_aside:  # a compaction kept them: the loss is said every time, not once (hunt 50)
        lost = ("the compare results it recorded are missing here" if log.table == "compare" else
                "the rounds it recorded that no generation on disk holds are missing here, with the rounds before "
                "them on their branch")
        warnings.append(f"the round log's {', '.join(log.set_aside)} (damaged, kept aside by a compaction) could not be "
                        f"read: {lost}")


def _compares(store: StateStore, warnings: list[str] | None = None) -> dict:
    """generation id (or ``("round", r)`` without one) -> {method: newest compare row}, each method's
    ``objective_diff_rel`` measured against the best of the rows shown (:func:`_consistent`); the compare table's
    damaged files are said in ``warnings``."""
    log = RoundLog(store.root, "compare")
    if not log.exists:
        return {}
    runs: dict = {}  # key -> {run (its utc, its index among the runs of that millisecond): [rows]}, in log order
    rows = log.rows()
    _say_damage(log, warnings)
    for row in rows:
        key = row["generation_id"] if row["generation_id"] is not None else ("round", row["round"])
        by_run = runs.setdefault(key, {})
        run = (row["utc"], 0)
        while (run[0], run[1] + 1) in by_run:  # the latest run of this millisecond
            run = (run[0], run[1] + 1)
        if any(r["method"] == row["method"] for r in by_run.get(run, ())):
            # a run logs each method once: the method again is the next run (two runs in one millisecond of
            # the log's clock were one run, and the second's diffs were not measured against the first's best)
            run = (run[0], run[1] + 1)
        by_run.setdefault(run, []).append(row)
    out: dict = {}
    for key, by_run in runs.items():
        newest: dict = {}  # method -> (run, its row)
        for run, rows in by_run.items():
            for row in rows:
                newest[row["method"]] = (run, {k: _no_nan(row[k]) for k in COMPARE_FIELDS})
        order = {run: i for i, run in enumerate(by_run)}  # the runs in log order (a clock stepped back cannot reorder)
        newest = dict(sorted(newest.items(), key=lambda kv: order[kv[1][0]]))  # by run: the last POP row is the newest
        rows0 = next(iter(by_run.values()))
        out[key] = _consistent(newest, by_run, _sense(store, rows0[0]["round"], None if isinstance(key, tuple) else key))
    return out


def _sense(store: StateStore, round_, generation_id) -> int | None:
    """The objective sense (+1 min, -1 max) of the compared round's problem, from its generation's
    ``problem/meta.json`` when that generation is on disk; else None (:func:`_consistent` infers it)."""
    import json

    from formats.checkpoint import gen_name

    if round_ is None:
        return None
    try:
        if generation_id is not None and (store.manifest(int(round_)) or {}).get("id") != generation_id:
            return None
        sense = json.loads(read_regular_text(store.root / gen_name(int(round_)) / "problem" / "meta.json"))["sense"]
        return int(sense) if int(sense) in (1, -1) else None
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _eligible(fields: dict) -> bool:
    """A row that can be the best, as ``copter compare`` ranks (``solver.rounds.comparison._derive``): an
    OPTIMAL/FEASIBLE objective, not ``violates_tol``, and not ranked below a feasible point (such a row beat
    its run's best: a negative ``objective_diff_rel`` without ``violates_tol``)."""
    obj, diff = fields.get("objective"), fields.get("objective_diff_rel")
    return (_ok(fields.get("status")) and obj is not None and fields.get("violates_tol") is not True
            and not (diff is not None and diff < 0))


def _best(rows: list[dict], sense: int, below: set | None = None):
    """The best objective of ``rows`` as compare ranks (:func:`_eligible`); ``below``: (method, objective) pairs some
    run ranked below a feasible point, not eligible either (rows then carry their ``method``)."""
    good = [r["objective"] for r in rows if _eligible(r) and (r.get("method"), r["objective"]) not in (below or ())]
    return (min(good) if sense == 1 else max(good)) if good else None


def _ranked_below(by_run: dict) -> set:
    """(method, objective) of every logged row its run ranked below a feasible point (a negative diff without
    ``violates_tol``): the same point stays there when another run, without that feasible point, ranked it first
    (helper-213: after ``compare -b highs``, which ranked copter's point 4e-5 past HiGHS's proven optimum below it,
    ``compare -b pop`` made copter that run's best, and history re-based HiGHS as 4e-5 worse than copter)."""
    out = set()
    for rows in by_run.values():
        for r in rows:
            diff, obj = _no_nan(r["objective_diff_rel"]), _no_nan(r["objective"])
            if obj is not None and diff is not None and diff < 0 and r.get("violates_tol") is not True:
                out.add((r["method"], obj))
    return out


def _consistent(newest: dict, by_run: dict, sense: int | None) -> dict:
    """{method: fields} of the newest row of each method, whose ``objective_diff_rel`` each compare run measured
    against its own best: when the rows come from different runs (``copter compare --baseline highs``, then
    ``--baseline pop``), a row whose run's best is not the best of the rows shown gets its diff against that
    best (``solver.integer.gap.objective_diff_rel``, the ranking as compare's: :func:`_eligible`), so no
    diff contradicts the objectives beside it. ``sense`` None: inferred from the logged rows."""
    shown = {m: f for m, (_, f) in newest.items()}
    if len({run for run, _ in newest.values()}) <= 1:
        return shown
    if sense is None:
        sense = _infer_sense(by_run)
        if sense is None:
            return shown
    from solver.integer.gap import objective_diff_rel

    below = _ranked_below(by_run)
    best = _best([{**f, "method": m} for m, f in shown.items()], sense, below)
    run_best = {run: _best([{k: _no_nan(r[k]) for k in COMPARE_FIELDS} for r in rows], sense)
                for run, rows in by_run.items()}
    for run, f in newest.values():
        obj = f.get("objective")
        if obj is None or best is None:
            f["objective_diff_rel"] = None
        elif run_best[run] != best:
            # the logged rows keep no point to bound c'x's rounding with (compare's objective_rounding): two
            # objectives within LOGGED_ROUNDING_REL of the larger are equal, as compare called them (helper-206)
            f["objective_diff_rel"] = objective_diff_rel(sense, obj, best, 0.0,
                                                         LOGGED_ROUNDING_REL * max(abs(obj), abs(best)))
    return shown


def _infer_sense(by_run: dict) -> int | None:
    """The sense a compare run's diffs imply (diff = sense * (objective - best) / |best|, 0.0 at its best),
    for a generation no longer on disk; None when no row tells (every objective then equals its run's best)."""
    for rows in by_run.values():
        at = [_no_nan(r["objective"]) for r in rows if _no_nan(r["objective_diff_rel"]) == 0.0]
        at = [o for o in at if o is not None]
        if not at:
            continue
        for r in rows:
            obj, diff = _no_nan(r["objective"]), _no_nan(r["objective_diff_rel"])
            if obj is not None and diff is not None and diff != 0.0 and obj != at[0]:
                return 1 if (diff > 0) == (obj > at[0]) else -1
    return None


def _no_nan(v):
    """A logged value with NaN (a not-applicable baseline's time ratio) read as None: null in JSON, blank in
    CSV, "-" in the table, as every other empty field."""
    return None if isinstance(v, float) and v != v else v


def _out(row: dict, cur_id, cur: int, kept_ids: set, compares: dict) -> dict:
    """A history row as ``copter history --json`` prints it."""
    failed = row["generation_id"] is None and row["record_id"] is not None
    gid = row["generation_id"]
    current = (gid == cur_id) if cur_id is not None else (not failed and row["round"] == cur)
    utc = row["utc"]
    cmp = compares.get(gid if gid is not None else ("round", row["round"]), {}) if not failed else {}
    return {"round": row["round"], "kind": "failed" if failed else "generation", "current": current,
            "status": row["status"], "objective": row["objective"] if _ok(row["status"]) else None,
            "lp_bound": row["lp_bound"] if _ok(row["status"]) else None,
            "gap_rel": row["gap_rel"] if _ok(row["status"]) else None, "iterations": row["iterations"],
            "warm_started": row["warm_started"], "engine": row["engine"],
            "seconds": {p: row[f"seconds_{p}"] for p in PHASES},
            "changed_variables": row["changed_variables"],
            **{k: row[k] for k in ("vars_added", "vars_removed", "cons_added", "cons_removed", "n_cols",
                                   "n_rows", "nnz", "delta_sha256", "accepted", "generation_id", "parent_id",
                                   "record_id", "message", "recovered")},
            "kept": gid in kept_ids,
            "utc": utc.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z" if isinstance(utc, datetime) else utc,
            "compare": cmp}


def history(state_dir=None, last: int | None = None, warnings: list[str] | None = None) -> list[dict]:
    """Rows of the live branch's rounds, oldest first; see :func:`solver.rounds.history`.

    Raises:
        EnvironmentFaultError: a file or folder of the state (the round log's included) the machine will not
            let copter read: exit 7, "cannot read" (history writes nothing).
    """
    from formats.faults import environment_faults

    store = StateStore(state_dir_or_default(state_dir))
    with environment_faults(store.root, "read"):
        return _history(store, last, warnings)


def _history(store: StateStore, last: int | None, warnings: list[str] | None) -> list[dict]:
    cur, warning = store.current()
    if warning and warnings is not None:
        warnings.append(warning)
    pending = store.pending_warning()  # a killed step's commit: its round is left out, the moved ones are aside
    if pending and warnings is not None:
        warnings.append(pending)
    missing = store.config_missing()
    if missing and warnings is not None:
        warnings.append(missing)
    log = RoundLog(store.root)
    logged = log.rows() if log.exists else []
    _say_damage(log, warnings)
    seen, rows = set(), []
    for r in logged:  # one row per generation / failed record (a reconciliation never duplicates; belt and braces)
        key = r["generation_id"] or r["record_id"]
        if key is None or key not in seen:
            seen.add(key)
            rows.append(r)
    lineage = store.lineage(cur)
    rows += _missing_rows(store, lineage, seen, warnings)
    ids = {r: (store.manifest(r) or {}).get("id") for r in lineage}
    cur_id = ids.get(cur)
    if cur_id is None:  # generations without ids (an older format): the lineage is what is on disk
        rows = [r for r in rows if r["generation_id"] is None]
    else:
        rows = _live(rows, cur_id, {ids[r] for r in lineage if r > cur and ids[r]},
                     {p.name for p in store.failures()})
    # by round, then in the order they were logged (a failed round N before the stored round N that
    # followed it); rows rebuilt in memory (no seq) last within their round
    rows.sort(key=lambda r: (r["round"] if r["round"] is not None else -1,
                             r["seq"] if r.get("seq") is not None else float("inf"), r["generation_id"] is None))
    rows = _rebuilt_failures_in_time(rows)
    compares = _compares(store, warnings)
    kept = {i for i in ids.values() if i}
    out = [_out(r, cur_id, cur, kept, compares) for r in rows]
    if last is not None:
        out = out[-last:] if last > 0 else []
    return out


def flat(row: dict) -> dict:
    """A history row with ``seconds`` and ``compare`` spread into columns (``seconds_solve``,
    ``compare_highs_seconds``, ...), for CSV. POP rows go to the fixed columns ``compare_pop_k`` (the part count)
    and ``compare_pop_<field>``: the round's newest POP row (``row["compare"]`` lists methods by run in log order,
    oldest first; of one run's several part counts, the last logged), so a first ``--baseline pop --k K`` adds no column (user trial 38: a file appended with
    ``--last 1 --no-header`` each round then had rows longer than its header)."""
    out = {k: v for k, v in row.items() if k not in ("seconds", "compare")}
    out.update({f"seconds_{p}": v for p, v in row["seconds"].items()})
    for method, fields in row["compare"].items():  # in run order: a later POP row overwrites an earlier one
        k = pop_k(method)
        if k is not None:
            out["compare_pop_k"] = k
        prefix = compare_prefix(method) if k is None else "compare_pop"
        out.update({f"{prefix}_{f}": v for f, v in fields.items()})
    return out


def compare_prefix(method: str) -> str:
    """The CSV column prefix of a compare method's fields: ``compare_`` and the method's name with every character
    outside ``[0-9A-Za-z_]`` as ``_`` (``highs-simplex`` -> ``compare_highs_simplex``), so every header is a plain
    identifier that SQL (sqlite's ``.import``), pandas' attribute access and R take unquoted; the methods' names
    cannot collide this way (``CSV_METHODS``; no field name starts with a method's last word)."""
    return "compare_" + "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in method)


def pop_k(method: str) -> int | None:
    """The part count of a POP compare method (``pop-4`` -> 4), else None."""
    k = method.removeprefix("pop-")
    return int(k) if method.startswith("pop-") and k.isascii() and k.isdigit() else None


__all__ = ["COMPARE_FIELDS", "CSV_METHODS", "compare_prefix", "flat", "history", "pop_k"]
