"""The line of an entry naming an undefined row or column in a fixed-format MPS file (error path only).

HiGHS's fixed-format parser says only `COLUMNS section entries contain 1 with row not in ROWS section: ignored`
(or `BOUNDS section entries contain 1 with col not in COLUMNS section`), with no name or line, where its
free-format parser names the row. It also drops every ``N`` row after the first (the objective) but not their
entries, which the free parser drops with the row: such a file reads in free format and failed in fixed format with
that message alone. :func:`locate_fixed_undefined` names the line, the name and, for a later ``N`` row, why; for a
name that starts a column late (``L   c1``: the row is ``" c1"`` to that parser, which keeps a name field's leading
spaces), the line of the shifted name and its column.
"""

from __future__ import annotations

import re

from formats.mps_names import _section_spans
from solver.model.errors import FormatError

_DUP_ENTRY = re.compile(r"\(col (.*)\), has duplicate entries for index \d+ \(row (.*)\)")
_ALIEN = re.compile(r"(COLUMNS|RHS|RANGES|BOUNDS)\s+section entries contain\s+\d+\s+with (row|col) not in")


def _fields(data, idx: dict, section: bytes):
    """(offset, line) of each data line of every ``section`` (comments, blank and MARKER lines left out)."""
    for lo, hi in _section_spans(data, idx, section):
        pos = lo + 1
        for raw in bytes(data[lo + 1:hi]).split(b"\n"):
            at, pos = pos, pos + len(raw) + 1
            line = raw.rstrip(b"\r")
            if line.strip() and not line.startswith(b"*") and b"'MARKER'" not in line:
                yield at, line


def _name(line: bytes, lo: int, hi: int) -> bytes:
    return line[lo:hi].strip()


def locate_fixed_undefined(data, path: str, idx: dict, line_of, messages: list[str]) -> None:
    """Raise FormatError naming the first fixed-format entry whose row (``COLUMNS``, ``RHS``, ``RANGES``) or
    column (``BOUNDS``) is not defined, for the section HiGHS's message names; return when there is none.

    Args:
        data: the file's bytes. idx: section name -> header offsets. line_of: ``line_of(data, offset) -> int``.
        messages: HiGHS's WARNING lines of the read.
    """
    sections = [m.group(1) for m in map(_ALIEN.search, messages) if m is not None]
    if not sections:
        return
    # HiGHS's fixed parser keeps a name field's leading spaces (a name starting a column late is another name), so
    # the names here do too; ``defined``: every ROWS/COLUMNS name -> (offset of its line, its field's first column)
    rows, later_n, objective, defined = set(), set(), None, {}
    for at, line in _fields(data, idx, b"ROWS"):
        kind, name = line[1:3].strip().upper(), _key(line, 4, 12)
        defined.setdefault(name, (at, "ROWS", 5))
        if kind == b"N" and objective is None:
            objective = name
        elif kind == b"N":
            later_n.add(name)
        else:
            rows.add(name)
    columns = set()
    for at, line in _fields(data, idx, b"COLUMNS"):
        columns.add(_key(line, 4, 12))
        defined.setdefault(_key(line, 4, 12), (at, "COLUMNS", 5))
    for section in sections:
        known = columns if section == "BOUNDS" else rows if section == "RANGES" else rows | {objective}
        spans = ((14, 22),) if section == "BOUNDS" else ((14, 22), (39, 47))
        for at, line in _fields(data, idx, section.encode()):
            for lo, hi in spans:
                name = _key(line, lo, hi)
                if not name.strip() or name in known:
                    continue
                _raise_misaligned(data, path, line_of, section, at, lo, name, known, defined)
                text = name.strip().decode("utf-8", "backslashreplace")
                if section == "BOUNDS":
                    why = f"BOUNDS entry names column {text!r}, which COLUMNS does not define (HiGHS would ignore it)"
                elif name == objective:  # RANGES only: HiGHS ignores a range on the objective
                    why = (f"RANGES names the objective (N) row {text!r}; a range applies to a constraint (HiGHS "
                           "would ignore it)")
                elif name in later_n:
                    why = (f"{section} entry names row {text!r}, a second N (free) row: HiGHS's fixed-format parser "
                           "(used because a name holds a space) drops that row but not its entries (its free-format "
                           "parser drops both); remove the row and its entries")
                else:
                    why = f"{section} entry names row {text!r}, which is not defined in ROWS (HiGHS would ignore it)"
                raise FormatError(why, file=path, line=line_of(data, at), entity=text)


def _key(line: bytes, lo: int, hi: int) -> bytes:
    """The name in columns ``lo``..``hi`` (0-based, end excluded) as HiGHS's fixed parser keys it: trailing spaces
    dropped, leading ones kept."""
    return line[lo:hi].rstrip()


def _raise_misaligned(data, path: str, line_of, section: str, at: int, lo: int, name: bytes, known: set,
                      defined: dict) -> None:
    """Raise FormatError naming the line whose name starts in the wrong column, when an entry's undefined ``name``
    and a defined name differ only by leading spaces (``L   c1`` in ROWS, its row named from column 15 in
    COLUMNS): the defining line when the entry's name starts in its field's first column, else the entry's."""
    bare = name.lstrip()
    twin = next((k for k in known if k.lstrip() == bare), None)
    if twin is None:
        return
    text = bare.decode("utf-8", "backslashreplace")
    what = "column" if section == "BOUNDS" else "row"
    if name == bare:  # the definition is the one shifted
        where, sec, first = defined[twin]
        late = len(twin) - len(bare)
        raise FormatError(f"{sec} line: {what} name {text!r} starts in column {first + late}, not {first} (fixed "
                          f"format: the name field is columns {first}-{first + 7}); HiGHS's fixed-format parser keeps "
                          f"the leading space{'s' if late > 1 else ''} as part of the name, so the {section} entry "
                          f"naming {text!r} on line {line_of(data, at)} names no {what}", file=path,
                          line=line_of(data, where), entity=text)
    late = len(name) - len(bare)
    raise FormatError(f"{section} line: {what} name {text!r} starts in column {lo + 1 + late}, not {lo + 1} (fixed "
                      f"format: the name field is columns {lo + 1}-{lo + 8}); HiGHS's fixed-format parser keeps the "
                      f"leading space{'s' if late > 1 else ''} as part of the name, so the entry names no {what}",
                      file=path, line=line_of(data, at), entity=text)


def locate_fixed_duplicate_row(data, path: str, idx: dict, line_of) -> None:
    """Raise FormatError naming a row that a fixed-format ``ROWS`` section defines twice and both lines (HiGHS's
    fixed parser reads two rows of the same name without a word); return when there is none."""
    seen: dict[bytes, int] = {}
    for at, line in _fields(data, idx, b"ROWS"):
        name = _name(line, 4, 12)
        if name in seen:
            text, first, second = name.decode("utf-8", "backslashreplace"), seen[name], line_of(data, at)
            raise FormatError(f"ROWS defines row {text!r} twice (lines {first} and {second}): two rows with the same "
                              "name cannot be told apart by a delta or a solution", file=path, line=second, entity=text)
        seen[name] = line_of(data, at)


def locate_fixed_duplicate_entry(data, path: str, idx: dict, line_of, messages: list[str]) -> None:
    """Turn HiGHS's refusal of a fixed-format file with two coefficients of one column in one row (`... (col X 1),
    has duplicate entries for index 1 (row C2)`, no line) into a FormatError naming both ``COLUMNS`` lines;
    return when there is no such message or the lines are not found."""
    m = next((m for m in map(_DUP_ENTRY.search, messages) if m is not None), None)
    if m is None:
        return
    col, row = m.group(1).encode("utf-8"), m.group(2).encode("utf-8")
    first = None
    for at, line in _fields(data, idx, b"COLUMNS"):
        if _name(line, 4, 12) != col:
            continue
        for lo, hi in ((14, 22), (39, 47)):
            if _name(line, lo, hi) == row:
                if first is not None:
                    a, b = line_of(data, first), line_of(data, at)
                    where = f"line {a}" if a == b else f"lines {a} and {b}"
                    raise FormatError(f"COLUMNS gives column {m.group(1)!r} a duplicate coefficient in row "
                                      f"{m.group(2)!r} ({where})", file=path, line=b, entity=m.group(1))
                first = at
