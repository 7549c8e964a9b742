"""Strict MPS number tokens and names: what HiGHS's reader turns into a wrong value without a word.

HiGHS 1.16 converts a number field with C's ``atof``-style prefix parsing and never checks that the
whole field was used: a cost written as a word reads as 0, ``4.0.0`` as 4, ``12abc`` as 12, ``8,75`` as
8, ``inf1`` as infinity, and the model solves to a wrong optimum with status kOk. Its fixed-format
parser also ignores a Fortran ``D`` exponent (``1.5D+03`` reads as 1.5; the free parser reads 1500).
:func:`check_data_lines` checks, in one pass over the data lines of ``ROWS``/``COLUMNS``/``RHS``/
``RANGES``/``BOUNDS``, that every numeric field is one whole number token:

* ``[+-]? (digits [. digits] | . digits) [exponent]``, exponent ``[eE] [+-]? digits`` (``dD`` too in
  free format, where HiGHS reads it): ``1``, ``-1.5``, ``1e5``, ``.5``, ``5.``, ``1.5D+03``;
* ``[+-]? inf | infinity`` (any letter case) in ``RHS``, ``RANGES`` and ``BOUNDS`` only: a cost or a
  coefficient cannot be infinite (``ValidationError``, as for ``1e30``);
* a nonzero number below 1e-308 in magnitude (``1e-400``, ``4.9e-324``) is a ``ValidationError``: HiGHS's parse
  gives 0 below about 2.5e-324 (an entry then vanished without a word, hunt 37) and a subnormal with fewer digits
  than written above it; decided from the token's digits (the first nonzero digit's place plus the exponent);
* nothing else: no hexadecimal (``0x10``), no ``nan`` (reported as before), no thousands separator, no
  decimal comma. A ``BOUNDS`` line whose type takes a value (``UP``, ``LO``, ``FX``, ``LI``, ``UI``)
  without one is refused too.

Which fields are numbers (free format, fields counted from 1; the field-count rules are those of
``formats/mps_fields.py``): ``COLUMNS`` 3 and 5 (``MARKER`` lines have none); ``RHS`` 3 and 5, or
2 and 4 on a line without a set name; ``RANGES`` 3 and 5; ``BOUNDS`` 4, or 3 on a 3-field line of a
value-taking type (``UP x 4``). Fixed format (names with spaces, read by HiGHS's column-position
parser): the text in columns 25-39 and from column 50 on, each one token.

Fixed format: HiGHS's parser reads each field from its columns (type 2-3, names 5-12, 15-22, 40-47,
numbers from 25 and 50), so text in a blank column (4, 13-14, 23-24, 48-49) or past column 12 on a
``ROWS`` line is cut or dropped without a word (``c 1     12345`` starting in column 23 reads as 345):
refused, naming the line and the column. An integer marker line is one whose marker field is exactly
``'MARKER'`` (free format: field 2 of a 3-field line; fixed format: columns 15-22), as HiGHS decides;
any other line holding the word ``MARKER`` (a name like ``MARKERCAP``) gets the number checks.

Names: a control byte (``\\x00``-``\\x08``, ``\\x0e``-``\\x1f``, ``\\x7f``; in fixed format also tab,
VT and FF, which would shift the columns) in a data line of ``ROWS``..``BOUNDS`` is refused: HiGHS keeps
it in the name and an export later cuts it off (NUL), so two names can collide. Comment lines may hold
anything. Undefined names are checked in ``formats/mps_names.py``.

Speed: :func:`scan_section` is a numba kernel over the raw bytes that makes the one pass over the data
lines: field counts (the rules of ``formats/mps_fields.py``; a line outside the fast table goes to its
closer look in Python), number tokens and control bytes, no Python per line or per token.
:func:`scan_section_reference` is its plain-Python twin, compared in ``tests/test_mps_strict.py``.
"""

from __future__ import annotations

import re
from decimal import Decimal

import numpy as np
from numba import njit

from formats.mps_fields import HEADER_START, check_line_fields
from solver import kernel_cache
from solver.model.errors import FormatError, ValidationError

kernel_cache.install()  # cached kernels load without numba's compiler set-up (solver/kernel_cache.py)

ROWS, COLUMNS, RHS, RANGES, BOUNDS = 5, 1, 2, 3, 4
SECTION_CODES = {b"ROWS": ROWS, b"COLUMNS": COLUMNS, b"RHS": RHS, b"RANGES": RANGES, b"BOUNDS": BOUNDS}
OK, BAD_NUMBER, INFINITE, MISSING, CONTROL, COUNT, GAP, TINY, ZERO = 0, 1, 2, 3, 4, 5, 6, 7, 8
TINY_EXPONENT = -308  #: a nonzero number token below 10**TINY_EXPONENT in magnitude is TINY (refused)
_VALUE_BOUNDS = (b"UP", b"LO", b"FX", b"LI", b"UI")
_FIXED_F4, _FIXED_F5, _FIXED_F6 = 24, 39, 49  # 0-based starts of fixed-format fields 4, 5 and 6
_CHUNK = 1 << 24

NUMBER = re.compile(rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eEdD][+-]?[0-9]+)?")
NUMBER_FIXED = re.compile(rb"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
INFINITY = re.compile(rb"(?i)[+-]?inf(?:inity)?")
_INFINITY_BYTES = np.frombuffer(b"infinity", dtype=np.uint8)
_MARKER_BYTES = np.frombuffer(b"'MARKER'", dtype=np.uint8)  # the field HiGHS compares, quotes included
_GAPS = np.array([3, 12, 13, 22, 23, 47, 48], dtype=np.int64)  # fixed format: 0-based blank columns
GAP_COLUMNS = tuple(int(g) for g in _GAPS)


@njit(cache=True)
def _lower(c):
    return c | 32 if 65 <= c <= 90 else c


@njit(cache=True)
def _is_space(c):
    return c == 32 or 9 <= c <= 13


@njit(cache=True)
def _token_kind(buf, s, e, allow_d):
    """OK (finite number), INFINITE (``inf``/``infinity``) or BAD_NUMBER for ``buf[s:e]``."""
    i = s
    if i < e and (buf[i] == 43 or buf[i] == 45):  # + -
        i += 1
    if i < e and _lower(buf[i]) == 105:  # i: inf / infinity
        n = e - i
        if n != 3 and n != 8:
            return BAD_NUMBER
        for k in range(n):
            if _lower(buf[i + k]) != _INFINITY_BYTES[k]:
                return BAD_NUMBER
        return INFINITE
    digits = 0
    first = -1  # index among the mantissa's digits of its first nonzero one (-1: the number is 0)
    while i < e and 48 <= buf[i] <= 57:
        if first < 0 and buf[i] != 48:
            first = digits
        i += 1
        digits += 1
    ip = digits  # digits before the point
    if i < e and buf[i] == 46:  # .
        i += 1
        while i < e and 48 <= buf[i] <= 57:
            if first < 0 and buf[i] != 48:
                first = digits
            i += 1
            digits += 1
    if digits == 0:
        return BAD_NUMBER
    expo = 0
    if i < e:
        c = _lower(buf[i])
        if c != 101 and not (allow_d and c == 100):  # e, d
            return BAD_NUMBER
        i += 1
        neg = False
        if i < e and (buf[i] == 43 or buf[i] == 45):
            neg = buf[i] == 45
            i += 1
        exp = 0
        while i < e and 48 <= buf[i] <= 57:
            if expo < 100000000:  # saturates: any exponent this large is far outside float64 either way
                expo = expo * 10 + (buf[i] - 48)
            i += 1
            exp += 1
        if exp == 0 or i != e:
            return BAD_NUMBER
        if neg:
            expo = -expo
    # a nonzero value lies in [10**(q-1), 10**q), q = ip - first + expo: below 10**TINY_EXPONENT HiGHS's parse
    # gives a subnormal (fewer digits than written) or 0 (1e-400: the entry was gone without a word, hunt 37)
    if first >= 0 and ip - first + expo <= TINY_EXPONENT:
        return TINY
    return OK


@njit(cache=True)
def _zero_token(buf, s, e):
    """Whether the number token ``buf[s:e]`` (already checked: OK) is 0: no nonzero digit before its exponent."""
    for k in range(s, e):
        c = buf[k]
        if c == 101 or c == 69 or c == 100 or c == 68:  # e E d D: the exponent of a 0 is still a 0
            return True
        if 49 <= c <= 57:
            return False
    return True


@njit(cache=True)
def _check_token(buf, s, e, allow_inf, allow_d):
    if s >= e:
        return MISSING
    k = _token_kind(buf, s, e, allow_d)
    if k == INFINITE and allow_inf:
        return OK
    return k


@njit(cache=True)
def _one_token(buf, s, e):
    """(start, end) of the single token in ``buf[s:e]``; (-1, -1) if there are two or more, (s, s) if
    there is none."""
    while s < e and _is_space(buf[s]):
        s += 1
    while e > s and _is_space(buf[e - 1]):
        e -= 1
    for k in range(s, e):
        if _is_space(buf[k]):
            return -1, -1
    return s, e


@njit(cache=True)
def _value_bound(buf, s, e):
    """Whether the bound type ``buf[s:e]`` takes a value (UP, LO, FX, LI, UI)."""
    if e - s != 2:
        return False
    a, b = _lower(buf[s]), _lower(buf[s + 1])
    return (a == 117 and b == 112) or (a == 108 and b == 111) or (a == 102 and b == 120) or \
        (a == 108 and b == 105) or (a == 117 and b == 105)


@njit(cache=True)
def _is_marker(buf, s, e):
    """Whether ``buf[s:e]`` is exactly ``'MARKER'`` (the marker keyword field of an integer marker line)."""
    if e - s != 8:
        return False
    for k in range(8):
        if buf[s + k] != _MARKER_BYTES[k]:
            return False
    return True


@njit(cache=True)
def _is_control(c, fixed):
    return c == 127 or (c < 32 and (fixed or not 9 <= c <= 13))


@njit(cache=True)
def _count_ok(section, ntok):
    """Whether a free-format line with ``ntok`` fields is read completely (``formats/mps_fields.py``)."""
    if section == ROWS:
        return ntok == 2
    if section == COLUMNS or section == RANGES:
        return ntok == 3 or ntok == 5
    if section == RHS:
        return 2 <= ntok <= 5
    return 2 <= ntok <= 4


@njit(cache=True)
def scan_section(buf, pos, section, fixed, control_only, report_zero):
    """First event at or after offset ``pos`` among the data lines of one section body, in one pass.

    Args:
        buf: uint8 array (n,), whole lines of one section's body (no header line).
        pos: offset of a line start where the scan begins (to resume after a COUNT event).
        section: ROWS, COLUMNS, RHS, RANGES or BOUNDS (module constants).
        fixed: True for HiGHS's fixed-format parser (fields by column position, no ``D`` exponent,
            tabs are control bytes, no field-count rule).
        control_only: report CONTROL events only (fixed format: HiGHS also falls back to its fixed parser
            on a free-format file with a NUL, whose fields then sit in the wrong columns).
        report_zero: free-format ``COLUMNS``: report a value that is exactly 0 (ZERO, detail = its field), which
            HiGHS drops before it looks for a repeated entry (``formats.mps_zero_entries``).
    Returns:
        ``(line_start, code, detail)``; ``line_start`` = -1 when the rest is clean. Codes: BAD_NUMBER,
        INFINITE, MISSING, TINY (detail = 0-based field; fixed format: 3 or 5), CONTROL (detail = offset of
        the byte in the line), GAP (fixed format: text in a blank column, detail = the 0-based column;
        a ROWS line longer than 12 columns gives 12), COUNT (free format: a field count outside the fast table, or an RHS
        2/4-field line whose field 2 is no number; detail = the count; the caller decides), ZERO (``report_zero``).
    """
    n = buf.size
    allow_inf = section != COLUMNS
    allow_d = not fixed
    starts = np.empty(6, np.int64)
    ends = np.empty(6, np.int64)
    while pos < n:
        line = pos
        if buf[line] == 42:  # comment: skip to the next line
            while pos < n and buf[pos] != 10:
                pos += 1
            pos += 1
            continue
        if fixed:
            end = line
            while end < n and buf[end] != 10:
                end += 1
            pos = end + 1
            e = end
            while e > line and _is_space(buf[e - 1]):
                e -= 1
            for k in range(line, e):
                if _is_control(buf[k], True):
                    return line, CONTROL, k - line
            if control_only or e == line or (section == COLUMNS and _is_marker(buf, line + 14, min(line + 22, e))):
                continue
            for g in _GAPS:  # text in a gap column: the column-position parser would cut or drop it
                if line + g < e and not _is_space(buf[line + g]):
                    return line, GAP, g
            if section == ROWS:
                if e - line > 12:  # the parser reads the row name from columns 5-12 only
                    return line, GAP, 12
                continue
            if section == BOUNDS and not _value_bound(buf, line + 1, line + 3):
                continue
            width = e - line
            for f in (3, 5):
                if f == 5 and width <= _FIXED_F5:
                    break
                lo = _FIXED_F4 if f == 3 else _FIXED_F6
                hi = _FIXED_F5 if f == 3 else width
                s, t = _one_token(buf, line + min(lo, width), line + min(max(hi, lo), width))
                code = BAD_NUMBER if s < 0 else _check_token(buf, s, t, allow_inf, allow_d)
                if code != OK:
                    return line, code, f
            continue
        ntok = 0
        i = line
        while i < n:  # one pass over the line: fields and control bytes
            c = buf[i]
            if c == 10:
                break
            if _is_space(c):
                i += 1
                continue
            j = i
            while j < n:
                c = buf[j]
                if c == 10 or _is_space(c):
                    break
                if _is_control(c, False):
                    return line, CONTROL, j - line
                j += 1
            if ntok < 6:
                starts[ntok] = i
                ends[ntok] = j
            ntok += 1
            i = j
        pos = i + 1
        if ntok == 0 or control_only:
            continue
        if not _count_ok(section, ntok):
            return line, COUNT, ntok
        f1, f2 = -1, -1
        if section == COLUMNS:
            if ntok == 3 and _is_marker(buf, starts[1], ends[1]):
                continue
            f1, f2 = 2, 4
        elif section == RHS:
            if ntok == 3 or ntok == 5:
                f1, f2 = 2, 4
            else:
                if _token_kind(buf, starts[1], ends[1], allow_d) == BAD_NUMBER:
                    return line, COUNT, ntok
                f1, f2 = 1, 3
        elif section == RANGES:
            f1, f2 = 2, 4
        elif section == BOUNDS:
            if ntok == 4:
                f1 = 3
            elif _value_bound(buf, starts[0], ends[0]):
                if ntok == 3:
                    f1 = 2
                else:
                    return line, MISSING, 2
        zero_at = -1
        for f in (f1, f2):
            if 0 <= f < ntok:
                code = _check_token(buf, starts[f], ends[f], allow_inf, allow_d)
                if code != OK:
                    return line, code, f
                if zero_at < 0 and report_zero and section == COLUMNS and _zero_token(buf, starts[f], ends[f]):
                    zero_at = f
        if zero_at >= 0:  # after the line's every field passed: the caller goes on at the next line
            return line, ZERO, zero_at
    return -1, 0, 0


def _control_at(raw: bytes, fixed: bool) -> int:
    for k, c in enumerate(raw):
        if c == 127 or (c < 32 and (fixed or not 9 <= c <= 13)):
            return k
    return -1


def scan_section_reference(text: bytes, pos: int, section: int, fixed: bool,
                           control_only: bool, report_zero: bool = False) -> tuple[int, int, int]:
    """Plain-Python twin of :func:`scan_section` (regexes and ``bytes.split``), for tests."""
    number = NUMBER_FIXED if fixed else NUMBER

    def code_of(tok: bytes) -> int:
        if not tok:
            return MISSING
        if number.fullmatch(tok):
            norm = tok.upper().replace(b"D", b"E")
            mant, _, expo = norm.partition(b"E")
            if expo and abs(int(expo)) > 10**15:  # beyond decimal's exponents: only the sign decides
                return TINY if int(expo) < 0 and mant.strip(b"+-.0") else OK
            d = Decimal(norm.decode())
            return TINY if d and d.copy_abs() < Decimal(f"1e{TINY_EXPONENT}") else OK  # exact, no context
        if INFINITY.fullmatch(tok):
            return OK if section != COLUMNS else INFINITE
        return BAD_NUMBER

    counts = {ROWS: (2,), COLUMNS: (3, 5), RANGES: (3, 5), RHS: (2, 3, 4, 5), BOUNDS: (2, 3, 4)}[section]
    start = pos
    for raw in text[pos:].split(b"\n"):
        line, start = start, start + len(raw) + 1
        if line >= len(text) or raw[:1] == b"*":
            continue
        if fixed:
            r = raw.rstrip(b" \t\r\v\f")
            k = _control_at(r, True)
            if k >= 0:
                return line, CONTROL, k
            if control_only or not r or (section == COLUMNS and r[14:22] == b"'MARKER'"):
                continue
            gap = [g for g in GAP_COLUMNS if g < len(r) and r[g:g + 1] not in b" \t\r\v\f"]
            if gap:
                return line, GAP, gap[0]
            if section == ROWS:
                if len(r) > 12:
                    return line, GAP, 12
                continue
            if section == BOUNDS and r[1:3].upper() not in _VALUE_BOUNDS:
                continue
            for f, lo, hi in ((3, _FIXED_F4, _FIXED_F5), (5, _FIXED_F6, len(r))):
                if f == 5 and len(r) <= _FIXED_F5:
                    break
                toks = r[lo:max(hi, lo)].split()
                code = BAD_NUMBER if len(toks) > 1 else code_of(toks[0] if toks else b"")
                if code != OK:
                    return line, code, f
            continue
        k = _control_at(raw, False)
        if k >= 0:
            return line, CONTROL, k
        toks = raw.split()
        n = len(toks)
        if not n or control_only:
            continue
        if n not in counts:
            return line, COUNT, n
        fields: tuple = ()
        if section == COLUMNS:
            if n == 3 and toks[1] == b"'MARKER'":
                continue
            fields = (2, 4)
        elif section == RHS:
            if n in (2, 4) and not (NUMBER.fullmatch(toks[1]) or INFINITY.fullmatch(toks[1])):
                return line, COUNT, n
            fields = (2, 4) if n in (3, 5) else (1, 3)
        elif section == RANGES:
            fields = (2, 4)
        elif section == BOUNDS:
            if n == 4:
                fields = (3,)
            elif toks[0].upper() in _VALUE_BOUNDS:
                if n == 2:
                    return line, MISSING, 2
                fields = (2,)
        for f in fields:
            if f < n:
                code = code_of(toks[f])
                if code != OK:
                    return line, code, f
        zero = [f for f in fields if f < n and report_zero and section == COLUMNS
                and Decimal(toks[f].upper().replace(b"D", b"E").decode()) == 0]
        if zero:
            return line, ZERO, zero[0]
    return -1, 0, 0


def _describe(section: bytes, raw: bytes, field: int, fixed: bool) -> tuple[str, str | None, str]:
    """(shown token, entity, what) for the error message of a bad line."""
    if fixed:
        lo, hi = (_FIXED_F4, _FIXED_F5) if field == 3 else (_FIXED_F6, len(raw))
        shown = raw[lo:hi].strip()
        entity = (raw[4:12] if section == b"COLUMNS" else raw[14:22] if field == 3 else raw[39:47]).strip()
    else:
        toks = raw.split()
        shown = toks[field] if field < len(toks) else b""
        entity = toks[0] if section == b"COLUMNS" else toks[field - 1] if field - 1 < len(toks) else None
    text = shown.decode("utf-8", "backslashreplace")
    what = {b"COLUMNS": "cost or coefficient", b"RHS": "right-hand side", b"RANGES": "range",
            b"BOUNDS": "bound"}[section]
    return text, None if entity is None else entity.decode("utf-8", "backslashreplace"), what


def check_data_lines(data, path: str, sections: dict[bytes, list[int]], line_of, fixed: bool) -> list[int]:
    """One pass over the data lines of ``ROWS``/``COLUMNS``/``RHS``/``RANGES``/``BOUNDS``: field counts
    (free format), whole number tokens and control bytes (see the module docstring).

    Args:
        data: the file's bytes (``bytes`` or a read-only ``mmap``).
        path: file name for the error.
        sections: section name -> offsets of its header lines (the caller's header scan).
        line_of: ``line_of(data, offset) -> 1-based line`` (error path only).
        fixed: the file is read by HiGHS's fixed-format parser (fields by column position).
    Raises:
        FormatError: a field that is not a number (``abc``, ``4.0.0``, ``12abc``, ``8,75``, ``0x10``), a
            missing bound value, a control byte in a name, a line with more or fewer fields than HiGHS
            reads, naming file, line, field (1-based) and entity.
        ValidationError: ``nan`` anywhere, ``inf``/``infinity`` as a cost or coefficient.
    Returns:
        free format: the offsets of the ``COLUMNS`` lines holding a value of exactly 0 (in file order), which
        ``formats.mps_zero_entries`` checks for a repeated entry; fixed format: [] (its repeats are found from the
        columns, ``formats.mps_fixed_duplicates``).
    """
    zeros: list[int] = []
    for control_only in (True, False) if fixed else (False,):
        _scan(data, path, sections, line_of, fixed, control_only, zeros)
    return zeros


def _scan(data, path: str, sections: dict[bytes, list[int]], line_of, fixed: bool, control_only: bool,
          zeros: list[int]) -> None:
    for name, code in SECTION_CODES.items():
        report_zero = code == COLUMNS and not fixed and not control_only
        for p in sections.get(name, ()):
            body = data.find(b"\n", p)
            if body < 0:
                continue
            end = _section_end(data, body + 1)
            pos = body + 1
            while pos < end:
                stop = end if end - pos <= _CHUNK else data.find(b"\n", pos + _CHUNK, end) + 1
                stop = end if stop <= 0 else stop
                at = 0
                while True:
                    buf = np.frombuffer(data, dtype=np.uint8, count=stop - pos, offset=pos)
                    at, err, detail = scan_section(buf, at, code, fixed, control_only, report_zero)
                    del buf  # no view of the mmap may outlive this loop
                    if at < 0:
                        break
                    at, err, detail = int(at), int(err), int(detail)
                    if err == ZERO:  # a whole line holding a 0: noted, the scan goes on at the next line
                        zeros.append(pos + at)
                        eol = data.find(b"\n", pos + at, stop)
                        at = (stop if eol < 0 else eol + 1) - pos
                        continue
                    if err == COUNT:  # the closer look (and its message) of formats/mps_fields.py
                        eol = data.find(b"\n", pos + at, stop)
                        raw = bytes(data[pos + at:stop if eol < 0 else eol])
                        check_line_fields(name, raw.split(), path, line_of(data, pos + at))
                        at = (stop if eol < 0 else eol + 1) - pos
                        continue
                    _raise(data, path, name, pos + at, err, detail, fixed, line_of)
                pos = stop


class FixedLayoutError(FormatError):
    """A fixed-format line with text in a column its layout keeps blank: the sign that the file may be a free-format
    one HiGHS read in fixed format because of one line (``formats.mps._raise_fixed_switch``). Exit 3 as any
    FormatError."""


def _raise(data, path, section: bytes, at: int, err: int, field: int, fixed: bool, line_of) -> None:
    eol = data.find(b"\n", at)
    raw = bytes(data[at:len(data) if eol < 0 else eol])
    line = line_of(data, at)
    if err == CONTROL:
        byte = raw[field]
        a = max(raw.rfind(b" ", 0, field), raw.rfind(b"\t", 0, field) if not fixed else -1) + 1
        b = [k for k in (raw.find(b" ", field), -1 if fixed else raw.find(b"\t", field)) if k >= 0]
        name = raw[a:min(b) if b else len(raw)].decode("utf-8", "backslashreplace")
        extra = " (tab, VT and FF shift the columns of a fixed-format file)" if byte in (9, 11, 12) else ""
        raise FormatError(f"name {name!r} contains the control character 0x{byte:02x}; names must be "
                          f"printable (HiGHS would keep it and an export would cut the name there){extra}",
                          file=path, line=line, entity=name)
    raw = raw.rstrip(b"\r")
    if err == GAP:
        word = raw[field:].split()[0].decode("utf-8", "backslashreplace")
        where = "after column 12 (a row name is columns 5-12)" if section == b"ROWS" and field == 12 else \
            f"in column {field + 1}, which must be blank"
        raise FixedLayoutError(f"fixed-format {section.decode()} line: text {word!r} starts {where}; HiGHS's "
                          "fixed-format parser reads fields by position (2-3, 5-12, 15-22, 25-36, 40-47, 50-61) "
                          "and would cut or drop it", file=path, line=line, entity=word)
    shown, entity, what = _describe(section, raw, field, fixed)
    sec = section.decode()
    where = f"{sec} field {field + 1}" if not fixed else f"{sec} field {field + 1} (columns " \
        f"{'25-39' if field == 3 else '50-'})"
    if err == INFINITE:
        raise ValidationError(f"{where}: {what} {shown!r} is infinite; copter requires finite costs and "
                              "coefficients", file=path, line=line, entity=entity)
    if re.fullmatch(r"[+-]?nan", shown, re.IGNORECASE):
        raise ValidationError(f"{where}: {what} value is NaN; copter requires numbers (null is not "
                              "expressible in MPS)", file=path, line=line, entity=entity)
    if err == MISSING and fixed and field == 5:
        _raise_long_number(raw, path, section, line)
    if err == MISSING:
        raise FormatError(f"{where}: {what} value is missing", file=path, line=line, entity=entity)
    if err == TINY:
        raise ValidationError(f"{where}: {what} {shown!r} is nonzero but below 1e{TINY_EXPONENT} in magnitude, where a "
                              "double cannot hold it: HiGHS would read it as 0 (below about 2.5e-324) or with fewer "
                              "digits than written, without a word; write 0, or rescale the row or column",
                              file=path, line=line, entity=entity)
    hint = ""
    if fixed and re.fullmatch(rb"[+-]?[0-9.]+[dD][+-]?[0-9]+", shown.encode()):
        hint = " (HiGHS's fixed-format parser reads a D exponent as the end of the number: write E)"
    if section == b"COLUMNS" and b"MARKER" in raw.upper() and b"'MARKER'" not in raw:  # hunt 56: 'marker' 'intorg'
        raise FormatError(f"{where}: {shown!r} is not a number, and the line looks like an integer marker, which "
                          "HiGHS reads only written as 'MARKER' then 'INTORG' or 'INTEND', upper case in single "
                          "quotes (any other spelling is read as a column with a cost)", file=path, line=line,
                          entity=entity)
    raise FormatError(f"{where}: {what} {shown!r} is not a number{hint}; HiGHS would read its leading "
                      "part (or 0) without a word", file=path, line=line, entity=entity)


def _raise_long_number(raw: bytes, path: str, section: bytes, line: int) -> None:
    """A fixed-format line whose value in columns 25-36 runs on past column 39 (``-1.2345678901234567``): the text
    past it reads, by position, as a second row name with no value, which was reported as "field 6 (columns 50-):
    value is missing", and on a BOUNDS line, which has no field 6, with the number's tail as its entity
    (helper-235, session 59). Returns when the line is not such a line."""
    toks = raw[_FIXED_F4:].split()
    if not toks:
        return
    start = raw.find(toks[0], _FIXED_F4)
    end = start + len(toks[0])
    if start >= _FIXED_F5 or end <= _FIXED_F5:
        return
    entity = (raw[4:12] if section == b"COLUMNS" else raw[14:22]).strip().decode("utf-8", "backslashreplace")
    number = toks[0].decode("utf-8", "backslashreplace")
    raise FormatError(f"fixed-format {section.decode()} line: the number {number!r} starting in column {start + 1} runs "
                      f"on to column {end}, past the value field (columns 25-36) into the next field of the fixed "
                      "layout, which copter's checks read by position: write it in at most 12 characters (a name "
                      "without spaces makes the file free format, which has no column limits)",
                      file=path, line=line, entity=entity or None)


def _section_end(data, start: int) -> int:
    """Offset of the first line at or after ``start`` that starts with a letter (a section header)."""
    if data[start:start + 1].isalpha():
        return start
    m = HEADER_START.search(data, start)
    return len(data) if m is None else m.start() + 1
