"""Rows of a small Arrow IPC file with the standard library: the round log's files for ``copter history``
without importing pyarrow (issue #15: 0.07-0.09 s of CPU of a command whose target is 0.3 s).

It reads only what the round log writes (``formats.round_log``): an uncompressed, little-endian IPC *file*
(``ARROW1`` magic, footer) whose columns are flat ``int64``, ``float64``, ``bool``, ``utf8`` and
``timestamp[ms]``, in any number of record batches. Anything else (another type, a dictionary, compressed
buffers, a big-endian file, a truncated or damaged file) raises :class:`Unsupported`, and the caller reads
the file with pyarrow, which then gives pyarrow's own answer (its error or its rows).
``tests/test_arrow_lite.py`` compares the rows with pyarrow's on random tables.

The format: a file is ``ARROW1\\0\\0``, the stream's messages, a FlatBuffers ``Footer`` (schema and the
``Block`` of each record batch), its int32 length and ``ARROW1``; a record batch is a FlatBuffers ``Message``
(``RecordBatch``: row count, one ``FieldNode`` and two or three ``Buffer`` per column) followed by its body.
See https://arrow.apache.org/docs/format/Columnar.html (IPC file format, buffer layouts).
"""

from __future__ import annotations

import struct

_MAGIC = b"ARROW1"
_INT, _FLOAT, _UTF8, _BOOL, _TIMESTAMP = 2, 3, 5, 6, 10  #: Type union tags (Schema.fbs)
_RECORD_BATCH = 3  #: MessageHeader union tag (Message.fbs)
_MILLI = 1  #: TimeUnit.MILLISECOND


class Unsupported(ValueError):
    """The file is not one this reader handles (or not a valid Arrow IPC file): read it with pyarrow."""


class _Table:
    """A FlatBuffers table at ``pos`` of ``buf``: fields looked up through its vtable."""

    __slots__ = ("buf", "pos", "vt", "vt_len")

    def __init__(self, buf: memoryview, pos: int):
        self.buf, self.pos = buf, pos
        self.vt = pos - struct.unpack_from("<i", buf, pos)[0]
        self.vt_len = struct.unpack_from("<H", buf, self.vt)[0]

    def _off(self, field: int) -> int:
        """Offset of field number ``field`` inside the table, 0 when absent."""
        at = 4 + 2 * field
        return struct.unpack_from("<H", self.buf, self.vt + at)[0] if at < self.vt_len else 0

    def scalar(self, field: int, fmt: str, default=0):
        off = self._off(field)
        return struct.unpack_from("<" + fmt, self.buf, self.pos + off)[0] if off else default

    def _target(self, field: int) -> int | None:
        off = self._off(field)
        if not off:
            return None
        at = self.pos + off
        return at + struct.unpack_from("<I", self.buf, at)[0]

    def table(self, field: int) -> _Table | None:
        at = self._target(field)
        return None if at is None else _Table(self.buf, at)

    def string(self, field: int) -> str | None:
        at = self._target(field)
        if at is None:
            return None
        n = struct.unpack_from("<I", self.buf, at)[0]
        return bytes(self.buf[at + 4:at + 4 + n]).decode("utf-8")

    def vector(self, field: int) -> tuple[int, int]:
        """(element count, position of the first element); (0, 0) when absent."""
        at = self._target(field)
        return (0, 0) if at is None else (struct.unpack_from("<I", self.buf, at)[0], at + 4)

    def tables(self, field: int) -> list[_Table]:
        n, at = self.vector(field)
        return [_Table(self.buf, at + 4 * i + struct.unpack_from("<I", self.buf, at + 4 * i)[0]) for i in range(n)]


def _column_type(field: _Table) -> str:
    """The round log's type name of a schema field ("int64", "float64", "bool", "string", "timestamp")."""
    if field.table(4) is not None or field.vector(5)[0]:  # dictionary-encoded, or nested
        raise Unsupported("dictionary or nested column")
    tag, t = field.scalar(2, "B"), field.table(3)
    if tag == _INT and t is not None and t.scalar(0, "i") == 64 and t.scalar(1, "?", False):
        return "int64"
    if tag == _FLOAT and t is not None and t.scalar(0, "h") == 2:
        return "float64"
    if tag == _BOOL:
        return "bool"
    if tag == _UTF8:
        return "string"
    if tag == _TIMESTAMP and t is not None and t.scalar(0, "h") == _MILLI:
        return "timestamp"
    raise Unsupported(f"column type tag {tag}")


def _valid(body: memoryview, buf: tuple[int, int], nulls: int, n: int) -> list[bool] | None:
    """The validity of ``n`` values (None: all valid)."""
    if nulls == 0:
        return None
    off, length = buf
    if length * 8 < n:
        raise Unsupported("validity bitmap too short")
    bits = body[off:off + length]
    return [bool(bits[i >> 3] >> (i & 7) & 1) for i in range(n)]


def _values(kind: str, body: memoryview, bufs: list[tuple[int, int]], n: int) -> list:
    """The ``n`` values of a column (nulls not applied)."""
    if kind in ("int64", "timestamp", "float64"):
        off, length = bufs[1]
        if length < 8 * n:
            raise Unsupported("data buffer too short")
        return list(body[off:off + 8 * n].cast("d" if kind == "float64" else "q"))
    if kind == "bool":
        off, length = bufs[1]
        if length * 8 < n:
            raise Unsupported("data buffer too short")
        bits = body[off:off + length]
        return [bool(bits[i >> 3] >> (i & 7) & 1) for i in range(n)]
    (ooff, olen), (doff, dlen) = bufs[1], bufs[2]
    if olen < 4 * (n + 1):
        raise Unsupported("offsets buffer too short")
    offs = body[ooff:ooff + 4 * (n + 1)].cast("i")
    if n and (offs[0] < 0 or offs[n] > dlen):
        raise Unsupported("string offsets out of range")
    data = bytes(body[doff:doff + dlen])
    return [data[offs[i]:offs[i + 1]].decode("utf-8") for i in range(n)]


def read_columns(data: bytes) -> tuple[list[str], list[str], dict[str, list]]:
    """(column names, their type names, name -> values with None for nulls, timestamps as int milliseconds)
    of an Arrow IPC file's bytes.

    Raises:
        Unsupported: anything but the flat, uncompressed, little-endian file described in the module.
    """
    try:
        return _read(memoryview(data))
    except Unsupported:
        raise
    except (struct.error, IndexError, ValueError, TypeError, UnicodeDecodeError) as err:
        raise Unsupported(f"not a readable Arrow IPC file: {err}") from None


def _read(buf: memoryview) -> tuple[list[str], list[str], dict[str, list]]:
    if len(buf) < 18 or bytes(buf[:6]) != _MAGIC or bytes(buf[-6:]) != _MAGIC:
        raise Unsupported("no ARROW1 magic")
    foot_len = struct.unpack_from("<i", buf, len(buf) - 10)[0]
    foot_at = len(buf) - 10 - foot_len
    if foot_len <= 0 or foot_at < 8:
        raise Unsupported("bad footer length")
    foot = memoryview(bytes(buf[foot_at:foot_at + foot_len]))
    footer = _Table(foot, struct.unpack_from("<I", foot, 0)[0])
    schema = footer.table(1)
    if schema is None or schema.scalar(0, "h") != 0:  # Endianness.Little
        raise Unsupported("no schema, or big-endian")
    if footer.vector(2)[0]:
        raise Unsupported("dictionaries")
    fields = schema.tables(1)
    names = [f.string(0) or "" for f in fields]
    kinds = [_column_type(f) for f in fields]
    cols: dict[str, list] = {name: [] for name in names}
    if len(cols) != len(names):
        raise Unsupported("duplicate column names")
    n_blocks, at = footer.vector(3)
    for b in range(n_blocks):
        offset, meta_len, _pad, body_len = struct.unpack_from("<qiiq", foot, at + 24 * b)
        _batch(buf, offset, meta_len, body_len, names, kinds, cols)
    return names, kinds, cols


def _batch(buf: memoryview, offset: int, meta_len: int, body_len: int, names: list[str], kinds: list[str],
           cols: dict[str, list]) -> None:
    """Append the rows of the record batch at ``offset`` to ``cols``."""
    if offset < 8 or meta_len < 8 or body_len < 0 or offset + meta_len + body_len > len(buf):
        raise Unsupported("record batch block out of range")
    start = offset + 8 if struct.unpack_from("<I", buf, offset)[0] == 0xFFFFFFFF else offset + 4
    meta = memoryview(bytes(buf[start:offset + meta_len]))
    msg = _Table(meta, struct.unpack_from("<I", meta, 0)[0])
    if msg.scalar(1, "B") != _RECORD_BATCH:
        raise Unsupported("block is not a record batch")
    rb = msg.table(2)
    if rb is None or rb.table(3) is not None:  # BodyCompression
        raise Unsupported("compressed record batch")
    n = rb.scalar(0, "q")
    n_nodes, nodes_at = rb.vector(1)
    n_bufs, bufs_at = rb.vector(2)
    need = sum(3 if k == "string" else 2 for k in kinds)
    if n_nodes != len(names) or n_bufs != need:
        raise Unsupported("unexpected nodes or buffers")
    body = buf[offset + meta_len:offset + meta_len + body_len]
    bi = 0
    for i, (name, kind) in enumerate(zip(names, kinds, strict=True)):
        length, nulls = struct.unpack_from("<qq", meta, nodes_at + 16 * i)
        k = 3 if kind == "string" else 2
        bufs = [struct.unpack_from("<qq", meta, bufs_at + 16 * (bi + j)) for j in range(k)]
        bi += k
        if length != n or any(o < 0 or ln < 0 or o + ln > body_len for o, ln in bufs):
            raise Unsupported("column length or buffer out of range")
        values = _values(kind, body, bufs, n)
        valid = _valid(body, bufs[0], nulls, n)
        if valid is not None:
            values = [v if ok else None for v, ok in zip(values, valid, strict=True)]
        cols[name].extend(values)


__all__ = ["Unsupported", "read_columns"]
