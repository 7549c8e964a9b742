"""Parquet long format for deltas and full problems (docs/DESIGN.md "Delta and problem files").

One table serves both: a problem file is a delta applied to the empty problem. Columns: ``kind``
(``var``/``con``/``coef``/``drop_var``/``drop_con``), ``var``, ``con`` (names), ``value`` (cost of a
``var`` row, coefficient of a ``coef`` row), ``lower``, ``upper`` (bounds), ``integer`` (bool).

Reading normalizes what different writers produce: name/kind columns as string, large_string or
dictionary (kept dictionary-encoded in memory: lookups go through the dictionary); a column of Arrow
type ``null`` (pandas writes one when every value is missing); integer or float32 numeric columns
(cast to float64; float16 is a ``FormatError``: 3 significant digits and an overflow to infinity would be read
as the number the writer meant); decimal numeric columns (to the nearest float64 of each decimal value); an integer-typed ``integer`` column holding 0/1 (another value, e.g. 2, is a
``ValidationError`` naming the row, not a silent True); a missing optional column (all null); a
zero-row file with a ``kind`` column (a no-change delta; a file without ``kind``, even one with no
columns at all, is a ``FormatError``). Null
means "keep / default"; NaN is an error (pandas writes a missing float as null, numpy-built Arrow
arrays keep NaN: both arrive here distinctly). A column that is none of these is a ``FormatError``
naming it (a misspelled ``Value`` would otherwise drop the update silently); only a pandas index column
(listed in the ``pandas`` metadata's ``index_columns``, or named ``__index_level_N__``) is ignored.

Key-value metadata: ``copter.format`` = ``delta`` | ``problem`` (a reader refuses the other kind:
:func:`read_delta` a problem, :func:`read_problem_parquet` a delta; a file without it is a delta, and a
problem unless it drops entities or names a base round; a ``problem`` naming a base round is refused), ``copter.version`` = ``1`` (another
version is refused), optional ``copter.sense`` = ``min`` | ``max``, ``copter.objective_offset``
(a finite decimal number in ASCII, ``[+-]digits[.digits][e[+-]digits]``, written with ``repr`` so it
round-trips exactly: ``"1_0"``, ``" 5 "`` or Arabic digits are a ``FormatError``, not a silent
``float()``), ``copter.base_round`` (ASCII digits
``[0-9]+`` only, leading zeros allowed, at most 18 significant digits: ``" 2"``, ``"+2"``, ``"2_0"``,
``"²"`` or a 5000-digit number are a ``FormatError`` naming the key, not a silent ``int()``). Other keys are kept in ``Delta.meta``
(e.g. ``copter.round``, the round a ``copter export`` problem file holds: ``formats.exported_round``), but
another ``copter.``-prefixed key (a misspelt ``copter.offset``, ``copter.Sense``) is a ``FormatError`` naming it.

Errors: a missing file, or one that is not Parquet (truncated, still being written) -> ``FormatError``
naming the file, with a hint when it looks like an MPS model or a CSV/text table (or another table format:
``formats/other_format_hints.py``); a column of the wrong type, a column name that appears twice, or bad metadata ->
``FormatError``; a ``var``/``con`` name with an ASCII control character (``\\x00``-``\\x1f``,
``\\x7f``) -> ``ValidationError`` naming the row and the name (MPS export would cut or refuse it and
two names could collide), or a ``kind``/``var``/``con`` value whose bytes are not UTF-8 -> ``ValidationError``
naming the column and row; rule violations are
found when applying (``solver.differential``) and raise ``ValidationError`` naming the 0-based table
row(s) and the entity.

Problem files are written vectorised: the ``var``/``con`` columns are dictionary-encoded over the
problem's own name arrays (var rows, then con rows, then one coef row per nonzero in CSC order), so
no name string is repeated per nonzero and reading resolves coefficient names with one hash of the
dictionaries.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from formats.number_text import DECIMAL, DIGITS, ROUND_DIGITS
from formats.other_format_hints import parquet_damage_hint, sniffed_hint
from solver.differential.parse import plain as _plain
from solver.model.delta import KINDS, SCHEMA, Delta, sense_value
from solver.model.errors import FormatError, InputError, UsageError, ValidationError
from solver.model.problem import Problem

FORMAT_VERSION = "1"
_PANDAS_INDEX = re.compile(r"__index_level_[0-9]+__")
STDIN = "-"  #: a delta path meaning "the Parquet bytes on standard input" (``copter step -``)
_NUMERIC = ("value", "lower", "upper")
_STDIN_BYTES: list[bytes] = []  # standard input, read once per process (stdin_bytes)


def stdin_bytes() -> bytes:
    """All of standard input's bytes, read on the first call and kept for the process: the delta ``-``
    is both hashed (``solver.rounds.hashing.delta_hash``) and read (:func:`read_delta`).

    Raises:
        InputError: standard input was closed when the process started (``copter step - <&-``: Python's
            ``sys.stdin`` is None), naming ``-``. UsageError: standard input is a terminal (``copter step -`` typed
            without a pipe waited for end-of-file, silent, until Ctrl-D, then read the typed text as Parquet).
    """
    if not _STDIN_BYTES:
        import sys

        if sys.stdin is None:
            raise InputError("standard input was closed when copter started (<&-): pipe the delta's Parquet "
                             "bytes into it", file=STDIN)
        if sys.stdin.isatty():
            raise UsageError("standard input is a terminal: `copter step -` reads a delta's Parquet bytes piped "
                             "into it (generate-delta | copter step -, or copter step - < delta.parquet); give a "
                             "file by name otherwise", file=STDIN)
        _STDIN_BYTES.append(sys.stdin.buffer.read())
    return _STDIN_BYTES[0]
_CONTROL_CHARS = "[\\x00-\\x1f\\x7f]"


def _meta_get(meta: dict, key: str):
    v = meta.get(key.encode())
    return None if v is None else v.decode("utf-8", errors="replace")


def _normalize(table: pa.Table, path: str) -> pa.Table:
    """Table with exactly the SCHEMA columns in order; names may stay dictionary-encoded.

    Raises:
        FormatError: a duplicated column name, a column of the wrong type. ValidationError: a name with
            a control character (see :func:`_check_name_bytes`).
    """
    n = table.num_rows
    seen: set = set()
    for name in table.column_names:
        if name in seen:
            raise FormatError(f"column {name!r} appears more than once (which one holds the data is "
                              "ambiguous)", file=path, entity=name)
        seen.add(name)
    _check_known_columns(table, path)
    cols = []
    for f in SCHEMA:
        if f.name not in table.column_names:
            if f.name == "kind":  # a zero-row file too: one with no columns at all is not a copter file
                raise FormatError("Parquet file has no 'kind' column (not a copter delta/problem file; a "
                                  "no-change delta has the columns and zero rows)", file=path, entity="kind")
            cols.append(pa.nulls(n, f.type))
            continue
        c = _one_array(table.column(f.name), f.name, path)
        t = c.type
        try:
            if pa.types.is_null(t):
                c = pa.nulls(n, f.type)
            elif f.name in ("kind", "var", "con"):
                if pa.types.is_dictionary(t):
                    vt = t.value_type
                    if pa.types.is_large_string(vt):
                        c = pa.DictionaryArray.from_arrays(c.indices, c.dictionary.cast(pa.string()))
                    elif not pa.types.is_string(vt):
                        raise FormatError(f"column {f.name!r} has type {t}, expected strings", file=path)
                elif pa.types.is_large_string(t) or pa.types.is_string_view(t):
                    c = _as_string(c, f.name, path)
                elif not pa.types.is_string(t):
                    raise FormatError(f"column {f.name!r} has type {t}, expected strings", file=path)
                _check_utf8(c, f.name, path)
                if f.name != "kind":
                    _check_name_bytes(c, f.name, path)
            elif f.name in _NUMERIC:
                if pa.types.is_dictionary(t):
                    c = c.cast(t.value_type)
                    t = c.type
                if pa.types.is_decimal(t):
                    # through the decimal text: pyarrow's decimal->float64 cast is not correctly rounded
                    # (-0.70 became -0.7000000000000001); its string->float64 parse is
                    c = c.cast(pa.string()).cast(pa.float64())
                elif pa.types.is_float16(t):
                    raise FormatError(
                        f"column {f.name!r} is float16 (half precision: about 3 significant digits, largest finite "
                        "value 65504, so 0.1 reads as 0.0999755859375 and a capacity of 70000 as infinite): write "
                        "it as float64 (or float32)", file=path, entity=f.name)
                elif pa.types.is_integer(t) and t.bit_width == 64:
                    c = _exact_float64(c, f.name, path, table)
                elif pa.types.is_floating(t) or pa.types.is_integer(t):
                    if t != pa.float64():
                        c = c.cast(pa.float64())
                else:
                    raise FormatError(f"column {f.name!r} has type {t}, expected float64{_text_hint(c, f.name)}",
                                      file=path, entity=f.name)
            else:  # integer
                if pa.types.is_boolean(t):
                    pass
                elif pa.types.is_integer(t):
                    c = _int_flags(c, path, table)
                else:
                    raise FormatError(f"column 'integer' has type {t}, expected bool{_text_hint(c, 'integer')}",
                                      file=path, entity="integer")
        except pa.ArrowInvalid as e:
            raise FormatError(f"column {f.name!r} cannot be read as {f.type}: {e}", file=path) from None
        cols.append(c)
    return pa.Table.from_arrays(cols, names=SCHEMA.names)


def _too_much_text(name: str, path: str) -> FormatError:
    return FormatError(f"column {name!r} holds more than 2 GiB of distinct text, more than one Arrow string array "
                       "holds: split the delta into several files (copter step d1 d2 ...)", file=path, entity=name)


def _one_array(col, name: str, path: str):
    """``col`` (a column as read: one chunk per row group, or more) as one Arrow array. A string column of more
    than 2 GiB of text cannot be one ``string`` array (its int32 offsets overflow: pyarrow's concatenation raised
    ArrowInvalid, exit 1): it is dictionary-encoded chunk by chunk instead (names repeat across coef rows, so the
    dictionary is far smaller), which every reader downstream accepts.

    Raises:
        FormatError: even the distinct names exceed 2 GiB, naming the column.
    """
    try:
        return _plain(col)
    except (pa.ArrowInvalid, pa.ArrowCapacityError):
        t = col.type
        if not (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)):
            raise
    try:
        return _plain(pa.chunked_array([ch.dictionary_encode() for ch in col.chunks]))
    except (pa.ArrowInvalid, pa.ArrowCapacityError):
        raise _too_much_text(name, path) from None


def _as_string(c, name: str, path: str):
    """A ``large_string``/``string_view`` name column (Polars writes large strings) as ``string``, or, beyond the
    2 GiB of text one ``string`` array holds (the cast failed: "input array too large", exit 3), dictionary-encoded
    over ``string`` values (:func:`_one_array`'s rule).

    Raises:
        FormatError: even the distinct names exceed 2 GiB, naming the column.
    """
    try:
        return c.cast(pa.string())
    except (pa.ArrowInvalid, pa.ArrowCapacityError):
        pass
    enc = c.dictionary_encode()
    try:
        return pa.DictionaryArray.from_arrays(enc.indices, enc.dictionary.cast(pa.string()))
    except (pa.ArrowInvalid, pa.ArrowCapacityError):
        raise _too_much_text(name, path) from None


def _text_hint(c, column: str) -> str:
    """For a text column where numbers or flags belong: ``"; it holds text such as '-3' ..."`` with the conversion,
    else "" (a CSV's quoted numbers, or a table read without type inference, arrive as strings)."""
    if not (pa.types.is_string(c.type) or pa.types.is_large_string(c.type) or pa.types.is_string_view(c.type)):
        return ""
    valid = c.drop_null()
    shown = f" such as {valid[0].as_py()[:40]!r}" if len(valid) else ""
    fix = (f"df[{column!r}].map({{'true': True, 'false': False}})" if column == "integer"
           else f"pandas.to_numeric(df[{column!r}])")
    return (f"; it holds text{shown} (quoted numbers in a CSV, or a table read without type inference): convert it "
            f"before writing the Parquet file, e.g. {fix}")


def _pandas_index_columns(table: pa.Table) -> set:
    """Names of the index columns pandas wrote (its ``pandas`` schema metadata), if any; none when that metadata
    is malformed (another writer's), so an unknown column is then refused by name, not an internal error."""
    raw = (table.schema.metadata or {}).get(b"pandas")
    if raw is None:
        return set()
    import json

    try:
        return {c for c in json.loads(raw).get("index_columns", []) if isinstance(c, str)}
    except (ValueError, AttributeError, TypeError):  # not JSON, not an object, index_columns not a list (null)
        return set()


def _check_known_columns(table: pa.Table, path: str) -> None:
    """Refuse a column that is not in the schema (a pandas index column excepted).

    Raises:
        FormatError: naming the column (and the schema column it differs from only in letter case).
    """
    known = set(SCHEMA.names)
    extra = [c for c in table.column_names if c not in known and not _PANDAS_INDEX.fullmatch(c)]
    if extra:
        extra = [c for c in extra if c not in _pandas_index_columns(table)]
    if extra:
        name = extra[0]
        near = [k for k in SCHEMA.names if k.lower() == name.strip().lstrip("\ufeff").lower()]  # a CSV's BOM too
        why = ("the name starts with a byte-order mark: read the CSV with encoding='utf-8-sig'"
               if name.startswith("\ufeff") else "column names are case-sensitive")
        hint = f"; did you mean {near[0]!r}? ({why})" if near else ""
        raise FormatError(f"unknown column {name!r}: a copter delta/problem file has the columns "
                          f"{', '.join(SCHEMA.names)}{hint}; an unknown column would be dropped without a word",
                          file=path, entity=name)


def _check_utf8(c, column: str, path: str) -> None:
    """Refuse a string column (plain, or its dictionary) holding bytes that are not UTF-8: a Parquet writer can
    store any bytes as a string column (an encoding mix-up, a C/Java writer), which pyarrow reads without a check
    and which failed later as an internal error (exit 1). One full validation (C, about 8 ms per million strings);
    on failure the first bad element is found by bisection (each step validates half the rest).

    Raises:
        ValidationError: naming the column, the 0-based row of the first such name (None when only an unused
            dictionary entry is bad) and the name (undecodable bytes shown escaped).
    """
    values = c.dictionary if isinstance(c, pa.DictionaryArray) else c
    try:
        values.validate(full=True)
        return
    except pa.ArrowInvalid:
        pass
    lo, hi = 0, len(values)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            values.slice(lo, mid - lo).validate(full=True)
            lo = mid
        except pa.ArrowInvalid:
            hi = mid
    raw = values.cast(pa.binary())[lo].as_py()
    row = lo
    if isinstance(c, pa.DictionaryArray):
        row = int(pc.index(c.indices, pa.scalar(lo, c.indices.type)).as_py())
        row = None if row < 0 else row
    shown = raw.decode("utf-8", "backslashreplace")
    where = "" if row is not None else " (an unused dictionary entry)"
    raise ValidationError(f"column {column!r}: {shown!r}{where} is not UTF-8 text; copter's names and kinds are "
                          "text: write the column from decoded strings (e.g. bytes.decode('latin-1'))",
                          file=path, row=row, entity=shown)


def _may_hold_control_bytes(values) -> bool:
    """False when no byte of a string array's data buffer is an ASCII control character (one numpy pass over the
    bytes: 0.2-1 ms for a Sia 10,240 delta's 163k names, where the RE2 scan took 7.5 ms a column); True otherwise,
    or for another type: the exact scan decides then. UTF-8 never uses bytes below 0x80 inside a multi-byte
    character, so a control byte is a control character; bytes outside the array's slice or in null slots can
    only make this say True."""
    if not (pa.types.is_string(values.type) or pa.types.is_large_string(values.type)):
        return True
    data = values.buffers()[2]
    if data is None:
        return False
    b = np.frombuffer(data, dtype=np.uint8)
    return bool(np.any((b < 32) | (b == 127)))


def _check_name_bytes(c, column: str, path: str) -> None:
    """Refuse a name holding an ASCII control character (``\\x00``-``\\x1f``, ``\\x7f``): MPS export
    would cut or refuse it and two names could collide. Vectorised (RE2 over the dictionary, or over the
    values of a plain column); only the used dictionary entries count.

    Raises:
        ValidationError: naming the 0-based row of the first such name and the name.
    """
    values = c.dictionary if isinstance(c, pa.DictionaryArray) else c
    if not _may_hold_control_bytes(values):
        return
    bad = pc.match_substring_regex(values, _CONTROL_CHARS)
    if not pc.any(bad).as_py():
        return
    if isinstance(c, pa.DictionaryArray):
        bad = pc.is_in(c.indices, value_set=pa.array(np.flatnonzero(
            bad.fill_null(False).to_numpy(zero_copy_only=False)), c.indices.type))
        if not pc.any(bad).as_py():
            return
    row = int(pc.index(bad.fill_null(False), True).as_py())
    name = c[row].as_py()
    code = next(ord(ch) for ch in name if ord(ch) < 32 or ord(ch) == 127)
    raise ValidationError(f"column {column!r}: name {name!r} contains the control character 0x{code:02x}; "
                          "names must be printable", file=path, row=row, entity=name)


_TWO_63 = 2.0 ** 63  # the first float64 above int64's range (and uint64's is 2^64)


def _exact_float64(c, name: str, path: str, table: pa.Table):
    """A 64-bit integer column as float64, every value exactly: an integer above 2^53 that float64 holds (2^60) is
    read; one it does not hold (2^53 + 1) is refused, never rounded. (pyarrow's safe cast refused every value
    beyond 2^53, 2^60 included, naming no row: helper-212; smaller integer types always fit.)

    Raises:
        ValidationError: naming the 0-based row of the first value float64 cannot hold, its entity (the row's ``var``
            or ``con``), the value and the nearest float64.
    """
    ints = c.fill_null(0).to_numpy(zero_copy_only=False)
    f = ints.astype(np.float64)
    top = 2.0 * _TWO_63 if pa.types.is_unsigned_integer(c.type) else _TWO_63
    fits = (f < top) & (f >= -_TWO_63)
    back = np.zeros_like(ints)
    back[fits] = f[fits].astype(ints.dtype)
    bad = ~fits | (back != ints)
    if bad.any():
        row = int(np.argmax(bad))
        who = None
        for side in ("var", "con"):
            if who is None and side in table.column_names:
                who = _plain(table.column(side))[row].as_py()
        raise ValidationError(f"column {name!r} holds the integer {int(ints[row])}, which float64 cannot hold exactly "
                              f"(the nearest is {float(f[row])!r}; float64 holds every integer up to 2^53 and beyond it "
                              "only some): write it as float64 if that value is meant", file=path, row=row, entity=who)
    return pa.array(f, pa.float64(), mask=c.is_null().to_numpy(zero_copy_only=False) if c.null_count else None)


def _int_flags(c, path: str, table: pa.Table):
    """An integer-typed ``integer`` column of ``table`` as bool; a value other than 0/1 is refused, not
    cast to True.

    Raises:
        ValidationError: naming the 0-based row of the first such value and its variable (the row's ``var``).
    """
    bad = pc.and_(pc.is_valid(c), pc.invert(pc.is_in(c, value_set=pa.array([0, 1], c.type))))
    if pc.any(bad).as_py():
        row = int(pc.index(bad, True).as_py())
        var = _plain(table.column("var"))[row].as_py() if "var" in table.column_names else None
        who = "" if var is None else f"variable {var!r}: "
        raise ValidationError(f"{who}column 'integer' holds {c[row].as_py()}; expected 0/1 or true/false",
                              file=path, row=row, entity=var)
    return c.cast(pa.bool_())


_DROP_KINDS = ("drop_var", "drop_con")  # kinds only a delta has: a problem is built from the empty problem


def _first_row_of(kind, values) -> int:
    """0-based row of the first element of the ``kind`` column (plain or dictionary strings) in ``values``,
    or -1; vectorised (through the dictionary when there is one)."""
    kind = _plain(kind)
    vset = pa.array(list(values), pa.string())
    if isinstance(kind, pa.DictionaryArray):
        hit = pc.is_in(kind.dictionary, value_set=vset)
        if not pc.any(hit).as_py():
            return -1
        pos = np.flatnonzero(hit.fill_null(False).to_numpy(zero_copy_only=False))
        mask = pc.is_in(kind.indices, value_set=pa.array(pos, kind.indices.type))
    elif pa.types.is_string(kind.type):
        mask = pc.is_in(kind, value_set=vset)
    else:  # a null-typed (empty) kind column
        return -1
    if not pc.any(mask).as_py():
        return -1
    return int(pc.index(mask.fill_null(False), True).as_py())


def _file_kind(fmt: str | None, expect: str | None, table: pa.Table, base_round, path: str) -> str:
    """The file's kind (``"delta"`` or ``"problem"``), refusing one that is not ``expect``.

    ``copter.format`` decides where present, except that a file claiming ``problem`` while naming a
    ``copter.base_round`` contradicts itself (only a delta has a base round) and is refused wherever a
    problem may be read (``expect`` ``"problem"`` or None). A file without it (written by the user's own pyarrow/pandas)
    fits a delta whatever its rows (a full table upserts everything); read as a problem it fits unless it
    holds ``drop_var``/``drop_con`` rows or a ``copter.base_round``, which only a delta has.

    Args:
        fmt: ``copter.format`` or None; expect: ``"delta"``, ``"problem"`` or None (either kind);
        table: the normalised table; base_round: ``copter.base_round`` or None.
    Raises:
        FormatError: naming the file, its ``copter.format`` (or the rows that show its kind) and what was
            expected.
    """
    if fmt == "problem" and base_round is not None and expect != "delta":
        raise FormatError(f"says copter.format=problem but carries a copter.base_round ({base_round}), which only "
                          "a delta has: a problem file has no base round (remove copter.base_round), a delta "
                          "(copter.format=delta) is applied with `copter step`", file=path, entity="copter.base_round")
    if fmt == "problem" and expect != "delta":
        row = _first_row_of(table.column("kind"), _DROP_KINDS)
        if row >= 0:  # applied to the empty model it said "cannot drop unknown variable" of one the file defines
            kind = _plain(table.column("kind"))[row].as_py()
            raise FormatError(f"says copter.format=problem but holds {kind} rows (the first at row {row}), which only "
                              "a delta has: a problem builds its model from nothing (var, con and coef rows); apply "
                              "a delta (copter.format=delta) with `copter step`", file=path, row=row)
    if fmt is not None:
        if expect is None or fmt == expect:
            return fmt
        if fmt == "problem":
            raise FormatError("is a copter problem (copter.format=problem), not a delta: a problem starts a state "
                              "(`copter init`); `copter step` takes a delta (copter.format=delta; `copter diff OLD "
                              "NEW -o delta.parquet` derives one from two full problems)", file=path)
        raise FormatError("is a copter delta (copter.format=delta), not a problem: use `copter step` to apply it "
                          "to a state (a base for init, solve, convert or diff is a problem file, "
                          "copter.format=problem)", file=path)
    if expect != "problem":
        return "delta"
    if base_round is not None:
        raise FormatError(f"has no copter.format but a copter.base_round ({base_round}), which only a delta has: "
                          "expected a problem (copter.format=problem, or no base round); apply a delta with "
                          "`copter step`", file=path, entity="copter.base_round")
    row = _first_row_of(table.column("kind"), _DROP_KINDS)
    if row >= 0:
        kind = _plain(table.column("kind"))[row].as_py()
        raise FormatError(f"has no copter.format and holds {kind} rows (the first at row {row}), which only a "
                          "delta has: expected a problem (var, con and coef rows, or copter.format=problem); "
                          "apply a delta with `copter step`", file=path, row=row)
    return "problem"


def _tail(path: str, n: int) -> bytes | None:
    """The last ``n`` bytes of ``path`` (of standard input's bytes for :data:`STDIN`); None when unreadable."""
    if path == STDIN:
        return stdin_bytes()[-n:]
    try:
        with open(path, "rb") as fh:
            fh.seek(max(os.fstat(fh.fileno()).st_size - n, 0))
            return fh.read(n)
    except OSError:
        return None


def _head(path: str, n: int) -> bytes | None:
    """The first ``n`` bytes of ``path``, or of standard input's bytes (already read) for :data:`STDIN`; None when
    the file cannot be read."""
    if path == STDIN:
        return stdin_bytes()[:n]
    try:
        with open(path, "rb") as fh:
            return fh.read(n)
    except OSError:
        return None


def _mps_hint(path: str, expect: str | None) -> str:
    """"; it looks like an MPS model: ..." when ``path`` is named ``*.mps`` / ``*.mps.gz`` or starts (standard
    input too: ``generate | copter step -``) with an MPS section (``NAME``, ``ROWS``, a ``*`` comment) or gzip's magic
    bytes, else "": a user who passes ``base.mps`` to ``copter step`` learns which command makes a delta from it."""
    looks = path != STDIN and path.lower().endswith((".mps", ".mps.gz", ".gz"))
    if not looks:
        head = _head(path, 64)
        if head is None:
            return ""
        looks = head.lstrip().startswith((b"NAME", b"ROWS", b"*", b"\x1f\x8b"))
    if not looks:
        return ""
    if expect == "delta":
        return ("; it looks like an MPS model: a round takes a delta Parquet file; write one with "
                "`copter diff OLD NEW -o delta.parquet --base-round N`")
    return "; it looks like an MPS model: `copter convert MODEL.mps MODEL.parquet` writes it as Parquet"


def _csv_hint(path: str) -> str:
    """"; it looks like a CSV/text table: ..." when ``path`` is named ``*.csv``/``*.tsv``/``*.txt`` or its first
    bytes (standard input's too: ``df.to_csv(sys.stdout)`` piped into ``copter step -``) are text with a comma, tab
    or semicolon on the first line, else "": a delta is Parquet, and the hint says how to write one from the same
    table with pandas or pyarrow."""
    looks = path != STDIN and path.lower().endswith((".csv", ".tsv", ".txt"))
    if not looks:
        head = _head(path, 256)
        if head is None:
            return ""
        first = head.split(b"\n", 1)[0]
        looks = bool(first) and all(32 <= b < 127 or b in (9, 13) for b in first) and \
            any(sep in first for sep in (b",", b"\t", b";"))
    if not looks:
        return ""
    return ("; it looks like a CSV/text table: a delta is a Parquet file with the columns kind, var, con, value, "
            "lower, upper, integer (docs/formats.md 'Deltas and problems'): e.g. pandas.read_csv(FILE)"
            ".to_parquet('delta.parquet'), or pyarrow.csv.read_csv + pyarrow.parquet.write_table")


def read_delta(path: str | os.PathLike, expect: str | None = "delta", data: bytes | None = None) -> Delta:
    """Read a delta (or problem) Parquet file.

    Args:
        path: the file; :data:`STDIN` (``"-"``) reads the Parquet bytes from standard input.
        data: the file's bytes, already read by the caller (``solver.rounds.loop``: the bytes it hashed, so the
            round records the hash of what it applied); the file is then not opened again.
        expect: the kind the caller needs: ``"delta"`` (``copter step``), ``"problem"``
            (:func:`read_problem_parquet`) or None (either). A file of the other kind is refused (see
            :func:`_file_kind`: ``copter.format`` where present, else the rows).
    Returns:
        Delta with the normalized table, ``sense``/``offset``/``base_round`` from the metadata, ``format``
        (``copter.format``, else ``expect`` or ``"delta"``) and ``source`` = path. Not validated against a
        problem (see ``solver.differential``).
    Raises:
        InputError: the file does not exist. FormatError: not Parquet (empty standard input included),
            truncated, wrong column types, bad ``copter.*`` metadata, a file of the other kind than ``expect``,
            a ``copter.format=problem`` file with a ``copter.base_round`` (unless ``expect`` is ``"delta"``,
            which refuses any problem).
    """
    path = str(path)
    if path != STDIN and data is None and not os.path.exists(path):
        from formats.path_words import missing_words

        raise InputError(missing_words(path) or "file not found", file=path)
    source = pa.BufferReader(stdin_bytes()) if path == STDIN else pa.BufferReader(data) if data is not None else path
    try:
        # page checksums, where the writer stored them (copter's writers do), are verified: a flipped bit in a
        # data page otherwise reads as another number without a word (one bit of 7.0 read as 458752.0)
        with pq.ParquetFile(source, page_checksum_verification=True) as f:
            table = f.read()  # one chunk per row group (read_table splits into many batches)
    except (pa.ArrowInvalid, pa.ArrowException, OSError, ValueError) as e:
        if path == STDIN and not stdin_bytes():  # `gen | copter step -` whose generator wrote nothing
            raise FormatError("standard input is empty: nothing was piped into `copter step -` (did the command "
                              "that writes the delta fail?)", file=path) from None
        head = _head(path, 4096)
        hint = (parquet_damage_hint(head, _tail(path, 4)) or sniffed_hint(head) or _mps_hint(path, expect)
                or _csv_hint(path))
        if "checksum verification failed" in str(e):
            hint = ("; its bytes were damaged after it was written (a page's checksum does not match its data): "
                    "write or copy it again")
        raise FormatError(f"not a readable Parquet file ({e}){hint}", file=path) from None
    meta = dict(table.schema.metadata or {})
    if any(k.startswith(b"copter.") for k in meta):  # a dict keeps a repeated key's first value: refuse, not pick
        from formats.arrow_metadata import conflicting_keys

        for key, values in conflicting_keys(table.schema, b"copter.").items():
            said = ", ".join(repr(v.decode("utf-8", "replace")) for v in values)
            raise FormatError(f"its Parquet metadata gives {key.decode('utf-8', 'replace')} {len(values)} times with "
                              f"different values ({said}); which one holds is ambiguous (a reader keeps one without a "
                              "word): write each copter.* key once", file=path, entity=key.decode("utf-8", "replace"))
    fmt = _meta_get(meta, "copter.format")  # an empty value is refused below, as every other copter.* key's is
    if fmt is not None and fmt not in ("delta", "problem"):
        raise FormatError(f"copter.format is {fmt!r}, expected 'delta' or 'problem'", file=path)
    ver = _meta_get(meta, "copter.version")
    if ver is not None and ver != FORMAT_VERSION:
        raise FormatError(f"copter.version {ver!r} is not supported (this copter reads version 1)",
                          file=path)
    sense = _meta_get(meta, "copter.sense")
    if sense is not None:
        if sense.lower() not in ("min", "max"):
            raise FormatError(f"copter.sense is {sense!r}, expected 'min' or 'max'", file=path)
        sense = 1 if sense.lower() == "min" else -1
    offset = _meta_get(meta, "copter.objective_offset")
    if offset is not None:
        if not DECIMAL.fullmatch(offset):  # float() would take "1_0", " 5 " and non-ASCII digits
            raise FormatError(f"copter.objective_offset {offset!r} is not a number (ASCII decimal, e.g. -1.5e3)",
                              file=path, entity="copter.objective_offset")
        text, offset = offset, float(offset)
        if offset == 0.0 and any(c in "123456789" for c in text.lower().split("e")[0]):
            # 1e-400 or 2e-324 parse to 0 where 1e-310 is refused as subnormal: a nonzero offset lost without a
            # word (helper-235, session 59)
            raise FormatError(f"copter.objective_offset {text!r} is nonzero but below 2.2e-308 in magnitude, so it reads "
                              "as 0 (an MPS file cannot carry it either); write 0 or rescale",
                              file=path, entity="copter.objective_offset")
        if not abs(offset) < 1e30:  # magnitudes >= 1e30 mean infinity (MPS/HiGHS convention)
            raise FormatError(f"copter.objective_offset {offset!r} is not finite (magnitudes >= 1e30 mean infinity)",
                              file=path, entity="copter.objective_offset")
    base = _meta_get(meta, "copter.base_round")
    if base is not None:
        if not DIGITS.fullmatch(base):  # no sign, space, "_" or non-ASCII digit
            raise FormatError(f"copter.base_round {base!r} is not a round number (ASCII digits 0-9 only)",
                              file=path, entity="copter.base_round")
        digits = base.lstrip("0") or "0"
        if len(digits) > ROUND_DIGITS:  # int() refuses > 4300 digits; no state holds such a round
            raise FormatError(f"copter.base_round {base[:24]!r}{'...' if len(base) > 24 else ''} has "
                              f"{len(digits)} significant digits, more than any round number copter keeps "
                              f"(at most {ROUND_DIGITS})", file=path, entity="copter.base_round")
        base = int(digits)
    known = (*(k.encode() for k in _INTERPRETED), b"ARROW:schema", b"pandas")
    extra = {k.decode("utf-8", "replace"): v.decode("utf-8", "replace") for k, v in meta.items()
             if k not in known}
    _refuse_unknown_copter_keys(extra, path)
    table = _normalize(table, path)
    unmarked = fmt is None
    fmt = _file_kind(fmt, expect, table, base, path)
    return Delta(table=table, sense=sense, offset=offset, base_round=base, format=fmt, meta=extra, source=path,
                 unmarked=unmarked)


#: ``copter.*`` metadata keys copter writes besides the ones :func:`read_delta` interprets (kept in ``Delta.meta``)
PASSED_KEYS = ("copter.round", "copter.name", "copter.generation_id", "copter.problem_sha256",
               "copter.base_problem_sha256")
_INTERPRETED = ("copter.format", "copter.version", "copter.sense", "copter.objective_offset", "copter.base_round")


def _refuse_unknown_copter_keys(extra: dict, path: str) -> None:
    """A ``copter.``-prefixed key (any letter case) copter neither reads nor writes is refused: a misspelt
    ``copter.offset`` or ``copter.Sense`` was kept as an unknown key and the file applied without it (exit 0).
    Keys of other prefixes stay the user's own."""
    import difflib

    for key in extra:
        if key.lower().startswith("copter.") and key not in PASSED_KEYS:
            near = difflib.get_close_matches(key.lower(), (*_INTERPRETED, *PASSED_KEYS), n=1, cutoff=0.6)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise FormatError(f"unknown metadata key {key!r}{hint}: copter reads {', '.join(_INTERPRETED)} and "
                              f"writes {', '.join(PASSED_KEYS)}; a key it does not know would be ignored without a "
                              "word", file=path, entity=key)


def _metadata(delta: Delta) -> dict:
    meta = {"copter.format": delta.format, "copter.version": FORMAT_VERSION}
    sense = sense_value(delta.sense)  # the attribute may have been set after construction
    if sense is None and delta.format == "problem":
        sense = 1  # a problem read back is a minimisation without it: the file says so (helper-219)
    if sense is not None:
        meta["copter.sense"] = "min" if sense == 1 else "max"
    if delta.offset is not None:
        meta["copter.objective_offset"] = repr(float(delta.offset))
    if delta.base_round is not None:
        meta["copter.base_round"] = str(int(delta.base_round))
    for k, v in (delta.meta or {}).items():
        meta.setdefault(str(k), str(v))
    return meta


def write_delta(delta: Delta, path: str | os.PathLike) -> None:
    """Write ``delta`` as Parquet with its ``copter.*`` metadata (temp file + rename: readers never
    see a half-written file).

    Raises:
        InputError: the folder does not exist or is not writable.
    """
    path = str(path)
    table = delta.table.replace_schema_metadata(_metadata(delta))
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        # one row group (up to 64M rows): one dictionary per name column, shared by every read batch
        # page checksums (CRC-32 of each page): a reader that verifies them (read_delta) refuses a damaged file
        pq.write_table(table, tmp, compression="zstd", dictionary_pagesize_limit=1 << 28,
                       row_group_size=max(1, min(table.num_rows, 1 << 26)), write_statistics=False,
                       write_page_checksum=True)
        os.replace(tmp, path)
    except OSError as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise InputError(f"cannot write ({e.strerror or e})", file=path) from None


def problem_to_delta(problem: Problem) -> Delta:
    """The delta that builds ``problem`` from the empty problem (``format="problem"``).

    Rows: n ``var`` rows (cost, bounds, integrality), m ``con`` rows (bounds), then nnz ``coef`` rows
    in CSC order. Name columns are dictionary arrays over ``col_names``/``row_names``: O(n + m + nnz)
    vectorised, no per-nonzero strings.
    """
    n, m, nnz = problem.n_cols, problem.n_rows, problem.nnz
    total = n + m + nnz
    kind_idx = np.concatenate([np.zeros(n, np.int8), np.ones(m, np.int8), np.full(nnz, 2, np.int8)])
    kind = pa.DictionaryArray.from_arrays(pa.array(kind_idx), pa.array(KINDS, pa.string()))
    ecol = np.repeat(np.arange(n, dtype=np.int32), np.diff(problem.a_indptr))
    var_idx = np.concatenate([np.arange(n, dtype=np.int32), np.zeros(m, np.int32), ecol])
    var_mask = np.zeros(total, dtype=bool)
    var_mask[n:n + m] = True
    con_idx = np.concatenate([np.zeros(n, np.int32), np.arange(m, dtype=np.int32),
                              problem.a_indices.astype(np.int32)])
    con_mask = np.zeros(total, dtype=bool)
    con_mask[:n] = True
    var = pa.DictionaryArray.from_arrays(pa.array(var_idx, mask=var_mask),
                                         pa.array(problem.col_names.tolist(), pa.string()))
    con = pa.DictionaryArray.from_arrays(pa.array(con_idx, mask=con_mask),
                                         pa.array(problem.row_names.tolist(), pa.string()))
    value = pa.array(np.concatenate([problem.cost, np.zeros(m), problem.a_data]), mask=var_mask)
    nn = np.zeros(nnz)
    bmask = np.zeros(total, dtype=bool)
    bmask[n + m:] = True
    lower = pa.array(np.concatenate([problem.col_lower, problem.row_lower, nn]), mask=bmask)
    upper = pa.array(np.concatenate([problem.col_upper, problem.row_upper, nn]), mask=bmask)
    imask = np.ones(total, dtype=bool)
    imask[:n] = False
    integer = pa.array(np.concatenate([problem.integrality, np.zeros(m + nnz, bool)]), mask=imask)
    table = pa.Table.from_arrays([kind, var, con, value, lower, upper, integer], names=SCHEMA.names)
    return Delta(table=table, sense=problem.sense, offset=problem.offset, format="problem",
                 meta={"copter.name": problem.name} if problem.name else {})


def write_problem_parquet(problem: Problem, path: str | os.PathLike, meta: dict | None = None) -> None:
    """Write ``problem`` as a Parquet problem file (see :func:`problem_to_delta`); ``meta``: further schema
    metadata keys (``copter export``'s ``copter.round``, ``formats.exported_round``)."""
    delta = problem_to_delta(problem)
    if meta:
        delta.meta = {**delta.meta, **meta}
    write_delta(delta, path)


def delta_to_problem(delta: Delta) -> Problem:
    """Apply a problem delta to the empty problem (sense defaults to min, offset to 0).

    Raises:
        ValidationError: the rules of docs/DESIGN.md "Delta and problem files", naming the row(s) and entity (an empty box
            ``lower > upper`` is an error in copter's own files).
    """
    from solver.differential import apply_delta

    prob, _ = apply_delta(Problem.empty(), delta)
    name = delta.meta.get("copter.name") or (Path(delta.source).stem if delta.source else "")
    return prob.replace(name=name)


def read_problem_parquet(path: str | os.PathLike) -> Problem:
    """Read a Parquet problem file (a delta applied to the empty problem). A file without ``copter.sense`` is a
    minimisation, with a warning (``formats.read_notes.note``) when copter did not write it (no ``copter.format``:
    pandas and pyarrow drop the metadata) unless every cost is 0.

    Raises:
        InputError/FormatError: see :func:`read_delta` (a delta file, by its ``copter.format`` or its
            ``drop_*`` rows, is a FormatError); ValidationError: see :func:`delta_to_problem`.
    """
    delta = read_delta(path, expect="problem")
    problem = delta_to_problem(delta)
    if delta.unmarked and delta.sense is None and problem.cost.any():
        from formats.read_notes import note

        # a maximisation written by pandas or pyarrow.Table.from_* (which drop a file's metadata) read as a
        # minimisation without a word: the right objective of the wrong model (a TE ring's max flow: 0)
        note(sense_note(path))
    return problem


def sense_note(path: str | os.PathLike) -> str:
    """The warning :func:`read_problem_parquet` gives a problem file without ``copter.sense`` (``copter diff``
    drops it for NEW, whose missing sense keeps OLD's)."""
    return (f"{path}: has no copter.sense metadata, so its objective is minimised; if the model maximises, write "
            "copter.sense=max into the file's key-value metadata (copter.sense=min silences this warning)")
