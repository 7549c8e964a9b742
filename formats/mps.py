"""MPS reading and writing through highspy (HiGHS's own reader), plus what HiGHS lets through.

Conventions (HiGHS 1.16 reader; copter's additions marked *copter*):

* Fixed and free format are both accepted (HiGHS tries free format first and falls back to fixed, so
  names with embedded spaces, as in ``forplan``, read correctly); ``.mps.gz`` is read directly.
* An RHS entry on the objective row is the objective constant with the sign negated (e226: the optimum
  -11.6389 includes the constant 7.113).
* RANGES on an E row: R > 0 gives ``[rhs, rhs + |R|]``, R < 0 gives ``[rhs - |R|, rhs]``; on L/G rows
  the range is ``|R|`` below/above the rhs.
* Integer columns inside ``MARKER INTORG/INTEND`` blocks with no bound get ``[0, 1]`` (HiGHS); any
  explicit bound replaces that default. ``BV`` = binary, ``LI``/``UI`` integer bounds, ``FR`` free,
  ``MI`` lower ``-inf``, ``PL`` upper ``+inf``, ``FX`` fixed. An ``LI``/``UI`` bound must be an integer or
  of magnitude >= 1e20 (no bound): ``UI x 3e9`` and ``UI x 1e20`` read (HiGHS's int32 test warns on them
  falsely, ``formats/mps_locate.drop_integral_bound_warnings``), ``UI x 2.5`` is a ``FormatError`` with its
  line (HiGHS keeps 2.5 with a warning; copter does not guess the bound meant).
* *copter*: a negative ``UP`` bound on a column whose lower bound was not given explicitly sets the
  lower bound to ``-inf`` (the classic convention that CPLEX and HiGHS's fixed-format parser apply;
  HiGHS's free parser keeps 0 and reads an empty box). A warning is logged on stderr.
* A bound (column bound, right-hand side, range) of magnitude >= 1e20 means no bound (``INF_BOUND``: HiGHS's
  ``infinite_bound``, as CPLEX, Gurobi and Xpress read bounds; ``1e30`` and ``inf`` too), so a lower bound
  >= 1e20 or an upper bound <= -1e20 is refused (HiGHS's reader refuses it naming the column or row); a cost or
  coefficient of magnitude >= 1e30 is infinite (``INF_VALUE``) and refused (below). Matrix values of
  magnitude <= 1e-9 are dropped (HiGHS's ``small_matrix_value``), with a HiGHS warning that copter accepts
  and a ``warning:`` line on stderr naming the count and the first one's line (``formats/mps_small_values.py``).
* An empty box (lower > upper) is accepted: the model is infeasible and the solver reports it.
* *copter*: a fixed-format file (HiGHS's fixed parser, for names with spaces) gets the free format's rules: its row
  types and bound types are checked and its column bounds and integrality read from the text
  (``formats/mps_fixed_bounds.py``: HiGHS's fixed parser ignores ``BV``/``SC``, reads ``LI``/``UI``/``SI`` as ``MI``
  and ``XX`` as ``FX``), and a repeated ``RHS``/``RANGES`` value or bound side is refused
  (``formats/mps_fixed_duplicates.py``: that parser keeps the last one without a word).
* *copter* rejects whatever HiGHS logs a WARNING about, even when its read status is kOk (an entry
  naming an undefined row, duplicate row names, duplicate coefficients or bounds of which HiGHS keeps
  the first): ``FormatError`` quoting HiGHS's warning. Only two warnings are accepted: small matrix
  values dropped, and the switch to the fixed-format parser for names with spaces.
* *copter* rejects ``nan`` anywhere and an infinite (>= 1e30) cost or coefficient: ``ValidationError``
  naming the file, line and entity.
* *copter* rejects quadratic (``QUADOBJ``, ``QMATRIX``, ``QSECTION``, ``QCMATRIX``), ``SOS``,
  ``INDICATORS`` sections and semi-continuous/semi-integer bounds (``SC``/``SI``): ``UnsupportedError``
  (copter is LP/MILP only).
* *copter* rejects a free-format data line with more (or fewer) fields than HiGHS reads from it
  (a third row/value pair on a ``COLUMNS``/``RHS`` line, a trailing odd field, a fifth ``BOUNDS``
  field): HiGHS drops them with status kOk and no warning. ``FormatError`` naming file, line and
  entity; the rules and their cost are in ``formats/mps_fields.py``.
* *copter* reads the objective sense itself (HiGHS ignores ``OBJSENSE MAXIMIZE`` on the header line,
  ``OBJSENS``, the one-line form after ``RHS``, and lets a second section override the first) and
  refuses an ``OBJSENSE`` with extra fields or values that disagree; ``OBJNAME`` must name the first
  ``N`` row; a repeated ``ROWS``/``COLUMNS``/``RHS``/``RANGES``/``BOUNDS`` section, a missing ``ENDATA``,
  text on the ``ENDATA`` line or content after it (a second gzip member) and a ``BOUNDS`` set name
  that is also a column name (HiGHS would read it as the column) are refused with the line
  (``formats/mps_sections.py``). Section keywords match in any letter case, as in HiGHS, and a line
  starting in column 1 that is no section header is refused (HiGHS's free parser reads it as data).
  Fixed format: text in a blank column (4, 13-14, 23-24, 48-49) is refused, not cut; only a real
  ``'MARKER'`` field makes an integer marker line (``formats/mps_numbers.py``), and a marker line missing its
  quotes (``MARKER MARKER INTORG``: HiGHS reads a column named MARKER) is refused with its line, and so is, in
  fixed format, a marker keyword starting before column 33 (HiGHS's fixed parser skips that marker silently).
* *copter* rejects, naming the line, what HiGHS would merge or misplace without a word
  (``formats/mps_sections.py``): a section out of the order NAME, OBJNAME, ROWS, COLUMNS, RHS, RANGES, BOUNDS
  (RANGES before RHS was applied to a rhs of 0), a second vector set name in RHS/RANGES/BOUNDS (merged), a
  free-format RHS entry on a second N row (read as the objective constant), and in fixed format an OBJSENSE
  not right after NAME with its value from column 3, or any OBJNAME (a garbage model); integer markers must
  pair up (an unclosed INTORG made every later column integer).
* *copter* rejects a ``BV`` bound line whose value is not 0 or 1 (``BV BND x 5``: the convention and HiGHS
  ignore the value, so the bound the writer meant would be dropped; ``formats/mps_binary_values.py``).
* *copter* rejects an ``OBJSENSE`` section whose value is not MIN/MAX (HiGHS ignores it), an ``FR``/
  ``MI``/``PL`` bound line that carries a value (also ``FR x 5``, 3 fields without a set name), and, in files with integer markers, a column whose
  entries are split into separate blocks (its integrality would be ambiguous): ``FormatError`` with
  the line.
* *copter* rejects a numeric field that is not one whole number token (HiGHS reads ``abc`` as 0,
  ``4.0.0`` as 4, ``12abc`` as 12, ``8,75`` as 8 with status kOk), ``inf`` as a cost or coefficient,
  a ``D`` exponent in a fixed-format file, and a missing bound value: ``FormatError``/
  ``ValidationError`` naming file, line, field and entity (``formats/mps_numbers.py``, one numba pass
  that also applies the field-count rules).
* *copter* rejects a control byte in a name (NUL, ``\\x01``-``\\x1f`` other than separators, ``\\x7f``;
  tabs too in fixed format; same pass) and a ``BOUNDS`` line naming a column ``COLUMNS`` never
  defined (HiGHS's free parser would add an empty column): ``FormatError`` with line and name
  (``formats/mps_names.py``);
  an entry naming an undefined row is reported with its line and name.
* *copter*: a leading UTF-8 byte-order mark is left out (of the text checks and of the copy HiGHS reads, which took
  it for part of the first keyword), and lines must end with LF or CRLF: a file whose lines end with CR alone (old
  Mac OS) is one line to both readers and is refused naming that cause (``formats/mps_sections.py``).
* When HiGHS fails (or warns) on a file that has MPS sections and also a column-1 line that is no
  section header (e.g. ``FOOBAR``), the error names that line ("unknown section") instead of quoting
  HiGHS's follow-up message.
* *copter* rejects names that are not UTF-8 (e.g. a latin-1 ``\xe9``; HiGHS reads the bytes, but
  copter's names are text, stored as UTF-8 in Parquet and states, and guessing an encoding would
  silently rename entities): ``FormatError`` naming the line and the name, suggesting ``iconv``.
  Bytes in comment lines do not matter. A ``.gz`` file that does not decompress is a ``FormatError``
  ("not a readable gzip file").
* Writing uses HiGHS's ``writeModel`` (free-format MPS); ``.mps.gz`` is compressed by copter after
  HiGHS writes plain text. Sense and objective constant are written (``OBJSENSE``, RHS on the
  objective row). *copter* refuses to write an empty name or one with
  whitespace or a control character (``ValidationError`` naming it): free format cannot hold it and HiGHS would silently
  write it renamed (``c_ekk0``, ``my_var``), so the file would no longer match the state by name
  (use Parquet for such names). HiGHS names its vector sets ``RHS_V``, ``RANGE`` and ``BOUND`` whatever the
  model holds; *copter* renames such a set when a row (``RHS_V``, ``RANGE``) or column (``BOUND``) has its name
  (``RHS_V_1``, ...), since a reader takes the set name for that entity. HiGHS's writer also misplaces integer markers around
  an empty zero-cost column, writes a ranged row's range so that its lower bound may read back moved ([0.3, 1e15]
  as [0.25, 1e15]), and leaves out the ``LO 0`` an empty box [0, u < 0] needs: ``formats.mps_write_fixes`` corrects
  the file it wrote. A ranged row whose bounds no range holds exactly (rare: bounds of opposite signs) moves by at
  most an ulp of its range, with a warning naming it; Parquet is exact.

The light text pre-scan finds the section header lines with one regex scan (C speed) and reads the
``OBJSENSE`` and ``BOUNDS`` sections; it parses ``COLUMNS`` lines in Python only when the file has
integer markers. Field counts, number tokens and control bytes are one numba pass over the bytes of the
data sections (``formats/mps_numbers.py``).
"""

from __future__ import annotations

import gzip
import math
import mmap
import os
import re
import shutil
import zlib
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from formats import undo
from formats.atomic import new_temp
from formats.faults import fault_point
from formats.mps_fields import HEADER_START
from formats.mps_fixed_bounds import fixed_rows_and_bounds
from formats.mps_fixed_duplicates import check_fixed_duplicates
from formats.mps_fixed_names import (
    locate_fixed_duplicate_entry,
    locate_fixed_duplicate_row,
    locate_fixed_undefined,
)
from formats.mps_locate import (
    drop_integral_bound_warnings,
    locate_bad_marker,
    locate_bad_types,
    locate_duplicate_rows,
    locate_duplicate_values,
    locate_fractional_integer_bound,
    locate_infinite_bound,
    locate_large_coefficient,
    locate_split_column,
    split_column_named,
)
from formats.mps_names import check_bound_columns, locate_undefined_rows, trailing_empty_columns
from formats.mps_sections import (
    HEADER_FIELDS,
    check_bound_set_names,
    check_end,
    check_fixed_objective_sections,
    check_indented_keywords,
    check_line_endings,
    check_objective_name,
    check_repeated_sections,
    check_rhs_on_free_rows,
    check_section_order,
    check_single_vector_sets,
    objective_row,
    objective_sense,
)
from formats.mps_small_values import small_values_warning
from formats.mps_write_fixes import fix_written_mps
from formats.mps_zero_entries import check_zero_entries
from formats.read_notes import note
from formats.written import check_complete
from solver.highs_bridge import (
    from_highs_lp,
    is_error,
    largest_coefficient,
    new_highs,
    pass_model,
    to_highs_lp,
)
from solver.model.errors import FormatError, InputError, UnsupportedError, ValidationError
from solver.model.problem import INF_VALUE, Problem

UNSUPPORTED_SECTIONS = {
    b"QUADOBJ": "quadratic objective (QUADOBJ)", b"QMATRIX": "quadratic objective (QMATRIX)",
    b"QSECTION": "quadratic section (QSECTION)", b"QCMATRIX": "quadratic constraint (QCMATRIX)",
    b"SOS": "special ordered sets (SOS)", b"INDICATORS": "indicator constraints (INDICATORS)",
    b"CSECTION": "cone constraints (CSECTION)", b"PWLOBJ": "piecewise-linear objective (PWLOBJ)",
}
_SECTIONS = (b"NAME", b"ROWS", b"COLUMNS", b"RHS", b"RANGES", b"BOUNDS", b"ENDATA", b"OBJSENSE",
             b"OBJSENS", b"OBJNAME") + tuple(UNSUPPORTED_SECTIONS)
# HiGHS matches section keywords in any letter case
_HEADER_WORD = re.compile(rb"(?i)(" + b"|".join(sorted(_SECTIONS, key=len, reverse=True)) + rb")(?=[ \t\r\n]|\Z)")
_VALUE_SECTIONS = (b"OBJSENSE", b"OBJSENS", b"OBJNAME")  # their value may sit on a line starting in column 1
_FIXED_FORMAT = "switching to fixed format parser"
# "... with spaces has length 3, so assume fixed format": the free parser met a name with a space in COLUMNS
# (its next warning is the switch to the fixed-format parser, which then reads the file)
_ACCEPTED_WARNINGS = ("at/below tolerance", _FIXED_FORMAT, "so assume fixed format")
_NAN_TOKEN = rb"(?i)(?<![^\s])[+-]?nan(?![^\s])"
_UNWRITABLE_NAME = re.compile(r"[\x00-\x20\x7f]")  # whitespace or a control character inside a name
_MARKER_KEYWORD = re.compile(rb"(?i)'(INTORG|INTEND)'")  # an integer marker's keyword, quotes included
_UTF8_BOM = b"\xef\xbb\xbf"  #: a UTF-8 byte-order mark, which HiGHS takes for part of the first line's keyword


@contextmanager
def _text(path: str):
    """The file's bytes (memory-mapped when plain, decompressed when gzip), without a leading UTF-8 byte-order
    mark (``_UTF8_BOM``: an editor's "UTF-8 with BOM"): the text checks find section headers at line starts, and
    with the mark the first line's (``NAME``) was missed; a fixed-format file's ``OBJSENSE`` after it was then
    refused as misplaced. Line numbers do not change; only such a file is copied."""
    with open(path, "rb") as f:
        head = f.read(2)
        f.seek(0)
        if head == b"\x1f\x8b":
            try:
                raw = gzip.decompress(f.read())
            except (OSError, EOFError, zlib.error) as e:
                raise FormatError(f"not a readable gzip file ({e})", file=path) from None
            yield raw[len(_UTF8_BOM):] if raw.startswith(_UTF8_BOM) else raw
            return
        if os.fstat(f.fileno()).st_size == 0:
            yield b""
            return
        mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            yield mm[len(_UTF8_BOM):] if mm[:len(_UTF8_BOM)] == _UTF8_BOM else mm
        finally:
            mm.close()


def _starts_with_bom(path: str) -> bool:
    """Whether the file (once decompressed, when gzip) starts with a UTF-8 byte-order mark: three bytes read."""
    with open(path, "rb") as f:
        head = f.read(3)
    if head[:2] == b"\x1f\x8b":
        try:
            with gzip.open(path, "rb") as g:
                head = g.read(3)
        except (OSError, EOFError, zlib.error):
            return False
    return head == _UTF8_BOM


def _line_of(data, pos: int) -> int:
    return bytes(data[:pos]).count(b"\n") + 1


def _is_header(data, p: int) -> bool:
    return _HEADER_WORD.match(data, p) is not None


def _header_index(data) -> dict[bytes, list[int]]:
    """Section name (upper case) -> start offsets of its header lines (one regex scan of the text, C
    speed); key ``b""``: lines starting with a letter that are no section header (outside the value lines
    of OBJSENSE/OBJNAME), which HiGHS's free parser would read as data lines."""
    out: dict[bytes, list[int]] = {}
    starts = [m.start() + 1 for m in HEADER_START.finditer(data)]  # lines starting with a letter
    if data[:1].isalpha():
        starts.insert(0, 0)
    current = None
    for p in starts:
        m = _HEADER_WORD.match(data, p)
        if m:
            current = m.group(1).upper()
            out.setdefault(current, []).append(p)
        elif current not in _VALUE_SECTIONS:
            out.setdefault(b"", []).append(p)
    return out


def _section_end(data, start: int) -> int:
    """Offset of the next section header line after ``start`` (a line starting with a letter)."""
    m = HEADER_START.search(data, start)
    return len(data) if m is None else m.start() + 1


def prescan(path: str) -> None:
    """Reject, from the text, what HiGHS would read silently or with an unclear message.

    Raises:
        UnsupportedError: quadratic/SOS/indicator/cone sections.
        FormatError: bad OBJSENSE value, repeated sections, ENDATA missing or followed by content, a
            column-1 line that is no section, split integer columns.
    """
    with _text(path) as data:
        _prescan(data, path, _header_index(data))


def _prescan(data, path: str, idx: dict[bytes, list[int]]) -> int:
    """The checks of :func:`prescan`; returns the objective sense the file states (1 min, -1 max)."""
    check_line_endings(data, path)  # CR alone: one long line, every later check would be about something else
    for name, what in UNSUPPORTED_SECTIONS.items():
        pos = idx.get(name)
        if pos:
            raise UnsupportedError(f"{what} is not supported: copter handles LP/MILP only",
                                   file=path, line=_line_of(data, pos[0]))
    if not any(idx.keys() - {b""}):  # nothing MPS-like at all: HiGHS's own message is as good
        return 1
    check_end(data, path, idx, _line_of)  # what follows ENDATA is its business
    end = idx[b"ENDATA"][0]
    if idx.get(b"") and idx[b""][0] < end:  # HiGHS's free parser reads it as a data line, the fixed one as a section
        _raise_unknown_at(data, path, idx[b""][0])
    check_repeated_sections(data, path, idx, _line_of)
    check_section_order(data, path, idx, _line_of)
    sense = objective_sense(data, path, idx, _is_header, _line_of)  # a bad value is refused before HiGHS reads
    if idx.get(b"COLUMNS") and data.find(b"MARKER") >= 0:
        _check_contiguous_columns(data, path, idx[b"COLUMNS"][0])
    return sense


def _check_valueless_bounds(data, path: str, idx: dict, fixed: bool, is_column=None) -> None:
    """An ``FR``/``MI``/``PL`` bound line carrying a value (HiGHS ignores it): free format, a fourth field, or the
    third of ``FR x 5`` (3 fields whose field 2 is a column and field 3 is not: HiGHS takes field 2 as the column
    whenever it is one, ``formats/mps_sections.py``; ``is_column(name: bytes) -> bool``, None skips this form);
    fixed format, text from column 25 on (a name may hold spaces there).

    Raises:
        FormatError: naming the line.
    """
    pat = rb"(?m)^ (FR|MI|PL) .{20}[ \t]*[^ \t\r\n]" if fixed else \
        rb"(?m)^[ \t]+(FR|MI|PL)[ \t]+\S+[ \t]+\S+[ \t]+\S+"
    three = re.compile(rb"(?m)^[ \t]+(FR|MI|PL)[ \t]+(\S+)[ \t]+(\S+)[ \t\r]*$")
    for p in idx.get(b"BOUNDS", ()):
        end = _section_end(data, p + 1)
        sec = bytes(data[p:end])
        m = re.search(pat, sec)
        if m is None and not fixed and is_column is not None:  # one name lookup per distinct field 2 (a set name)
            cols = {f2 for f2 in {f2 for _, f2, _ in three.findall(sec)} if is_column(f2)}
            m = next((h for h in three.finditer(sec) if h.group(2) in cols and not is_column(h.group(3))),
                     None) if cols else None
        if m:
            raise FormatError(f"bound type {m.group(1).decode()} takes no value",
                              file=path, line=_line_of(data, p + m.start()))


def _check_contiguous_columns(data, path: str, p: int) -> None:
    """In files with integer markers, every column's entries must be one contiguous block (``p``: the
    COLUMNS header offset)."""
    end = _section_end(data, p + 1)
    seen: set = set()
    current = None
    opened = None  # line of the INTORG marker whose block is open
    lines = bytes(data[p:end]).split(b"\n")
    for k, raw in enumerate(lines[1:], start=1):
        toks = raw.split()
        if not toks or raw[:1] == b"*":
            continue
        free = len(toks) == 3 and toks[1] == b"'MARKER'"
        word = _unquoted_marker(toks)
        if word is not None:
            said = "" if toks[1] == b"'MARKER'" else (
                f" (it reads this line as column {toks[0].decode('latin-1')!r} with a coefficient in a row named "
                f"{toks[1].decode('latin-1')!r})")
            raise FormatError(f"integer marker line without its quotes ({b' '.join(toks).decode('latin-1')}): HiGHS "
                              f"reads a marker only as 'MARKER' and '{word.decode()}' in single quotes{said}",
                              file=path, line=_line_of(data, p) + k)
        # fixed format's marker: 'MARKER' filling columns 15-22 as a field of its own; a longer name there (a row
        # "'MARKER'x", which HiGHS's free-format writer puts at column 15) is a data line (helper-205)
        if free or (raw[14:22] == b"'MARKER'" and raw[22:23] in (b"", b" ", b"\t", b"\r")):
            current = None  # a column may not straddle an integer marker
            word = (toks[2] if free else raw[39:47].strip()).upper()
            line = _line_of(data, p) + k
            if word == b"'INTORG'":
                if opened is not None:
                    raise FormatError(f"a second INTORG marker while the integer block opened on line {opened} is "
                                      "not closed: close it with an INTEND marker first", file=path, line=line)
                opened = line
            elif word == b"'INTEND'":
                if opened is None:
                    raise FormatError("INTEND marker with no open INTORG block", file=path, line=line)
                opened = None
            else:
                raise FormatError(f"integer marker keyword {word.decode('latin-1')!r}: only 'INTORG' (open) and "
                                  "'INTEND' (close) are read", file=path, line=line)
            continue
        name = toks[0]
        # a fixed-format name with a space (columns 5-12: 'CAP A'), which split() cuts: its line then has a field
        # count no free-format COLUMNS line has (3 or 5); a free line's columns 5-12 may span two short fields
        # ('x12  r10  1' and 'x12  r105  1' read as one column 'x12  r10' in two blocks, exit 3: helper-228)
        fixed_name = raw[4:12].strip() if raw[:4] == b"    " and len(toks) not in (3, 5) else b""
        if b" " in fixed_name:
            name = fixed_name
        if name != current:
            if name in seen:
                raise FormatError(f"column {name.decode('latin-1')!r} appears in two separate blocks of "
                                  "COLUMNS (its integrality would be ambiguous)", file=path,
                                  line=_line_of(data, p) + k, entity=name.decode("latin-1"))
            seen.add(name)
            current = name
    if opened is not None:
        raise FormatError("INTORG marker without a closing INTEND marker: every later column would silently be "
                          "an integer column (HiGHS reads to the end of COLUMNS); add the INTEND marker",
                          file=path, line=opened)


def _check_fixed_markers(data, path: str, idx: dict) -> None:
    """Fixed format: an integer marker line (``'MARKER'`` in columns 15-22) whose keyword starts before column 33.
    HiGHS's fixed-format parser looks for ``'INTORG'``/``'INTEND'`` only from column 33 on (the field is 40-47;
    highspy 1.16, found by trying every column) and otherwise skips the marker, status OK: the free layout
    ``M  'MARKER'  'INTORG'`` read the block's columns as continuous (a skipped INTEND: every later column integer)
    while copter's marker checks had taken it for a marker.

    Raises:
        FormatError: naming the line and the column the keyword starts in.
    """
    for p in idx.get(b"COLUMNS", ()):
        end = _section_end(data, p + 1)
        for k, raw in enumerate(bytes(data[p:end]).split(b"\n")[1:], start=1):
            if raw[14:22] != b"'MARKER'":
                continue
            m = _MARKER_KEYWORD.search(raw, 22)
            if m is None or m.start() >= 32:  # none: the prescan named the keyword it found
                continue
            word = m.group(1).upper().decode()
            skipped = "every column after it as integer" if word == "INTEND" else "the block's columns as continuous"
            raise FormatError(f"integer marker keyword '{word}' starts in column {m.start() + 1}: HiGHS's fixed-format "
                              "parser (used because a name holds a space) looks for it only from column 33 on (its "
                              f"field is columns 40-47) and would skip this marker, reading {skipped}",
                              file=path, line=_line_of(data, p) + k)


def _unquoted_marker(toks: list[bytes]) -> bytes | None:
    """``INTORG``/``INTEND`` when ``toks`` (a ``COLUMNS`` line's fields) are an integer marker missing a quote
    (``M1 MARKER INTORG``, ``M1 'MARKER' INTEND``: HiGHS takes only the quoted form), else None. The line is never
    data either: its value field is no number."""
    if len(toks) != 3 or toks[1].strip(b"'").upper() != b"MARKER":
        return None
    word = toks[2].strip(b"'").upper()
    if word not in (b"INTORG", b"INTEND") or (toks[1] == b"'MARKER'" and toks[2].upper() == b"'" + word + b"'"):
        return None
    return word


def _find_token_line(path: str, pattern: bytes) -> int | None:
    with _text(path) as data:
        m = re.search(pattern, bytes(data) if not isinstance(data, bytes) else data)
        return None if m is None else _line_of(data, m.start())


def _negative_up_rule(path: str, problem: Problem, fixed: bool = False) -> Problem:
    """Apply "negative UP with no lower bound => lower = -inf" where HiGHS's free parser did not. A fixed-format
    file's bounds are read from its text instead (``formats.mps_fixed_bounds``: HiGHS's fixed parser misreads
    BV/LI/UI/SC/SI, unknown types and MARKER defaults, and applied this rule to an explicit lower bound too)."""
    if fixed:
        with _text(path) as data:
            return fixed_rows_and_bounds(data, path, _header_index(data), _line_of, problem)
    cand = np.flatnonzero((problem.col_lower == 0) & (problem.col_upper < 0))
    if not cand.size:
        return problem
    with _text(path) as data:
        pos = _header_index(data).get(b"BOUNDS", [])
        sec = b"".join(bytes(data[p:_section_end(data, p + 1)]) for p in pos)
    explicit = set()
    cols = None
    for raw in sec.split(b"\n")[1:]:
        toks = raw.split()
        kind = toks[0].upper() if toks and raw[:1] != b"*" else b""
        if kind in (b"LO", b"LI", b"FX") and len(toks) >= 3:  # type [set] column value
            explicit.add(toks[-2])
        elif kind in (b"MI", b"FR", b"BV") and len(toks) >= 2:  # type [set] column [value]
            if len(toks) == 2:
                explicit.add(toks[1])
            elif len(toks) >= 4:
                explicit.add(toks[2])
            else:  # 3 fields: (set, column) or (column, value); HiGHS takes field 2 whenever it is a column
                if cols is None:
                    cols = {str(c).encode("utf-8") for c in problem.col_names.tolist()}
                explicit.add(toks[1] if toks[1] in cols else toks[2])
    names = problem.col_names[cand]
    # names compare as the UTF-8 bytes HiGHS read (copter refuses names that are not UTF-8)
    apply = np.array([str(s).encode("utf-8") not in explicit for s in names], dtype=bool)
    if not apply.any():
        return problem
    lower = problem.col_lower.copy()
    lower[cand[apply]] = -np.inf
    note(f"{path}: {int(apply.sum())} column(s) with a negative UP bound and no lower bound get lower bound -inf "
         f"(e.g. {names[apply][0]!r})")
    return problem.replace(col_lower=lower)


_NO_BOUND = re.compile(r'No bound given for (\w+) row "([^"]*)"')


def _locate_missing_bound_value(data, path: str, idx: dict, messages: list[str]) -> None:
    """HiGHS's "No bound given for UP row "4"" (no line): a 3-field ``BOUNDS`` line whose field 2 is no column,
    so HiGHS took it for the set name and the value for the column (``UP xx 4`` with ``xx`` undefined, or
    ``UP BND 4`` with the column left out) -> FormatError naming that line."""
    m = next((m for m in map(_NO_BOUND.search, messages) if m), None)
    if m is None or not idx.get(b"BOUNDS"):
        return
    kind, name = m.group(1).encode(), m.group(2).encode("utf-8")
    p = idx[b"BOUNDS"][0]
    for k, raw in enumerate(bytes(data[p:_section_end(data, p + 1)]).split(b"\n")[1:], start=1):
        toks = raw.split()
        if raw[:1] != b"*" and len(toks) == 3 and toks[0].upper() == kind and toks[2] == name:
            f2 = toks[1].decode("utf-8", "replace")
            raise FormatError(f"BOUNDS line {raw.strip().decode('utf-8', 'replace')!r} has no value: {f2!r} is no "
                              f"column COLUMNS defines, so HiGHS read it as the bound set and "
                              f"{m.group(2)!r} as the column; name a defined column and its value",
                              file=path, line=_line_of(data, p) + k, entity=f2)


#: HiGHS's free parser on a COLUMNS line it cannot read as free format, naming its text after the column name; a name
#: without a blank means the line held nothing but the column name (``    z``)
_ONE_FIELD_SWITCH = re.compile(r'Row name "([^"\s]+)" with spaces has length \d+, so assume fixed format')


def _raise_name_only_column(data, path: str, idx: dict, messages: list[str]) -> None:
    """A ``COLUMNS`` line holding only a column name (an empty column, ``    z``) in a free-format file: HiGHS's free
    parser takes it for a fixed-format line (a name with spaces) and switches to its fixed-format parser, which reads
    the whole file by column positions (names cut, rows not found); copter's fixed-format checks then blamed another,
    valid line. Called on the error paths only (a fixed-format file may hold such a line as an empty column); one
    regex search of ``COLUMNS`` for the line HiGHS's warning names.

    Raises:
        FormatError: naming the line and the column.
    """
    m = next((m for m in map(_ONE_FIELD_SWITCH.search, messages) if m), None)
    if m is None or not idx.get(b"COLUMNS"):
        return
    name = m.group(1)
    body = data.find(b"\n", idx[b"COLUMNS"][0]) + 1
    if body == 0:
        return
    pat = re.compile(rb"(?m)^[ \t]+" + re.escape(name.encode("utf-8")) + rb"[ \t\r]*$")
    hit = pat.search(data, body, _section_end(data, body))
    if hit is not None:
        raise FormatError(f"COLUMNS line with the column name {name!r} and no row/value pair: HiGHS's free-format "
                          "parser takes such a line for a fixed-format one and would read the whole file by column "
                          "positions (names cut, rows not found); give the column an entry (e.g. its objective row "
                          "with value 0) or drop the line", file=path, line=_line_of(data, hit.start()),
                          entity=name) from None


def _raise_fixed_switch(data, path: str, idx: dict, err: FormatError) -> None:
    """A fixed-format error ``err`` in a file HiGHS read in fixed format because of one line with more fields than a
    free-format line of its section has (HiGHS's free parser takes the extra field for part of a name with a space,
    and says neither which line nor why): hunt 56, ` G c junk` in ROWS made copter blame the valid ` N obj` before
    it, whose name starts in column 4.

    Raises:
        FormatError: naming that line (line = it) with the field count a free-format file cannot have, and ``err``
            as what the fixed-format reading then met, so the author of either kind of file sees the fix; nothing
            (``err`` stands) when no line or more than one line has such a field count (a fixed-format file whose
            names hold spaces), or that line is ``err``'s own. One free-format pass over the data lines' field
            counts; called on the error path only.
    """
    from formats.mps_fields import RULES, bad_field_lines, check_line_fields
    from formats.mps_numbers import FixedLayoutError  # a module with numba kernels: imported on reading only

    if not isinstance(err, FixedLayoutError) or err.line is None:  # only text where the layout keeps a blank
        return
    bad = bad_field_lines(data, idx)
    if len(bad) != 1 or _line_of(data, bad[0][1]) == err.line:
        return
    # err's line must be a data line that is good in free format (` N obj`), not a section's own line
    newlines = np.flatnonzero(np.frombuffer(data, dtype=np.uint8) == 10)
    if err.line - 1 > newlines.size:
        return
    at = 0 if err.line == 1 else int(newlines[err.line - 2]) + 1
    del newlines
    end = data.find(b"\n", at)
    section = max(((o, name) for name, offs in idx.items() for o in offs if o < at), default=(0, b""))[1]
    if section not in RULES or at in idx.get(section, ()) or data[at:at + 1] not in (b" ", b"\t"):
        return
    try:
        check_line_fields(section, bytes(data[at:end if end >= 0 else len(data)]).split(), path, err.line)
    except FormatError:
        return
    name, pos, fields = bad[0]
    try:
        check_line_fields(name, fields, path, _line_of(data, pos))  # raises: the line's free-format field count
    except FormatError as free:
        raise FormatError(f"{free.message.split(';', 1)[0]}; HiGHS takes such a line for a name with a space and "
                          f"reads the whole file in fixed format (fields by column position), where line {err.line} "
                          f"fails: {err.message}. A free-format file: fix line {free.line}; a fixed-format one: fix "
                          f"line {err.line}", file=path, line=free.line, entity=free.entity) from None


def _raise_unknown_section(path: str) -> None:
    """On a failed read: a line starting at column 1 with a word that is no MPS section is the likely
    cause, and says more than HiGHS's follow-up message -> FormatError naming it and its line."""
    with _text(path) as data:
        starts = [m.start() + 1 for m in HEADER_START.finditer(data)]
        if data[:1].isalpha():
            starts.insert(0, 0)
        known = [p for p in starts if _HEADER_WORD.match(data, p) is not None]
        if not known:  # nothing MPS-like at all: its first line starting in column 1 is where it goes wrong
            if starts:
                _raise_unknown_at(data, path, starts[0])
            return
        idx = _header_index(data)
        unknown = [p for p in idx.get(b"", ()) if p < idx.get(b"ENDATA", [len(data)])[0]]
        if unknown:
            _raise_unknown_at(data, path, unknown[0])


def _raise_unknown_at(data, path: str, p: int) -> None:
    end = data.find(b"\n", p)
    word = bytes(data[p:len(data) if end < 0 else end]).split()[0].decode("utf-8", "backslashreplace")[:40]
    raise FormatError(f"not a valid MPS file: unknown section {word!r} (a line starting in column 1 must be "
                      "a section header such as ROWS, COLUMNS, RHS, RANGES, BOUNDS, ENDATA; HiGHS would read "
                      "it as a data line or a section)", file=path, line=_line_of(data, p))


_BLANK_LINE = re.compile(rb"(?m)^[ \t\r]*\n")  #: a line of nothing but blanks (and its newline)


def _highs_read(path: str, data=None):
    """``Highs.readModel(path)`` with its log captured: ``(highs, status, WARNING/ERROR log lines)``.

    A file with blank lines (``data``, its text, holds one) is read from a copy without them: HiGHS's fixed-format
    parser, which reads a file whose names hold spaces, never returns on a blank line (highspy 1.16: a 13-line
    model with one, anywhere, hung for good; an adversarial hunt). Blank lines mean nothing in either format; a
    fixed-format file with one is then refused (:func:`read_mps`), a free-format one read as before. A file starting
    with a UTF-8 byte-order mark is read from a copy without it (``data`` comes without it, :func:`_text`): HiGHS
    takes the mark for part of the first keyword (a file starting ``ROWS`` failed, ``OBJSENSE`` was skipped)."""
    h = new_highs()
    with undo.temporary_folder("copter-mps-") as tmp:
        log = os.path.join(tmp, "highs.log")
        fault_point("sigint_while_reading_mps")  # tests: an interrupt that ends the process with the folder made
        h.setOptionValue("output_flag", True)
        h.setOptionValue("log_to_console", False)
        h.setOptionValue("log_file", log)
        if data is not None and (_BLANK_LINE.search(data) or _starts_with_bom(path)):
            path = os.path.join(tmp, "model.mps")
            with open(path, "wb") as f:
                f.write(_BLANK_LINE.sub(b"", data))
        if path.lower().endswith(".gz") and not path.endswith(".gz"):  # HiGHS takes only a lower-case .gz suffix
            link = os.path.join(tmp, "model.mps.gz")  # (copter's kind_of any case): read x.mps.GZ through a link
            os.symlink(os.path.abspath(path), link)
            status = h.readModel(link)
        else:
            status = h.readModel(path)
        h.setOptionValue("output_flag", False)
        try:
            with open(log, encoding="utf-8", errors="replace") as f:
                messages = [ln.strip() for ln in f if ln.startswith(("WARNING", "ERROR"))]
        except OSError:
            messages = []
    return h, status, messages


def _col_bounds_of(h):
    """``bounds_of(name) -> (lower, upper)`` of a column as HiGHS read it, or None when HiGHS knows no such
    column; HiGHS's model is copied out (``getLp``) once, at the first call, not once per name."""
    lp = []

    def bounds_of(name: str):
        status, j = h.getColByName(name)
        if is_error(status):
            return None
        if not lp:
            lp.append(h.getLp())
        return float(lp[0].col_lower_[j]), float(lp[0].col_upper_[j])

    return bounds_of


def read_mps(path: str | os.PathLike) -> Problem:
    """Read an MPS file (fixed or free format, optionally gzip-compressed) into a Problem.

    Args:
        path: ``.mps`` or ``.mps.gz`` file.
    Returns:
        The canonical Problem (names, bounds, costs, sense, constant, integrality, CSC matrix).
    Raises:
        InputError: missing file. FormatError: HiGHS cannot parse it, or reads it only with a warning
        (see module docstring). UnsupportedError: quadratic/SOS/indicator/semi-continuous content.
        ValidationError: nan, or an infinite cost/coefficient (file, line, entity named).
    """
    from formats.mps_binary_values import check_binary_values  # uses mps_numbers' token patterns
    from formats.mps_numbers import check_data_lines  # a numba kernel: imported by reading only (not export)

    path = str(path)
    if not os.path.isfile(path):
        from formats.path_words import missing_words

        raise InputError(missing_words(path) or "not a regular file", file=path)
    with _text(path) as data:  # one read (one decompression) for the text checks
        if data[:4] == b"PAR1":  # Parquet's magic: its first bytes read as an unknown MPS section
            gz = path.lower().endswith(".gz")
            raise FormatError(f"not an MPS file: it is a {'gzip-compressed ' if gz else ''}Parquet file (it starts "
                              f"with Parquet's magic bytes PAR1{' once decompressed' if gz else ''}); "
                              f"{'decompress it (gunzip) and ' if gz else ''}name it .parquet, which every command "
                              "reads as a Parquet model or delta", file=path)
        idx = _header_index(data)
        sense = _prescan(data, path, idx)
        h, status, messages = _highs_read(path, data)
        fixed = any(_FIXED_FORMAT in m for m in messages)
        blank = _BLANK_LINE.search(data) if fixed else None
        if blank is not None:  # copter's fixed-format line readers take a blank line for a data line
            raise FormatError("a blank line in a file read with HiGHS's fixed-format parser (a name holds a space), "
                              "which cannot read one (HiGHS 1.16 never returned): remove the blank lines",
                              file=path, line=_line_of(data, blank.start()))
        if not is_error(status):
            try:
                if fixed:  # a misplaced OBJSENSE makes that parser read a garbage model (the line checks would blame it)
                    check_fixed_objective_sections(data, path, idx, _line_of)
                    check_section_order(data, path, idx, _line_of, fixed=True)  # it drops RANGES after BOUNDS
                if not fixed:  # before the line checks, which would blame the field count of such a line
                    check_indented_keywords(data, path, idx, _line_of)
                _check_valueless_bounds(data, path, idx, fixed, lambda nm: _is_column(h, nm))
                zeros = check_data_lines(data, path, idx, _line_of, fixed)  # field counts, numbers, control bytes
                if zeros:  # HiGHS drops an entry of 0 before it looks for a repeated one
                    check_zero_entries(data, path, zeros, _line_of)
                if fixed:  # HiGHS's fixed parser keeps a repeated RHS/RANGES value or bound side without a warning
                    check_fixed_duplicates(data, path, idx, _line_of)
                    if data.find(b"MARKER") >= 0:  # and skips a marker whose fields are not in their columns
                        _check_fixed_markers(data, path, idx)
                check_objective_name(data, path, idx, _is_header, _line_of, fixed)
                if not fixed:  # the fixed parser reads the set name by column position
                    check_bound_set_names(data, path, idx, lambda nm: _is_column(h, nm), _line_of)
                    check_rhs_on_free_rows(data, path, idx, _line_of)  # read as the objective constant
                check_single_vector_sets(data, path, idx, _line_of, fixed, lambda nm: _is_column(h, nm))
                check_binary_values(data, path, idx, _line_of, fixed, lambda nm: _is_column(h, nm))  # BV x 5
            except FormatError as err:  # HiGHS read a free-format file as fixed because of a name-only line
                _raise_name_only_column(data, path, idx, messages)
                if fixed:  # ... or of a line with a field too many (` G c junk` read as a name with a space)
                    _raise_fixed_switch(data, path, idx, err)
                raise
    if is_error(status):
        nan_line = _find_token_line(path, _NAN_TOKEN)
        if nan_line is not None:
            _raise_nan_with_entity(path, nan_line)
            raise ValidationError("value is NaN; copter requires numbers (null is not expressible in MPS)",
                                  file=path, line=nan_line)
        _raise_unknown_section(path)
        with _text(path) as data:
            idx = _header_index(data)
            _raise_name_only_column(data, path, idx, messages)  # it made HiGHS read the file as fixed format
            if not any(_FIXED_FORMAT in m for m in messages):  # HiGHS's error may be about what follows such a line
                check_indented_keywords(data, path, idx, _line_of)
            else:  # a misplaced OBJSENSE/OBJNAME: the line checks would blame the lines HiGHS then misread
                check_fixed_objective_sections(data, path, idx, _line_of)
        with _text(path) as data:  # HiGHS names no line for an unknown row or bound type
            idx = _header_index(data)
            locate_bad_types(data, path, idx, _line_of)
            _locate_missing_bound_value(data, path, idx, messages)
        _raise_bad_token(path, any(_FIXED_FORMAT in m for m in messages))  # the likelier cause, named
        with _text(path) as data:  # HiGHS names no line for a lower bound >= 1e20 / an upper one <= -1e20
            idx = _header_index(data)
            locate_infinite_bound(data, path, idx, _line_of, messages)
            locate_large_coefficient(data, path, idx, _line_of, messages,  # nor a |value| >= 1e15
                                     fixed=any(_FIXED_FORMAT in m for m in messages))
        if any("Integrality marker error" in m for m in messages):  # HiGHS names no line for a marker it refuses
            with _text(path) as data:
                locate_bad_marker(data, path, _header_index(data), _line_of, any(_FIXED_FORMAT in m for m in messages))
        if any(_FIXED_FORMAT in m for m in messages):
            with _text(path) as data:  # HiGHS names no line for a repeated coefficient
                locate_fixed_duplicate_entry(data, path, _header_index(data), _line_of, messages)
            _raise_fixed_objsense(path)
        msg = "; ".join(m.split(":", 1)[1].strip() for m in messages if m.startswith("ERROR")
                        and "Parser error reading" not in m)
        raise FormatError(f"not a valid MPS file ({msg or 'HiGHS parser error'})", file=path)
    # HiGHS may log an ignored entry as a WARNING and still return kOk: check the log, not the status
    bad = [m.split(":", 1)[1].strip() for m in messages if m.startswith("WARNING")
           and not any(a in m for a in _ACCEPTED_WARNINGS)]
    bad = drop_integral_bound_warnings(bad, _col_bounds_of(h))  # HiGHS's int32 test: 3e9, 1e20
    if bad:
        _raise_unknown_section(path)
        with _text(path) as data:
            idx = _header_index(data)
            if any("No objective row found" in m for m in bad):
                raise FormatError("ROWS has no objective (N) row; add one (it may have no entries)", file=path,
                                  line=_line_of(data, idx[b"ROWS"][0]) if idx.get(b"ROWS") else None)
            obj = objective_row(data, idx, any(_FIXED_FORMAT in m for m in messages))
            locate_undefined_rows(data, path, idx, _line_of, messages,  # the objective is a row too
                                  lambda nm: not is_error(h.getRowByName(nm)[0]) or nm.encode() == obj)
            if any(_FIXED_FORMAT in m for m in messages):  # HiGHS's fixed parser names no row or line
                locate_fixed_undefined(data, path, idx, _line_of, bad)
            locate_duplicate_rows(data, path, idx, _line_of, bad)
            locate_duplicate_values(data, path, idx, _line_of, bad)
            if split_column_named(bad):
                locate_split_column(data, path, idx, _line_of, any(_FIXED_FORMAT in m for m in messages))
            locate_fractional_integer_bound(data, path, idx, _line_of, bad)
        raise FormatError("ambiguous MPS content HiGHS would ignore: " + "; ".join(bad[:3]), file=path)
    try:
        problem = _to_problem(path, h, fixed)
    except UnicodeDecodeError:  # pybind11 cannot turn a non-UTF-8 name into str
        raise _not_utf8(path) from None
    if problem.sense != sense:  # HiGHS reads OBJSENSE loosely (formats/mps_sections.py): the file decides
        problem = problem.replace(sense=sense)
    if any("at/below tolerance" in m for m in messages):  # entries HiGHS read as 0: say so, naming the first
        with _text(path) as data:
            dropped = small_values_warning(data, path, _header_index(data), _line_of, messages)
        if dropped:
            note(dropped)
    cand = trailing_empty_columns(problem.cost, problem.a_indptr)
    if cand.size and not fixed:  # a BOUNDS line may have invented these columns (free parser)
        with _text(path) as data:
            check_bound_columns(data, path, _header_index(data), problem.col_names[cand].tolist(), _line_of)
    _refuse_name_twins(path, problem)
    return _without_negative_zeros(problem)


def _without_negative_zeros(problem: Problem) -> Problem:
    """``problem`` with every -0.0 cost, bound and constant as 0.0 (``+ 0.0``: one pass each, new arrays only where
    one is found), as a Parquet model or delta is read: an MPS ``LO bnd y -0`` kept -0.0 in the state, its export
    read back as 0.0, and ``diff`` then took a fresh export for a file "edited since" (its digest differed) and
    recorded no base round (helper-227)."""
    fields = {}
    for f in ("cost", "col_lower", "col_upper", "row_lower", "row_upper"):
        v = getattr(problem, f)
        if np.signbit(v[v == 0.0]).any():
            fields[f] = v + 0.0
    if problem.offset == 0.0 and math.copysign(1.0, problem.offset) < 0:
        fields["offset"] = 0.0
    return problem.replace(**fields) if fields else problem


def _refuse_name_twins(path: str, problem: Problem) -> None:
    """Refuse two variables (or two constraints) whose names print alike: the same text in another Unicode
    normalisation, or one with invisible characters the other lacks. A Parquet model or delta with such a pair
    is refused (``solver.differential.intent``); the same model in MPS was read, and ``convert``/``export`` then
    wrote a Parquet file every command refuses (helper-227).

    Raises:
        ValidationError: naming the later name, its twin and the line that first names the later one.
    """
    from solver.differential.intent import first_twin, twin_message

    for what, names, section in (("variable", problem.col_names, b"COLUMNS"), ("constraint", problem.row_names,
                                                                                b"ROWS")):
        pair = first_twin(names)
        if pair is None:
            continue
        nm, twin = str(names[pair[0]]), str(names[pair[1]])
        token = re.escape(nm.encode())
        line = _find_token_line(path, rb"(?m)^\s*(?:\S+\s+)?" + token + rb"(?=\s|$)") if section == b"ROWS" else \
            _find_token_line(path, rb"(?m)^\s*" + token + rb"(?=\s)")
        raise ValidationError(twin_message(what, nm, twin), file=path, line=line, entity=nm)


_BIG_TOKEN = re.compile(rb"(?i)(?<![^\s])[+-]?(?:inf(?:inity)?|(?:[0-9]+\.?[0-9]*|\.[0-9]+)[ed][+-]?[0-9]{3,})(?![^\s])")
_NUMBER_TOKEN = re.compile(rb"(?i)(?<![^\s])[+-]?(?:inf(?:inity)?|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[ed][+-]?[0-9]+)?)(?![^\s])")


def _raise_bad_token(path: str, fixed: bool = False) -> None:
    """On HiGHS's failure: a number token the checks refuse as invalid data (``inf`` cost or coefficient), or one
    that overflows to infinity (``1e400``) where HiGHS then fails on an infinite coefficient or row bound,
    raised naming the line and the entity (returns when there is none; ``fixed``: names by column position)."""
    from formats.mps_numbers import check_data_lines

    with _text(path) as data:
        idx = _header_index(data)
        bad_number = None
        try:
            check_data_lines(data, path, idx, _line_of, False)
        except ValidationError:
            raise
        except FormatError as err:  # a free-format rule may not apply to what HiGHS read as fixed format
            bad_number = err if not fixed else None
        hit = _infinite_token(data, idx, fixed=fixed)
    if hit is None and bad_number is not None:
        raise bad_number  # "nan(1)" as a right-hand side or bound: HiGHS reads a NaN and names no line
    if hit is not None:
        name, line, tok, entity = hit
        what = {b"COLUMNS": "cost or coefficient", b"RHS": "right-hand side", b"RANGES": "range"}[name]
        raise ValidationError(f"{name.decode()}: {what} {tok!r} is infinite, which HiGHS refuses here; costs "
                              "and coefficients must be finite, and a right-hand side or range of magnitude "
                              ">= 1e20 only means 'no bound' where a side can be open", file=path, line=line,
                              entity=entity)


def _infinite_token(data, idx: dict, sections=(b"COLUMNS", b"RHS", b"RANGES"), fixed: bool = False,
                    at_least: float = np.inf):
    """The first number token of ``sections`` that is or overflows to infinity (``inf``, ``1e400``,
    ``2d999``), or with ``at_least`` (``INF_VALUE``) whose magnitude reaches it (``1e30``, ``1e300``: infinity
    by the MPS convention): ``(section, line, token, entity)`` or None (error path only). ``fixed``: names are
    read by column position (5-12 a column, 15-22 or 40-47 the row before the value), as they may hold spaces."""
    for name in sections:
        for p in idx.get(name, ()):
            body = data.find(b"\n", p) + 1
            end = _section_end(data, body) if body > 0 else body
            for m in (_BIG_TOKEN if at_least == np.inf else _NUMBER_TOKEN).finditer(data, body, end):
                tok = m.group()
                if not abs(float(tok.replace(b"d", b"e").replace(b"D", b"e"))) >= at_least:
                    continue
                start = data.rfind(b"\n", 0, m.start()) + 1
                toks = bytes(data[start:m.start()]).split()
                entity = (toks[0] if name == b"COLUMNS" else toks[-1]) if toks else b""
                if fixed:
                    row = (39, 47) if m.start() - start >= 49 else (14, 22)
                    a, b = (4, 12) if name == b"COLUMNS" else row
                    entity = bytes(data[start + a:min(start + b, m.start())]).strip()
                return name, _line_of(data, m.start()), tok.decode(), entity.decode("utf-8", "replace")
    return None


def _raise_fixed_objsense(path: str) -> None:
    """HiGHS's fixed-format parser reads the sense only from columns 3-5 of the line after an ``OBJSENSE``
    header that follows ``NAME``: any other layout makes it fail with "parser error" -> say so."""
    with _text(path) as data:
        pos = _header_index(data).get(b"OBJSENSE", ())
        if pos:
            raise FormatError("this file is read with HiGHS's fixed-format parser (a name holds a space), which "
                              "reads OBJSENSE only right after NAME, with its value alone on the next line "
                              "starting in column 3 (e.g. '  MAX')", file=path, line=_line_of(data, pos[0]))


def _is_column(h, name: bytes) -> bool:
    try:
        return not is_error(h.getColByName(name.decode("utf-8"))[0])
    except UnicodeDecodeError:  # not UTF-8: refused later as such
        return False


def _raise_nan_with_entity(path: str, line: int) -> None:
    """On HiGHS's failure with a ``nan`` token at ``line``: the number scan's error for that line names
    the field and the entity too (raised only if it points at the same line)."""
    from formats.mps_numbers import check_data_lines

    with _text(path) as data:
        try:
            check_data_lines(data, path, _header_index(data), _line_of, False)
        except ValidationError as e:
            if e.line == line:
                raise e from None
        except FormatError:
            pass


def _to_problem(path: str, h, fixed: bool = False) -> Problem:
    """The Problem from a Highs object holding a read model (semi-continuous and number checks)."""
    model = h.getModel()
    if model.hessian_.dim_ > 0:
        raise UnsupportedError("quadratic objective is not supported: copter handles LP/MILP only", file=path)
    h.ensureColwise()
    lp = h.getLp()
    integ = lp.integrality_
    if len(integ):
        kinds = np.fromiter((int(t) for t in integ), dtype=np.int8, count=len(integ))
        semi = np.flatnonzero(kinds >= 2)
        if semi.size:
            nm = lp.col_names_[int(semi[0])] if len(lp.col_names_) else f"C{semi[0]}"
            raise UnsupportedError(f"semi-continuous/semi-integer variables are not supported "
                                   f"({semi.size} column(s), SC/SI bounds)", file=path, entity=nm)
    name = os.path.basename(path)
    for ext in (".gz", ".mps", ".MPS"):
        name = name[:-len(ext)] if name.endswith(ext) else name
    try:
        problem = from_highs_lp(lp, name=name)  # Problem.check: NaN, infinite cost/coefficient
    except ValidationError as e:
        _check_numbers(path, lp, fixed)  # error path only: find the offending line
        if e.message.startswith("duplicate variable name"):  # the fixed parser splits a column without a word
            with _text(path) as data:
                locate_split_column(data, path, _header_index(data), _line_of, fixed)
        if e.message.startswith("duplicate constraint name") and fixed:  # the fixed parser does not warn
            with _text(path) as data:
                locate_fixed_duplicate_row(data, path, _header_index(data), _line_of)
        raise ValidationError(e.message, file=path, entity=e.entity) from None
    big = ~(np.abs(problem.cost) < INF_VALUE)
    if big.any():
        _check_numbers(path, lp, fixed)
    return _negative_up_rule(path, problem, fixed)


def _not_utf8(path: str) -> FormatError:
    """The error for a name that is not UTF-8, naming the first such line outside comments."""
    with _text(path) as data:
        raw = bytes(data)
    pos = 0
    while True:
        try:
            raw[pos:].decode("utf-8")
            return FormatError("a name is not valid UTF-8 text", file=path)
        except UnicodeDecodeError as e:
            bad = pos + e.start
        start = raw.rfind(b"\n", 0, bad) + 1
        end = raw.find(b"\n", bad)
        end = len(raw) if end < 0 else end
        if raw[start:start + 1] != b"*":  # comment lines may hold anything
            break
        pos = end
    tok_start = max(raw.rfind(c, start, bad) for c in (b" ", b"\t")) + 1
    tok_start = max(tok_start, start)
    tok = raw[tok_start:end].split()[0]
    shown = tok.decode("latin-1")
    return FormatError(f"name {shown!r} (shown as latin-1) is not valid UTF-8 (byte 0x{raw[bad]:02x}); "
                       "copter keeps names as UTF-8 text: re-encode the file, e.g. iconv -f latin1 -t utf-8",
                       file=path, line=raw.count(b"\n", 0, start) + 1, entity=shown)


def _check_numbers(path: str, lp, fixed: bool = False) -> None:
    """NaN anywhere, or infinite cost/coefficient -> ValidationError with file, line and entity (``fixed``:
    the file was read as fixed format, its names by column position)."""
    cost = np.asarray(lp.col_cost_)
    checks = [("cost", cost, True, lp.col_names_)]
    for nm, arr, names in (("column lower bound", lp.col_lower_, lp.col_names_),
                           ("column upper bound", lp.col_upper_, lp.col_names_),
                           ("row lower bound", lp.row_lower_, lp.row_names_),
                           ("row upper bound", lp.row_upper_, lp.row_names_)):
        checks.append((nm, np.asarray(arr), False, names))
    value = np.asarray(lp.a_matrix_.value_, dtype=np.float64)
    for nm, arr, finite_required, names in checks + [("coefficient", value, True, None)]:
        if not arr.size:
            continue
        bad = np.isnan(arr)
        if finite_required:
            bad |= ~(np.abs(arr) < INF_VALUE)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            entity = None
            if names is not None and len(names) > i:
                entity = names[i]
            elif names is None:
                start = np.asarray(lp.a_matrix_.start_)
                j = int(np.searchsorted(start, i, side="right") - 1)
                if len(lp.col_names_) > j:
                    entity = lp.col_names_[j]
            v = arr[i]
            if np.isnan(v):
                line = _find_token_line(path, _NAN_TOKEN)
            else:
                with _text(path) as data:
                    hit = _infinite_token(data, _header_index(data), (b"COLUMNS",), fixed, at_least=INF_VALUE)
                line, entity = (hit[1], hit[3]) if hit is not None else (None, entity)
                if hit is not None:
                    v = f"{hit[2]}: magnitudes >= 1e30 mean infinity"
            what = "NaN" if isinstance(v, float) and np.isnan(v) else f"infinite ({v})"
            raise ValidationError(f"{nm} is {what}; copter requires finite costs and coefficients and no NaN",
                                  file=path, line=line, entity=entity)


def _check_names_writable(problem: Problem, path: str) -> None:
    """Refuse names free-format MPS cannot hold: empty, with ASCII whitespace or a control character
    (vectorised: one comparison, one join and one regex scan per name list)."""
    for what, names in (("variable", problem.col_names), ("constraint", problem.row_names)):
        if not names.size:
            continue
        empty = np.flatnonzero(names == "")
        joined = "\uffff".join(names.tolist())  # a separator outside the refused class
        m = _UNWRITABLE_NAME.search(joined)
        if m is None and not empty.size:
            continue
        k = int(empty[0]) if empty.size else len(names)
        if m is not None:
            k = min(k, joined.count("\uffff", 0, m.start()))
        if names[k] != "" and _UNWRITABLE_NAME.search(str(names[k])) is None:  # a name held U+FFFF
            k = next(i for i, s in enumerate(names.tolist()) if s == "" or _UNWRITABLE_NAME.search(s))
        name = str(names[k])
        bad = _UNWRITABLE_NAME.search(name)
        why = "is empty" if name == "" else "contains whitespace" if bad.group() in " \t\r\n\v\f" else \
            f"contains the control character 0x{ord(bad.group()):02x}"
        raise ValidationError(f"{what} name {name!r} {why}: free-format MPS cannot hold it (HiGHS would "
                              "write it renamed); export to .parquet to keep names exactly",
                              file=path, entity=name)
    if problem.col_names.size:
        short = {len(w) for w in HEADER_FIELDS}  # one generator over the names, no fixed-width copy of them all
        name = next((n for n in problem.col_names.tolist() if len(n) in short and n.upper() in HEADER_FIELDS), None)
        if name is not None:
            # a COLUMNS line starts with the column's name: HiGHS's free parser takes it for a section header and
            # drops the rest of the section without a word (a column OBJSENSE: costs [1, 0, 0], objective 0
            # instead of -3; helper-170), and copter's reader refuses the file
            raise ValidationError(f"variable name {name!r} is an MPS section keyword ({', '.join(HEADER_FIELDS)}, any "
                                  "letter case), which HiGHS's free-format reader takes for a section header at the "
                                  "start of a COLUMNS line; export to .parquet to keep names exactly",
                                  file=path, entity=name)
    if problem.row_names.size and bool(np.any(problem.row_names == "'MARKER'")):
        # HiGHS writes an entry in it as "x 'MARKER' 1": a reader takes the line for an integer marker
        raise ValidationError("constraint name \"'MARKER'\" is the integer marker keyword: a COLUMNS line naming it "
                              "reads as a marker line in MPS; export to .parquet to keep names exactly",
                              file=path, entity="'MARKER'")


#: the vector set names HiGHS's MPS writer gives each section whatever the model holds, and the side whose names a
#: set name must not equal (a reader takes such a name for the entity: formats.mps_sections refuses the file)
_WRITER_SETS = ((b"RHS", "RHS_V", "row"), (b"RANGES", "RANGE", "row"), (b"BOUNDS", "BOUND", "col"))


def _rename_clashing_sets(tmp: str, problem: Problem) -> None:
    """Rename, in the file HiGHS wrote at ``tmp``, a vector set whose name is also a row name (``RHS_V``,
    ``RANGE``) or column name (``BOUND``) to the first ``<name>_<k>`` that is none: written as is, HiGHS read the
    file back as another model without a word (``RHS_V RHS_V 10`` is a line without a set name to its free
    parser: every right-hand side 0) and copter refused it. One rewrite of the file, only when a name clashes
    (one vectorised comparison per set otherwise)."""
    renames = {}
    for section, name, side in _WRITER_SETS:
        names = problem.row_names if side == "row" else problem.col_names
        if names.size and bool(np.any(names == name)):
            taken = set(names.tolist())
            k = 1
            while f"{name}_{k}" in taken:
                k += 1
            # the set name follows the line's leading blanks (RHS, RANGES) or its bound type (BOUNDS)
            lead = rb"^(\s+\S+\s+)" if section == b"BOUNDS" else rb"^(\s+)"
            renames[section] = (re.compile(lead + re.escape(name.encode()) + rb"(?=\s)"),
                                rb"\g<1>" + f"{name}_{k}".encode())
    if not renames:
        return
    out = str(new_temp(Path(tmp), ".mps"))
    try:
        with open(tmp, "rb") as src, open(out, "wb") as dst:
            section = b""
            for line in src:
                if line[:1] not in (b" ", b"\t"):
                    section = line.split(None, 1)[0] if line.strip() else section
                elif section in renames:
                    pattern, repl = renames[section]
                    line = pattern.sub(repl, line, count=1)
                dst.write(line)
        os.replace(out, tmp)
    finally:
        if os.path.exists(out):
            os.unlink(out)


def _gzip_member_name(path: str) -> str:
    """The name a gzip header records for ``path``: its base name without ``.gz`` (any letter case), as
    ``gzip`` records the file it compressed (``now.mps.gz`` -> ``now.mps``); ``gzip.GzipFile`` leaves it
    out when it is not latin-1."""
    name = os.path.basename(str(path))
    return name[:-3] if name.lower().endswith(".gz") else name


def write_mps(problem: Problem, path: str | os.PathLike, gzip_name: str | None = None) -> None:
    """Write ``problem`` as free-format MPS via HiGHS; ``.gz`` suffix -> gzip-compressed.

    The gzip header's file name (FNAME, what ``gzip -lN`` and ``gunzip -N`` show) is ``gzip_name`` without its
    ``.gz`` (default: ``path``'s base name): a caller writing to a temporary file renamed later
    (``formats.io.write_problem``) passes the destination's name, which the temporary names must not replace.

    Integer columns' fractional bounds are written rounded inward (ceil lower, floor upper): the same
    integer points, and a file the MPS reader accepts.

    Raises:
        ValidationError: a name free-format MPS cannot hold (empty, or containing whitespace or a
            control character; a constraint named ``'MARKER'``, read back as an integer marker): HiGHS
            would write it renamed (``c_ekk0``, ``my_var``) and the file would no longer match the
            state by name. Nothing is written. InputError: HiGHS refused the model (a coefficient of
            magnitude >= 1e15: the message quotes HiGHS and names the largest coefficient's row and
            column, ``entity`` "row/column") or could not write the file (e.g. the folder does not exist). EnvironmentFaultError: the file HiGHS wrote is incomplete (disk full,
            file size limit): ``path`` is left as it was.
    """
    path = str(path)
    _check_names_writable(problem, path)
    h = new_highs()
    lp = to_highs_lp(problem, with_names=True)
    # the NAME line: other tools (and HiGHS reading it back) expect one; a name with spaces or control
    # characters has them replaced by '_' (free MPS splits fields on whitespace)
    lp.model_name_ = _UNWRITABLE_NAME.sub("_", str(problem.name).strip()) or "copter"
    it = problem.integrality.astype(bool)
    if it.any():
        # an integer column's fractional bound (x in [0.5, 3.7]) is written rounded inward ([1, 3], the same
        # set of integer points, as the integerization does): the MPS reader rejects fractional integer
        # bounds because HiGHS would silently change them
        lo, up = np.array(lp.col_lower_, dtype=np.float64), np.array(lp.col_upper_, dtype=np.float64)
        lo[it], up[it] = np.ceil(lo[it]), np.floor(up[it])
        lp.col_lower_, lp.col_upper_ = lo, up
    reason = pass_model(h, lp, problem)
    if reason is not None:
        big = largest_coefficient(problem)
        raise InputError(f"HiGHS refused the model for writing: {reason}", file=path,
                         entity=None if big is None else f"{big[1]}/{big[2]}")
    gz = path.endswith(".gz")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        from formats.path_words import folder_words

        raise InputError(f"folder {folder} {folder_words(folder)}", file=path)
    # mode 0666 minus the umask, as open(..., 'w') gives (tempfile.mkstemp's 0600 would carry over through
    # os.replace); the name ends in .mps, which HiGHS writes as MPS
    tmp = str(new_temp(Path(path), ".mps"))
    try:
        st = h.writeModel(tmp)
        if is_error(st):
            raise InputError("HiGHS could not write the MPS file", file=path)
        # HiGHS writes through C stdio and returns OK when the writes failed (disk full, ulimit -f): a
        # file cut mid-line must not be renamed into place as a success
        check_complete(tmp, path, b"ENDATA\n", "HiGHS's MPS")
        _rename_clashing_sets(tmp, problem)
        fix_written_mps(tmp, problem.col_names, problem.row_names, problem.cost, np.asarray(lp.col_lower_),
                        np.asarray(lp.col_upper_), it, problem.row_lower, problem.row_upper, problem.a_indptr, path)
        if gz:
            ztmp = str(new_temp(Path(path), ".mps.gz"))  # the destination changes only once complete
            try:
                with open(tmp, "rb") as src, open(ztmp, "wb") as raw, \
                        gzip.GzipFile(_gzip_member_name(gzip_name or path), "wb", 6, raw) as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)
                os.replace(ztmp, path)
            finally:
                if os.path.exists(ztmp):
                    os.unlink(ztmp)
            os.unlink(tmp)
        else:
            os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
