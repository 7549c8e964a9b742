"""The per-part solver state of a partitioned round, stored in its generation folder.

Written by the generation writer of ``formats.checkpoint`` into the temporary folder before the manifest,
so it is listed (with sizes) in ``generation.json``, renamed into place with the rest of the generation and
covered by the same atomic protocol (a crash leaves the previous round current; rollback and no-op
re-apply work unchanged). Layout::

    gen-NNNNNN/partition/meta.json      k, updates (share-update count), whole_kept (optional, False when
                                        absent: PartitionData.whole_kept), format version
    gen-NNNNNN/partition/parts.arrow    one row per part: cols, rows (whole-problem indices), x, y,
                                        integer_x, step_size, primal_weight, iterations, engine (JSON),
                                        row_scale, col_scale, scaling (JSON): the part's matrix scaling and
                                        its matrix's checksum (optional: an older state has none),
                                        coupling_rows: its ALM's coupling rows (optional, as the scaling)
    gen-NNNNNN/partition/clients.arrow  name, part: the client -> part assignment
    gen-NNNNNN/partition/coupling.arrow row: (m2,) int64 the whole model's coupling rows of the LP merge's bound
                                        (optional; PartitionData.coupling_rows)
    gen-NNNNNN/partition/columns.arrow  client: (n,) int32 the client of every column (row of clients.arrow,
                                        -3 global), so the next round reads only its new columns' names
                                        (``solver.partition.clients.carry_grouping``); optional (an older
                                        generation without it: the next round groups all names)
    gen-NNNNNN/partition/rows.arrow     client: (m,) int32 the owner of every row (``ClientGrouping.row_client``:
                                        a row of clients.arrow, -1 shared, -2 empty, -3 global), which the
                                        next round reuses when its delta leaves the matrix alone and the
                                        shared-rows regex it was classified with (schema metadata
                                        ``shared_rows_regex``, JSON) is still the state's; optional
    gen-NNNNNN/partition/shares.arrow   row (whole-problem index of each shared row), s0 .. s{k-1}:
                                        the shares the NEXT round starts from (already updated);
                                        d0 .. d{k-1}, z0 .. z{k-1}: the update's step lengths and
                                        last directions; t0 .. t{k-1} (optional): whether part p has a
                                        nonzero of the row on its own columns (``RoundSetup.present``)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from formats.checkpoint_arrays import int_list_hint
from formats.faults import naming
from formats.fsync import fsync_path
from formats.regular import read_regular_text
from solver.model.state import MatrixScaling, SolverState
from solver.partition.layout import Assignment

FOLDER = "partition"
VERSION = 1
ROWS_REGEX_KEY = "shared_rows_regex"  #: rows.arrow's schema metadata: the regex its row owners were classified with


@dataclass(eq=False)
class PartState:
    """One part's warm-start data: its (n_p,) whole-problem columns, (m_p,) rows and solver state."""

    cols: np.ndarray
    rows: np.ndarray
    state: SolverState | None


@dataclass(eq=False)
class PartitionData:
    """Everything a partitioned round hands to the next one.

    Attributes:
        assignment: client -> part.
        parts: k PartStates.
        shared_rows: (ns,) whole-problem indices of the shared rows; shares: (k, ns) their next shares.
        updates: number of share updates so far.
        steps, last: (k, ns) step lengths and last directions of the share update
            (``solver.partition.shares.update``); None = fresh (``D0``, 0).
        col_client: (n,) the round's client of every column (``ClientGrouping.col_client``, ids into
            ``assignment.client_names``), None when not known (the next round groups the names afresh).
        whole_kept: the round was a MILP's whose merge missed its target and whose whole solve's point was kept
            (``fallback.kept`` "whole", ``reason`` "gap", "small" or "whole_last"): the next round's merge above
            target goes to the whole solve at once, as a small MILP's (``solver.partition.round``).
        coupling_rows: (m2,) int64 the whole model's rows outside the assignment rows its LP merge's bound used
            (``solver.partition.bound.coupling_rows``), for the next round on the same matrix; None: not known.
        row_client: (m,) the round's owner of every row (``ClientGrouping.row_client``), None when not known;
            row_client_regex: the ``shared_rows_regex`` it was classified with (None: none; a state's
            ``config.json`` may change it between rounds, and a reuse must not keep the old one);
            presence: (k, ns) bool, part p has a nonzero of shared row i on its own columns
            (``solver.partition.shares.presence``), None when not known. A next round whose delta leaves the
            matrix, the clients and their parts alone reuses both instead of a pass over the matrix each
            (``solver.partition.round``; TE Kdl: 0.07-0.2 s each).
    """

    assignment: Assignment
    parts: list[PartState]
    shared_rows: np.ndarray
    shares: np.ndarray
    updates: int = 0
    steps: np.ndarray | None = None
    last: np.ndarray | None = None
    col_client: np.ndarray | None = None
    whole_kept: bool = False
    coupling_rows: np.ndarray | None = None
    row_client: np.ndarray | None = None
    row_client_regex: str | None = None
    presence: np.ndarray | None = None

    def __post_init__(self) -> None:
        from solver.partition.shares import D0

        if self.steps is None:
            self.steps = np.full(self.shares.shape, D0)
        if self.last is None:
            self.last = np.zeros(self.shares.shape)


def _write_table(path: Path, table: pa.Table) -> int:
    with naming(path), pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    fsync_path(path)
    return os.path.getsize(path)


def _read_table(path: Path) -> pa.Table:
    with pa.memory_map(str(path), "r") as source:
        return ipc.open_file(source).read_all()


def _list(values: list, dtype) -> pa.Array:
    return pa.array([None if v is None else np.asarray(v, dtype=dtype) for v in values],
                    type=pa.list_(pa.from_numpy_dtype(np.dtype(dtype))))


def _scaled(state) -> bool:
    """Whether a part's state has checksummed scaling factors to store."""
    sc = getattr(state, "scaling", None)
    return sc is not None and sc.matrix_crc is not None


def _part_scaling(text: str, row_factors, col_factors, coupling_rows=None) -> MatrixScaling:
    """A part's stored scaling, which must name the checksum of its matrix (a worker trusts no other).

    Raises:
        ValueError, KeyError: not what :func:`save` writes (the caller cold-starts)."""
    sc = MatrixScaling.from_stored(text, row_factors, col_factors, coupling_rows)
    if sc.matrix_crc is None:
        raise ValueError("partition/parts.arrow: a part's scaling without the checksum of its matrix")
    return sc


def save(folder: Path, data: PartitionData) -> int:
    """Write ``data`` under ``folder/partition/`` (fsynced files and folder); return the bytes written."""
    out = Path(folder) / FOLDER
    out.mkdir()
    st = [p.state for p in data.parts]
    ok = [s is not None and bool(np.isfinite(s.x).all() and np.isfinite(s.y).all()) for s in st]
    parts = pa.table({
        "cols": _list([p.cols for p in data.parts], np.int64),
        "rows": _list([p.rows for p in data.parts], np.int64),
        "x": _list([s.x if o else None for s, o in zip(st, ok, strict=True)], np.float64),
        "y": _list([s.y if o else None for s, o in zip(st, ok, strict=True)], np.float64),
        "integer_x": _list([s.integer_x if o else None for s, o in zip(st, ok, strict=True)], np.float64),
        "step_size": pa.array([float(s.step_size) if o else float("nan") for s, o in zip(st, ok, strict=True)]),
        "primal_weight": pa.array([float(s.primal_weight) if o else float("nan")
                                   for s, o in zip(st, ok, strict=True)]),
        "iterations": pa.array([int(s.iterations) if o else 0 for s, o in zip(st, ok, strict=True)], pa.int64()),
        # the engine record steers the next warm solve's engine choice (solver.lp.engine_choice), JSON
        "engine": pa.array([json.dumps(s.engine, allow_nan=True) if o and getattr(s, "engine", None) else None
                            for s, o in zip(st, ok, strict=True)], pa.string()),
        # each part's matrix scaling and the checksum of the matrix it belongs to (solver.model.state.MatrixScaling)
        "row_scale": _list([s.scaling.row_factors if o and _scaled(s) else None for s, o in zip(st, ok, strict=True)],
                           np.float64),
        "col_scale": _list([s.scaling.col_factors if o and _scaled(s) else None for s, o in zip(st, ok, strict=True)],
                           np.float64),
        "scaling": pa.array([s.scaling.options_json() if o and _scaled(s) else None
                             for s, o in zip(st, ok, strict=True)], pa.string()),
        # the coupling rows of each part's ALM Newton systems, carried with its scaling (solver.lp.alm_schur)
        "coupling_rows": _list([s.scaling.coupling_rows if o and _scaled(s) else None
                                for s, o in zip(st, ok, strict=True)], np.int64),
    })
    size = _write_table(out / "parts.arrow", parts)
    a = data.assignment
    size += _write_table(out / "clients.arrow", pa.table({
        "name": pa.array(a.client_names, type=pa.string()), "part": pa.array(a.client_part, type=pa.int64())}))
    cols = {"row": pa.array(np.asarray(data.shared_rows, dtype=np.int64))}
    for p in range(a.k):
        cols[f"s{p}"] = pa.array(np.asarray(data.shares[p], dtype=np.float64))
        cols[f"d{p}"] = pa.array(np.asarray(data.steps[p], dtype=np.float64))
        cols[f"z{p}"] = pa.array(np.asarray(data.last[p], dtype=np.float64))
        if data.presence is not None:
            cols[f"t{p}"] = pa.array(np.asarray(data.presence[p], dtype=bool))
    size += _write_table(out / "shares.arrow", pa.table(cols))
    if data.col_client is not None:
        size += _write_table(out / "columns.arrow",
                             pa.table({"client": pa.array(np.asarray(data.col_client, dtype=np.int32))}))
    if data.row_client is not None:
        size += _write_table(out / "rows.arrow", pa.table(
            {"client": pa.array(np.asarray(data.row_client, dtype=np.int32))}).replace_schema_metadata(
            {ROWS_REGEX_KEY: json.dumps(data.row_client_regex)}))
    if data.coupling_rows is not None:
        size += _write_table(out / "coupling.arrow",
                             pa.table({"row": pa.array(np.asarray(data.coupling_rows, dtype=np.int64))}))
    meta = {"format": "copter-partition", "version": VERSION, "k": a.k, "updates": int(data.updates),
            "whole_kept": bool(data.whole_kept)}  # absent (a state from before it): False
    with open(out / "meta.json", "x") as f:
        f.write(json.dumps(meta) + "\n")
        f.flush()
        os.fsync(f.fileno())
    fsync_path(out, directory=True)
    return size + os.path.getsize(out / "meta.json")


def load(generation: Path) -> PartitionData | None:
    """Read ``generation/partition/`` (None when the generation has none, e.g. a monolithic round).

    Raises:
        ValueError, OSError, KeyError, pyarrow.ArrowException: damaged files (the caller cold-starts).
    """
    folder = Path(generation) / FOLDER
    if not (folder / "meta.json").exists():
        return None
    meta = json.loads(read_regular_text(folder / "meta.json"))
    k = int(meta["k"])
    parts_t = _read_table(folder / "parts.arrow")
    if parts_t.num_rows != k:
        raise ValueError(f"partition/parts.arrow has {parts_t.num_rows} parts, meta.json says {k}")
    col = {n: parts_t.column(n).to_pylist() for n in ("step_size", "primal_weight", "iterations")}
    engines = parts_t.column("engine").to_pylist() if "engine" in parts_t.column_names else [None] * k
    scalings = parts_t.column("scaling").to_pylist() if "scaling" in parts_t.column_names else [None] * k  # older
    coupled = "coupling_rows" in parts_t.column_names  # older states have none

    def vec(name, i, dtype):
        v = parts_t.column(name)[i]
        return None if not v.is_valid else np.asarray(v.values.to_numpy(zero_copy_only=False), dtype=dtype)

    parts = []
    for i in range(k):
        x, y = vec("x", i, np.float64), vec("y", i, np.float64)
        state = None if x is None or y is None else SolverState(
            x=x, y=y, integer_x=vec("integer_x", i, np.float64), step_size=col["step_size"][i],
            primal_weight=col["primal_weight"][i], iterations=int(col["iterations"][i]),
            engine=json.loads(engines[i]) if engines[i] else None,
            scaling=_part_scaling(scalings[i], vec("row_scale", i, np.float64), vec("col_scale", i, np.float64),
                                  int_list_hint(parts_t.column("coupling_rows"), i) if coupled else None)
            if scalings[i] else None)
        parts.append(PartState(cols=vec("cols", i, np.int64), rows=vec("rows", i, np.int64), state=state))
    cl = _read_table(folder / "clients.arrow")
    assignment = Assignment(k=k, client_names=np.asarray(cl.column("name").to_pylist(), dtype=object),
                            client_part=cl.column("part").to_numpy().astype(np.int64))
    sh = _read_table(folder / "shares.arrow")
    def matrix(prefix):
        if not all(f"{prefix}{p}" in sh.column_names for p in range(k)):
            return None
        return np.vstack([sh.column(f"{prefix}{p}").to_numpy() for p in range(k)]).reshape(k, -1)

    col_client = row_client = row_regex = None
    if (folder / "columns.arrow").exists():
        col_client = _read_table(folder / "columns.arrow").column("client").to_numpy().astype(np.int64)
    if (folder / "rows.arrow").exists():
        rows_t = _read_table(folder / "rows.arrow")
        raw = (rows_t.schema.metadata or {}).get(ROWS_REGEX_KEY.encode())
        row_regex = json.loads(raw) if raw is not None else None
        if raw is not None and (row_regex is None or isinstance(row_regex, str)):  # else not known: not reused
            row_client = rows_t.column("client").to_numpy().astype(np.int64)
    presence = matrix("t")
    return PartitionData(assignment=assignment, parts=parts, shared_rows=sh.column("row").to_numpy().astype(np.int64),
                         shares=matrix("s"), updates=int(meta.get("updates", 0)), steps=matrix("d"),
                         whole_kept=meta.get("whole_kept") is True,
                         last=matrix("z"), col_client=col_client, coupling_rows=_coupling_rows(folder),
                         row_client=row_client, row_client_regex=row_regex if row_client is not None else None,
                         presence=None if presence is None else presence.astype(bool))


def _coupling_rows(folder: Path) -> np.ndarray | None:
    """``coupling.arrow``'s rows (optional: an older state, a MILP's rounds have none), or None when absent or not
    a column of integers: a hint the merge checks before use (``alm_schur.assignment_rows_given``), never a reason
    to call the partition damaged."""
    if not (folder / "coupling.arrow").exists():
        return None
    try:
        col = _read_table(folder / "coupling.arrow").column("row")
    except (OSError, KeyError, ValueError, pa.ArrowException):
        return None
    if not pa.types.is_integer(col.type) or col.null_count:
        return None
    return col.to_numpy().astype(np.int64)
