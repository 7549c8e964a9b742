"""Writers for a round's outputs: solution.parquet, duals.parquet, changes.parquet and report.json.

* ``solution.parquet``: one row per variable: ``name`` (string), ``value``, ``reduced_cost`` (float64).
* ``duals.parquet``: one row per constraint: ``name``, ``activity`` (row activity A x), ``dual``
  (HiGHS sign convention).
* ``changes.parquet``: what changed against the previous round: ``kind`` (``var_added``,
  ``var_removed``, ``con_added``, ``con_removed``, ``value_changed``), ``name``, ``old_value``,
  ``new_value`` (float64, null where not applicable; for constraints both are null). A variable that
  exists in both rounds is ``value_changed`` when it moved beyond what the solve can resolve: a
  continuous one when ``|new - old| > tol * max(1, |old|, |new|)`` with ``tol`` the round's relative
  solve tolerance (``Settings.tol``, default 1e-4: a smaller move is solver noise, not a migration), an
  integer one (of this round's problem) when ``new != old`` at all (integer points are exact).
  Names are matched with a hash join (``pyarrow.compute.index_in``), no Python loop over names.
* ``report.json``: the round report of docs/DESIGN.md "CLI contract and round report" (:func:`round_report`), strict JSON
  (``inf`` -> ``"inf"``, ``nan`` -> null).

Every writer fsyncs the file it writes (the checkpoint's atomic protocol relies on it).
"""

from __future__ import annotations

import json
import os
from enum import Enum

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from formats.json_numbers import json_float

MOVE_TOL = 1e-4  #: default relative move threshold of changes.parquet (the default solve tolerance)

CHANGES_SCHEMA = pa.schema([("kind", pa.string()), ("name", pa.string()),
                            ("old_value", pa.float64()), ("new_value", pa.float64())])


def _clean(o):
    if isinstance(o, Enum):
        return o.name
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (float, np.floating)):
        return json_float(float(o))  # nan -> null, inf -> "inf", -0.0 -> 0.0
    if isinstance(o, np.bool_):
        return bool(o)
    return o


def dumps(obj) -> str:
    """Strict JSON for reports (no NaN/Infinity tokens: inf -> "inf", nan -> null; -0.0 -> 0.0; enums by name)."""
    return json.dumps(_clean(obj), allow_nan=False, default=str)


def write_parquet(path: str | os.PathLike, table: pa.Table, sync_folder: bool = True) -> int:
    """Write ``table`` to ``path`` as Parquet and fsync it (and its folder unless ``sync_folder`` is False:
    a generation being written fsyncs its folder once at commit); return the size in bytes.

    Written to a new temporary file next to ``path`` and renamed over it (``formats.atomic``): a symbolic
    link at ``path`` is replaced, its target never written; a failed write leaves ``path`` as it was.

    zstd without dictionary pages (as ``formats.parquet.write_delta`` compresses): the name columns hold
    distinct strings, whose dictionary pyarrow builds and then abandons. A Sia 10,240 round's solution.parquet
    (259k rows): 3.58 -> 2.25 MB and 0.019 -> 0.011 s of CPU against pyarrow's default (snappy, dictionary),
    read as fast; every round writes it and fsyncs it (issue #15).

    Raises:
        OSError: the file cannot be written.
    """
    from formats.atomic import replacing

    with replacing(path, sync_folder=sync_folder) as tmp:
        pq.write_table(table, str(tmp), compression="zstd", use_dictionary=False)
    return os.path.getsize(path)


_NAME_CACHE: list[tuple[np.ndarray, pa.Array]] = []  # recent (object array, its Arrow copy), newest last


def _names(names: np.ndarray) -> pa.Array:
    """(k,) object array of names -> Arrow string array. The conversion of the last few name arrays is
    cached by identity: consecutive rounds share an unchanged name array (``apply_delta`` keeps it), so
    writing the outputs does not convert a million names again."""
    for arr, conv in _NAME_CACHE:
        if arr is names:
            return conv
    conv = pa.array(names, type=pa.string())
    if isinstance(names, np.ndarray) and names.dtype == object:
        _NAME_CACHE.append((names, conv))
        del _NAME_CACHE[:-4]
    return conv


def _take_names(names: np.ndarray, idx: np.ndarray) -> pa.Array:
    return pa.array(names[idx], type=pa.string())


def solution_table(col_names: np.ndarray, x: np.ndarray, reduced_cost: np.ndarray) -> pa.Table:
    """Variables table: (n,) names, (n,) values, (n,) reduced costs -> columns name, value, reduced_cost.

    A -0.0 is written as 0.0 (``+ 0.0``, one vectorised pass, a new array): a MILP's point held 66 of them in
    lseu's round 1 (integer values rounded from tiny negatives), which pandas and pyarrow print as ``-0.0``."""
    return pa.table({"name": _names(col_names), "value": pa.array(np.asarray(x, dtype=np.float64) + 0.0),
                     "reduced_cost": pa.array(np.asarray(reduced_cost, dtype=np.float64) + 0.0)})


def duals_table(row_names: np.ndarray, activity: np.ndarray, dual: np.ndarray) -> pa.Table:
    """Constraints table: (m,) names, (m,) row activities A x, (m,) duals -> columns name, activity, dual
    (-0.0 written as 0.0, as in :func:`solution_table`)."""
    return pa.table({"name": _names(row_names), "activity": pa.array(np.asarray(activity, dtype=np.float64) + 0.0),
                     "dual": pa.array(np.asarray(dual, dtype=np.float64) + 0.0)})


def _match(new_names: pa.Array, old_names: pa.Array) -> np.ndarray:
    """(len(new),) int64 position of each new name among the old names, -1 where absent."""
    idx = pc.index_in(new_names, value_set=old_names)
    return idx.fill_null(-1).to_numpy(zero_copy_only=False).astype(np.int64)


def changes_table(old_col_names: np.ndarray | None, old_x: np.ndarray | None, new_col_names: np.ndarray,
                  new_x: np.ndarray | None, old_row_names: np.ndarray | None, new_row_names: np.ndarray,
                  tol: float = MOVE_TOL, col_map: np.ndarray | None = None,
                  row_map: np.ndarray | None = None, integer: np.ndarray | None = None) -> pa.Table:
    """What changed between two rounds, matched by name (vectorized).

    Args:
        old_col_names, old_x: (n0,) previous round's variable names and values (None: no previous
            round, every entity counts as added; old_x None: only additions/removals are listed).
        new_col_names, new_x: (n1,) this round's names and values (new_x None: no usable point).
        old_row_names, new_row_names: (m0,), (m1,) constraint names.
        tol: relative threshold for ``value_changed`` of a continuous variable: moved when
            ``|new - old| > tol * max(1, |old|, |new|)`` (a nan on either side counts as moved).
        col_map, row_map: optional (n1,), (m1,) int64 old position of each new variable/constraint (-1 for
            an added one), e.g. ``solver.differential.ApplyInfo.col_map``; when given, names are not matched.
        integer: optional (n1,) bool, True for this round's integer variables: those count as moved
            whenever ``new != old`` (exactly).
    Returns:
        A table with :data:`CHANGES_SCHEMA`: added variables, removed variables, moved variables,
        added constraints, removed constraints (in that order, each in position order).
    """
    parts = []
    empty = np.zeros(0, dtype=object)
    new_c, new_r = np.asarray(new_col_names, dtype=object), np.asarray(new_row_names, dtype=object)
    old_c = empty if old_col_names is None else np.asarray(old_col_names, dtype=object)
    old_r = empty if old_row_names is None else np.asarray(old_row_names, dtype=object)
    nx = None if new_x is None else np.asarray(new_x, dtype=np.float64)
    ox = None if old_x is None else np.asarray(old_x, dtype=np.float64)

    def part(kind, names, old_v, new_v):
        k = len(names)
        parts.append(pa.table({
            "kind": pa.array(np.full(k, kind, dtype=object), type=pa.string()), "name": names,
            # + 0.0: -0.0 is 0.0, as in solution.parquet (a MILP job moving off a configuration read -0.0 here)
            "old_value": pa.array(np.asarray(old_v, dtype=np.float64) + 0.0) if old_v is not None
            else pa.nulls(k, pa.float64()),
            "new_value": pa.array(np.asarray(new_v, dtype=np.float64) + 0.0) if new_v is not None
            else pa.nulls(k, pa.float64()),
        }, schema=CHANGES_SCHEMA))

    pos_in_old = (_match(_names(new_c), _names(old_c)) if col_map is None
                  else np.asarray(col_map, dtype=np.int64))
    added = np.flatnonzero(pos_in_old < 0)
    part("var_added", _take_names(new_c, added), None, None if nx is None else nx[added])
    kept_old = np.zeros(len(old_c), dtype=bool)
    kept_old[pos_in_old[pos_in_old >= 0]] = True
    removed = np.flatnonzero(~kept_old)
    part("var_removed", _take_names(old_c, removed), None if ox is None else ox[removed], None)
    if nx is not None and ox is not None:
        surv = np.flatnonzero(pos_in_old >= 0)
        a, b = ox[pos_in_old[surv]], nx[surv]
        with np.errstate(invalid="ignore"):
            moved_mask = ~(np.abs(b - a) <= tol * np.maximum(1.0, np.maximum(np.abs(a), np.abs(b))))
        if integer is not None:
            moved_mask = np.where(np.asarray(integer, dtype=bool)[surv], a != b, moved_mask)
        moved = surv[moved_mask]
        part("value_changed", _take_names(new_c, moved), ox[pos_in_old[moved]], nx[moved])
    rpos = _match(_names(new_r), _names(old_r)) if row_map is None else np.asarray(row_map, dtype=np.int64)
    part("con_added", _take_names(new_r, np.flatnonzero(rpos < 0)), None, None)
    kept_r = np.zeros(len(old_r), dtype=bool)
    kept_r[rpos[rpos >= 0]] = True
    part("con_removed", _take_names(old_r, np.flatnonzero(~kept_r)), None, None)
    return pa.concat_tables(parts)


def changed_variable_count(changes: pa.Table) -> int:
    """Variables added, removed or moved (rows of ``changes`` whose kind is about variables)."""
    kinds = changes.column("kind")
    return int(pc.sum(pc.is_in(kinds, value_set=pa.array(["var_added", "var_removed", "value_changed"])))
               .as_py() or 0)


def round_report(*, round_: int | None, result, seconds: dict, delta_sha256: str | None = None,
                 changed_variables: int | None = None, paths: dict | None = None,
                 problem=None, message: str = "", extra: dict | None = None) -> dict:
    """The round report (docs/DESIGN.md "CLI contract and round report") as a dict, ready for :func:`dumps`.

    Args:
        round_: the round number (None for a one-shot solve).
        result: the ``solver.model.result.SolveResult`` of the round, or None (the round did not solve).
        seconds: wall seconds per phase: load, apply, solve, integerize, save, total.
        delta_sha256: SHA-256 (hex) of the delta file applied, None for init.
        changed_variables: rows of changes.parquet about variables (added, removed, moved).
        paths: {"solution_path", "duals_path", "changes_path"} relative to the state directory.
        problem: the solved Problem (for its size), or None.
        message: why the round ended as it did (always set for failures).
        extra: further keys (e.g. ``accepted``, ``current``, ``warnings``).
    Returns:
        dict with keys round, status, objective, (lp_bound, gap_rel for a MILP), iterations,
        warm_started, primal_residual_rel, dual_residual_rel, dual_objective, point_feasible,
        max_row_violation, seconds, changed_variables, delta_sha256, the three paths, n_cols, n_rows,
        nnz, message, ``engine`` ("pdhg" or "alm": the LP engine that ran, a MILP's relaxation's; null when
        none ran) and ``engine_reason`` (the choice's sentence with its numbers), ``mip`` (a MILP's integerization report; ``objective`` is None when it found no
        integer-feasible point, and for an infeasible or unbounded model), ``iis`` (a PRIMAL_INFEASIBLE round's conflicting rows and bounds:
        found, status, rows, columns, n_rows, n_columns, seconds) (and ``extra``, e.g. ``warnings``).
    """
    rep: dict = {}
    if round_ is not None:
        rep["round"] = int(round_)
    if result is not None:
        rep["status"] = result.status.name
        rep["objective"] = float(result.objective)
        if result.mip is not None:
            mip = result.mip
            rep["lp_bound"] = float(mip.get("lp_bound", result.dual_objective))
            rep["gap_rel"] = float(mip.get("gap_rel", result.gap_rel))
            if not result.point_feasible:  # the rounded point violates rows: no objective to report
                rep["objective"] = None
        if result.status.is_model_failure:  # infeasible / unbounded: the last iterate's objective means nothing
            rep["objective"] = None  # (an LP round reported -1.3e12 for an infeasible adlittle; history said null)
            if "lp_bound" in rep:  # nor its bound and gap (an infeasible LB round: lp_bound -2.6e9, gap "inf")
                rep["lp_bound"] = rep["gap_rel"] = None
        rep["iterations"] = int(result.iterations)
        rep["warm_started"] = bool(result.warm_started)
        rep["primal_residual_rel"] = float(result.primal_residual_rel)
        rep["dual_residual_rel"] = float(result.dual_residual_rel)
        # infeasible / unbounded: the last iterate's dual objective means nothing either (gas11, unbounded: -7.85e9)
        rep["dual_objective"] = None if result.status.is_model_failure else float(result.dual_objective)
        rep["point_feasible"] = bool(result.point_feasible)
        rep["max_row_violation"] = float(result.max_row_violation)
        rep["engine"] = getattr(result, "engine", "") or None  # "pdhg" | "alm" (solver.lp.engine_choice)
        rep["engine_reason"] = getattr(result, "engine_reason", "") or None
        message = message or result.message
    else:
        rep["status"] = None
    full = {k: 0.0 for k in ("load", "apply", "kernels", "solve", "integerize", "save", "total")}
    full.update({k: round(float(v), 6) for k, v in seconds.items()})
    rep["seconds"] = full
    rep["changed_variables"] = changed_variables
    rep["delta_sha256"] = delta_sha256
    p = paths or {}
    for k in ("solution_path", "duals_path", "changes_path"):
        rep[k] = p.get(k)
    if problem is not None:
        rep.update(n_cols=problem.n_cols, n_rows=problem.n_rows, nnz=problem.nnz)
    rep["message"] = message
    if result is not None and result.mip is not None:
        rep["mip"] = result.mip  # the integerization report: steps (round, rens, dive, ...), source, stages
    if result is not None and getattr(result, "iis", None) is not None:
        rep["iis"] = result.iis  # an infeasible round's conflicting rows and bounds (solver.highs_bridge.find_iis)
    rep.update(extra or {})
    return rep
