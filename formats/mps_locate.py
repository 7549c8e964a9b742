"""The line of an MPS defect HiGHS's reader reports without one (error path only: the read already failed or
warned, so a loop over a section's lines costs nothing on a good file).

* :func:`locate_bad_types`: a ``ROWS`` line whose row type is not N, L, G or E (HiGHS: `Entry "X  c" in ROWS
  section of MPS file is unidentified`) or a ``BOUNDS`` line whose bound type is none of MPS's (HiGHS: `Entry in
  BOUNDS section of MPS file is of type "BI"`, not saying that BI is no bound type).
* :func:`locate_duplicate_rows`: a row name ``ROWS`` defines twice (HiGHS: `Linear constraints 0 and 1 have the
  same name "c1"`, a warning).
"""

from __future__ import annotations

import re

from formats.mps_names import _section_spans
from solver.model.errors import FormatError

ROW_TYPES = (b"N", b"L", b"G", b"E")
BOUND_TYPES = (b"UP", b"LO", b"FX", b"FR", b"MI", b"PL", b"BV", b"LI", b"UI", b"SC", b"SI")
_SAME_NAME = re.compile(r'Linear constraints \d+ and \d+ have the same name "(.*)"')


def _data_lines(data, idx: dict, section: bytes):
    """(offset, fields) of each data line of every ``section`` (comments and blank lines skipped)."""
    for lo, hi in _section_spans(data, idx, section):
        pos = lo + 1
        for raw in bytes(data[lo + 1:hi]).split(b"\n"):
            fields = raw.split()
            if fields and not raw.startswith(b"*"):
                yield pos, fields
            pos += len(raw) + 1


def _text(b: bytes) -> str:
    return b.decode("utf-8", "backslashreplace")


def locate_bad_types(data, path: str, idx: dict, line_of) -> None:
    """Raise FormatError naming the first ``ROWS`` line with an unknown row type, else the first ``BOUNDS`` line
    with an unknown bound type (file, line, the row or column as entity); return when there is none.

    Args:
        data: the file's bytes. idx: section name -> header offsets (``formats.mps._header_index``).
        line_of: ``line_of(data, offset) -> int`` (1-based line number).
    """
    for pos, fields in _data_lines(data, idx, b"ROWS"):
        if fields[0].upper() not in ROW_TYPES:
            name = _text(fields[1]) if len(fields) > 1 else None
            raise FormatError(f"ROWS line: row type {_text(fields[0])!r} is not N, L, G or E", file=path,
                              line=line_of(data, pos), entity=name)
    for pos, fields in _data_lines(data, idx, b"BOUNDS"):
        if fields[0].upper() not in BOUND_TYPES:
            col = _text(fields[2]) if len(fields) > 2 else None
            raise FormatError(f"BOUNDS line: {_text(fields[0])!r} is no bound type (MPS's are "
                              + ", ".join(_text(t) for t in BOUND_TYPES) + ")", file=path,
                              line=line_of(data, pos), entity=col)


def locate_duplicate_rows(data, path: str, idx: dict, line_of, messages: list[str]) -> None:
    """Turn HiGHS's "have the same name" warning into a FormatError naming the name and both ``ROWS`` lines
    (line = the second); return when the warning is absent or the name is not found."""
    names = [m.group(1).encode("utf-8") for m in map(_SAME_NAME.search, messages) if m is not None]
    if not names:
        return
    seen: dict[bytes, int] = {}
    for pos, fields in _data_lines(data, idx, b"ROWS"):
        if len(fields) < 2 or fields[1] not in names:
            continue
        if fields[1] in seen:
            first, line = seen[fields[1]], line_of(data, pos)
            raise FormatError(f"ROWS defines row {_text(fields[1])!r} twice (lines {first} and {line}): two rows "
                              "with the same name cannot be told apart by a delta or a solution", file=path,
                              line=line, entity=_text(fields[1]))
        seen[fields[1]] = line_of(data, pos)
