"""The round log: an append-only Arrow IPC table in the state directory that outlives pruning (issue #19).

Layout (two tables, same mechanism)::

    STATE/log/rounds/base-000000000120.arrow   compacted rows of every segment with seq <= 120
    STATE/log/rounds/seg-000000000121.arrow    one appended row each (seq 121, 122, ...)
    STATE/log/compare/...                      one row per (compared round, method)

Append = write the row as ``.tmp-*`` in the table's folder and rename it to ``seg-<seq>.arrow``: one
atomic rename of a complete file, so a killed process leaves either the old table or the old table plus the
whole new row, never a torn file (a left ``.tmp-*`` is ignored and removed by the next writer). Segments
are not fsynced (an fsync would cost as much as the rest of a small round's save, see
bench/bench_report.py): the row is derived data, and what a power loss can do to the newest segments
(forget the rename, or leave an empty file) is repaired from the fsynced generations: a reader skips a
segment it cannot read, and the reconciliation of :mod:`solver.rounds.log` rebuilds the missing rows from
the rounds' report.json files, like any row lost between a commit and its append. The cost is one small
file, independent of the log's length. Every :data:`COMPACT_EVERY` segments the base and the segments are
rewritten as a new ``base-<last seq>.arrow`` (temp file, fsync, rename, fsync of the folder: the base
is the only copy of the rows of pruned rounds), then the older files are removed; a reader ignores every file whose rows a newer base already holds (``seq <= base seq``), so a
crash at any point of a compaction loses and duplicates nothing. Call the writers under the state's
writer lock (``formats.checkpoint.StateStore.lock``).

Which rows the writers append, and how a reader reconciles the log with the generations on disk, is
:mod:`solver.rounds.log`'s business; this module stores and reads rows of a fixed schema.
"""

from __future__ import annotations

import os
import re
import time
import uuid
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

from formats.faults import fault_point, is_environment_fault
from formats.fsync import fsync_path
from formats.regular import read_regular_bytes

if TYPE_CHECKING:
    import pyarrow as pa

LOG_DIR = "log"
COMPACT_EVERY = 64  #: segments before a compaction (amortised: one rewrite of the table per 64 rounds)
PHASES = ("wait", "load", "apply", "kernels", "solve", "integerize", "save", "total")
"""The round's phases (report.json ``seconds``): wait for another writer's lock; kernels: the solve's first calls
of numba kernels (a fresh process loads them from the cache; ``solver.kernel_clock``), taken out of solve and
integerize. A log written before ``kernels`` existed reads it as null (the schema only gains columns)."""
FILE_RE = re.compile(r"^(base|seg)-([0-9]{12})(?:-([0-9a-fA-F]{8}))?\.arrow$", re.ASCII)
"""A stored file: kind, sequence number, and the CRC-32 of the file's bytes (8 hex digits; absent in files of
versions before it, which are read unchecked). ASCII digits only: a stray seg-１２….arrow is no log file."""
DAMAGED_PREFIX = "damaged-"
"""A damaged file a compaction set aside (``damaged-seg-….arrow``): kept, never read, and said by every reader."""
_LAST: dict[str, tuple[tuple, dict]] = {}  # table folder -> (identity of the segment this process appended last, its row)


def _identity(path: Path) -> tuple:
    """(name, inode, mtime, size) of a file, () when it is gone: a cached row is used only for the same file."""
    try:
        st = path.stat()
    except OSError:
        return ()
    return (path.name, st.st_ino, st.st_mtime_ns, st.st_size)

# name -> Arrow type name; the schemas are built on first use (pyarrow is imported lazily)
ROUND_COLUMNS: dict[str, str] = {
    "seq": "int64", "round": "int64", "generation_id": "string", "parent_id": "string",
    "record_id": "string", "utc": "timestamp", "status": "string", "accepted": "bool",
    "objective": "float64", "lp_bound": "float64", "gap_rel": "float64", "iterations": "int64",
    "warm_started": "bool", "engine": "string",
    **{f"seconds_{p}": "float64" for p in PHASES},
    "changed_variables": "int64", "vars_added": "int64", "vars_removed": "int64", "cons_added": "int64",
    "cons_removed": "int64", "n_cols": "int64", "n_rows": "int64", "nnz": "int64",
    "delta_sha256": "string", "message": "string", "recovered": "bool",
}
"""Columns of the rounds table. ``generation_id`` is the generation's ``id`` (null for a failed round that
was not stored), ``parent_id`` the generation the round was derived from, ``record_id`` the
``failed/`` record's folder name of a failed round; ``recovered`` marks a row rebuilt from a generation's
report.json by reconciliation (its phase seconds are the report's)."""

COMPARE_COLUMNS: dict[str, str] = {
    "seq": "int64", "round": "int64", "generation_id": "string", "utc": "timestamp", "method": "string",
    "status": "string", "objective": "float64", "objective_diff_rel": "float64", "seconds": "float64",
    "time_ratio": "float64", "pop_seconds": "float64", "hit_limit": "bool", "violates_tol": "bool",
    "max_violation_rel": "float64", "message": "string",
}
"""Columns of the compare table: one row per method of a ``copter compare`` run (``copter`` itself and
each baseline), keyed by the compared round and generation id; fields as in :mod:`solver.rounds.comparison`."""

TABLES = {"rounds": ROUND_COLUMNS, "compare": COMPARE_COLUMNS}


def schema(table: str) -> pa.Schema:
    """The Arrow schema of ``table`` (``"rounds"`` or ``"compare"``)."""
    import pyarrow as pa

    types = {"int64": pa.int64(), "string": pa.string(), "bool": pa.bool_(), "float64": pa.float64(),
             "timestamp": pa.timestamp("ms", tz="UTC")}
    return pa.schema([(k, types[v]) for k, v in TABLES[table].items()])


class RoundLog:
    """One table of the round log of a state directory.

    Args:
        state_root: the state directory.
        table: ``"rounds"`` or ``"compare"``.
    """

    def __init__(self, state_root: str | os.PathLike, table: str = "rounds"):
        if table not in TABLES:
            raise ValueError(f"unknown round-log table {table!r}")
        self.table = table
        self.folder = Path(state_root) / LOG_DIR / table
        self.skipped: list[str] = []  #: names of the damaged files the last :meth:`read` skipped
        self.set_aside: list[str] = []  #: names of the damaged files a compaction kept aside (:data:`DAMAGED_PREFIX`)
        self.spare_damaged: list[str] = []  #: damaged files of the last read whose rows another copy held

    @property
    def exists(self) -> bool:
        """True when the table has at least one stored file."""
        return bool(self._files())

    def _candidates(self) -> list[tuple[str, int, list[Path]]]:
        """(kind, seq, paths) of the live files, ascending by seq: the newest base and the segments after it. One
        (kind, seq) may have several files (a crash of a compaction at that seq, a copy put beside one): the
        checksummed names first; a reader takes the first that reads (:meth:`read`)."""
        if not self.folder.is_dir():
            return []
        found: dict[tuple[str, int], list[Path]] = {}
        for p in self.folder.iterdir():
            m = FILE_RE.match(p.name)
            if m:
                found.setdefault((m.group(1), int(m.group(2))), []).append(p)
        top = max((seq for kind, seq in found if kind == "base"), default=-1)
        live = [(kind, seq, sorted(paths, key=lambda p: (FILE_RE.match(p.name).group(3) is None, p.name)))
                for (kind, seq), paths in found.items() if (kind == "base" and seq == top) or (kind == "seg" and seq > top)]
        return sorted(live, key=lambda f: (f[1], f[0] == "seg"))

    def _files(self) -> list[tuple[str, int, Path]]:
        """(kind, seq, path) of the live files (:meth:`_candidates`, the first file of each)."""
        return [(kind, seq, paths[0]) for kind, seq, paths in self._candidates()]

    def next_seq(self) -> int:
        """The sequence number the next appended row gets (1 + the largest stored)."""
        files = self._files()
        return files[-1][1] + 1 if files else 1

    def append(self, rows: list[dict]) -> int:
        """Append ``rows`` (dicts keyed by column; missing keys are null, ``seq`` is assigned) as one segment.

        Returns:
            The segment's sequence number (of its last row).
        Raises:
            OSError: the write failed; the table is as before (the temp file is removed).
            pyarrow.ArrowInvalid: a value does not fit its column's type.
        """
        import pyarrow as pa

        if not rows:
            return self.next_seq() - 1
        self.folder.mkdir(parents=True, exist_ok=True)
        for stale in self.folder.glob(".tmp-*"):  # left by a killed writer (we hold the lock)
            stale.unlink(missing_ok=True)
        seq0 = self.next_seq()
        cols = {name: [r.get(name) for r in rows] for name in TABLES[self.table]}
        cols["seq"] = list(range(seq0, seq0 + len(rows)))
        last = seq0 + len(rows) - 1
        table = pa.table(cols, schema=schema(self.table))
        name = self._write(table, "seg", last)
        _LAST[str(self.folder)] = (_identity(self.folder / name), _pylist(table.slice(table.num_rows - 1))[0])
        if sum(1 for f in self._files() if f[0] == "seg") >= COMPACT_EVERY:
            self.compact()
        return last

    def _write(self, table: pa.Table, kind: str, seq: int, durable: bool = False) -> str:
        """Write ``table`` as the Arrow IPC file ``<kind>-<seq>-<crc32>.arrow`` atomically (temp file, rename) and
        return its name; with ``durable`` the file is fsynced before the rename and the folder after it. The
        CRC-32 of the file's bytes in its name lets a reader tell a changed file from a good one (:func:`_read_file`):
        a flipped bit in a number read as a wrong round before (hunt 50)."""
        import pyarrow as pa
        import pyarrow.ipc as ipc

        out = pa.BufferOutputStream()
        with ipc.new_file(out, table.schema) as w:
            w.write_table(table)
        data = out.getvalue()
        name = f"{kind}-{seq:012d}-{zlib.crc32(data):08x}.arrow"
        tmp = self.folder / f".tmp-{name}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        try:
            with open(tmp, "wb") as f:
                f.write(data)
            fault_point("log_before_fsync")
            if durable:
                fsync_path(tmp)
            fault_point("log_before_rename")
            os.rename(tmp, self.folder / name)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        if durable:
            fsync_path(self.folder, directory=True)
        fault_point("log_after_rename")
        return name

    def compact(self) -> None:
        """Rewrite the base and the segments as one new base file; remove the files it replaces and any
        temp file left by an interrupted writer. A damaged file (one :meth:`read` skipped) is not removed but
        renamed ``damaged-<name>``: its rows are missing from the new base, and every reader goes on saying so
        (:attr:`set_aside`; the compaction used to delete it, and history lost its rounds without a word: hunt 50).
        Call under the writer lock."""
        files = self._files()
        if files:
            table = self.read()
            # every file that did not read goes aside, also one a good copy of the same rows stood in for (a file
            # with a wrong checksum sorted first and made the compaction delete the good one: helper-195)
            for name in self.skipped + self.spare_damaged:  # before the new base: a crash leaves them where they were
                os.replace(self.folder / name, self.folder / f"{DAMAGED_PREFIX}{name}")
            # one record batch: a base kept each earlier file as its own batch, so a log of one row a round held one
            # batch a row (2.5 kB a row, 4x the bytes; 0.175 s against 0.002 s to read 3,000 rows: helper-233)
            self._write(table.combine_chunks(), "base", files[-1][1], durable=True)  # before removing
        live = {f[2] for f in self._files()}
        for p in self.folder.iterdir():
            if p not in live and (p.name.startswith(".tmp-") or FILE_RE.match(p.name)):
                p.unlink(missing_ok=True)

    def read(self, columns: list[str] | None = None) -> pa.Table:
        """The whole table (rows in append order), or only ``columns``; an empty table when none is stored.
        A file that cannot be read (a segment emptied by a power loss, see the module docstring) or whose bytes
        do not match the CRC-32 in its name (changed from outside) is skipped, its name kept in :attr:`skipped` (a
        reader says so: hunt 37b saw rounds vanish from history without a word); so is a damaged base (it used to
        end every command with an internal error, exit 1: hunt 50). :attr:`set_aside` names the damaged files an
        earlier compaction kept aside.

        Raises:
            OSError: a file the machine will not let copter read (``formats.faults.is_environment_fault``).
        """
        import pyarrow as pa

        parts = []
        self.skipped, self.spare_damaged = [], []
        self.set_aside = sorted(p.name for p in self.folder.iterdir()
                                if p.name.startswith(DAMAGED_PREFIX)) if self.folder.is_dir() else []
        for _, _, paths in self._candidates():
            bad, t = [], None
            for p in paths:  # the first file of this seq that reads; the others are spare copies
                t = _read_file(p)
                if t is not None:
                    break
                bad.append(p.name)
            if t is None:
                self.skipped.extend(bad)
            else:
                self.spare_damaged.extend(bad)  # a good copy holds its rows: nothing lost, set aside at compaction
                t = _conform(t, schema(self.table))
                parts.append(t.select(columns) if columns else t)
        if not parts:
            sch = schema(self.table)
            return sch.empty_table().select(columns) if columns else sch.empty_table()
        return pa.concat_tables(parts)

    def rows(self) -> list[dict]:
        """The whole table as dicts (append order); ``utc`` as ISO 8601 text (``2026-12-01T11:22:05.555Z``).

        The timestamp is converted by hand: pyarrow's own conversion of a time-zone-aware timestamp to
        Python imports pandas (0.5 s) when it is installed.
        """
        return _pylist(self.read())

    def last_row(self) -> dict | None:
        """The newest row (read from the newest file only), or None when the table is empty."""

        files = self._candidates()
        if not files:
            return None
        cached = _LAST.get(str(self.folder))
        if cached is not None and cached[0] == _identity(files[-1][2][0]):  # this process appended it
            return cached[1]
        for p in files[-1][2]:
            t = _read_file(p)
            if t is not None and t.num_rows:
                return _pylist(t.slice(t.num_rows - 1))[0]
        return None


def _conform(t: pa.Table, sch: pa.Schema) -> pa.Table:
    """``t`` with the columns of ``sch`` in its order: a column a file written by an older version lacks is
    null (the log's schema only ever gains columns)."""
    import pyarrow as pa

    if t.schema.names == sch.names:
        return t
    cols = [t.column(f.name) if f.name in t.schema.names else pa.nulls(t.num_rows, f.type) for f in sch]
    return pa.Table.from_arrays(cols, schema=sch)


def _read_file(path: Path) -> pa.Table | None:
    """One stored file, read into memory (the file may be replaced later); None for a damaged one (emptied,
    truncated, or its bytes' CRC-32 not the one its name holds). A file the machine will not let copter read
    (permission denied, EIO: ``formats.faults.is_environment_fault``) is no damage: its OSError is raised, with the
    file's path (pyarrow's own names none)."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    try:
        # read without waiting on a FIFO (hunt 37: one hung history, and a step holding the lock), then parse in memory
        data = read_regular_bytes(path)
        crc = FILE_RE.match(path.name).group(3)
        if crc is not None and zlib.crc32(data) != int(crc, 16):  # changed since it was written
            return None
        return ipc.open_file(pa.py_buffer(data)).read_all()
    except (OSError, pa.ArrowInvalid) as err:
        if is_environment_fault(err):
            raise OSError(err.errno, err.strerror or str(err), str(path)) from err
        return None


def iso_utc(ms: int | None) -> str | None:
    """Milliseconds since the epoch (UTC) as ISO 8601 text with milliseconds and a ``Z``."""
    if ms is None:
        return None
    sec, milli = divmod(int(ms), 1000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(sec)) + f".{milli:03d}Z"


def _pylist(table: pa.Table) -> list[dict]:
    """``table.to_pylist()`` with every timestamp column as ISO text (see :meth:`RoundLog.rows`).

    The timestamps are read as their int64 milliseconds with a zero-copy ``Array.view``: ``cast`` would
    import ``pyarrow.compute`` (142 ms of ``copter history``'s imports at load average 1.5, issue #15)."""
    import pyarrow as pa

    cols = {}
    for name in table.column_names:
        col = table.column(name)
        if pa.types.is_timestamp(col.type):
            cols[name] = [iso_utc(v) for chunk in col.chunks for v in chunk.view(pa.int64()).to_pylist()]
    plain = table.drop_columns(list(cols)) if cols else table
    out = plain.to_pylist()
    for name, values in cols.items():
        for row, v in zip(out, values, strict=True):
            row[name] = v
    return out


__all__ = ["COMPACT_EVERY", "COMPARE_COLUMNS", "DAMAGED_PREFIX", "FILE_RE", "LOG_DIR", "PHASES", "ROUND_COLUMNS", "RoundLog", "iso_utc", "schema"]
