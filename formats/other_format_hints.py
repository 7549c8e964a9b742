"""What a file that is not Parquet is, from its first bytes: the hint of a "not a readable Parquet file" error.

``formats.parquet`` already names an MPS model and a plain CSV/text table. These are the other tables a pipeline
hands ``copter step`` by mistake, which got no hint or a wrong one (session 21's delta hunt):

* a gzip-compressed Parquet file (``delta.parquet.gz``): was told "it looks like an MPS model" (gzip's magic);
* an Arrow IPC / Feather file (``df.to_feather``): no hint;
* a CSV with a byte-order mark (Excel's "CSV UTF-8", or UTF-16 "Unicode text"): no hint, since the BOM bytes are
  not ASCII; and ``pandas.read_csv`` without ``encoding='utf-8-sig'`` names the first column ``'\\ufeffkind'``;
* a JSON table (``df.to_json``, JSON lines): was told to use ``pandas.read_csv``;
* a Parquet file cut short (its start, without the footer): only pyarrow's "magic bytes not found in footer"
  (a user's trial, session 52).

Error path only: one read of the first few KiB (standard input's bytes are already in memory).
"""

from __future__ import annotations

import zlib

_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
_COLUMNS = "kind, var, con, value, lower, upper, integer (docs/formats.md 'Deltas and problems')"


def _gunzip_head(head: bytes, n: int = 64) -> bytes:
    """The first ``n`` decompressed bytes of a gzip stream's start (b"" when they cannot be had)."""
    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, n)
    except zlib.error:
        return b""


def parquet_damage_hint(head: bytes | None, tail: bytes | None) -> str:
    """For a file that starts as Parquet (magic ``PAR1``) and that pyarrow cannot read: "cut short" when its last
    four bytes are not the closing ``PAR1`` (its footer is missing: a copy that stopped, a file still being written),
    else "damaged" (its footer is there but does not read); "" for any other file. ``head``/``tail``: the file's first
    and last bytes, None when they could not be read."""
    if not head or not head.startswith(b"PAR1"):
        return ""
    if tail is not None and tail[-4:] != b"PAR1":
        return ("; it starts as a Parquet file but its end is missing: it was cut short (a copy or download that "
                "stopped, a disk that filled) or is still being written: write or copy it again")
    return ("; it is a Parquet file whose footer (its schema and the index of its pages) is damaged: write or copy "
            "it again")


def sniffed_hint(head: bytes | None) -> str:
    """``"; it is ..."`` (what the bytes are and how to write a Parquet delta from them) for a gzip-compressed
    Parquet file, an Arrow IPC/Feather file, a CSV/text table behind a byte-order mark or a JSON table; else ""
    (``formats.parquet``'s MPS and CSV hints decide).

    Args:
        head: the file's first bytes (4 KiB is plenty), or None when it could not be read.
    """
    if not head:
        return ""
    if head[:2] == b"\x1f\x8b":
        if _gunzip_head(head).startswith(b"PAR1"):
            return ("; it is a gzip-compressed Parquet file: decompress it first (gunzip); Parquet compresses "
                    "itself (pyarrow.parquet.write_table(..., compression='zstd'))")
        return ""
    if head.startswith((b"ARROW1", b"FEA1")):
        return ("; it is an Arrow IPC (Feather) file, not Parquet: write the same table as Parquet, e.g. "
                "pyarrow.parquet.write_table(pyarrow.feather.read_table(FILE), 'delta.parquet')")
    encoding = None
    if head.startswith(_UTF8_BOM):
        encoding, text = "utf-8-sig", head[3:]
    elif head[:2] in _UTF16_BOMS:
        encoding, text = "utf-16", head.decode("utf-16", "ignore").encode("utf-8", "ignore")
    else:
        text = head
    first = text.lstrip()[:1]
    if first in (b"[", b"{") and all(b >= 32 or b in (9, 10, 13) for b in text[:256]):
        lines = ", lines=True" if first == b"{" else ""
        return (f"; it looks like a JSON table: a delta is a Parquet file with the columns {_COLUMNS}: e.g. "
                f"pandas.read_json(FILE{lines}).to_parquet('delta.parquet')")
    if encoding is None:
        return ""
    line = text.split(b"\n", 1)[0]
    if line and all(32 <= b < 127 or b in (9, 13) for b in line) and any(s in line for s in (b",", b"\t", b";")):
        return (f"; it looks like a CSV/text table with a byte-order mark ({encoding}): a delta is a Parquet file "
                f"with the columns {_COLUMNS}: e.g. pandas.read_csv(FILE, encoding='{encoding}')"
                ".to_parquet('delta.parquet') (the encoding keeps the mark out of the first column's name)")
    return ""
