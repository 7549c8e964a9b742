"""One-dimensional arrays stored as Arrow IPC files, shared between checkpoint generations.

Each array field of a generation is stored as

* ``<field>.arrow``: a *base* file holding the full array of some generation (single column ``v``), and
* optionally ``<field>.patch.arrow``: the cumulative change against that base (columns ``idx`` int64 and
  ``v``), plus the array's current length, kept in the generation's ``problem/meta.json``.

Files are never modified after they are written: a generation that keeps an array (or its base) hard-links
the earlier generation's file (``os.link``; a copy where the filesystem refuses links). Deleting an old
generation then only drops directory entries. Saving a changed field compares it against its base once
(a memory-bandwidth pass, no hashing) and writes only the differing positions while they stay below
:data:`PATCH_MAX_FRACTION` of the array; beyond that a new full base is written. The save cost therefore
grows with the cumulative change since the last full write, not with the array size.

Loading memory-maps the base (``pyarrow.memory_map`` + ``pyarrow.ipc``) for the next save's comparison, and
hands the caller a writable numpy view of the same file mapped copy-on-write (``mmap.ACCESS_COPY``,
MAP_PRIVATE: a write changes the process's own copy of that page, never the file or the base), with a patch
written into it (a grown array: a copy plus the patch). Writable, because numba types a read-only array as
another signature and would compile a variant of a kernel mid-stream (issue #15); a view, because the copy
this replaced cost a memory pass over every array of the model (TE Kdl, 30.9M nonzeros: 0.4-1.3 s of a
step's load for a_data alone) and a second copy of it in memory. Files are never modified after they are
written (above), so the view cannot change under the process; a file another program truncates while a
command runs ends that command with SIGBUS, as the base's mapping already could (the state itself is never
written through a view). Each view holds a file descriptor while it lives (Python's mmap keeps a duplicate):
about ten per loaded generation, released with the arrays (a process keeps the last generations of at most
``formats.checkpoint.RECENT_STATES`` state directories; running out is exit 7, ``formats.faults``).
Strings are stored as ``large_string`` and load as numpy object arrays; booleans as ``uint8``.
"""

from __future__ import annotations

import mmap
import os
import time
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from formats.faults import io_fault, naming
from formats.fsync import fsync_path, link_or_copy  # noqa: F401 (re-exported)

PATCH_MAX_FRACTION = 0.125   #: write a patch while it holds at most this fraction of the array's entries
PATCH_MIN_LENGTH = 1024      #: arrays shorter than this are always written in full


def _to_arrow(values: np.ndarray) -> pa.Array:
    if values.dtype == object or values.dtype.kind == "U":
        return pa.array(values, type=pa.large_string())
    if values.dtype == np.bool_:
        return pa.array(values.view(np.uint8))
    return pa.array(np.ascontiguousarray(values))


def write_columns(path: str | os.PathLike, columns: dict[str, np.ndarray | pa.Array]) -> int:
    """Write equal-length columns as one Arrow IPC file (one record batch), fsync it; return its size in bytes."""
    io_fault("array", path)
    arrays = [c if isinstance(c, pa.Array) else _to_arrow(c) for c in columns.values()]
    batch = pa.RecordBatch.from_arrays(arrays, names=list(columns))
    with naming(path), pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, batch.schema) as writer:
        writer.write_batch(batch)
    fsync_path(path)
    return os.path.getsize(path)


def read_columns(path: str | os.PathLike) -> dict[str, pa.Array]:
    """Memory-map an Arrow IPC file written by :func:`write_columns`; return its columns (zero-copy)."""
    with pa.memory_map(str(path), "r") as source:
        table = ipc.open_file(source).read_all()
    return {name: (col.chunk(0) if col.num_chunks == 1 else col.combine_chunks())
            for name, col in zip(table.column_names, table.columns, strict=True)}


def int_list_hint(col, i: int) -> np.ndarray | None:
    """Element ``i`` of a list column (``pa.Array`` or ``pa.ChunkedArray``) as a new (k,) int64 array, or None when the
    column is not a list of integers or the element is null or holds a null: for columns that are only a hint (the
    ALM's coupling rows, which ``solver.lp.alm_schur`` checks before use), never a reason to call a file damaged."""
    t = col.type
    if not ((pa.types.is_list(t) or pa.types.is_large_list(t)) and pa.types.is_integer(t.value_type)):
        return None
    item = col[i]
    if not item.is_valid or item.values.null_count:
        return None
    return np.asarray(item.values.to_numpy(zero_copy_only=False), dtype=np.int64).copy()


def to_numpy(arr: pa.Array, dtype: str) -> np.ndarray:
    """Arrow column -> numpy array of ``dtype`` ('object' for names, 'bool' stored as uint8).

    Numeric columns without nulls are zero-copy (read-only when memory-mapped)."""
    if dtype == "object":
        return arr.to_numpy(zero_copy_only=False).astype(object, copy=False)
    out = arr.to_numpy(zero_copy_only=True)
    if dtype == "bool":
        return out.view(np.bool_)
    return out


def _differs(new: np.ndarray, base: np.ndarray) -> np.ndarray:
    """Positions where two equal-length arrays differ bitwise (floats compared as integers: NaN, -0.0 safe)."""
    if new.dtype.kind == "f":
        width = {8: np.int64, 4: np.int32}[new.dtype.itemsize]
        return np.flatnonzero(new.view(width) != base.view(width))
    if new.dtype == np.bool_:
        return np.flatnonzero(new.view(np.uint8) != base.view(np.uint8))
    return np.flatnonzero(new != base)


@dataclass
class StoredArray:
    """Where one array field of a generation lives (kept in ``problem/meta.json``).

    Attributes:
        length: number of entries of the array.
        dtype: 'float64', 'int64', 'int32', 'bool' or 'object' (strings).
        patch: True when ``<field>.patch.arrow`` exists.
        patch_entries: number of positions in the patch.
        written_bytes: bytes this generation wrote for the field (0 when everything was linked).
        seconds: wall seconds the save of this field took (comparison against the base included).
    """

    length: int
    dtype: str
    patch: bool = False
    patch_entries: int = 0
    written_bytes: int = 0
    seconds: float = 0.0

    def to_json(self) -> dict:
        return {"length": self.length, "dtype": self.dtype, "patch": self.patch,
                "patch_entries": self.patch_entries}

    @classmethod
    def from_json(cls, d: dict) -> StoredArray:
        return cls(length=int(d["length"]), dtype=str(d["dtype"]), patch=bool(d["patch"]),
                   patch_entries=int(d.get("patch_entries", 0)))


def _dtype_name(values: np.ndarray) -> str:
    if values.dtype == object or values.dtype.kind == "U":
        return "object"
    return str(values.dtype)


def save_array(folder: str, field: str, values: np.ndarray, prev_folder: str | None,
               prev: StoredArray | None, prev_base: np.ndarray | None, changed: bool) -> StoredArray:
    """Store ``values`` as field ``field`` in ``folder`` (see :func:`_save_array`); times the save."""
    t = time.perf_counter()
    out = _save_array(folder, field, values, prev_folder, prev, prev_base, changed)
    out.seconds = time.perf_counter() - t
    return out


def _save_array(folder: str, field: str, values: np.ndarray, prev_folder: str | None,
                prev: StoredArray | None, prev_base: np.ndarray | None, changed: bool) -> StoredArray:
    """Store ``values`` as field ``field`` in ``folder``, sharing files with the previous generation.

    Args:
        folder: the new generation's ``problem/`` folder (being written).
        field: array name (file stem).
        values: (k,) the array's current content.
        prev_folder: the previous generation's ``problem/`` folder, or None (write in full).
        prev: how the previous generation stored this field, or None.
        prev_base: (k0,) the previous generation's *base* array (memory-mapped), or None.
        changed: False when the caller knows the array is identical to the previous generation's
            (from ``solver.differential.ApplyInfo``): both files are hard-linked, nothing is compared.
    Returns:
        The StoredArray entry for ``meta.json``.
    """
    dtype = _dtype_name(values)
    n = int(values.shape[0])
    base_path = os.path.join(folder, f"{field}.arrow")
    patch_path = os.path.join(folder, f"{field}.patch.arrow")
    usable = prev is not None and prev_folder is not None and prev.dtype == dtype
    if usable and not changed and prev.length == n:
        link_or_copy(os.path.join(prev_folder, f"{field}.arrow"), base_path)
        if prev.patch:
            link_or_copy(os.path.join(prev_folder, f"{field}.patch.arrow"), patch_path)
        return StoredArray(length=n, dtype=dtype, patch=prev.patch, patch_entries=prev.patch_entries)
    if usable and prev_base is not None and n >= PATCH_MIN_LENGTH:
        k = min(n, int(prev_base.shape[0]))
        budget = int(PATCH_MAX_FRACTION * n)
        if n - k <= budget:
            vals = values if dtype != "object" else np.asarray(values, dtype=object)
            idx = _differs(vals[:k], prev_base[:k])
            if idx.size + (n - k) <= budget:
                if n > k:
                    idx = np.concatenate([idx, np.arange(k, n, dtype=np.int64)])
                link_or_copy(os.path.join(prev_folder, f"{field}.arrow"), base_path)
                size = 0
                # a shrunk array needs its patch record even with no changed entry: the linked base is longer
                # than the array, and a patch-less entry must match its base's length exactly (load_array)
                patch = bool(idx.size) or n != int(prev_base.shape[0])
                if patch:
                    size = write_columns(patch_path, {"idx": idx.astype(np.int64), "v": vals[idx]})
                return StoredArray(length=n, dtype=dtype, patch=patch, patch_entries=int(idx.size),
                                   written_bytes=size)
    size = write_columns(base_path, {"v": values})
    return StoredArray(length=n, dtype=dtype, written_bytes=size)


def stored_names(folder: str, field: str, stored: StoredArray):
    """The Arrow copy of a name field as stored (``large_string``, memory-mapped: no conversion of Python
    strings), equal to what :func:`load_array` returns for it: the base array itself when the field has no
    patch, else a zero-argument function that builds it (the base and the patch's names gathered with one
    ``Array.take``, which imports ``pyarrow.compute``: called only when a delta's names are looked up).
    None for a field that is not a name array.

    ``solver.differential.names`` resolves a delta's names against it with ``pyarrow.compute.index_in``
    instead of building a name -> position dict in Python (Sia 10,240 GPUs, 259k names: 0.13 s per step
    process for the dict and its look-ups).

    Raises:
        OSError / pyarrow.ArrowInvalid: a missing or damaged file (as :func:`load_array`).
    """
    if stored.dtype != "object":
        return None
    base = read_columns(os.path.join(folder, f"{field}.arrow"))["v"]
    if not pa.types.is_large_string(base.type):
        return None
    if not stored.patch:
        return base if len(base) == stored.length else None
    cols = read_columns(os.path.join(folder, f"{field}.patch.arrow"))
    idx, vals = to_numpy(cols["idx"], "int64"), cols["v"]
    n = stored.length
    if not pa.types.is_large_string(vals.type) or idx.shape[0] != stored.patch_entries:
        return None

    def build() -> pa.Array:
        # positions of the merged [base, patch values]: the base's own entry unless the patch replaces it (every
        # position at or past the base's length is in the patch: _save_array writes them)
        take = np.arange(n, dtype=np.int64)
        take[idx] = len(base) + np.arange(idx.shape[0], dtype=np.int64)
        return pa.concat_arrays([base, vals]).take(pa.array(take))

    return build


def private_view(path: str, dtype: str) -> np.ndarray | None:
    """A writable numpy view of column ``v`` of the Arrow IPC file at ``path``, mapped copy-on-write.

    Args:
        path: a file :func:`write_columns` wrote. dtype: its stored dtype (numeric or 'bool').
    Returns:
        The (n,) array (C-contiguous, aligned, writable; writes stay in this process), or None where a view
        cannot be made (object/string columns, nulls, several chunks, an empty column): the caller copies.
    Raises:
        OSError / pyarrow.ArrowInvalid: a missing or damaged file.
    """
    if dtype == "object":
        return None
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return None
        mm = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY)
    raw = np.frombuffer(mm, dtype=np.uint8)
    col = ipc.open_file(pa.py_buffer(mm)).read_all().column("v")
    if col.num_chunks != 1 or col.null_count or len(col) == 0:
        return None
    arr = col.chunk(0)
    np_type = np.dtype(arr.type.to_pandas_dtype())
    start = arr.buffers()[1].address - raw.ctypes.data + arr.offset * np_type.itemsize
    end = start + len(arr) * np_type.itemsize
    if start < 0 or end > raw.shape[0] or start % np_type.itemsize:
        return None
    out = raw[start:end].view(np_type)
    return out.view(np.bool_) if dtype == "bool" else out


def load_array(folder: str, field: str, stored: StoredArray) -> tuple[np.ndarray, np.ndarray]:
    """Load field ``field`` of a generation.

    Returns:
        (values, base): values (length ``stored.length``, always writable) and the memory-mapped base
        array (used by the next save to compute its patch). Numeric ``values`` is a copy-on-write view of
        the base's file (:func:`private_view`; a copy where none can be made) with the patch written into
        it: kernels see one array type whatever a delta patched, and writing it never changes ``base``.
    Raises:
        OSError / pyarrow.ArrowInvalid: a missing or damaged file (the caller turns it into StateError).
    """
    path = os.path.join(folder, f"{field}.arrow")
    base = to_numpy(read_columns(path)["v"], stored.dtype)
    n = stored.length
    if not stored.patch and base.shape[0] != n:
        raise ValueError(f"{field}: stored array has {base.shape[0]} entries, expected {n}")
    if base.flags.writeable:  # strings: their own object array already
        out = base if not stored.patch else None
    else:
        view = private_view(path, stored.dtype) if n <= base.shape[0] else None
        out = view[:n] if view is not None else None
    if not stored.patch:
        return (out if out is not None else base.copy()), base
    cols = read_columns(os.path.join(folder, f"{field}.patch.arrow"))
    idx = to_numpy(cols["idx"], "int64")
    vals = to_numpy(cols["v"], stored.dtype)
    if idx.shape[0] != stored.patch_entries:
        raise ValueError(f"{field}: patch has {idx.shape[0]} entries, expected {stored.patch_entries}")
    if out is None:
        out = np.empty(n, dtype=object if stored.dtype == "object" else base.dtype)
        k = min(n, base.shape[0])
        out[:k] = base[:k]
    out[idx] = vals
    return out, base
