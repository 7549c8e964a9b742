"""Read and write problems and deltas by file extension.

| extension | reader / writer |
|---|---|
| ``.mps``, ``.mps.gz`` (any letter case) | ``formats.mps`` (through highspy) |
| ``.parquet``, ``.pq`` | ``formats.parquet`` (the long format of docs/DESIGN.md "Delta and problem files") |

Anything else raises ``UsageError`` (exit code 2) naming the path and the accepted extensions.
"""

from __future__ import annotations

import os

from formats.parquet import (
    problem_to_delta,
    read_delta,
    read_problem_parquet,
    write_delta,
    write_problem_parquet,
)
from solver.model.errors import UsageError
from solver.model.problem import Problem

__all__ = ["read_problem", "write_problem", "read_delta", "write_delta", "problem_to_delta", "kind_of"]

_MPS = (".mps", ".mps.gz")
_PARQUET = (".parquet", ".pq")


def kind_of(path: str | os.PathLike) -> str:
    """``"mps"`` or ``"parquet"`` from the file name.

    Raises:
        UsageError: any other extension.
    """
    low = str(path).lower()
    if low.endswith(_MPS):
        return "mps"
    if low.endswith(_PARQUET):
        return "parquet"
    raise UsageError(f"cannot tell the format of {str(path)!r} from its extension "
                     "(use .mps, .mps.gz or .parquet)", file=str(path))


def read_problem(path: str | os.PathLike) -> Problem:
    """Read a full problem from MPS (``.mps``/``.mps.gz``) or Parquet (``.parquet``).

    Raises:
        UsageError: unknown extension. InputError (FormatError, ValidationError, UnsupportedError):
        the file is missing, unreadable or breaks a rule; the error names the file, line/row, entity.
    """
    if kind_of(path) == "mps":
        from formats.mps import read_mps

        return read_mps(path)
    return read_problem_parquet(path)


def write_problem(problem: Problem, path: str | os.PathLike) -> None:
    """Write ``problem`` as MPS (free format, gzip for ``.gz``) or as a Parquet problem file.

    Raises:
        UsageError: unknown extension. InputError: the file cannot be written.
    """
    if kind_of(path) == "mps":
        from formats.mps import write_mps

        write_mps(problem, path)
    else:
        write_problem_parquet(problem, path)
