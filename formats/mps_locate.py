"""The line of an MPS defect HiGHS's reader reports without one (error path only: the read already failed or
warned, so a loop over a section's lines costs nothing on a good file).

* :func:`locate_bad_types`: a ``ROWS`` line whose row type is not N, L, G or E (HiGHS: `Entry "X  c" in ROWS
  section of MPS file is unidentified`) or a ``BOUNDS`` line whose bound type is none of MPS's (HiGHS: `Entry in
  BOUNDS section of MPS file is of type "BI"`, not saying that BI is no bound type); a type in lower case (``l``,
  ``up``) is unknown too, as HiGHS reads it (such a file failed with HiGHS's message alone).
* :func:`locate_duplicate_rows`: a row name ``ROWS`` defines twice (HiGHS: `Linear constraints 0 and 1 have the
  same name "c1"`, a warning).
* :func:`locate_duplicate_values`: a second value for the same row in ``RHS``/``RANGES``, the same side of a
  column's bounds in ``BOUNDS`` or the same coefficient in ``COLUMNS`` (HiGHS keeps the first and warns
  `... has duplicate value 6: ignored`, without a line), and a ``RANGES`` entry on the objective row.
* :func:`locate_split_column`: a column whose ``COLUMNS`` entries come in two separate blocks, which HiGHS reads
  as two columns of the same name (free parser: `Variables 0 and 2 have the same name "x"`, a warning; fixed
  parser: no word, and the names then clash in :class:`~solver.model.problem.Problem`).
* :func:`locate_infinite_bound`: a column lower bound >= 1e20 or upper bound <= -1e20 (``BOUNDS``), or such a row
  side (``RHS``/``RANGES``), which HiGHS refuses with `Col 0 (Col x) has lower bound of 1e+20 >= 1e+20`,
  padded and without a line.
* :func:`locate_large_coefficient`: a ``COLUMNS`` coefficient of magnitude >= 1e15, which HiGHS's reader refuses with
  `HighsSparseMatrix User matrix matrix contains 1 |value| in [1e+20, 1e+20] at/above tolerance of 1e+15`, without
  a line, column or row (helper-190, session 49: every other refused MPS named its line).
* :func:`drop_integral_bound_warnings` / :func:`locate_fractional_integer_bound`: HiGHS's `Bound for LI/UI/SI
  column "x" is 3e+09: not integer` is false for an integral bound beyond 2^31 or an infinite one (dropped) and
  true for ``UI x 2.5`` (a FormatError with the ``BOUNDS`` line).
"""

from __future__ import annotations

import re

from formats.mps_names import _section_spans
from solver.model.errors import FormatError

ROW_TYPES = (b"N", b"L", b"G", b"E")
BOUND_TYPES = (b"UP", b"LO", b"FX", b"FR", b"MI", b"PL", b"BV", b"LI", b"UI", b"SC", b"SI")
_SAME_NAME = re.compile(r'Linear constraints \d+ and \d+ have the same name "(.*)"')
_DUP_VALUE = re.compile(r'Row name "(.*)" in (RHS|RANGES) section has duplicate value')
_DUP_BOUND = re.compile(r'Column name "(.*)" in BOUNDS section has duplicate (upper|lower) bound definition')
_N_ROW_RANGE = re.compile(r'Row name "(.*)" in RANGES section is not valid')
_SAME_COLUMN = re.compile(r'Variables \d+ and \d+ have the same name "(.*)"')
#: HiGHS says "in objective row" for a second cost of a column (free format; hunt 56: it was passed through unlocated)
_DUP_NONZERO = re.compile(r'Column "(.*)" has duplicate nonzero \S+ in (?:objective )?row "(.*)"')
_LARGE_VALUE = re.compile(r"matrix contains \d+ \|value\| in \[\S+, \S+\] at/above tolerance of (\S+)")
_INF_SIDE = re.compile(r"(Col|Row)\s+\d+\s+\((?:Col|Row) (.*)\)\s+has (lower|upper) bound of\s+(\S+)\s+(?:>=|<=)")
LOWER_TYPES = (b"LO", b"LI", b"FX", b"FR", b"MI", b"BV")  #: bound types that set a column's lower bound
UPPER_TYPES = (b"UP", b"UI", b"FX", b"FR", b"PL", b"BV")  #: ... its upper bound


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
        if fields[0] not in ROW_TYPES:  # HiGHS reads only upper case (a section keyword in any case)
            name = _text(fields[1]) if len(fields) > 1 else None
            raise FormatError(f"ROWS line: row type {_text(fields[0])!r} is not N, L, G or E"
                              + upper_case_hint(fields[0], ROW_TYPES), file=path, line=line_of(data, pos),
                              entity=name)
    for pos, fields in _data_lines(data, idx, b"BOUNDS"):
        if fields[0] not in BOUND_TYPES:
            col = _text(fields[2]) if len(fields) > 2 else None
            raise FormatError(f"BOUNDS line: {_text(fields[0])!r} is no bound type (MPS's are "
                              + ", ".join(_text(t) for t in BOUND_TYPES) + ")"
                              + upper_case_hint(fields[0], BOUND_TYPES), file=path, line=line_of(data, pos),
                              entity=col)


def upper_case_hint(kind: bytes, known: tuple[bytes, ...]) -> str:
    """The note for a row or bound type that is a known one in another letter case (``l``, ``Up``), else ""."""
    if kind.upper() not in known:
        return ""
    return (f": MPS types are upper case (HiGHS does not read {_text(kind)!r}; only section keywords match in any "
            f"case): write {_text(kind.upper())!r}")


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


def _second(data, idx: dict, section: bytes, hits) -> tuple[int, int] | None:
    """(offset of the first, offset of the second) data line of ``section`` for which ``hits(fields)`` counts
    occurrences (a line may hold two), or None when there are fewer than two."""
    first, seen = None, 0
    for pos, fields in _data_lines(data, idx, section):
        n = hits(fields)
        if n and first is None:
            first = pos
        seen += n
        if seen >= 2:
            return first, pos
    return None


def locate_duplicate_values(data, path: str, idx: dict, line_of, messages: list[str]) -> None:
    """Turn HiGHS's first "duplicate value" warning (RHS, RANGES, BOUNDS, COLUMNS) into a FormatError naming the
    entity and both lines (line = the second, whose value HiGHS ignores); return when there is none or the lines
    are not found."""
    for msg in messages:
        m = _DUP_VALUE.search(msg)
        if m is not None:
            name, section = m.group(1).encode("utf-8"), m.group(2)
            got = _second(data, idx, section.encode(), lambda f, nm=name: f[:-1].count(nm))
            what = f"{section} gives row {m.group(1)!r} a duplicate value"
            entity = m.group(1)
        elif (m := _DUP_BOUND.search(msg)) is not None:
            name, side = m.group(1).encode("utf-8"), m.group(2)
            types = UPPER_TYPES if side == "upper" else LOWER_TYPES
            got = _second(data, idx, b"BOUNDS",
                          lambda f, nm=name, ts=types: int(f[0].upper() in ts and nm in f[1:3]))
            what, entity = f"BOUNDS gives column {m.group(1)!r} a duplicate {side} bound", m.group(1)
            if got is None:  # HiGHS's side is not the lines' (UP 3 then BV: "duplicate lower bound"; hunt 56)
                got = _second(data, idx, b"BOUNDS", lambda f, nm=name: int(
                    f[0].upper() in LOWER_TYPES + UPPER_TYPES and nm in f[1:3]))
                what = (f"BOUNDS sets bounds of column {m.group(1)!r} on two lines, the second on a side the first "
                        "already set")
        elif (m := _DUP_NONZERO.search(msg)) is not None:
            col, row = m.group(1).encode("utf-8"), m.group(2).encode("utf-8")
            got = _second(data, idx, b"COLUMNS", lambda f, c=col, r=row: f[1:-1].count(r) if f[0] == c else 0)
            what, entity = f"COLUMNS gives column {m.group(1)!r} a duplicate coefficient in row {m.group(2)!r}", \
                m.group(1)
        elif (m := _N_ROW_RANGE.search(msg)) is not None:  # HiGHS ignores a range on an N row
            name = m.group(1).encode("utf-8")
            hit = next((pos for pos, f in _data_lines(data, idx, b"RANGES") if name in f[:-1]), None)
            if hit is not None:
                raise FormatError(f"RANGES names the N (objective or free) row {m.group(1)!r}; a range applies to a "
                                  "constraint (HiGHS would ignore it)", file=path, line=line_of(data, hit),
                                  entity=m.group(1))
            continue
        else:
            continue
        if got is None:
            continue
        first, second = line_of(data, got[0]), line_of(data, got[1])
        where = f"line {first}" if first == second else f"lines {first} and {second}"
        raise FormatError(f"{what} ({where}); HiGHS would keep the first and ignore the second", file=path, line=second,
                          entity=entity)



def locate_split_column(data, path: str, idx: dict, line_of, fixed: bool) -> None:
    """Raise FormatError naming the first column whose ``COLUMNS`` entries resume after another column's (two
    separate blocks: HiGHS reads two columns of the same name, which a delta or a solution cannot tell apart),
    with the lines of both blocks' first entries (line = the second); return when there is none.

    Args:
        data: the file's bytes. idx: section name -> header offsets (``formats.mps._header_index``).
        line_of: ``line_of(data, offset) -> int`` (1-based line number).
        fixed: fixed format (the name is columns 5-12 and may hold spaces), else the first field.
    """
    first: dict[bytes, int] = {}
    current = None
    for lo, hi in _section_spans(data, idx, b"COLUMNS"):
        pos = lo + 1
        for raw in bytes(data[lo + 1:hi]).split(b"\n"):
            at, pos = pos, pos + len(raw) + 1
            fields = raw.split()
            if not fields or raw.startswith(b"*") or b"'MARKER'" in fields:
                continue
            name = raw[4:12].strip() if fixed else fields[0]
            if name == current:
                continue
            if name in first:
                a, b = first[name], line_of(data, at)
                raise FormatError(f"column {_text(name)!r} appears in two separate blocks of COLUMNS (lines {a} and "
                                  f"{b}): HiGHS would read two columns of the same name, which a delta or a solution "
                                  "cannot tell apart; give each column's entries in one block", file=path, line=b,
                                  entity=_text(name))
            first[name], current = line_of(data, at), name


def split_column_named(messages: list[str]) -> bool:
    """Whether HiGHS's free parser warned that two columns have the same name (:func:`locate_split_column`)."""
    return any(_SAME_COLUMN.search(m) for m in messages)


def locate_infinite_bound(data, path: str, idx: dict, line_of, messages: list[str]) -> None:
    """Turn HiGHS's refusal of a lower bound >= 1e20 or an upper bound <= -1e20 (no finite point: copter reads
    a bound of magnitude >= 1e20 as infinite, ``solver.model.problem.INF_BOUND``) into a FormatError naming the
    column or row (entity) and the line that sets it: the last ``BOUNDS`` line of that side for a column, the
    last ``RHS`` line naming the row, else its ``RANGES`` line. Returns when no such message is in ``messages``.

    Args:
        data: the file's bytes. idx: section name -> header offsets. line_of: ``line_of(data, offset) -> int``.
        messages: HiGHS's WARNING/ERROR log lines of the read.
    Raises:
        FormatError: file, line (None when the line is not found), entity.
    """
    m = next((m for m in map(_INF_SIDE.search, messages) if m is not None), None)
    if m is None:
        return
    kind, name, side, value = m.group(1), m.group(2).strip(), m.group(3), m.group(4)
    nm = name.encode("utf-8")
    hit = None
    if kind == "Col":
        types = LOWER_TYPES if side == "lower" else UPPER_TYPES
        for pos, fields in _data_lines(data, idx, b"BOUNDS"):
            if fields[0].upper() in types and nm in fields[1:3]:
                hit = pos
        where, what = "BOUNDS", f"column {name!r}"
    else:
        for section in (b"RHS", b"RANGES"):
            for pos, fields in _data_lines(data, idx, section):
                if nm in fields[1:-1]:
                    hit = pos
            if hit is not None:
                where = section.decode()
                break
        else:
            where = "RHS/RANGES"
        what = f"row {name!r}"
    raise FormatError(infinite_bound_message(f"{where} gives {what}", side, float(value)), file=path,
                      line=line_of(data, hit) if hit is not None else None, entity=name)


def _fixed_fields(data, pos: int, layout: tuple) -> list[bytes]:
    """The fields of the fixed-format line at ``pos`` cut at ``layout``'s 0-based (start, end) columns, stripped."""
    end = data.find(b"\n", pos)
    raw = bytes(data[pos:len(data) if end < 0 else end]).rstrip(b"\r")
    return [raw[a:b].strip() for a, b in layout]


def locate_bad_marker(data, path: str, idx: dict, line_of, fixed: bool) -> None:
    """Name the first integer marker line HiGHS refuses ("Integrality marker error", no line): ``'MARKER'`` followed
    by anything but ``'INTORG'`` or ``'INTEND'`` (``'intorg'``: HiGHS reads the keywords in upper case only;
    helper-235, session 59). Returns when there is none (HiGHS's own message then stands).

    Args:
        data: the file's bytes. idx: section name -> header offsets. line_of: ``line_of(data, offset) -> int``.
        fixed: HiGHS read the file in fixed format (the marker's fields in columns 5-12, 15-22 and 40-47).
    Raises:
        FormatError: file, line, the keyword as entity.
    """
    for pos, fields in _data_lines(data, idx, b"COLUMNS"):
        if fixed:
            fields = _fixed_fields(data, pos, ((4, 12), (14, 22), (39, 47)))
        if len(fields) >= 3 and fields[1] == b"'MARKER'" and fields[2] not in (b"'INTORG'", b"'INTEND'"):
            word = _text(fields[2])
            raise FormatError(f"integer marker {word!r}: HiGHS reads only 'INTORG' and 'INTEND' (upper case, in single "
                              "quotes) after 'MARKER'", file=path, line=line_of(data, pos), entity=word)


def locate_large_coefficient(data, path: str, idx: dict, line_of, messages: list[str], fixed: bool = False) -> None:
    """Turn HiGHS's refusal of a matrix coefficient at or above its ``large_matrix_value`` (1e15) into a FormatError
    naming the first ``COLUMNS`` line with such a coefficient, its column and row (entity ``row/column``, as the MPS
    writer's refusal of the same model names it: ``formats.mps.write_mps``). Returns when no such message is in
    ``messages``, or when no line holds such a value (the message is then HiGHS's own).

    Args:
        data: the file's bytes. idx: section name -> header offsets. line_of: ``line_of(data, offset) -> int``.
        messages: HiGHS's WARNING/ERROR log lines of the read. fixed: HiGHS read the file in fixed format (fields by
            column: a name may hold a space, which the whitespace split misread, so the line went unnamed).
    Raises:
        FormatError: file, line, entity.
    """
    m = next((m for m in map(_LARGE_VALUE.search, messages) if m is not None), None)
    if m is None:
        return
    try:
        limit = float(m.group(1))
    except ValueError:
        limit = 1e15
    lines = list(_data_lines(data, idx, b"ROWS"))
    if fixed:  # type in columns 2-3, name 5-12; COLUMNS: column 5-12, rows 15-22 and 40-47, values 25-36 and 50-61
        lines = [(pos, _fixed_fields(data, pos, ((1, 3), (4, 12)))) for pos, _ in lines]
    objective = {fields[1] for _, fields in lines if len(fields) > 1
                 and fields[0].upper() == b"N"}  # a cost is no matrix coefficient (HiGHS's cost limit is 1e20)
    columns = _data_lines(data, idx, b"COLUMNS")
    if fixed:
        columns = ((pos, [f for f in _fixed_fields(data, pos, ((4, 12), (14, 22), (24, 36), (39, 47), (49, 61)))
                          if f]) for pos, _ in columns)
    for pos, fields in columns:
        for row, value in zip(fields[1::2], fields[2::2], strict=False):
            if row in objective:
                continue
            try:
                v = float(value)
            except ValueError:  # a marker line ('MARKER' 'INTORG'), or a number HiGHS would have refused first
                continue
            if abs(v) >= limit:
                col, r = _text(fields[0]), _text(row)
                raise FormatError(
                    f"COLUMNS gives column {col!r} the coefficient {v:g} in row {r!r}: HiGHS's reader refuses a "
                    f"coefficient of magnitude >= {limit:g} (a big-M this large leaves the other coefficients "
                    "below double precision's reach: scale the row or the column)", file=path,
                    line=line_of(data, pos), entity=f"{r}/{col}")


def infinite_bound_message(subject: str, side: str, value: float) -> str:
    """The error for a lower bound >= 1e20 or an upper bound <= -1e20 (``subject``: "BOUNDS gives column 'x'"), one
    wording for the free- and the fixed-format readers."""
    inf = "a lower bound of +inf" if side == "lower" else "an upper bound of -inf"
    return (f"{subject} the {side} bound {value:g}: a bound of magnitude >= 1e20 means no bound, and {inf} leaves "
            "no finite point")


def fractional_bound_message(name: str, value: str) -> str:
    """The error for an ``LI``/``UI`` bound that is not an integer, for both readers."""
    return (f"BOUNDS gives integer column {name!r} the LI/UI bound {value}, which is not an integer; write the integer "
            "bound meant (LI/UI bounds must be integers)")


_NONINT_BOUND = re.compile(r'Bound for LI/UI/SI column "(.*)" is (\S+): not integer')
_NONINT_SUMMARY = re.compile(r"BOUNDS section: ignored \d+ duplicate values and (\d+) fractional integer bounds")


def drop_integral_bound_warnings(messages: list[str], bounds_of) -> list[str]:
    """HiGHS's MPS reader tests an ``LI``/``UI`` bound for integrality through a 32-bit int, so an integral bound
    beyond 2^31 (``UI x 3e9``, ``1e15``) and an infinite one (``1e20``, ``1e30``, ``inf``: no bound under the
    1e20 rule) warn `Bound for LI/UI/SI column "x" is 3e+09: not integer` although HiGHS keeps the bound as
    written. Return ``messages`` without those warnings (and without the section's `... N fractional integer
    bounds` summary when every one of them was such a false alarm); a genuinely fractional bound (2.5) stays.

    Args:
        messages: HiGHS's WARNING/ERROR log lines of the read.
        bounds_of: ``bounds_of(name) -> (lower, upper)`` of the column as HiGHS read it, or None if unknown.
    Returns:
        The messages to act on (a new list; ``messages`` when there is no such warning).
    """
    hits = [(i, m) for i, m in enumerate(map(_NONINT_BOUND.search, messages)) if m is not None]
    if not hits:
        return messages
    spurious = set()
    for i, m in hits:
        value = float(m.group(2))  # HiGHS prints %g: "1e+20", "3e+09", "inf", "2.5"
        if abs(value) >= 1e20:  # an infinite bound (HiGHS reads it as +-inf): no bound, nothing to round
            spurious.add(i)
            continue
        bounds = bounds_of(m.group(1))
        same = [b for b in bounds or () if f"{b:g}" == m.group(2)]  # the side the warning is about
        if same and all(float(b).is_integer() for b in same):
            spurious.add(i)
    kept = [msg for i, msg in enumerate(messages) if i not in spurious]
    if len(spurious) == len(hits):
        kept = [msg for msg in kept if _NONINT_SUMMARY.search(msg) is None]
    return kept


def locate_fractional_integer_bound(data, path: str, idx: dict, line_of, messages: list[str]) -> None:
    """Turn HiGHS's first `Bound for LI/UI/SI column "x" is 2.5: not integer` warning (after
    :func:`drop_integral_bound_warnings`) into a FormatError naming the column and its ``LI``/``UI`` line: an
    integer bound must be an integer (HiGHS keeps 2.5 and warns; copter does not guess the intended bound).
    Returns when there is no such message.
    """
    m = next((m for m in map(_NONINT_BOUND.search, messages) if m is not None), None)
    if m is None:
        return
    name = m.group(1)
    nm = name.encode("utf-8")
    hit = None
    for pos, fields in _data_lines(data, idx, b"BOUNDS"):
        if fields[0].upper() in (b"LI", b"UI") and nm in fields[1:3]:
            try:
                if f"{float(fields[-1]):g}" == m.group(2) and not float(fields[-1]).is_integer():
                    hit = pos
            except ValueError:
                continue
    raise FormatError(fractional_bound_message(name, m.group(2)), file=path,
                      line=line_of(data, hit) if hit is not None else None, entity=name)
