"""One generation of a state directory (:mod:`formats.checkpoint`, its module docstring: layout and protocol):
:class:`Generation` (a loaded one), :class:`GenerationWriter` (writes one in a temporary folder and renames it
into place), the solver state's file (:func:`save_state_arrays`, :func:`load_state_arrays`), the cheap structure
check of a loaded problem (:func:`check_structure`) and the file helpers a writer uses (:func:`write_json`,
:func:`unlink_quietly`). numpy, pyarrow and the arrays are imported where used, as in :mod:`formats.checkpoint`."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from formats.checksum import ALGORITHM as CHECKSUM
from formats.checksum import file_crc32
from formats.faults import fault_point, io_fault, naming
from formats.fsync import fsync_path

if TYPE_CHECKING:
    import numpy as np

    from formats.checkpoint import StateStore
    from formats.checkpoint_arrays import StoredArray
    from solver.model.problem import Problem
    from solver.model.state import SolverState

PROBLEM_FIELDS = ("col_names", "row_names", "cost", "col_lower", "col_upper", "row_lower", "row_upper",
                  "integrality", "a_indptr", "a_indices", "a_data")
FORMAT_VERSION = 1


GEN_RE = re.compile(r"^gen-(\d{6,})$")  #: what may be a generation's folder name; group 1: its round (gen_round decides)


def gen_name(round_: int) -> str:
    """Folder name of a round's generation, e.g. ``gen-000003``."""
    return f"gen-{round_:06d}"


def gen_round(name: str) -> int | None:
    """The round whose generation folder is called ``name`` (:func:`gen_name`'s form exactly: six ASCII digits or
    more, no padding beyond six), else None: a folder that only looks like one (``gen-0000019``, fullwidth digits,
    which ``GEN_RE``'s ``\\d`` matched) is no generation, never moved into ``abandoned/`` nor removed as one."""
    m = GEN_RE.match(name)
    if m is None:
        return None
    r = int(m.group(1))
    return r if gen_name(r) == name else None  # gen_name writes ASCII digits: other scripts' digits differ


def unlink_quietly(path: Path) -> None:
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


def write_json(path: Path, obj: dict) -> int:
    """Write ``obj`` as JSON to ``path`` and fsync; return the size in bytes."""
    from formats.reports import dumps

    io_fault("json", path)
    with naming(path), open(path, "x") as f:  # only ever a new file in a fresh folder: never follows a planted link
        f.write(dumps(obj) + "\n")
        f.flush()
        os.fsync(f.fileno())
    return os.path.getsize(path)


@dataclass
class Generation:
    """One loaded generation.

    Attributes:
        round: its round number.
        path: its folder.
        problem: the round's problem (numeric arrays may be read-only memory maps).
        state: solver state saved with it, or None.
        report: its report.json content.
        manifest: its generation.json content.
        stored: field -> StoredArray (how each problem array is stored).
        bases: field -> memory-mapped base array (for the next save's patch).
        warning: set when CURRENT was unusable and this generation was chosen instead.
    """

    round: int
    path: Path
    problem: Problem
    state: SolverState | None
    report: dict
    manifest: dict
    stored: dict = field(default_factory=dict)
    bases: dict = field(default_factory=dict)
    warning: str | None = None

    @property
    def delta_sha256(self) -> str | None:
        return self.manifest.get("delta_sha256")


def save_state_arrays(path: Path, state: SolverState) -> int:
    """Write a SolverState as a one-row Arrow IPC file with list columns; fsync; return its size."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.ipc as ipc

    ix = state.integer_x
    sc = state.scaling
    table = pa.table({
        "x": pa.array([np.asarray(state.x, dtype=np.float64)], type=pa.list_(pa.float64())),
        "y": pa.array([np.asarray(state.y, dtype=np.float64)], type=pa.list_(pa.float64())),
        "integer_x": pa.array([None if ix is None else np.asarray(ix, dtype=np.float64)],
                              type=pa.list_(pa.float64())),
        "step_size": pa.array([float(state.step_size)], type=pa.float64()),
        "primal_weight": pa.array([float(state.primal_weight)], type=pa.float64()),
        "iterations": pa.array([int(state.iterations)], type=pa.int64()),
        "engine": pa.array([None if state.engine is None else json.dumps(state.engine, allow_nan=True)],
                           type=pa.string()),  # the engine record (solver.lp.engine_choice), JSON
        # the matrix's scaling factors (solver.model.state.MatrixScaling), carried while the matrix is unchanged
        "row_scale": pa.array([None if sc is None else np.asarray(sc.row_factors, dtype=np.float64)],
                              type=pa.list_(pa.float64())),
        "col_scale": pa.array([None if sc is None else np.asarray(sc.col_factors, dtype=np.float64)],
                              type=pa.list_(pa.float64())),
        "scaling": pa.array([None if sc is None else sc.options_json()], type=pa.string()),
        # the coupling rows of the ALM's Newton systems for this matrix (solver.lp.alm_schur), carried with it
        "coupling_rows": pa.array([None if sc is None or sc.coupling_rows is None
                                   else np.asarray(sc.coupling_rows, dtype=np.int64)], type=pa.list_(pa.int64())),
    })
    io_fault("state", path)
    with naming(path), pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    fsync_path(path)
    return os.path.getsize(path)


def load_state_arrays(path: Path) -> SolverState:
    """Read a state.arrow written by :func:`save_state_arrays` (x, y copied out of the map: writable)."""
    from formats.checkpoint_arrays import int_list_hint, read_columns
    from solver.model.state import MatrixScaling, SolverState

    cols = read_columns(path)

    def vec(name):
        col = cols[name]
        if col.is_null()[0].as_py():
            return None
        return col.values.to_numpy(zero_copy_only=True).copy()  # writable: one kernel signature (#15)

    engine = cols["engine"][0].as_py() if "engine" in cols else None  # older states have no record
    return SolverState(x=vec("x"), y=vec("y"), integer_x=vec("integer_x"),
                       step_size=cols["step_size"][0].as_py(), primal_weight=cols["primal_weight"][0].as_py(),
                       iterations=int(cols["iterations"][0].as_py()),
                       engine=json.loads(engine) if engine else None,
                       scaling=MatrixScaling.from_stored(cols["scaling"][0].as_py(), vec("row_scale"), vec("col_scale"),
                                                         int_list_hint(cols["coupling_rows"], 0) if "coupling_rows" in cols else None)
                       if "scaling" in cols else None)  # older states have none


def check_structure(values: dict[str, np.ndarray], meta: dict) -> None:
    """Cheap consistency check of a loaded problem's arrays against problem/meta.json (no hashing).

    Checks every array's length (n_cols, n_rows, nnz, n_cols + 1), that the CSC column pointers start at
    0, end at nnz and never decrease (O(n_cols)), and that every row index lies in [0, n_rows) (a min/max
    pass over ``a_indices``). Catches a same-size damaged or replaced array file that the manifest's
    sizes cannot see, before it reaches the solver as an out-of-range index.

    Raises:
        ValueError: naming the array file (the caller reports the generation).
    """
    import numpy as np

    n, m, nnz = int(meta["n_cols"]), int(meta["n_rows"]), int(meta["nnz"])
    sizes = {"col_names": n, "cost": n, "col_lower": n, "col_upper": n, "integrality": n, "row_names": m,
             "row_lower": m, "row_upper": m, "a_indptr": n + 1, "a_indices": nnz, "a_data": nnz}
    for f, size in sizes.items():
        if values[f].shape != (size,):
            raise ValueError(f"problem/{f}.arrow has {values[f].shape[0]} entries, expected {size}")
    ptr = values["a_indptr"]
    if ptr[0] != 0 or ptr[-1] != nnz or (n and np.any(ptr[1:] < ptr[:-1])):
        raise ValueError(f"problem/a_indptr.arrow: column pointers are not 0 <= ... <= {nnz} non-decreasing")
    idx = values["a_indices"]
    if nnz and (int(idx.min()) < 0 or int(idx.max()) >= m):
        raise ValueError(f"problem/a_indices.arrow: row index out of range [0, {m}) "
                         f"(min {int(idx.min())}, max {int(idx.max())})")


class GenerationWriter:
    """Writes one generation in a temporary folder; :meth:`commit` renames it into place.

    Usage: ``w = store.begin(round)``, then :meth:`save_problem`, :meth:`save_state`, write any other
    files at :meth:`path` (fsync them, e.g. with ``formats.reports``), then :meth:`commit`. Call
    :meth:`abort` on failure while CURRENT does not name the round (it undoes everything this writer did).
    """

    def __init__(self, store: StateStore, round_: int):
        self.store = store
        self.round = round_
        self.tmp = store.root / f".tmp-{gen_name(round_)}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self.placed = False  # the folder was renamed to gen-NNNNNN
        self.moves: list[tuple[Path, Path]] = []  # (from, to) of what abandon_from moved aside
        self.journaled = False  # a commit journal is open (StateStore.open_commit): abort and the round close it
        try:
            io_fault("mkdir", self.tmp)
            # not parents=True: a state folder removed or moved meanwhile must not come back empty (helper-240)
            self.tmp.mkdir()
            (self.tmp / "problem").mkdir()
        except BaseException:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise
        self.written_bytes = 0
        self.stored: dict[str, StoredArray] = {}
        self.bases: dict[str, np.ndarray] = {}
        self.problem: Problem | None = None
        self.state: SolverState | None = None
        self.prev: Generation | None = None  # the generation save_problem shared files with

    @property
    def final(self) -> Path:
        return self.store.root / gen_name(self.round)

    def path(self, name: str) -> Path:
        """Path of file ``name`` inside the temporary generation folder."""
        return self.tmp / name

    def rel(self, name: str) -> str:
        """Path of ``name`` as reports state it: relative to the state directory, in the final folder."""
        return f"{gen_name(self.round)}/{name}"

    def save_problem(self, problem: Problem, prev: Generation | None = None,
                     changed: set[str] | None = None) -> dict[str, StoredArray]:
        """Store the problem's arrays, sharing unchanged ones with ``prev``.

        Args:
            problem: the round's problem.
            prev: the generation this round was derived from (None: write everything in full).
            changed: names of the Problem array fields that may differ from ``prev`` (from
                ``solver.differential.ApplyInfo``); None = unknown (every field is compared to its base).
        Returns:
            field -> StoredArray (also written to problem/meta.json).
        """
        from formats.checkpoint_arrays import save_array

        folder = str(self.tmp / "problem")
        prev_folder = str(prev.path / "problem") if prev is not None else None
        self.prev = prev
        for f in PROBLEM_FIELDS:
            values = getattr(problem, f)
            self.stored[f] = save_array(
                folder, f, values, prev_folder,
                prev.stored.get(f) if prev is not None else None,
                prev.bases.get(f) if prev is not None else None,
                changed=True if changed is None or prev is None else (f in changed))
            st_ = self.stored[f]
            self.written_bytes += st_.written_bytes
            full = prev is None or (st_.written_bytes > 0 and not st_.patch)
            self.bases[f] = values if full else prev.bases.get(f)
        self.problem = problem
        meta = {"format": "copter-problem", "version": FORMAT_VERSION, "round": self.round,
                "name": problem.name, "sense": int(problem.sense), "offset": float(problem.offset),
                "n_cols": problem.n_cols, "n_rows": problem.n_rows, "nnz": problem.nnz,
                "arrays": {f: s.to_json() for f, s in self.stored.items()}}
        self.written_bytes += write_json(self.tmp / "problem" / "meta.json", meta)
        return self.stored

    def save_state(self, state: SolverState | None) -> None:
        """Store the warm-start state (skipped when None or when its vectors are not finite)."""
        import numpy as np

        if state is None:
            return
        if not (np.isfinite(state.x).all() and np.isfinite(state.y).all()):
            return
        self.written_bytes += save_state_arrays(self.tmp / "state.arrow", state)
        self.state = state

    def commit(self, report: dict, manifest_extra: dict | None = None) -> Path:
        """Write report.json and generation.json, fsync, rename into place; return the final folder.

        Generations of this round and later (a branch left by a rollback: none of them is current) are
        first moved into ``abandoned/`` (:meth:`StateStore.abandon_from`). ``CURRENT`` is *not* changed:
        call :meth:`StateStore.set_current`. ``manifest_extra`` should carry ``parent_id`` (the ``id`` of
        the generation this round was derived from).
        """
        write_json(self.tmp / "report.json", report)
        files, sums = {}, {}
        for p in sorted(self.tmp.rglob("*")):
            if p.is_file():
                rel = str(p.relative_to(self.tmp))
                st_ = p.stat()
                files[rel] = st_.st_size
                sums[rel] = self._shared_checksum(rel, st_) or file_crc32(p)
        manifest = {"format": "copter-generation", "version": FORMAT_VERSION, "round": self.round,
                    "id": uuid.uuid4().hex, "parent_id": None,
                    "created_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "files": files,
                    CHECKSUM: sums}
        manifest.update(manifest_extra or {})
        fault_point("before_manifest")
        write_json(self.tmp / "generation.json", manifest)
        fsync_path(self.tmp / "problem", directory=True)
        fsync_path(self.tmp, directory=True)
        fault_point("before_rename")
        self._journal(manifest["id"], None)  # before the first move and the rename (StateStore.open_commit)
        self.store.abandon_from(self.round, moves=self.moves,
                                before_moves=lambda batch: self._journal(manifest["id"], batch))
        fault_point("after_abandon")
        final = self.final
        io_fault("rename", final)
        if os.path.lexists(final):  # not a folder (abandon_from moved every gen-* folder >= round aside)
            trash = self.store.root / f".trash-{final.name}-{uuid.uuid4().hex[:8]}"
            os.rename(final, trash)
            os.rename(self.tmp, final)
            self.placed = True
            fsync_path(self.store.root, directory=True)
            _remove_quietly(trash)
        else:
            os.rename(self.tmp, final)
            self.placed = True
            fsync_path(self.store.root, directory=True)
        fault_point("after_rename")
        if self.problem is not None and self.store.reuse:
            self.store._remember(Generation(round=self.round, path=final, problem=self.problem, state=self.state,
                                            report=report, manifest=manifest, stored=dict(self.stored),
                                            bases=dict(self.bases)))
        return final

    def _journal(self, gen_id: str, batch: Path | None) -> None:
        """Open the commit's journal (:meth:`StateStore.open_commit`) before its first move and its rename, and name
        the abandoned batch once there is one; :meth:`close` (or :meth:`abort`) closes it."""
        self.journaled = True  # first: a write that fails after its file is in place is still undone by abort
        self.store.open_commit(self.round, gen_id, batch)

    def close(self) -> None:
        """The commit is over: CURRENT names the round. Its journal goes (a leftover one is harmless: the next
        writer sees CURRENT name the round and removes it)."""
        if self.journaled:
            self.store.close_commit(self.round)
            self.journaled = False

    def _shared_checksum(self, rel: str, st_: os.stat_result) -> str | None:
        """The checksum ``self.prev``'s manifest records for ``rel`` when this file is a hard link to that
        very file (same device and inode): a shared file is never read again, and keeps the checksum of the
        bytes first written (a later damage of the shared file stays detectable). None: hash the file."""
        prev = self.prev
        known = (prev.manifest.get(CHECKSUM) or {}).get(rel) if prev is not None else None
        if known is None:
            return None
        try:
            old = os.stat(prev.path / rel)
        except OSError:
            return None
        return known if (old.st_dev, old.st_ino) == (st_.st_dev, st_.st_ino) else None

    def abort(self) -> None:
        """Undo this writer's work; call only while CURRENT does not name the round. Removes the temporary
        folder, or the generation already renamed into place, and moves what :meth:`StateStore.abandon_from`
        moved aside back (best effort: a cleanup that fails leaves what the next writer's cleanup and
        :meth:`StateStore.lineage` ignore)."""
        shutil.rmtree(self.tmp, ignore_errors=True)
        if self.placed:
            trash = self.store.root / f".trash-{self.final.name}-{uuid.uuid4().hex[:8]}"
            try:
                os.rename(self.final, trash)
            except OSError:
                return
            self.placed = False
            _remove_quietly(trash)
        batches, stuck = set(), False
        for src, dst in reversed(self.moves):
            try:
                os.rename(dst, src)
            except OSError:
                stuck = True
                continue
            batches.add(dst.parent)
        self.moves = []
        if not stuck:  # else the journal stays: the next writer's lock moves the rest back
            self.close()
        for batch in batches:
            for folder in (batch, batch.parent):  # the batch folder, then abandoned/ itself when empty
                try:
                    folder.rmdir()
                except OSError:
                    pass


def _remove_quietly(path: Path) -> None:
    """Remove a folder (or file) copter renamed aside; errors are ignored (cleanup() retries later)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        unlink_quietly(path)
