"""Field counts of free-format MPS data lines: what HiGHS's reader would drop without a word.

HiGHS 1.16's free-format reader takes the fields it expects from a data line and ignores the rest,
returning ``kOk`` with no warning: a third name/value pair on a ``COLUMNS``/``RHS``/``RANGES`` line,
a trailing odd field, a fifth field on a ``BOUNDS`` line, a third field on a ``ROWS`` line. The model
then silently differs from the file. :func:`check_fields` counts the whitespace-separated fields of
every data line of those sections and rejects a line the reader would not read completely:

=========  ==============================================================================
section    fields read completely
=========  ==============================================================================
ROWS       2 (type, row)
COLUMNS    3 or 5 (column, row, value [, row, value]); ``MARKER`` lines have 3
RHS        3 or 5 with a set name; 2 or 4 without one (then fields 2 and 4 are numbers --
           HiGHS reads a blank set name this way, e.g. ``blend``)
RANGES     3 or 5 (set, row, value [, row, value])
BOUNDS     2 to 4 (type [, set], column [, value]); a value on FR/MI/PL is checked elsewhere
=========  ==============================================================================

``read_mps`` applies these rules inside the one-pass numba scan of ``formats/mps_numbers.py`` (which also
checks the number tokens and control bytes), calling :func:`check_line_fields` for the closer look;
:func:`check_fields` is the vectorised numpy version of the counting, kept as the twin the tests compare.

Speed of :func:`check_fields`: the counting is numpy over the raw bytes (:func:`line_field_counts`: five vectorised passes
per 16 MB chunk, C speed, no Python loop over lines); only the lines whose count falls outside the
table (and in ``RHS`` the 2- and 4-field lines, few) are split in Python. Blank lines and comment
lines (``*`` in column 1) are skipped. Files HiGHS reads with its fixed-format parser (names with
spaces, e.g. ``forplan``) are not checked here: their fields are column positions, not counts.
"""

from __future__ import annotations

import re

import numpy as np

from solver.model.errors import FormatError

_CHUNK = 1 << 24
HEADER_START = re.compile(rb"\n[A-Za-z]")
# section -> (field counts accepted without a closer look, counts needing the RHS number check)
RULES = {
    b"ROWS": ((2,), ()),
    b"COLUMNS": ((3, 5), ()),
    b"RHS": ((3, 5), (2, 4)),
    b"RANGES": ((3, 5), ()),
    b"BOUNDS": ((2, 3, 4), ()),
}
_EXPECTED = {
    b"ROWS": "2 (type, row)",
    b"COLUMNS": "3 or 5 (column, row, value [, row, value]: at most 2 row/value pairs)",
    b"RHS": "2 to 5 ([set,] row, value [, row, value]: at most 2 row/value pairs)",
    b"RANGES": "3 or 5 (set, row, value [, row, value]: at most 2 row/value pairs)",
    b"BOUNDS": "2 to 4 (type [, set], column [, value])",
}


def line_field_counts(buf: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Start offset and number of whitespace-separated fields of each line of ``buf``.

    Args:
        buf: uint8 array (n,), text starting at the beginning of a line; space, tab, CR, LF, VT and FF
            separate fields (the set HiGHS and ``bytes.split`` use), ``\\n`` ends a line.
    Returns:
        ``(starts, counts)``: int64 (L,) offsets of the line starts, int32 (L,) field counts. A final
        line without ``\\n`` counts as a line; an empty buffer gives no lines.
    """
    if not buf.size:
        return np.zeros(0, np.int64), np.zeros(0, np.int32)
    ws = buf <= 32
    ctrl = np.flatnonzero(buf < 32)  # newlines, tabs, CRs: few next to the bytes, cheap to sort out
    kind = buf[ctrl]
    ws[ctrl[(kind < 9) | (kind > 13)]] = False  # other control bytes are part of a field (bytes.split)
    first = ~ws
    first[1:] &= ws[:-1]  # a field starts at a non-blank byte after a blank one (or at offset 0)
    nl = ctrl[kind == 10]
    starts = np.concatenate(([0], nl + 1))
    if starts[-1] >= buf.size:
        starts = starts[:-1]
    # int16 sums are ~1.5x faster than int32 ones; only a line of >= 32 KiB can overflow them
    counts = np.add.reduceat(first.view(np.int8), starts, dtype=np.int16).astype(np.int32)
    ends = np.append(starts[1:], buf.size)
    for i in np.flatnonzero(ends - starts >= 1 << 15).tolist():  # pathological long lines: exact
        counts[i] = np.count_nonzero(first[starts[i]:ends[i]])
    return starts, counts


def line_field_counts_reference(text: bytes) -> list[int]:
    """Plain-Python twin of :func:`line_field_counts` (the counts), for tests."""
    lines = text.split(b"\n")
    if lines[-1] == b"":
        lines.pop()
    return [len(ln.split()) for ln in lines]


def _is_number(tok: bytes) -> bool:
    try:
        float(tok)
    except ValueError:
        return False
    return True


def _line_ok(section: bytes, toks: list[bytes]) -> bool:
    """The closer look at a candidate line (count outside the fast table, or an RHS 2/4 line)."""
    n = len(toks)
    if section == b"RHS" and n in (2, 4):  # no set name: row, value [, row, value]
        return _is_number(toks[1]) and (n == 2 or _is_number(toks[3]))
    return n == 0 or n in RULES[section][0]


def _entity(section: bytes, toks: list[bytes]) -> str | None:
    pick = {b"ROWS": 1, b"COLUMNS": 0, b"BOUNDS": 2 if len(toks) >= 4 else 1}.get(section)
    if pick is None:  # RHS/RANGES: the first row named on the line
        pick = 0 if len(toks) < 2 or _is_number(toks[1]) else 1
    return toks[pick].decode("utf-8", "backslashreplace") if len(toks) > pick else None


def check_line_fields(section: bytes, toks: list[bytes], path: str, line: int) -> None:
    """The closer look at one line whose field count is outside the fast table (or an RHS 2/4-field
    line): return if HiGHS reads it completely, else raise.

    Raises:
        FormatError: the field-count error naming the file, line and entity.
    """
    if not _line_ok(section, toks):
        if section == b"RHS" and len(toks) in (2, 4):  # no set name: row, value [, row, value]; a value no number
            text = " ".join(t.decode("utf-8", "backslashreplace") for t in toks)
            bad = next(i for i in (1, 3)[:len(toks) // 2] if not _is_number(toks[i]))
            read = "a row and its value" if len(toks) == 2 else "two row/value pairs without a set name"
            after = ("after a set name give the row and its value" if len(toks) == 2 else
                     "with a set name give 3 or 5 fields (set, row, value [, row, value]); a value is one field")
            # hunt 56: the 4-field case said "4 fields, expected 2 to 5", which contradicts itself
            raise FormatError(f"RHS line has {len(toks)} fields ({text!r}), read as {read}, but field {bad + 1}, "
                              f"{toks[bad].decode('utf-8', 'backslashreplace')!r}, is no number: {after}",
                              file=path, line=line, entity=_entity(section, toks))
        if section == b"RANGES" and len(toks) in (2, 4) and all(_is_number(x) for x in toks[1::2]):
            # a blank set name (fixed-format files leave it blank): HiGHS's free-format parser refuses the line, it
            # does not skip a field as the sentence below says (helper-235, session 59)
            raise FormatError(f"RANGES line has {len(toks)} fields, a row and its value without a set name, which "
                              "HiGHS's free-format parser cannot read (it reads a missing set name in RHS only): "
                              "give the set name, e.g. 'RNG " + " ".join(t.decode("utf-8", "backslashreplace")
                                                                           for t in toks) + "'",
                              file=path, line=line, entity=_entity(section, toks))
        raise FormatError(
            f"{section.decode()} line has {len(toks)} fields, expected {_EXPECTED[section]}; HiGHS "
            "would skip the fields it does not expect and silently read a different model", file=path,
            line=line, entity=_entity(section, toks))


def _candidates(data, lo: int, hi: int, fast: tuple, closer: tuple) -> np.ndarray:
    """Offsets of the lines in ``data[lo:hi]`` whose field count needs a closer look (int64)."""
    buf = np.frombuffer(data, dtype=np.uint8, count=hi - lo, offset=lo)
    starts, counts = line_field_counts(buf)
    ok = counts == 0
    for k in fast:
        ok |= counts == k
    if closer:
        ok &= ~np.isin(counts, closer)
    return starts[~ok] + lo, int(starts.size)  # no view of the mmap survives this call


def _check_body(data, lo: int, hi: int, section: bytes, path: str, line_of) -> None:
    """Check the data lines in ``data[lo:hi]`` (whole lines)."""
    fast, closer = RULES[section]
    pos = lo
    while pos < hi:
        end = hi if hi - pos <= _CHUNK else data.find(b"\n", pos + _CHUNK, hi) + 1
        end = hi if end <= 0 else end
        offsets, n_lines = _candidates(data, pos, end, fast, closer)
        for a in offsets.tolist():
            b = data.find(b"\n", a, end)
            raw = bytes(data[a:(end if b < 0 else b)])
            if raw[:1] == b"*":
                continue
            check_line_fields(section, raw.split(), path, line_of(data, a))
        pos = end


def check_fields(data, path: str, sections: dict[bytes, list[int]], line_of) -> None:
    """Reject a free-format data line with more (or fewer) fields than HiGHS reads from it.

    Args:
        data: the file's bytes (``bytes`` or a read-only ``mmap``).
        path: file name for the error.
        sections: section name -> offsets of its header lines (from the caller's header scan).
        line_of: ``line_of(data, offset) -> 1-based line number`` (called on the error path only).
    Raises:
        FormatError: naming the file, the line, the entity (column/row name) and the field count.
    """
    for name, lo, hi in _section_bodies(data, sections):
        _check_body(data, lo, hi, name, path, line_of)


def _section_bodies(data, sections: dict[bytes, list[int]]):
    """(section name, start, end) of every non-empty body of a section :data:`RULES` checks, in the order of
    ``sections``: the data lines between its header line and the next header."""
    for name, offsets in sections.items():
        if name not in RULES:
            continue
        for p in offsets:
            body = data.find(b"\n", p)
            if body < 0:
                continue
            end = _section_end(data, body + 1)
            if end > body + 1:
                yield name, body + 1, end


def bad_field_lines(data, sections: dict[bytes, list[int]], limit: int = 2) -> list[tuple[bytes, int, list[bytes]]]:
    """(section, offset, fields) of the first ``limit`` data lines whose free-format field count HiGHS would not
    read completely (what :func:`check_fields` refuses, counted instead of raised), in section order: a file HiGHS
    read in fixed format with one such line is a free-format file with a typo, with several a fixed-format file
    whose names hold spaces (``formats.mps._raise_fixed_switch``)."""
    out: list[tuple[bytes, int, list[bytes]]] = []
    for name, lo, hi in _section_bodies(data, sections):
        for a in _candidates(data, lo, hi, *RULES[name])[0].tolist():
            b = data.find(b"\n", a, hi)
            raw = bytes(data[a:(hi if b < 0 else b)])
            if raw[:1] != b"*" and not _line_ok(name, raw.split()):
                out.append((name, a, raw.split()))
                if len(out) >= limit:
                    return out
    return out


def _section_end(data, start: int) -> int:
    """Offset of the first line at or after ``start`` that starts with a letter (a section header)."""
    if data[start:start + 1].isalpha():
        return start
    m = HEADER_START.search(data, start)
    return len(data) if m is None else m.start() + 1
