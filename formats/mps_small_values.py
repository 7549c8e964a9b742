"""The warning for matrix values HiGHS's MPS reader drops as zero (magnitude <= 1e-9, its ``small_matrix_value``).

HiGHS reads ``x c1 1e-12`` as no entry and logs `User matrix matrix contains 1 |value| in [1e-12, 1e-12] at/below
tolerance of 1e-09: ignored`, which copter accepts (netlib's gas11 holds 12 entries of 1e-9), but the model changes:
``min -x - 2y`` with ``1e-12 x + y <= 10`` has its optimum at x = 1e13, and without the entry it is unbounded. A
delta refuses such a coefficient (exit 3); an MPS file now says what was dropped (:func:`small_values_warning`).
"""

from __future__ import annotations

import re

from formats.mps_names import _section_spans

_DROPPED = re.compile(r"contains\s+(\d+)\s+\|value\| in \[(\S+), (\S+)\] at/below tolerance of (\S+): ignored")
# a number token with an exponent of -9 or below: the candidates for the first dropped value (C-speed search)
_SMALL_TOKEN = re.compile(rb"(?<![^\s])[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)[eEdD]-0*(?:9|[1-9][0-9]|[0-9]{3,})(?![^\s])")


def small_values_warning(data, path: str, idx: dict, line_of, messages: list[str]) -> str | None:
    """A warning (for ``formats.read_notes.note``) naming how many matrix values HiGHS dropped, their range and the first one's line, or
    None when HiGHS dropped none.

    Args:
        data: the file's bytes. idx: section name -> header offsets (``formats.mps._header_index``).
        line_of: ``line_of(data, offset) -> int``. messages: HiGHS's log lines of the read.
    """
    m = next((m for m in map(_DROPPED.search, messages) if m is not None), None)
    if m is None:
        return None
    count, low, high, tol = m.groups()
    where = ""
    for lo, hi in _section_spans(data, idx, b"COLUMNS"):
        hit = next((h for h in _SMALL_TOKEN.finditer(data, lo, hi)
                    if 0 < abs(float(h.group().upper().replace(b"D", b"E"))) <= float(tol)), None)
        if hit is not None:
            where = f", e.g. line {line_of(data, hit.start())}"
            break
    rng = low if low == high else f"{low} to {high}"
    return (f"{path}: {count} matrix value(s) of magnitude {rng} dropped{where}: HiGHS's reader takes "
            f"|value| <= {tol} for 0, so the model has no such entry (a delta refuses such a coefficient); "
            "rescale the row or column to keep it")
