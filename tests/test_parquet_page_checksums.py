"""Delta and problem Parquet files carry page checksums, and readers verify them: a damaged file is exit 3.

Parquet itself has no whole-file checksum; copter wrote no page checksums and read without verifying them, so a bit
flipped on disk or in transit inside a data page read as another number without a word (416 of 4,272 single-bit
flips of a 3-variable delta; one bit turned a cost of 7.0 into 458752.0). Now none does (session 21's delta hunt).
"""

from __future__ import annotations

import io
import json
import struct

import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.exit_codes import BAD_INPUT
from formats.io import read_delta, write_delta
from solver.model.delta import Delta
from solver.model.errors import FormatError
from tests.helpers import small_lp_state, snapshot


def test_no_single_bit_flip_of_a_copter_delta_reads_silently_wrong(tmp_path):
    path = tmp_path / "d.parquet"
    write_delta(Delta.vars(["x1", "x2", "x3"], cost=[1.5, -2.0, 7.25], upper=[3.0, None, 9.0]), path)
    raw = path.read_bytes()
    orig = read_delta(path).table
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(3)  # value
    assert chunk.path_in_schema == "value"
    start = chunk.dictionary_page_offset or chunk.data_page_offset
    bad = tmp_path / "bad.parquet"
    silent = 0
    for pos in range(start, start + chunk.total_compressed_size):
        for bit in range(8):
            flipped = bytearray(raw)
            flipped[pos] ^= 1 << bit
            bad.write_bytes(bytes(flipped))
            try:
                got = read_delta(bad).table
            except FormatError:
                continue
            silent += not got.equals(orig)
    assert silent == 0


def test_step_refuses_a_damaged_page_naming_the_damage(tmp_path):
    """A foreign writer's file with page checksums (pyarrow's write_page_checksum, parquet-mr's option)."""
    st, _ = small_lp_state(tmp_path)
    buf = io.BytesIO()
    pq.write_table(pa.table({"kind": ["var"], "var": ["x3"], "value": [7.0]}), buf, compression="none",
                   write_page_checksum=True)
    raw = bytearray(buf.getvalue())
    raw[raw.find(struct.pack("<d", 7.0)) + 7] ^= 0x01  # 7.0 -> 458752.0 if read unverified
    path = tmp_path / "d.parquet"
    path.write_bytes(bytes(raw))
    before = snapshot(st)
    res = CliRunner().invoke(app, ["step", str(path), "--state", str(st), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT and "damaged after it was written" in err["message"], res.output
    assert snapshot(st) == before
