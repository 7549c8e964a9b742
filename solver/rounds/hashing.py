"""SHA-256 identities of delta files and in-memory deltas: a round's ``delta_sha256`` (what makes a
re-applied delta a no-op) and a round 0's ``base_sha256``."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pyarrow as pa

from solver.model.delta import Delta


def file_sha256(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a file's bytes (read in 1 MiB blocks).

    Raises:
        OSError: the file cannot be read.
    """
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


def delta_hash(delta: Delta | str | os.PathLike) -> str:
    """:func:`delta_sha256` of a Delta, :func:`file_sha256` of a delta file (``"-"``: of the bytes on
    standard input, ``formats.parquet.stdin_bytes``, so the same delta piped or given as a file is the same
    round's delta).

    Raises:
        InputError: the path does not exist (kind ``input``, as a missing base or problem file).
        FormatError: the path is a directory.
    """
    if isinstance(delta, Delta):
        return delta_sha256(delta)
    if str(delta) == "-":
        from formats.parquet import stdin_bytes

        return hashlib.sha256(stdin_bytes()).hexdigest()
    from formats.io import check_regular_file

    path = Path(delta)
    check_regular_file(path, "delta file")  # missing: InputError; a folder, a pipe (<(cmd)): FormatError
    return file_sha256(path)
