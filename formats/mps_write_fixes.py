"""Corrections to the MPS file HiGHS 1.16's writer produces, where reading it back gives another model.

Found by session 33's hunt (helper-161), each checked with highspy alone:

* **Markers around an empty column.** A column with no entries and cost 0 is written as ``name Obj 0`` without
  the marker switch its integrality needs. It reads back with the integrality of the column written before it
  (the first column: continuous), so a continuous one after an integer column became integer, and an empty
  integer column continuous. Fix: such a line is wrapped in the markers it needs (``INTEND``/``INTORG`` around a
  continuous one inside an integer block, ``INTORG``/``INTEND`` around an integer one outside), which leaves the
  marker state of the lines after it unchanged.
* **Ranged rows.** A row with both bounds finite (l < u) is written ``L`` with right-hand side u and range
  R = u - l; a reader takes l' = u - R, which differs from l whenever u - l is not exact: [1.8, 5] read back as
  [1.7999999999999998, 5], [0.3, 1e15] as [0.25, 1e15], [-2.333, 3.25e18] as [0, 3.25e18]. Fix: the range is
  chosen among R and its neighbours (a few ulps) so that u - R is l exactly; failing that, the row is written
  ``G`` with right-hand side l and a range R with l + R = u exactly. A row neither form holds exactly (bounds of
  opposite signs whose range has a coarser ulp than they do: [-0.1, 0.7]) is written in the form whose moved
  bound moves least (at most an ulp of the range) and a warning names it (:func:`inexact_ranges_warning`):
  Parquet keeps every bound. A row with lower > upper (no model copter reads holds one) is refused.
* **Empty boxes with a negative upper bound.** A column with lower bound 0 and upper bound < 0 is written with
  its ``UP``/``UI`` line alone (0 is the default lower bound), and a reader then applies the negative-UP rule
  (lower = -inf): an infeasible box became a feasible column. Fix: an explicit ``LO`` line of 0 before it.

The checks are vectorised over the columns and rows; the file is rewritten only when a fix applies, by copying
its text around the lines that change, found by one pass over each section concerned (COLUMNS by a byte search
for its empty columns' lines, the row and bound sections by one regex pass) with the edits looked up by name.
"""

from __future__ import annotations

import mmap
import os
import re
from pathlib import Path

import numpy as np

from formats.atomic import new_temp
from solver.model.errors import ValidationError

#: ulps either side of u - l tried for a ranged row's range
RANGE_ULPS = 4


def empty_marker_columns(integer: np.ndarray, empty_zero: np.ndarray) -> np.ndarray:
    """Columns HiGHS's writer gives the wrong integrality (module docstring): empty zero-cost columns whose
    integrality differs from the marker state at their line (that of the last column before them that is not
    such a column; continuous before the first). integer, empty_zero: (n,) bool. Returns int64 indices."""
    n = integer.size
    if n == 0 or not empty_zero.any():
        return np.zeros(0, dtype=np.int64)
    idx = np.where(~empty_zero, np.arange(n), -1)
    last = np.maximum.accumulate(idx)  # the last column at or before j that moves the marker state
    prev = np.concatenate(([-1], last[:-1]))
    state = np.where(prev >= 0, integer[np.maximum(prev, 0)], False)
    return np.flatnonzero(empty_zero & (integer != state)).astype(np.int64)


def _neighbours(r: np.ndarray) -> list[np.ndarray]:
    out, up, down = [r], r, r
    for _ in range(RANGE_ULPS):
        up, down = np.nextafter(up, np.inf), np.nextafter(down, -np.inf)
        out += [up, down]
    return out


def ranged_row_forms(lower: np.ndarray, upper: np.ndarray):
    """For the ranged rows (both bounds finite, l < u) that HiGHS's ``L`` form with range u - l does not read back
    exactly: (rows, their form: 0 ``L`` with the range given, 1 ``G`` with right-hand side l, the range to write,
    exact). A row no range near u - l holds exactly in either form (bounds of opposite signs and a range whose ulp
    exceeds theirs: [-0.1, 0.7] has none) gets the form whose moved bound moves least, by at most an ulp of the
    range, and ``exact`` False. lower, upper: (m,) float64."""
    rows = np.flatnonzero(np.isfinite(lower) & np.isfinite(upper) & (lower < upper))
    lo, up = lower[rows], upper[rows]
    bad = up - (up - lo) != lo
    rows, lo, up = rows[bad], lo[bad], up[bad]
    form = np.full(rows.size, -1, dtype=np.int64)
    rng = np.zeros(rows.size)
    r0 = up - lo
    for r in _neighbours(r0):  # the L form: a reader computes u - |R|
        hit = (form < 0) & (r > 0) & (up - r == lo)
        form[hit], rng[hit] = 0, r[hit]
    for r in _neighbours(r0):  # the G form: l + |R|
        hit = (form < 0) & (r > 0) & (lo + r == up)
        form[hit], rng[hit] = 1, r[hit]
    exact = form >= 0
    g_better = np.abs(lo + r0 - up) < np.abs(up - r0 - lo)
    form[~exact] = np.where(g_better[~exact], 1, 0)
    rng[~exact] = r0[~exact]
    return rows, form, rng, exact


def inexact_ranges_warning(row_names, row_lower: np.ndarray, row_upper: np.ndarray) -> str | None:
    """The warning of writing ranged rows no MPS range holds exactly (:func:`ranged_row_forms`), naming the first
    and the bounds it is read back with; None when there is none. ``formats.mps_infinity.written_warnings`` adds
    it to ``export``'s and ``convert``'s warnings (``--json`` too)."""
    rows, form, rng, exact = ranged_row_forms(row_lower, row_upper)
    if exact.all():
        return None
    k = int(np.flatnonzero(~exact)[0])
    r, lo, up, v = int(rows[k]), float(row_lower[rows[k]]), float(row_upper[rows[k]]), float(rng[k])
    got = (lo, lo + v) if form[k] == 1 else (up - v, up)
    return (f"{int((~exact).sum())} ranged row(s) whose bounds no MPS range holds exactly (a reader derives one bound "
            f"from the other and the range): each moved bound moves by at most an ulp of its range, e.g. row "
            f"{str(row_names[r])!r} [{lo!r}, {up!r}] is read back as [{got[0]!r}, {got[1]!r}]; Parquet keeps every "
            "bound exactly")


def _num(v: float) -> bytes:
    return repr(float(v)).encode()


class _Edits:
    """Replacements (start, end, new bytes) of a text, applied in one copy."""

    def __init__(self, data, path: str):
        self.data, self.path, self.out = data, path, []

    def missing(self, what: str):
        """HiGHS's writer changed its layout: refuse rather than write a file that may be wrong."""
        raise ValidationError(f"could not find {what} in the MPS file HiGHS wrote; write Parquet instead",
                              file=self.path)

    def write(self, tmp: str) -> None:
        out = str(new_temp(Path(tmp), ".mps"))
        try:
            with open(out, "wb") as dst, memoryview(self.data) as view:  # no copy of the text in between
                pieces, at = [], 0
                for a, b, text in sorted(self.out, key=lambda e: (e[0], e[1])):  # stable: insertions in order
                    pieces += (view[at:a], text)
                    at = b
                pieces.append(view[at:])
                dst.writelines(pieces)
                del pieces
            os.replace(out, tmp)
        finally:
            if os.path.exists(out):
                os.unlink(out)


_HEADERS = (b"ROWS", b"COLUMNS", b"RHS", b"RANGES", b"BOUNDS", b"ENDATA")  #: HiGHS's section headers, in order


def _sections(data) -> dict[bytes, tuple[int, int]]:
    """Section name -> (start of its first data line, start of the next header line) for the headers HiGHS
    writes, each found by a plain byte search (``mmap.find``: ~0.02 s on 50 MB, where a multiline regex scan took
    0.1 s a section); absent sections are left out."""
    at = {}
    for name in _HEADERS:
        p = data.find(b"\n" + name + b"\n")
        if p >= 0:
            at[name] = p + 1
    order = sorted(at.items(), key=lambda kv: kv[1])
    return {name: (start + len(name) + 1, order[k + 1][1] if k + 1 < len(order) else len(data))
            for k, (name, start) in enumerate(order)}


def fix_written_mps(tmp: str, col_names, row_names, cost, col_lower, col_upper, integer, row_lower, row_upper,
                    a_indptr, path: str) -> None:
    """Apply the module's corrections to the MPS file at ``tmp`` written by HiGHS from these arrays (as passed to
    it: integer columns' bounds already rounded inward). Arrays: (n,) / (m,) / a_indptr (n+1,); ``path``: the
    destination, which the warning and errors name. Raises ValidationError (the file's layout not as expected:
    a line to correct not found)."""
    empty = np.flatnonzero(row_lower > row_upper)
    if empty.size:  # HiGHS writes L with a negative range: read back as a feasible row ([5, 3] as [1, 3])
        r = int(empty[0])
        raise ValidationError(f"row {row_names[r]!r} has lower bound {float(row_lower[r])!r} > upper bound "
                              f"{float(row_upper[r])!r}, which MPS cannot write (it would read back as another row); "
                              "write Parquet", file=path, entity=str(row_names[r]))
    empty_zero = (np.diff(a_indptr) == 0) & (cost == 0)
    marks = empty_marker_columns(integer, empty_zero)
    rows, form, rng, _ = ranged_row_forms(row_lower, row_upper)  # inexact ones: inexact_ranges_warning
    boxes = np.flatnonzero((col_lower == 0) & (col_upper < 0))
    if not (marks.size or rows.size or boxes.size):
        return
    with open(tmp, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
        ed, spans = _Edits(data, path), _sections(data)
        if marks.size:
            _fix_markers(ed, data, spans, [str(col_names[j]) for j in marks.tolist()], integer[marks])
        if rows.size:
            _fix_ranges(ed, data, spans, [str(row_names[i]) for i in rows.tolist()], form, rng, row_lower[rows])
        if boxes.size:
            _fix_boxes(ed, data, spans, [str(col_names[j]) for j in boxes.tolist()])
        ed.write(tmp)


def _fix_markers(ed: _Edits, data, spans: dict, names: list[str], integer: np.ndarray) -> None:
    """Wrap each of these empty zero-cost columns' lines in the markers its integrality needs (module docstring).
    HiGHS writes such a column as its one line ``name Obj 0``; every other COLUMNS line holds a nonzero value, and a
    marker line holds 'MARKER' (a column named like HiGHS's marker lines, ``MARK0001``, is found by its own line). So
    the lines are found by a byte search for `` 0`` at a line's end (C speed over COLUMNS), the columns looked up by
    name: 25,017 columns to wrap among 50,002 empty ones of 250,000 (1M nonzeros) in 0.3 s, where one regex pass over
    the section took 0.7 s and a compiled search per column most of 40 s."""
    lo, hi = spans.get(b"COLUMNS", (0, 0))
    todo = {n.encode(): bool(i) for n, i in zip(names, integer.tolist(), strict=True)}
    k, pos = 0, lo
    while todo:
        q = data.find(b" 0\n", pos, hi)
        if q < 0:
            break
        start, end, pos = data.rfind(b"\n", lo - 1, q) + 1, q + 3, q + 3
        toks = data[start:end].split()
        if len(toks) != 3 or toks[1] == b"'MARKER'":
            continue
        is_int = todo.pop(toks[0], None)
        if is_int is None:
            continue
        a, b = (b"INTORG", b"INTEND") if is_int else (b"INTEND", b"INTORG")
        ed.out.append((start, start, b"    CPTR%04d  'MARKER'                 '%s'\n" % (2 * k, a)))
        ed.out.append((end, end, b"    CPTR%04d  'MARKER'                 '%s'\n" % (2 * k + 1, b)))
        k += 1
    if todo:
        ed.missing(f"column {next(iter(todo)).decode()!r}'s line")


#: a data line of RHS or RANGES as HiGHS writes them (set, row, value), a ROWS line (type, name) and an upper bound
#: line of BOUNDS (type, set, column, value); ``name`` is the entity an edit is looked up by, ``edit`` what it replaces
_ENTRY = re.compile(rb"(?m)^[ \t]+\S+[ \t]+(?P<name>\S+)[ \t]+(?P<edit>\S+)[ \t\r]*$")
_ROW = re.compile(rb"(?m)^[ \t]+(?P<edit>[A-Z])[ \t]+(?P<name>\S+)[ \t\r]*$")
_UPPER = re.compile(rb"(?m)^(?P<edit>)[ \t]+(?:UP|UI)[ \t]+(?P<set>\S+)[ \t]+(?P<name>\S+)[ \t]")


def _edit_section(ed: _Edits, data, span, pattern: re.Pattern, edits: dict, what: str, check=None) -> None:
    """One regex pass over a section ``span`` (start, end) whose lines are rows or columns, never nonzeros: each
    line whose ``name`` has an entry in ``edits`` (name -> bytes, or a function of the match) gets its ``edit``
    group replaced; ``check(match)`` may refuse a line. An entry whose line is missing is refused (HiGHS's layout
    changed)."""
    if edits and span[0] >= 0:
        for m in pattern.finditer(data, *span):
            new = edits.pop(m["name"], None)
            if new is not None:
                if check is not None:
                    check(m)
                ed.out.append((*m.span("edit"), new(m) if callable(new) else new))
    if edits:
        ed.missing(f"{what} of {next(iter(edits)).decode()!r}")


def _fix_ranges(ed: _Edits, data, spans: dict, names: list[str], form: np.ndarray, rng: np.ndarray,
                lower: np.ndarray) -> None:
    """Ranged rows' edits (module docstring): the range, and for the G form the row type and right-hand side. A
    G-form row has u != 0 (with u = 0 the L form is exact: 0 - (0 - l) = l), so HiGHS wrote its RHS line. One
    regex pass over each of the RANGES, ROWS and RHS sections, the edits looked up by name: 22,718 rows to fix in a
    100,000-row model (500,000 nonzeros) took 4.2 s searched one by one, 0.35 s so (HiGHS's write: 0.5 s)."""
    keys = [n.encode() for n in names]
    g_rhs = {k: _num(lo) for k, f, lo in zip(keys, form.tolist(), lower.tolist(), strict=True) if f == 1}

    def only_l(m):
        if m["edit"] != b"L":
            raise ValidationError(f"row {m['name'].decode()!r} is written {m['edit'].decode()!r}, not as the L row "
                                  "with a range expected; write Parquet instead", file=ed.path)

    none = (-1, -1)
    _edit_section(ed, data, spans.get(b"RANGES", none), _ENTRY,
                  dict(zip(keys, (_num(r) for r in rng.tolist()), strict=True)), "the range")
    _edit_section(ed, data, spans.get(b"ROWS", none), _ROW, dict.fromkeys(g_rhs, b"G"), "the row type", only_l)
    _edit_section(ed, data, spans.get(b"RHS", none), _ENTRY, g_rhs, "the right-hand side")


def _fix_boxes(ed: _Edits, data, spans: dict, names: list[str]) -> None:
    """An explicit ``LO`` of 0 before each of these columns' ``UP``/``UI`` line (module docstring): one pass over
    BOUNDS, the columns looked up by name."""
    def lower_zero(m):
        return b" LO %s  %s  0\n" % (m["set"], m["name"])

    _edit_section(ed, data, spans.get(b"BOUNDS", (-1, -1)), _UPPER,
                  dict.fromkeys((n.encode() for n in names), lower_zero), "the upper bound")
