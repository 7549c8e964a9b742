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
* Keywords after blanks (:func:`check_indented_keywords`): a line whose first field, after leading blanks, is
  ``NAME`` or ``OBJSENSE`` (any case), ``QSECTION``, ``QCMATRIX`` or ``CSECTION`` is taken for a section header.
  Inside ROWS/COLUMNS/RHS/RANGES/BOUNDS (a column, RHS/RANGES vector or bound set named ``name``) the rest of
  that section is then dropped without a word (HiGHS 1.16, checked with highspy on every keyword); an indented
  ``  OBJSENSE MAX`` before ROWS sets the sense where copter's header scan (column 1) would not see it.
  Refused in free format (the fixed-format parser reads such lines as data).
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
_ORDER = {b"NAME": 0, b"OBJNAME": 1, b"ROWS": 2, b"COLUMNS": 3, b"RHS": 4, b"RANGES": 5, b"BOUNDS": 6}
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


_LONE_CR = re.compile(rb"\r(?!\n)")  #: a carriage return that ends no CRLF


def check_line_endings(data, path: str) -> None:
    """Lines must end with LF or CRLF: HiGHS and copter split lines at line feeds, so a file whose lines end with CR
    alone (old Mac OS) is one long line to them, and was refused as missing ENDATA. Only the first line is looked at
    (a search up to its line feed); a lone carriage return further on is named by :func:`check_end` when it hides
    ``ENDATA``, and by the field checks otherwise.

    Raises:
        FormatError: naming line 1.
    """
    e = data.find(b"\n")
    m = _LONE_CR.search(data, 0, len(data) if e < 0 else e + 1)
    if m is None:
        return
    what = "the file's lines end with CR alone (carriage returns without line feeds, as old Mac OS wrote them)" \
        if e < 0 else "line 1 holds a carriage return without a line feed (lines ending with CR alone?)"
    raise FormatError(f"{what}: MPS readers, HiGHS's and copter's, split lines at line feeds and would read the "
                      "lines as one; convert the line endings to LF or CRLF (e.g. tr '\\r' '\\n' < in.mps > out.mps)",
                      file=path, line=1)


def check_end(data, path: str, idx: dict, line_of) -> None:
    """``ENDATA`` must be present, alone on its line, and followed by nothing but blank/comment lines.

    Raises:
        FormatError: missing ENDATA, text on its line, or content after it (naming the line).
    """
    pos = idx.get(b"ENDATA")
    if not pos:
        cr = _LONE_CR.search(data)  # an ENDATA after a lone carriage return starts no line (error path only)
        why = "truncated or incomplete?" if cr is None else \
            f"line {line_of(data, cr.start())} holds a carriage return without a line feed, which starts no line: " \
            "convert the line endings to LF or CRLF"
        raise FormatError(f"ENDATA is missing: the file ends without it ({why})", file=path,
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


#: first fields HiGHS's free parser takes for a section header even after leading blanks (any letter case): a
#: column of such a name cannot be written to MPS (``formats.mps._check_names_writable``)
HEADER_FIELDS = ("NAME", "OBJSENSE", "QSECTION", "QCMATRIX", "CSECTION")
_INDENTED_KEYWORD = re.compile(rb"(?mi)^[ \t]+(" + "|".join(HEADER_FIELDS).encode() + rb")(?=[ \t\r\n]|\Z)")
#: a section keyword alone on an indented line: meant as a header, a one-field data line to the reader
_INDENTED_HEADER = re.compile(rb"(?mi)^[ \t]+(ROWS|COLUMNS|RHS|RANGES|BOUNDS|ENDATA|OBJNAME)[ \t\r]*$")


def check_indented_keywords(data, path: str, idx: dict, line_of) -> None:
    """Refuse a line whose first field, after leading blanks, is a keyword HiGHS's free parser takes for a
    section header there (module docstring), or a section keyword alone on an indented line: two regex scans of
    the text. An indented ``NAME`` before ROWS (the model's name, where nothing is dropped) is let through.

    Raises:
        FormatError: naming the line and the keyword.
    """
    rows = idx.get(b"ROWS", [len(data)])[0]
    m = _INDENTED_HEADER.search(data)
    if m is not None:
        raise FormatError(f"section header {_show(m.group(1))!r} is indented (a data line of one field to the "
                          "reader): start it in column 1", file=path, line=line_of(data, m.start()))
    for m in _INDENTED_KEYWORD.finditer(data):
        word = m.group(1)
        if word.upper() == b"NAME" and m.start() < rows:
            continue
        line = line_of(data, m.start())
        if m.start() < rows:
            raise FormatError(f"{_show(word)!r} is indented: HiGHS would read it as a section header, which copter "
                              "reads only from column 1; start the header in column 1", file=path, line=line)
        raise FormatError(f"a data line starts with {_show(word)!r}: HiGHS's free-format reader takes it for a "
                          "section header and silently drops the rest of the section; rename the column, vector "
                          "or bound set", file=path, line=line, entity=_show(word))


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


def check_section_order(data, path: str, idx: dict, line_of, fixed: bool = False) -> None:
    """Sections must come in the standard order NAME, OBJNAME, ROWS, COLUMNS, RHS, RANGES, BOUNDS (each optional
    but ROWS/COLUMNS; ENDATA last is :func:`check_end`'s). HiGHS reads another order differently without a word: a
    RANGES section before RHS is applied to a right-hand side of 0, its fixed-format parser drops RANGES after
    BOUNDS; an OBJNAME after ROWS is read as a ROWS entry. ``OBJSENSE`` is read by copter itself in free format
    (:func:`objective_sense`, anywhere); in fixed format :func:`check_fixed_objective_sections` places it.
    RANGES and BOUNDS may come in either order unless ``fixed`` (the file was read with the fixed-format parser:
    checked again once that is known); HiGHS's free parser reads BOUNDS before RANGES as the standard order.

    Raises:
        FormatError: naming the misplaced header's line and the section it should follow.
    """
    order = _ORDER if fixed else {**_ORDER, b"BOUNDS": _ORDER[b"RANGES"]}
    top = None
    for p, n in sorted((idx[n][0], n) for n in order if idx.get(n)):
        if top is not None and order[n] < order[top[1]]:
            raise FormatError(f"section order: {top[1].decode()} comes before {n.decode()} (line {line_of(data, p)}); "
                              "MPS sections go in the order NAME, OBJSENSE/OBJNAME, ROWS, COLUMNS, RHS, RANGES, BOUNDS, "
                              "ENDATA (HiGHS "
                              "would read another order differently without a word): move the section",
                              file=path, line=line_of(data, top[0]))
        if top is None or order[n] > order[top[1]]:
            top = (p, n)


def check_fixed_objective_sections(data, path: str, idx: dict, line_of) -> None:
    """A file HiGHS read with its fixed-format parser (a name holds a space): that parser reads ``OBJSENSE`` only
    as the section right after ``NAME``, with the header alone on its line and its one value on a line of its own
    starting in column 3 (``  MAX``; comment lines may come between); elsewhere or laid out otherwise it misreads
    the following sections (columns read as rows, an empty model) with status kOk. It does not read ``OBJNAME``
    (or the ``OBJSENS`` spelling) at all. Layouts verified against HiGHS 1.16.

    Raises:
        FormatError: naming the OBJSENSE/OBJNAME line.
    """
    why = ("this file is read with HiGHS's fixed-format parser (a name holds a space), which reads OBJSENSE only "
           "right after NAME, with its value alone on the next line starting in column 3 (e.g. '  MAX')")
    for n in (b"OBJNAME", b"OBJSENS"):
        if idx.get(n):
            raise FormatError(f"{why}; it does not read {n.decode()}: drop the section", file=path,
                              line=line_of(data, idx[n][0]))
    pos = idx.get(b"OBJSENSE", ())
    if not pos:
        return
    p = pos[0]
    heads = sorted(q for k, qs in idx.items() if k for q in qs)
    k = heads.index(p)
    name = idx.get(b"NAME", ())
    between = bytes(data[_eol(data, name[0]) + 1:p]).split(b"\n")[:-1] if name else []
    after_name = k > 0 and name and heads[k - 1] == name[0] and all(ln[:1] == b"*" for ln in between)
    end = heads[k + 1] if k + 1 < len(heads) else len(data)
    values = []
    q = _eol(data, p) + 1
    while q < end:
        e = _eol(data, q)
        raw = bytes(data[q:e]).rstrip(b"\r")
        if raw[:1] != b"*":
            values.append((raw, line_of(data, q)))
        q = e + 1
    ok = after_name and len(bytes(data[p:_eol(data, p)]).split()) == 1 and len(values) == 1 and \
        values[0][0][:2] == b"  " and values[0][0][2:3] not in (b" ", b"\t", b"")
    if not ok:
        raise FormatError(f"{why}; HiGHS would misread the sections after it without a word", file=path,
                          line=line_of(data, p))


def _data_lines(data, p: int):
    """(offset, line bytes) of the data lines of the section whose header starts at ``p`` (comments and blank
    lines left out)."""
    q = _eol(data, p) + 1
    while q < len(data) and not data[q:q + 1].isalpha():
        e = _eol(data, q)
        raw = bytes(data[q:e]).rstrip(b"\r")
        if raw.strip() and raw[:1] != b"*":
            yield q, raw
        q = e + 1


def check_single_vector_sets(data, path: str, idx: dict, line_of, fixed: bool, is_column) -> None:
    """One vector set per ``RHS``/``RANGES``/``BOUNDS`` section: MPS keeps alternative right-hand sides, ranges or
    bounds under distinct set names, and HiGHS merges them all into one model without a word (GLPK refuses them,
    other readers take the first set only). A line without a set name (``RHS`` with 2 or 4 fields, ``BOUNDS`` without
    one) belongs to no set and goes with any. Free format: the set name is field 1 of ``RHS``/``RANGES`` lines and field 2 of
    ``BOUNDS`` lines that have room for one (4 fields; 3 for ``FR``/``MI``/``PL``/``BV`` when field 2 is no column,
    as HiGHS reads it); fixed format: columns 5-12.

    Raises:
        FormatError: naming the first line with a second set name.
    """
    for sec in (b"RHS", b"RANGES", b"BOUNDS"):
        for p in idx.get(sec, ())[:1]:
            first = None
            for q, raw in _data_lines(data, p):
                toks = raw.split()
                if fixed:
                    name = raw[4:12].strip()
                elif sec == b"RHS":
                    name = toks[0] if len(toks) % 2 else b""
                elif sec == b"RANGES":
                    name = toks[0]
                elif len(toks) >= 4:
                    name = toks[1]
                elif len(toks) == 3 and toks[0].upper() in (b"FR", b"MI", b"PL", b"BV"):
                    name = b"" if is_column(toks[1]) else toks[1]
                else:
                    name = b""
                if not name:
                    continue
                if first is None:
                    first = (name, line_of(data, q))
                elif name != first[0]:
                    raise FormatError(f"{sec.decode()} has a second vector set {_show(name)!r} (the first, "
                                      f"{_show(first[0])!r}, on line {first[1]}); HiGHS would merge the sets into one "
                                      "model without a word: keep one set per section", file=path,
                                      line=line_of(data, q), entity=_show(name))


def check_rhs_on_free_rows(data, path: str, idx: dict, line_of) -> None:
    """Free format: HiGHS's free parser drops a second (third, ...) ``N`` row with its ``COLUMNS`` entries but reads
    an ``RHS`` entry on it as the objective constant. Refused, as its fixed-format parser's case is
    (``formats/mps_fixed_names.py``).

    Raises:
        FormatError: naming the RHS line and the row.
    """
    rows = idx.get(b"ROWS", ())
    if not rows or not idx.get(b"RHS"):
        return
    n_rows = [toks[1] for _, raw in _data_lines(data, rows[0])
              if len(toks := raw.split()) >= 2 and toks[0].upper() == b"N"]
    later = set(n_rows[1:])
    if not later:
        return
    for q, raw in _data_lines(data, idx[b"RHS"][0]):
        toks = raw.split()
        for name in toks[len(toks) % 2::2]:
            if name in later:
                raise FormatError(f"RHS entry names row {_show(name)!r}, a second N (free) row: HiGHS drops that "
                                  "row but would read this entry as the objective constant without a word; remove "
                                  "the entry (or the row)", file=path, line=line_of(data, q), entity=_show(name))
