"""MPS names HiGHS's reader invents or ignores without a word: undefined names.

(Control bytes in names are refused by the one-pass scan of ``formats/mps_numbers.py``.)

* :func:`check_bound_columns`: HiGHS's free-format parser reads a ``BOUNDS`` line naming a column that
  ``COLUMNS`` never defined (a typo) as a new empty column appended after the others, and the intended
  column silently loses its bound. Such a column is empty, has cost 0 and sits in the trailing run of
  empty zero-cost columns (:func:`trailing_empty_columns`, vectorised); only those few names are looked
  up in the text. (The fixed-format parser warns instead, which copter already refuses.)
* :func:`locate_undefined_rows`: an entry naming an undefined row, which HiGHS ignores with a warning,
  is reported with its line and name instead of quoting the warning (error path only).
"""

from __future__ import annotations

import re

import numpy as np

from solver.model.errors import FormatError

_UNDEFINED_ROW = re.compile(r'Row name "(.*)" in (COLUMNS|RHS|RANGES) section is not defined')
_HEADER = re.compile(rb"\n[A-Za-z]")


def _section_spans(data, idx: dict, name: bytes) -> list[tuple[int, int]]:
    """(body start, end) of each ``name`` section (body = the lines after its header)."""
    out = []
    for p in idx.get(name, ()):
        nl = data.find(b"\n", p)
        if nl < 0:
            continue
        m = _HEADER.search(data, nl)
        out.append((nl, len(data) if m is None else m.start() + 1))
    return out


def trailing_empty_columns(cost: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """Indices (int64) of the trailing run of columns with cost 0 and no matrix entry: where HiGHS's free
    parser appends the columns a ``BOUNDS`` line invents."""
    empty = (cost == 0) & (np.diff(indptr) == 0)
    keep = np.flatnonzero(~empty)
    first = int(keep[-1]) + 1 if keep.size else 0
    return np.arange(first, cost.size, dtype=np.int64)


def check_bound_columns(data, path: str, idx: dict, names, line_of) -> None:
    """Refuse a ``BOUNDS`` entry naming a column ``COLUMNS`` never defined.

    Args:
        data: the file's bytes. idx: section name -> header offsets. names: candidate column names
            (from :func:`trailing_empty_columns`, str). line_of: as in :func:`check_control_bytes`.
    Raises:
        FormatError: naming the ``BOUNDS`` line and the undefined column.
    """
    cols = _section_spans(data, idx, b"COLUMNS")
    defined: set | None = None
    if len(names) > 64:  # many empty columns: one pass over the COLUMNS lines' first fields
        defined = set()
        for lo, hi in cols:
            defined.update(re.findall(rb"\n[ \t]+(\S+)", bytes(data[lo:hi])))
    for name in names:
        key = str(name).encode("utf-8")
        if not key:  # ' BV BND': HiGHS took the one name for the bound set and added a column named ''
            line = None
            two = re.compile(rb"(?m)^[ \t]+\S+[ \t]+\S+[ \t\r]*$")
            for lo, hi in _section_spans(data, idx, b"BOUNDS"):
                m = two.search(data, lo, hi)
                if m is not None:
                    line = line_of(data, m.start())
                    break
            raise FormatError("a BOUNDS line names no column (HiGHS read its one name as the bound set and added a "
                              "column with an empty name): give the bound set and the column, e.g. ' BV BND x'",
                              file=path, line=line)
        if defined is not None:
            if key in defined:
                continue
        else:
            pat = re.compile(rb"\n[ \t]+" + re.escape(key) + rb"(?=[ \t\r\n])")
            if any(pat.search(data, lo, hi) for lo, hi in cols):
                continue
        line = None
        pat = re.compile(rb"[ \t]" + re.escape(key) + rb"(?=[ \t\r\n]|\Z)")
        for lo, hi in _section_spans(data, idx, b"BOUNDS"):
            m = pat.search(data, lo, hi)
            if m is not None:
                line = line_of(data, m.start() + 1)
                break
        raise FormatError(f"BOUNDS names column {str(name)!r}, which is not defined in COLUMNS (a typo? HiGHS "
                          "would add an empty column and leave the intended column without this bound)",
                          file=path, line=line, entity=str(name))


def locate_undefined_rows(data, path: str, idx: dict, line_of, messages: list[str], is_row=None) -> None:
    """Turn HiGHS's "Row name ... is not defined: ignored" warning into an error naming the line.

    Args:
        is_row: optional ``is_row(name: str) -> bool``; when an RHS/RANGES line's set name (field 1) is
            a row name, HiGHS read the line as having no set name, and the error says so.
    Raises:
        FormatError: for the first such warning whose name is found in its section (else returns).
    """
    for msg in messages:
        m = _UNDEFINED_ROW.search(msg)
        if m is None:
            continue
        name, section = m.group(1), m.group(2)
        pat = re.compile(rb"[ \t]" + re.escape(name.encode("utf-8")) + rb"(?=[ \t\r\n]|\Z)")
        for lo, hi in _section_spans(data, idx, section.encode()):
            hit = pat.search(data, lo, hi)
            if hit is not None:
                start = data.rfind(b"\n", 0, hit.start()) + 1
                first = bytes(data[start:hit.start() + 1]).split()[:1]
                if section != "COLUMNS" and first and is_row is not None:
                    set_name = first[0].decode("utf-8", "backslashreplace")
                    if set_name != name and is_row(set_name):
                        raise FormatError(f"{section} set name {set_name!r} is also a row name; HiGHS reads the "
                                          "line as having no set name (the next field as a value, then "
                                          f"{name!r} as a row): rename the {section} set", file=path,
                                          line=line_of(data, hit.start() + 1), entity=set_name)
                raise FormatError(f"{section} entry names row {name!r}, which is not defined in ROWS (HiGHS "
                                  "would ignore the entry)", file=path, line=line_of(data, hit.start() + 1),
                                  entity=name)
