"""A repeated ``COLUMNS`` entry one of whose values is exactly 0, in a free-format MPS file.

HiGHS's free-format parser refuses a second coefficient or cost for one column and row with a warning, which
``formats.mps`` turns into an error naming both lines; but it drops an entry whose value is exactly 0 before
that check, so ``x c1 1`` then ``x c1 0`` read as 1, and ``x obj 0`` then ``x obj 5`` as 5, without a word
(helper-235, session 59), where the same pair with ``1e-12`` for the 0, or in a Parquet model, is refused.

:func:`check_zero_entries` finds them from the lines the number scan saw holding a 0
(``formats.mps_numbers.check_data_lines``): the block of consecutive lines of each such line's column (a
column's entries are consecutive: HiGHS refuses a split column) is read once, and a row it names twice is
refused, naming both lines. Nothing else is read: a file without a 0 in ``COLUMNS`` costs nothing here.
Fixed-format files are checked from their columns instead (``formats.mps_fixed_duplicates``).
"""

from __future__ import annotations

from solver.model.errors import FormatError


def _line_at(data, start: int) -> tuple[bytes, int]:
    """(the line starting at ``start`` without its end, the offset of the next line)."""
    end = data.find(b"\n", start)
    end = len(data) if end < 0 else end
    return bytes(data[start:end]).rstrip(b"\r"), end + 1


def _previous_start(data, start: int) -> int:
    """Offset of the line before the one starting at ``start`` (-1 at the file's start)."""
    if start <= 0:
        return -1
    return data.rfind(b"\n", 0, start - 1) + 1


_SKIP = b""  #: :func:`_column_of` of a comment or blank line: inside a column's block, read past


def _column_of(raw: bytes) -> bytes | None:
    """The column a ``COLUMNS`` data line gives entries to; :data:`_SKIP` for a comment or a blank line; None for
    anything that ends a column's block (a marker, a section header)."""
    toks = raw.split()
    if raw[:1] == b"*" or not toks:
        return _SKIP
    if len(toks) not in (3, 5) or toks[1] == b"'MARKER'" or not raw[:1].isspace():
        return None
    return toks[0]


def check_zero_entries(data, path: str, zero_lines: list[int], line_of) -> None:
    """Refuse a row that a column's ``COLUMNS`` lines name twice when one of the two values is exactly 0.

    Args:
        data: the file's bytes (``bytes`` or a read-only ``mmap``).
        path: file name for the error.
        zero_lines: offsets of the free-format ``COLUMNS`` lines holding a value of 0, in file order.
        line_of: ``line_of(data, offset) -> 1-based line``.
    Raises:
        FormatError: naming the column (entity), the row, both values and both lines (line = the second).
    """
    done = -1  # the end of the last block read: the zero lines inside it are settled
    for off in zero_lines:
        if off < done:
            continue
        raw, _ = _line_at(data, off)
        col = _column_of(raw)
        if col is None:
            continue
        start = prev = off
        while True:  # back to the first line of the column's block (comments and blank lines inside it)
            prev = _previous_start(data, prev)
            of = None if prev < 0 else _column_of(_line_at(data, prev)[0])
            if of == col:
                start = prev
            elif of != _SKIP:
                break
        seen: dict[bytes, tuple[int, bytes]] = {}
        at = start
        while at < len(data):
            raw, nxt = _line_at(data, at)
            of = _column_of(raw)
            if of == _SKIP:
                at = nxt
                continue
            if of != col:
                break
            toks = raw.split()
            for row, value in zip(toks[1::2], toks[2::2], strict=True):
                if row in seen:
                    _refuse(data, path, line_of, col, row, seen[row], (at, value))
                seen[row] = (at, value)
            at = nxt
        done = at


def _refuse(data, path: str, line_of, col: bytes, row: bytes, first: tuple[int, bytes], second: tuple[int, bytes]):
    a, b = line_of(data, first[0]), line_of(data, second[0])
    where = f"line {a}" if a == b else f"lines {a} and {b}"

    def text(v: bytes) -> str:
        return v.decode("utf-8", "backslashreplace")

    name = text(col)
    raise FormatError(f"COLUMNS gives column {name!r} two entries in row {text(row)!r} ({where}: {text(first[1])} "
                      f"and {text(second[1])}); HiGHS drops an entry of 0 and keeps the other without a word: give "
                      "each column at most one value per row", file=path, line=b, entity=name)
