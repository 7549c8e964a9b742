"""Read and write problems and deltas by file extension.

| extension | reader / writer |
|---|---|
| ``.mps``, ``.mps.gz`` (any letter case) | ``formats.mps`` (through highspy) |
| ``.parquet``, ``.pq`` | ``formats.parquet`` (the long format of docs/DESIGN.md "Delta and problem files") |

Anything else raises ``UsageError`` (exit code 2) naming the path and the accepted extensions.

Writers never follow what is at the destination: the file is written to a new temporary file in the same
folder and renamed over the destination (``formats.atomic``), so a symbolic link planted there is replaced,
its target untouched. A write refused by the machine (permission, read-only file system, disk full) raises
``EnvironmentFaultError`` (exit code 7) naming the destination.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from typing import TYPE_CHECKING

from solver.model.errors import EnvironmentFaultError, InputError, UsageError

if TYPE_CHECKING:
    from solver.model.delta import Delta
    from solver.model.problem import Problem

# formats.parquet (pyarrow.parquet, pyarrow.compute) and formats.mps (HiGHS) are imported by the function
# that uses them: `copter export -o x.mps` needs no Parquet (issue #15: start-up)
_FROM_PARQUET = ("problem_to_delta", "read_delta", "read_problem_parquet")


def __getattr__(name: str):
    """The re-exported readers of ``formats.parquet`` (:data:`_FROM_PARQUET`), imported on first use."""
    if name in _FROM_PARQUET:
        from formats import parquet

        return getattr(parquet, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["read_problem", "write_problem", "read_delta", "write_delta", "problem_to_delta",  # noqa: F822 (lazy)
           "kind_of"]

_MPS = (".mps", ".mps.gz")
_PARQUET = (".parquet", ".pq")


def kind_of(path: str | os.PathLike) -> str:
    """``"mps"`` or ``"parquet"`` from the file name.

    Raises:
        UsageError: any other extension, and ``-`` (standard input, which only ``copter step -`` reads; no
            command writes a model file to standard output). FormatError: a directory without a model extension
            (named as one, with a hint when it holds Parquet files), as ``check_regular_file`` says.
    """
    if str(path) == "-":  # only `copter step -` reads standard input (a delta's Parquet bytes); nothing writes to it
        raise UsageError("'-' is not a file name here: copter reads standard input only in `copter step -` (a "
                         "delta's Parquet bytes) and writes no model or delta file to standard output; give this "
                         "file by name (.mps, .mps.gz or .parquet)", file="-")
    low = str(path).lower()
    if low.endswith(_MPS):
        return "mps"
    if low.endswith(_PARQUET):
        return "parquet"
    if os.path.isdir(path):  # e.g. the examples' output folder given as the model (error path only)
        from solver.model.errors import FormatError

        raise FormatError(f"is a directory, not a model file (.mps, .mps.gz or .parquet){_dataset_hint(path, False)}",
                          file=str(path))
    raise UsageError(f"cannot tell the format of {str(path)!r} from its extension "
                     "(use .mps, .mps.gz, .parquet or .pq)", file=str(path))


def check_regular_file(path: str | os.PathLike, what: str = "file") -> None:
    """Refuse a path that is not an existing regular file (symbolic links followed), naming what it is.

    Args:
        path: the file to read; ``what``: how the message names it (``"file"``, ``"delta file"``).
    Raises:
        InputError: nothing exists there ("``what`` not found"). FormatError: it is a directory, a pipe
            (FIFO, e.g. bash's ``<(cmd)``), a socket or a device: copter reads an input file more than once
            (hash, checks, rows), which a pipe cannot give; pipe a delta as ``copter step -`` instead; or a
            regular file of size 0 that reads bytes all the same (/proc, /sys: made anew at each read).
    """
    import stat

    from formats.path_words import missing_words
    from solver.model.errors import FormatError

    try:
        st = os.stat(path)
    except OSError:
        words = missing_words(path, what)
        if words is None:
            return  # unreadable (permission, I/O): the reader's own error names it
        raise InputError(words, file=str(path)) from None
    mode = st.st_mode
    if stat.S_ISREG(mode):
        if st.st_size == 0 and _has_bytes(path):
            # /proc/self/status as a delta read "the delta file changed while copter read it (another program is
            # still writing ...)": a virtual file's content is made at each read (helper-194)
            raise FormatError(f"reports a size of 0 yet has content: a virtual file (as /proc's and /sys's are, made "
                              f"anew at each read), not a regular {what}: write it to a file first", file=str(path))
        return
    if stat.S_ISDIR(mode):
        raise FormatError(f"is a directory, not a {what}{_dataset_hint(path, what == 'delta file')}", file=str(path))
    from formats.regular import what_it_is

    raise FormatError(f"is {what_it_is(mode)}, not a regular {what}: copter reads it more than once; write it to a file "
                      "first (a delta can also be piped on standard input: `copter step -`)", file=str(path))


def _has_bytes(path: str | os.PathLike) -> bool:
    """True when a file whose size reads 0 gives a byte all the same (a virtual file); False when it is empty or
    cannot be read (the reader's own error then names it)."""
    try:
        with open(path, "rb") as fh:
            return bool(fh.read(1))
    except OSError:
        return False


def _dataset_hint(folder: str | os.PathLike, delta: bool = True) -> str:
    """For a folder holding Parquet files (a dataset folder, as Spark writes ``delta.parquet/part-*.parquet``):
    ``"; it holds N Parquet files ..."`` with how to join them into one file, else "" (error path only). A stream's
    folder (``examples/*/generate.py``: ``base.parquet``, ``delta_0001.parquet``, ...) gets, for a delta
    (``delta``), the batch step of its deltas, and for a model, its base: the join advice was wrong for it (a
    user's trial, session 36)."""
    import shlex

    try:
        parts = [e.name for e in os.scandir(folder) if e.name.lower().endswith((".parquet", ".pq"))]
    except OSError:
        return ""
    if not parts:
        return ""
    deltas = sorted(n for n in parts if n.lower().startswith("delta"))
    base = sorted(n for n in parts if n.lower().startswith("base"))
    if deltas and delta:
        first = deltas[0]
        glob = shlex.quote(os.fspath(folder)) + "/delta*" + os.path.splitext(first)[1]
        return (f"; it holds {len(deltas)} delta file(s) ({first}{', ...' if len(deltas) > 1 else ''}): `copter step "
                f"{glob}` applies them in order, one round each")
    if base and not delta:
        return f"; it holds a stream's base: {shlex.quote(os.path.join(os.fspath(folder), base[0]))}"
    return (f"; it holds {len(parts)} Parquet file(s) ({sorted(parts)[0]}{', ...' if len(parts) > 1 else ''}): a "
            "dataset folder, as Spark writes one; copter reads one file, so join them, e.g. "
            "pyarrow.parquet.write_table(pyarrow.parquet.read_table(FOLDER), 'delta.parquet')")


def read_problem(path: str | os.PathLike) -> Problem:
    """Read a full problem from MPS (``.mps``/``.mps.gz``) or Parquet (``.parquet``).

    Raises:
        UsageError: unknown extension. InputError (FormatError, ValidationError, UnsupportedError):
        the file is missing, unreadable or breaks a rule; the error names the file, line/row, entity.
    """
    kind = kind_of(path)
    check_regular_file(path, "MPS file" if kind == "mps" else "Parquet file")
    if kind == "mps":
        from formats.mps import read_mps

        return read_mps(path)
    from formats.parquet import read_problem_parquet

    return read_problem_parquet(path)


def write_problem(problem: Problem, path: str | os.PathLike, meta: dict | None = None) -> None:
    """Write ``problem`` as MPS (free format, gzip for ``.gz``) or as a Parquet problem file, through a
    temporary file renamed over ``path`` (see the module docstring). ``meta``: further Parquet schema metadata
    (``copter export``'s ``copter.round``); an MPS file has no place for it and gets none.

    Raises:
        UsageError: unknown extension. EnvironmentFaultError: the machine refused the write.
        InputError: the file cannot be written otherwise (e.g. its folder does not exist), or (MPS) a name
        free-format MPS cannot hold.
    """
    kind = kind_of(path)
    if kind != "mps":
        _parquet_can_hold(problem, path)
    with _writing(path) as tmp:
        if kind == "mps":
            from formats.mps import write_mps

            write_mps(problem, tmp, gzip_name=os.path.basename(path))  # the gzip header names the file, not tmp
        else:
            from formats.parquet import write_problem_parquet

            write_problem_parquet(problem, tmp, meta)


def _parquet_can_hold(problem: Problem, path) -> None:
    """Refuse a model with an empty box (a column or row whose lower bound exceeds its upper one) before a Parquet
    problem file of it is written: copter's Parquet reader refuses such a file (docs/formats.md "MPS conventions"), and
    ``convert`` / ``export`` wrote it all the same, exit 0 (hunt 50, helper-194). MPS holds it (an infeasible model).

    Raises:
        ValidationError: naming the first such column (else row) and its bounds; nothing is written.
    """
    import numpy as np

    from solver.model.errors import ValidationError

    for is_var, lower, upper, names in ((True, problem.col_lower, problem.col_upper, problem.col_names),
                                        (False, problem.row_lower, problem.row_upper, problem.row_names)):
        bad = np.flatnonzero(lower > upper)
        if bad.size:
            i = int(bad[0])
            what = "variable" if is_var else "constraint"
            more = f" (and {bad.size - 1} more)" if bad.size > 1 else ""
            raise ValidationError(
                f"{what} {names[i]!r} has lower bound {lower[i]} > upper bound {upper[i]}{more}: a Parquet problem "
                "file cannot hold an empty box (copter's reader refuses it); write MPS instead, which holds it as "
                "an infeasible model", file=str(path), entity=str(names[i]))


def write_delta(delta: Delta, path: str | os.PathLike) -> None:
    """Write a delta as Parquet (``formats.parquet.write_delta``) through a temporary file renamed over
    ``path`` (see the module docstring).

    Raises:
        EnvironmentFaultError: the machine refused the write. InputError: the folder does not exist.
    """
    from formats import parquet

    with _writing(path) as tmp:
        parquet.write_delta(delta, tmp)


@contextmanager
def _writing(path: str | os.PathLike):
    """A temporary file next to ``path`` (same extension, so writers choose the same format), renamed over
    ``path`` when the block succeeds; errors become typed (environment faults: exit 7)."""
    from formats import undo
    from formats.atomic import replacing
    from formats.faults import as_environment_fault, is_environment_fault

    low = str(path).lower()
    suffix = next((e for e in (*_MPS, *_PARQUET) if low.endswith(e)), "")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        from formats.path_words import folder_words

        raise InputError(f"folder {folder} {folder_words(folder)}", file=str(path))
    try:
        with replacing(path, suffix=suffix) as tmp:
            yield tmp
        undo.wrote(str(path))  # complete under its name: a later error (stdout closed) says so
    except OSError as err:
        if is_environment_fault(err):
            raise as_environment_fault(err, path, destination=True) from err
        raise InputError(f"cannot write ({err.strerror or err})", file=str(path)) from err
    except EnvironmentFaultError as err:  # raised by a writer on the temporary file: name the destination
        err.file = str(path)
        raise
    except InputError as err:
        # the format writers report their own OSError as InputError (raised "from None", so the OS error is
        # the context): a machine fault is still exit 7; either names the destination, not the temp file
        cause = err.__cause__ or err.__context__
        if is_environment_fault(cause):
            raise as_environment_fault(cause, path, destination=True) from err
        err.file = str(path)
        raise
