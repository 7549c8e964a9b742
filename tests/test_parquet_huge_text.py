"""A string column of more than 2 GiB of text (a huge delta's names) is read, not an internal error.

Parquet gives one chunk per row group (or more); joining chunks of more than 2 GiB of text into one ``string``
array overflows its int32 offsets: ``_normalize`` raised pyarrow's ArrowInvalid ("offset overflow while concatenating
arrays"), exit 1. Such a column is now dictionary-encoded chunk by chunk (session 21's delta hunt). The test's
2.2 GB of text are zero bytes from ``np.zeros`` (pages never made resident: ~0.2 GB of memory, under a second).
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from formats.parquet import _normalize


def test_two_chunks_over_2_gib_of_text_become_one_dictionary_column():
    width, n = 1000, 1_100_000  # 1.1 GB per chunk, the same buffer twice
    offsets = pa.py_buffer((np.arange(n + 1, dtype=np.int64) * width).astype(np.int32))
    chunk = pa.Array.from_buffers(pa.string(), n, [None, offsets, pa.py_buffer(np.zeros(width * n, np.uint8))])
    table = _normalize(pa.table({"kind": pa.chunked_array([chunk, chunk])}), "d.parquet")
    kind = table.column("kind")
    assert len(kind) == 2 * n and pa.types.is_dictionary(kind.type)
    assert kind.type.value_type == pa.string()
    assert kind.chunk(0).dictionary.to_pylist() == ["\x00" * width]


def test_a_large_string_column_over_2_gib_becomes_a_dictionary_column():
    """Polars writes large_string: the cast to string failed "input array too large" (exit 3, refusing a valid delta)."""
    width, n = 1000, 2_200_000  # 2.2 GB of zero bytes in one large_string array
    offsets = pa.py_buffer(np.arange(n + 1, dtype=np.int64) * width)
    big = pa.Array.from_buffers(pa.large_string(), n, [None, offsets, pa.py_buffer(np.zeros(width * n, np.uint8))])
    kind = _normalize(pa.table({"kind": big}), "d.parquet").column("kind")
    assert len(kind) == n and kind.type == pa.dictionary(pa.int32(), pa.string())
    assert kind.chunk(0).dictionary.to_pylist() == ["\x00" * width]
