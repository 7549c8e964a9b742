"""Duplicate ``RHS``/``RANGES`` values and ``BOUNDS`` sides in a fixed-format MPS file.

HiGHS's free-format parser keeps the first of two values for one row (or one side of a column's bounds) and
warns, which ``formats.mps`` turns into an error naming both lines (``formats.mps_locate.locate_duplicate_values``).
Its fixed-format parser, which reads every file with a name holding a space, keeps the *last* one and says
nothing: `RHS  C 1  10` then `RHS  C 1  4` read as C 1 <= 4, silently. :func:`check_fixed_duplicates` applies the
same rule to fixed-format files from the text: one vectorised pass over each section's lines (the names are
compared as their 8-byte fields, no loop over names); the lines are found only on the error path.

Fixed-format fields (1-based columns): type 2-3, set name 5-12, row or column 15-22, value 25-36, second row
40-47, second value 50-61.
"""

from __future__ import annotations

import numpy as np

from formats.mps_locate import LOWER_TYPES, UPPER_TYPES
from formats.mps_names import _section_spans
from solver.model.errors import FormatError

_WIDTH = 61  #: the last fixed-format column read


def section_lines(data, idx: dict, section: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The data lines of every ``section`` as a (n, 61) uint8 array (space-padded, comments and blank lines
    left out) and each line's offset in ``data`` (int64, n)."""
    rows, offs = [], []
    for lo, hi in _section_spans(data, idx, section):
        body = bytes(data[lo + 1:hi]).replace(b"\r", b" ")
        lines = body.split(b"\n")
        lengths = np.fromiter((len(s) for s in lines), dtype=np.int64, count=len(lines))
        starts = lo + 1 + np.concatenate(([0], np.cumsum(lengths + 1)[:-1]))
        arr = np.array(lines, dtype=f"S{_WIDTH}")  # cut or NUL-padded to 61 bytes
        u8 = arr.view(np.uint8).reshape(len(lines), _WIDTH).copy() if len(lines) else np.zeros((0, _WIDTH), np.uint8)
        u8[u8 == 0] = ord(" ")
        keep = (u8 != ord(" ")).any(axis=1) & (u8[:, 0] != ord("*"))
        rows.append(u8[keep])
        offs.append(starts[keep])
    if not rows:
        return np.zeros((0, _WIDTH), np.uint8), np.zeros(0, np.int64)
    return np.concatenate(rows), np.concatenate(offs)


def _first_repeat(keys: np.ndarray) -> tuple[int, int] | None:
    """(first, second) positions in ``keys`` (an (n, k) uint8 array) of the first key that occurs twice, taking
    "first repeat" as the one whose second occurrence comes earliest; None when all keys differ."""
    if keys.shape[0] < 2:
        return None
    flat = np.ascontiguousarray(keys).view(f"V{keys.shape[1]}").ravel()
    _, first_at, inverse = np.unique(flat, return_index=True, return_inverse=True)
    repeat = np.flatnonzero(first_at[inverse] != np.arange(flat.size))
    if not repeat.size:
        return None
    second = int(repeat[0])
    return int(first_at[inverse[second]]), second


def _raise(data, path, line_of, what: str, entity: bytes, first: int, second: int,
           keeps: str = "the last one") -> None:
    a, b = line_of(data, first), line_of(data, second)
    where = f"line {a}" if a == b else f"lines {a} and {b}"
    name = entity.decode("utf-8", "backslashreplace").strip()
    raise FormatError(f"{what.format(name=repr(name))} ({where}); HiGHS's fixed-format parser would keep "
                      f"{keeps} without a word", file=path, line=b, entity=name)


def _check_columns(data, path: str, idx: dict, line_of) -> None:
    """Refuse a column that ``COLUMNS`` gives two entries in one row. HiGHS's fixed-format parser refuses a repeated
    coefficient, but keeps the last of two costs and drops an entry of 0 before it looks, without a word: ``y obj
    -1`` then ``y obj 0`` read as cost 0, where the free-format path refused it or read -1 (helper-235, session 59).
    Keys: the column (columns 5-12) and each row field (15-22, 40-47) of every line but the markers."""
    u8, offs = section_lines(data, idx, b"COLUMNS")
    if not u8.shape[0]:
        return
    marker = (u8[:, 14:22] == np.frombuffer(b"'MARKER'", np.uint8)).all(axis=1)
    u8, offs = u8[~marker], offs[~marker]
    second = (u8[:, 39:47] != ord(" ")).any(axis=1)
    keys = np.concatenate([np.concatenate([u8[:, 4:12], u8[:, 14:22]], axis=1),
                           np.concatenate([u8[second, 4:12], u8[second, 39:47]], axis=1)])
    at = np.concatenate([offs, offs[second]])
    order = np.argsort(at, kind="stable")
    keys, at = keys[order], at[order]
    hit = _first_repeat(keys)
    if hit is not None:
        col = keys[hit[0], :8].tobytes().decode("utf-8", "backslashreplace").strip()
        row = keys[hit[0], 8:].tobytes().decode("utf-8", "backslashreplace").strip()
        _raise(data, path, line_of, f"COLUMNS gives column {{name}} two entries in row {row!r}",
               col.encode(), int(at[hit[0]]), int(at[hit[1]]), keeps="one of them (the last cost, or the one not 0)")


def check_fixed_duplicates(data, path: str, idx: dict, line_of) -> None:
    """Refuse, in a fixed-format MPS file, a second ``COLUMNS`` entry for one column and row (:func:`_check_columns`),
    a second ``RHS`` or ``RANGES`` value for one row and a second bound on the same side of one column
    (``LO``/``LI``/``FX``/``FR``/``MI``/``BV`` set the lower side, ``UP``/``UI``/``FX``/``FR``/``PL``/``BV`` the
    upper), as the free-format path refuses them.

    Args:
        data: the file's bytes. idx: section name -> header offsets (``formats.mps._header_index``).
        line_of: ``line_of(data, offset) -> int`` (1-based line number).
    Raises:
        FormatError: naming the row or column (entity) and both lines (line = the second).
    """
    for section in (b"RHS", b"RANGES"):
        u8, offs = section_lines(data, idx, section)
        if not u8.shape[0]:
            continue
        second = (u8[:, 39:47] != ord(" ")).any(axis=1)  # a second row/value pair on the line
        keys = np.concatenate([u8[:, 14:22], u8[second, 39:47]])
        at = np.concatenate([offs, offs[second]])
        order = np.argsort(at, kind="stable")  # file order: the first repeat found is the first in the file
        keys, at = keys[order], at[order]
        hit = _first_repeat(keys)
        if hit is not None:
            _raise(data, path, line_of, f"{section.decode()} gives row {{name}} a duplicate value", keys[hit[0]].tobytes(),
                   int(at[hit[0]]), int(at[hit[1]]))
    _check_columns(data, path, idx, line_of)
    u8, offs = section_lines(data, idx, b"BOUNDS")
    if not u8.shape[0]:
        return
    kind = np.char.upper(np.ascontiguousarray(u8[:, 1:3]).view("S2").ravel())
    for side, types in (("lower", LOWER_TYPES), ("upper", UPPER_TYPES)):
        sel = np.isin(kind, np.array(types, dtype="S2"))
        hit = _first_repeat(u8[sel, 14:22])
        if hit is not None:
            o = offs[sel]
            _raise(data, path, line_of, f"BOUNDS gives column {{name}} a duplicate {side} bound",
                   u8[sel][hit[0], 14:22].tobytes(), int(o[hit[0]]), int(o[hit[1]]))
