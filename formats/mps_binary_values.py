"""A value on a ``BV`` (binary) ``BOUNDS`` line: ignored by the MPS convention, so anything but 0 or 1 is refused.

``BV`` makes its column binary (integer in [0, 1]) and takes no value: SAS's MPS format table of MIP bound types
gives ``BV`` "Ignore b: Yes, binary, 0 or 1", QSopt's "BV: uses field 4: no, x = 0 or x = 1", and HiGHS (either
parser: ``formats/mps_fixed_bounds.py`` reads the fixed one's text the same way) drops the field. Writers often put
``0`` or ``1`` there, which says nothing else; any other value (``BV BND x 5``) says the writer meant a different
bound, an integer upper bound of 5 (``UI``) perhaps, which was dropped without a word: the column read as [0, 1].
copter refuses such a line (``FormatError`` naming the file, line and column), as it refuses a value on an
``FR``/``MI``/``PL`` line and a fractional ``LI``/``UI`` bound: it does not guess the bound meant. A value that
is no number (``BV BND x abc``) is refused too (the free format's number pass checks field 4 of a 4-field line, not
the value of ``BV x abc`` nor the fixed format's columns 25-36).

Where the value sits: free format, field 4 of ``BV set column value``, or field 3 of ``BV column value`` (3 fields:
HiGHS takes field 2 as the column whenever it is a column name, ``formats/mps_sections.py``); fixed format, columns
25-36. One regex scan of the ``BOUNDS`` text (C speed) finds the lines whose value is not written as a plain 0 or 1;
only those few are looked at in Python.
"""

from __future__ import annotations

import re

from formats.mps_names import _section_spans
from formats.mps_numbers import INFINITY, NUMBER, NUMBER_FIXED
from solver.model.errors import FormatError

# a value written as a plain 0 or 1 (0, -0, 0.0, .0, 00, 1, +1, 1., 1.00): the common case, skipped by the regex
_ZERO_ONE = rb"(?:[+-]?(?:0+\.?0*|\.0+)|\+?0*1(?:\.0*)?)[ \t\r]*(?:\n|\Z)"
_FREE4 = re.compile(rb"(?m)^[ \t]+BV[ \t]+\S+[ \t]+(\S+)[ \t]+(?!" + _ZERO_ONE + rb")(\S+)")
_FREE3 = re.compile(rb"(?m)^[ \t]+BV[ \t]+(\S+)[ \t]+(?!" + _ZERO_ONE + rb")(\S+)[ \t\r]*$")
_FIXED = re.compile(rb"(?m)^ BV .{10}(.{8}).{2}[ \t]*(?!" + _ZERO_ONE + rb")(\S+)")


def _show(tok: bytes) -> str:
    return tok.decode("utf-8", "backslashreplace")


def check_binary_values(data, path: str, idx: dict, line_of, fixed: bool, is_column=None) -> None:
    """Refuse a ``BV`` bound line whose value is not 0 or 1 (or is no number).

    Args:
        data: the file's bytes. idx: section name -> header offsets (``formats.mps._header_index``).
        line_of: ``line_of(data, offset) -> int``. fixed: the file was read as fixed format (names by column).
        is_column: ``is_column(name: bytes) -> bool`` (free format: tells ``BV column value`` from
            ``BV set column``); None reads every 3-field ``BV`` line as the former.
    Raises:
        FormatError: naming the line and the column (``entity``).
    """
    for lo, hi in _section_spans(data, idx, b"BOUNDS"):
        if fixed:
            hits = [(m, m.group(1).strip(), m.group(2)) for m in _FIXED.finditer(data, lo, hi)]
        else:
            hits = [(m, m.group(1), m.group(2)) for m in _FREE4.finditer(data, lo, hi)]
            hits += [(m, m.group(1), m.group(2)) for m in _FREE3.finditer(data, lo, hi)
                     if is_column is None or is_column(m.group(1))]
        for m, column, tok in sorted(hits, key=lambda h: h[0].start()):
            number = (NUMBER_FIXED if fixed else NUMBER).fullmatch(tok) or INFINITY.fullmatch(tok)
            value = float(tok.upper().replace(b"D", b"E")) if number else None
            if value in (0.0, 1.0):
                continue
            what = f"{_show(tok)!r}, which is no number," if value is None else repr(_show(tok))
            raise FormatError(
                f"BOUNDS line: bound type BV takes no value (it makes the column binary, [0, 1] and integer; MPS "
                f"readers ignore the value, as HiGHS does), so the value {what} would be dropped without a word: "
                "leave it out (0 or 1 is accepted), or write the bound meant with UI/LI (integer) or UP/LO",
                file=path, line=line_of(data, m.start()), entity=_show(column))
