"""Round outputs (formats.reports.write_parquet) are zstd Parquet without dictionary pages: names are distinct
strings, whose dictionary only costs time and bytes (issue #15); the tables read back unchanged."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq

from formats.reports import solution_table, write_parquet


def test_solution_is_zstd_without_dictionary_and_reads_back_equal(tmp_path):
    n = 5000
    names = np.array([f"j{i}/A100/{i % 8}" for i in range(n)], dtype=object)
    x = (np.arange(n) % 3 == 0).astype(float)
    table = solution_table(names, x, np.linspace(-1.0, 1.0, n))
    path = tmp_path / "solution.parquet"
    write_parquet(path, table)
    meta = pq.ParquetFile(path).metadata
    for j in range(meta.num_columns):
        col = meta.row_group(0).column(j)
        assert col.compression == "ZSTD" and not col.has_dictionary_page, (col.path_in_schema, col.compression)
    back = pq.read_table(path)
    assert back.equals(table)
