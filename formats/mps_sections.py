"""MPS section rules HiGHS applies loosely, so that the model would silently differ from the file.

HiGHS 1.16's free-format reader (``HMpsFF``) reads these without a word (checked from the text here):

* Objective sense (:func:`objective_sense`): the sense on the ``OBJSENSE`` header line counts only when
  it is exactly ``MAX``/``MIN`` (``OBJSENSE MAXIMIZE`` reads as MIN), the one-line form after ``RHS`` is
  ignored, an ``OBJSENS`` header is no keyword (MIN), ``    MAX junk`` is skipped, and a second section
  silently overrides the first. copter reads the sense itself: the header ``OBJSENSE`` (or ``OBJSENS``
  before ``ROWS``, where HiGHS skips it; after ``ROWS`` it would be read as data and is refused; any
  letter case) with one value on its own line or on the following line(s), ``MIN``/``MINIMIZE``/
  ``MINIMISE``/``MAX``/``MAXIMIZE``/``MAXIMISE`` (any case); every value given must agree. The caller
  sets the Problem's sense from it (HiGHS's own reading is not used).
* ``OBJNAME`` (:func:`check_objective_name`): HiGHS ignores it and takes the first ``N`` row; copter
  accepts ``OBJNAME`` only when it names that row.
* A repeated ``ROWS``/``COLUMNS``/``RHS``/``RANGES``/``BOUNDS``/``OBJNAME`` section
  (:func:`check_repeated_sections`): the second silently overrides (or re-reads) the first.
* ``ENDATA`` (:func:`check_end`): missing (HiGHS says only "parser error"), with text on its line
  (``ENDATA junk`` becomes a data line), or followed by more content (extra lines, a second
  concatenated gzip member), which HiGHS ignores. The one exception is MIPLIB 3's ``IMPORTANCES``
  trailer of branching priorities (``dcmulti``): not model data, ignored with a warning.
* Bound set names (:func:`check_bound_set_names`): HiGHS takes field 2 of a ``BOUNDS`` line as the
  column whenever it is a column name, so ``UP y x 2`` (set ``y``, column ``x``) becomes ``y <= 0``
  (the value read from ``x``). A line with room for a set name (4 fields; 3 for ``FR``/``MI``/``PL``/
  ``BV`` when field 3 is a column too) whose field 2 is a column name is refused as ambiguous.

All run on the section header offsets of the caller's one header scan (``formats/mps.py``); only header
lines, the few lines of OBJSENSE/OBJNAME and, for the bound set names, the ``BOUNDS`` text are read.
"""

from __future__ import annotations

import re

from formats.read_notes import note
from solver.model.errors import FormatError

SENSES = {b"MIN": 1, b"MINIMIZE": 1, b"MINIMISE": 1, b"MAX": -1, b"MAXIMIZE": -1, b"MAXIMISE": -1}
_ONCE = (b"ROWS", b"COLUMNS", b"RHS", b"RANGES", b"BOUNDS", b"OBJNAME")
_SET4 = re.compile(rb"(?m)^[ \t]+[A-Z]{2}[ \t]+(\S+)[ \t]+\S+[ \t]+\S+[ \t\r]*$")  # field 2 of 4-field lines
_SET3 = re.compile(rb"(?m)^[ \t]+(?:FR|MI|PL|BV)[ \t]+(\S+)[ \t]+(\S+)[ \t\r]*$")  # fields 2, 3


def _eol(data, p: int) -> int:
    e = data.find(b"\n", p)
    return len(data) if e < 0 else e


def _show(tok: bytes) -> str:
    return tok.decode("utf-8", "backslashreplace")


def section_values(data, p: int, is_header, line_of, path: str, what: str) -> list[tuple[bytes, int]]:
    """The values of a one-value section (``OBJSENSE``, ``OBJNAME``) whose header line starts at ``p``:
    ``[(value, line)]`` from the header line and the lines after it up to the next section header.

    Args:
        is_header: ``is_header(data, offset) -> bool`` for a line start (the caller's keyword match).
    Raises:
        FormatError: a line with more than one field, or no value at all.
    """
    end = _eol(data, p)
    line = line_of(data, p)
    toks = bytes(data[p:end]).split()[1:]
    out = []
    if len(toks) > 1:
        raise FormatError(f"{what} takes one value, found {len(toks)} fields on its line "
                          f"({' '.join(map(_show, toks))!r}); HiGHS would read only part of it", file=path,
                          line=line)
    if toks:
        out.append((toks[0], line))
    q = end + 1
    while q < len(data):
        if data[q:q + 1].isalpha() and is_header(data, q):
            break
        e = _eol(data, q)
        line += 1
        raw = bytes(data[q:e])
        q = e + 1
        if raw[:1] == b"*" or not raw.strip():
            continue
        toks = raw.split()
        if len(toks) > 1:
            raise FormatError(f"{what} takes one value per line, found {len(toks)} fields "
                              f"({' '.join(map(_show, toks))!r}); HiGHS would skip the line without a word",
                              file=path, line=line)
        out.append((toks[0], line))
    if not out:
        raise FormatError(f"{what} has no value", file=path, line=line_of(data, p))
    return out


def objective_sense(data, path: str, idx: dict, is_header, line_of) -> int:
    """The objective sense written in the file: 1 (minimize, also when no OBJSENSE is given) or -1.

    Raises:
        FormatError: a value other than MIN/MAX (and their long forms), more than one field, or two values
            that disagree (naming the line).
    """
    found: list[tuple[int, bytes, int]] = []
    rows = idx.get(b"ROWS", [len(data)])[0]
    for name in (b"OBJSENSE", b"OBJSENS"):
        for p in idx.get(name, ()):
            if name == b"OBJSENS" and p > rows:
                raise FormatError("OBJSENS after ROWS: HiGHS does not know this spelling and would read it as "
                                  "a data line; write OBJSENSE", file=path, line=line_of(data, p))
            for tok, line in section_values(data, p, is_header, line_of, path, "OBJSENSE"):
                s = SENSES.get(tok.upper())
                if s is None:
                    raise FormatError(f"OBJSENSE must be MIN or MAX, found {_show(tok)!r}", file=path, line=line)
                found.append((s, tok, line))
    found.sort(key=lambda t: t[2])
    for s, tok, line in found[1:]:
        if s != found[0][0]:
            raise FormatError(f"OBJSENSE given twice with different values ({_show(found[0][1])!r} on line "
                              f"{found[0][2]}, {_show(tok)!r} here); HiGHS would keep one without a word",
                              file=path, line=line)
    return found[0][0] if found else 1


def objective_row(data, idx: dict, fixed: bool) -> bytes | None:
    """Name of the first ``N`` row of ``ROWS`` (the objective HiGHS reads), or None."""
    for r in idx.get(b"ROWS", ())[:1]:
        q = _eol(data, r) + 1
        while q < len(data) and not data[q:q + 1].isalpha():
            e = _eol(data, q)
            raw = bytes(data[q:e]).rstrip(b"\r")
            q = e + 1
            toks = raw.split()
            if raw[:1] != b"*" and toks and toks[0] == b"N":
                return raw[4:12].strip() if fixed else (toks[1] if len(toks) > 1 else None)
    return None


def check_objective_name(data, path: str, idx: dict, is_header, line_of, fixed: bool) -> None:
    """``OBJNAME`` must name the first ``N`` row of ``ROWS`` (the objective HiGHS reads).

    Raises:
        FormatError: naming the OBJNAME line and the row.
    """
    for p in idx.get(b"OBJNAME", ()):
        (want, line), *rest = section_values(data, p, is_header, line_of, path, "OBJNAME")
        if rest:
            raise FormatError("OBJNAME takes one value", file=path, line=rest[0][1])
        first = objective_row(data, idx, fixed)
        if first != want:
            shown = "no N row" if first is None else f"the first N row {_show(first)!r}"
            raise FormatError(f"OBJNAME names {_show(want)!r}, but the objective HiGHS reads is {shown} (it "
                              "ignores OBJNAME): list that row as the first N row in ROWS, or drop OBJNAME",
                              file=path, line=line, entity=_show(want))


def check_repeated_sections(data, path: str, idx: dict, line_of) -> None:
    """Refuse a second ROWS/COLUMNS/RHS/RANGES/BOUNDS/OBJNAME section (HiGHS lets it override the first).

    Raises:
        FormatError: naming the second header's line.
    """
    for name in _ONCE:
        pos = idx.get(name, ())
        if len(pos) > 1:
            first = line_of(data, pos[0])
            raise FormatError(f"section {name.decode()} appears a second time (first on line {first}); HiGHS "
                              "would let it silently override (or re-read) the first: merge the two sections",
                              file=path, line=line_of(data, pos[1]))


def check_end(data, path: str, idx: dict, line_of) -> None:
    """``ENDATA`` must be present, alone on its line, and followed by nothing but blank/comment lines.

    Raises:
        FormatError: missing ENDATA, text on its line, or content after it (naming the line).
    """
    pos = idx.get(b"ENDATA")
    if not pos:
        raise FormatError("ENDATA is missing: the file ends without it (truncated or incomplete?)", file=path,
                          line=line_of(data, len(data)))
    p = pos[0]
    e = _eol(data, p)
    toks = bytes(data[p:e]).split()
    if len(toks) > 1:
        raise FormatError(f"ENDATA line has extra text {_show(b' '.join(toks[1:]))!r} (HiGHS would read the "
                          "line as data)", file=path, line=line_of(data, p))
    m = re.compile(rb"\n[ \t\r\f\v]*[^*\s]").search(data, e)
    if m is not None:
        at = m.start() + 1
        raw = bytes(data[at:_eol(data, at)]).strip()
        if raw == b"IMPORTANCES":  # MIPLIB 3's branching priorities (dcmulti): not model data
            note(f"{path}: branching priorities (IMPORTANCES) after ENDATA ignored")
            return
        raise FormatError(f"content after ENDATA ({_show(raw[:40])!r}); HiGHS stops reading at ENDATA and "
                          "would ignore it (two files concatenated?)", file=path, line=line_of(data, at))


def check_bound_set_names(data, path: str, idx: dict, is_column, line_of) -> None:
    """Refuse a ``BOUNDS`` line whose bound set name (field 2) is also a column name (free format).

    Args:
        is_column: ``is_column(name: bytes) -> bool`` (a HiGHS name lookup); called once per distinct
            field 2 of the lines that have room for a set name.
    Raises:
        FormatError: naming the line and the name.
    """
    for p in idx.get(b"BOUNDS", ()):
        body = _eol(data, p) + 1
        m = re.compile(rb"\n[A-Za-z]").search(data, body - 1)
        end = len(data) if m is None else m.start() + 1
        sec = bytes(data[body:end])
        bad = [f2 for f2 in set(_SET4.findall(sec)) if is_column(f2)]  # C-speed scans, few distinct names
        pairs = _SET3.findall(sec)
        cols = {f2 for f2 in {a for a, _ in pairs} if is_column(f2)}
        if cols:
            bad += [a for a, b in pairs if a in cols and is_column(b)][:1]
        if bad:
            f2 = bad[0]
            hit = re.compile(rb"(?m)^[ \t]+[A-Za-z]{2}[ \t]+" + re.escape(f2) + rb"[ \t]+\S+").search(sec)
            f3 = hit.group().split()[2]
            raise FormatError(f"BOUNDS line: bound set name {_show(f2)!r} is also a column name; HiGHS would "
                              f"read {_show(f2)!r} as the column (and {_show(f3)!r} as its value or nothing): "
                              "rename the bound set", file=path, line=line_of(data, body + hit.start()),
                              entity=_show(f2))
