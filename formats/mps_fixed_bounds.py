"""Row types and column bounds of a fixed-format MPS file, read by copter rather than by HiGHS's fixed parser.

HiGHS reads a file whose names hold spaces with its old fixed-format parser (``HMPSIO.cpp``), which tells a bound
type by its second letter and a row type by one letter, without checking either, so it misreads without a word:

* ``BV`` (``V``) is ignored: no integrality, no [0, 1]; ``LI``/``UI``/``SI`` (``I``) are read as ``MI`` (lower
  bound -inf, no integrality, the value dropped); ``SC`` (``C``) is ignored; an unknown type such as ``XX`` is read
  as ``FX`` and a lower-case one (``up``) is ignored;
* an integer column inside ``MARKER`` lines keeps the upper bound 1 even when a bound line names it (``LO x 2``
  gives the empty box [2, 1]), where the free parser drops that default for any bound line ([2, inf));
* a row type other than ``N``/``L``/``G``/``E`` (``X``, ``g``) makes the row [0, 0].

:func:`fixed_rows_and_bounds` checks the types and recomputes every column's bounds and integrality from the
``BOUNDS`` text with the free-format rules (``formats.mps``), so one model reads alike in either format: numpy
passes over the section's lines (``formats.mps_fixed_duplicates.section_lines``), names matched by ``searchsorted``.
Each side of a column is set by at most one line (:func:`formats.mps_fixed_duplicates.check_fixed_duplicates`
runs first), so the order of the lines does not matter.
"""

from __future__ import annotations

import numpy as np

from formats.mps_fixed_duplicates import section_lines
from formats.mps_locate import (
    BOUND_TYPES,
    LOWER_TYPES,
    UPPER_TYPES,
    fractional_bound_message,
    infinite_bound_message,
    upper_case_hint,
)
from formats.read_notes import note
from solver.model.errors import FormatError, UnsupportedError
from solver.model.problem import INF_BOUND, Problem

_ROW_TYPES = np.array([b"N", b"L", b"G", b"E"], dtype="S2")
_VALUED = np.array([b"UP", b"LO", b"FX", b"LI", b"UI"], dtype="S2")
_INTEGER = np.array([b"BV", b"LI", b"UI"], dtype="S2")


def _field(u8: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """Columns ``lo``..``hi`` (0-based, end excluded) of each line as stripped bytes (S, n)."""
    return np.char.strip(np.ascontiguousarray(u8[:, lo:hi]).view(f"S{hi - lo}").ravel())


def _text(b: bytes) -> str:
    return b.decode("utf-8", "backslashreplace")


def check_fixed_row_types(data, path: str, idx: dict, line_of) -> None:
    """Refuse a ``ROWS`` line whose type (columns 2-3) is not ``N``, ``L``, ``G`` or ``E``.

    Raises:
        FormatError: naming the line and the row (entity).
    """
    u8, offs = section_lines(data, idx, b"ROWS")
    bad = np.flatnonzero(~np.isin(_field(u8, 1, 3), _ROW_TYPES))
    if bad.size:
        k = int(bad[0])
        raise FormatError(f"ROWS line: row type {_text(_field(u8[k:k + 1], 1, 3)[0])!r} is not N, L, G or E "
                          "(HiGHS's fixed-format parser would read the row as [0, 0])", file=path,
                          line=line_of(data, int(offs[k])), entity=_text(_field(u8[k:k + 1], 4, 12)[0]))


def fixed_rows_and_bounds(data, path: str, idx: dict, line_of, problem: Problem) -> Problem:
    """``problem`` (as HiGHS's fixed parser read it) with its row types checked and its column bounds and
    integrality recomputed from ``BOUNDS`` by the free-format rules: defaults [0, inf), [0, 1] for an integer
    column of a ``MARKER`` block that no bound line names; ``BV`` [0, 1] integer, ``LI``/``UI`` integer bounds
    (integers, or of magnitude >= 1e20: no bound), a bound of magnitude >= 1e20 is no bound, and a negative
    ``UP``/``UI`` on a column without a lower-bound line gives lower -inf (with a warning: ``formats.read_notes``).

    Args:
        data: the file's bytes. idx: section name -> header offsets. line_of: ``line_of(data, offset) -> int``.
        problem: the model HiGHS read (its integrality marks the ``MARKER`` blocks only).
    Returns:
        The corrected Problem (the same object when ``BOUNDS`` is absent and no ``MARKER`` default applies).
    Raises:
        FormatError: an unknown bound type (also lower case), a column ``COLUMNS`` does not define, a fractional
            ``LI``/``UI`` bound, a lower bound >= 1e20 or an upper bound <= -1e20, naming line and column.
        UnsupportedError: ``SC``/``SI`` (semi-continuous/semi-integer) bounds.
    """
    check_fixed_row_types(data, path, idx, line_of)
    u8, offs = section_lines(data, idx, b"BOUNDS")
    n = problem.n_cols

    def fail(k: int, message: str, cls=FormatError):
        raise cls(message, file=path, line=line_of(data, int(offs[k])), entity=_text(_field(u8[k:k + 1], 14, 22)[0]))

    kind = _field(u8, 1, 3)
    bad = np.flatnonzero(~np.isin(kind, np.array(BOUND_TYPES, dtype="S2")))
    if bad.size:
        k = int(bad[0])
        fail(k, f"BOUNDS line: {_text(kind[k])!r} is no bound type (MPS's are "
             + ", ".join(_text(t) for t in BOUND_TYPES) + ")" + upper_case_hint(bytes(kind[k]), BOUND_TYPES))
    semi = np.flatnonzero(np.isin(kind, np.array([b"SC", b"SI"], dtype="S2")))
    if semi.size:
        fail(int(semi[0]), "semi-continuous/semi-integer variables are not supported (SC/SI bounds): copter "
             "handles LP/MILP only", UnsupportedError)
    names = np.char.decode(_field(u8, 14, 22), "utf-8", "backslashreplace")
    order = np.argsort(problem.col_names, kind="stable")
    sorted_names = problem.col_names[order].astype(str)
    at = np.searchsorted(sorted_names, names)
    found = (at < n) & (sorted_names[np.minimum(at, max(n - 1, 0))] == names) if n else np.zeros(len(names), bool)
    if not found.all():
        fail(int(np.flatnonzero(~found)[0]), "BOUNDS line names a column that COLUMNS does not define")
    col = order[at] if n else at
    valued = np.isin(kind, _VALUED)
    value = np.zeros(len(kind))
    if valued.any():
        value[valued] = _field(u8[valued], 24, 36).astype(np.float64)  # the tokens were checked (mps_numbers)
    value = np.where(value >= INF_BOUND, np.inf, np.where(value <= -INF_BOUND, -np.inf, value))
    integral = np.isin(kind, _INTEGER)
    frac = np.flatnonzero(integral & valued & np.isfinite(value) & (value != np.round(value)))
    if frac.size:
        k = int(frac[0])
        fail(k, fractional_bound_message(str(names[k]), f"{value[k]:g}"))
    sets_lower = np.isin(kind, np.array(LOWER_TYPES, dtype="S2"))
    sets_upper = np.isin(kind, np.array(UPPER_TYPES, dtype="S2"))
    lo_val = np.where(np.isin(kind, np.array([b"FR", b"MI"], dtype="S2")), -np.inf,
                      np.where(kind == b"BV", 0.0, value))
    up_val = np.where(np.isin(kind, np.array([b"FR", b"PL"], dtype="S2")), np.inf,
                      np.where(kind == b"BV", 1.0, value))
    wrong = np.flatnonzero((sets_lower & (lo_val == np.inf)) | (sets_upper & (up_val == -np.inf)))
    if wrong.size:
        k = int(wrong[0])
        side = "lower" if sets_lower[k] and lo_val[k] == np.inf else "upper"
        fail(k, infinite_bound_message(f"BOUNDS gives column {str(names[k])!r}", side, float(value[k])))
    named = np.zeros(n, dtype=bool)
    named[col] = True
    lower = np.zeros(n)
    upper = np.where(problem.integrality & ~named, 1.0, np.inf)  # the MARKER default, for unnamed columns only
    lower[col[sets_lower]] = lo_val[sets_lower]
    upper[col[sets_upper]] = up_val[sets_upper]
    integer = problem.integrality.copy()
    integer[col[integral]] = True
    has_lower = np.zeros(n, dtype=bool)
    has_lower[col[sets_lower]] = True
    neg = np.isin(kind, np.array([b"UP", b"UI"], dtype="S2")) & (value < 0) & ~has_lower[col]
    if neg.any():
        lower[col[neg]] = -np.inf
        note(f"{path}: {int(np.unique(col[neg]).size)} column(s) with a negative UP bound and no lower bound get "
             f"lower bound -inf (e.g. {str(names[np.flatnonzero(neg)[0]])!r})")
    if (np.array_equal(lower, problem.col_lower) and np.array_equal(upper, problem.col_upper)
            and np.array_equal(integer, problem.integrality)):
        return problem
    return problem.replace(col_lower=lower, col_upper=upper, integrality=integer)
