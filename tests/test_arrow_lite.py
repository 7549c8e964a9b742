"""formats.arrow_lite reads the round log's Arrow IPC files as pyarrow does (issue #15: ``copter history``
without pyarrow), and refuses what it does not handle so that pyarrow reads it."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.ipc as ipc
import pytest

from formats import round_log
from formats.arrow_lite import Unsupported, read_columns
from formats.round_log import TABLES, RoundLog, _pylist, _rows_lite, schema

TYPES = {"int64": pa.int64(), "float64": pa.float64(), "bool": pa.bool_(), "string": pa.string(),
         "timestamp": pa.timestamp("ms", tz="UTC")}


def _value(kind: str, rng: random.Random):
    if rng.random() < 0.2:
        return None
    if kind == "int64":
        return rng.choice([0, -1, 2**62, -(2**63), rng.randint(-10**6, 10**6)])
    if kind == "float64":
        return rng.choice([0.0, -0.0, 1e-300, float("inf"), float("nan"), rng.uniform(-1e6, 1e6)])
    if kind == "bool":
        return rng.random() < 0.5
    if kind == "string":
        return rng.choice(["", "OPTIMAL", "é 漢 😀", "a\nb", "x" * rng.randint(0, 300)])
    return rng.randint(0, 4 * 10**12)  # timestamp, milliseconds


def _write(table: pa.Table, path, chunk: int | None = None, options=None) -> bytes:
    with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, table.schema, options=options) as w:
        w.write_table(table, max_chunksize=chunk)
    return path.read_bytes()


@pytest.mark.parametrize("seed", range(12))
def test_random_tables_read_as_pyarrow_reads_them(tmp_path, seed):
    rng = random.Random(seed)
    kinds = [rng.choice(list(TYPES)) for _ in range(rng.randint(1, 12))]
    n = rng.choice([0, 1, 2, 7, 64, 300])
    cols = {f"c{i}": pa.array([_value(k, rng) for _ in range(n)], TYPES[k]) for i, k in enumerate(kinds)}
    table = pa.table(cols)
    if n > 4 and seed % 3 == 0:
        table = table.slice(2, n - 3)  # offsets and bitmaps that do not start at 0
    blob = _write(table, tmp_path / "t.arrow", chunk=rng.choice([None, 1, 5, 100]))
    names, got_kinds, got = read_columns(blob)
    assert names == list(cols) and got_kinds == kinds
    for name, kind in zip(names, kinds, strict=True):
        col = table.column(name)
        want = col.cast(pa.int64()).to_pylist() if kind == "timestamp" else col.to_pylist()
        assert [repr(v) for v in got[name]] == [repr(v) for v in want], name  # repr: NaN and -0.0 too


def test_round_log_rows_are_the_pyarrow_rows_with_a_base_segments_and_an_older_file(tmp_path, monkeypatch):
    log = RoundLog(tmp_path)
    rng = random.Random(5)
    monkeypatch.setattr(round_log, "COMPACT_EVERY", 4)
    for i in range(11):  # compactions at 4 and 8: a base file and segments
        row = {c: _value(k, rng) for c, k in TABLES["rounds"].items() if c != "seq"}
        row["round"] = i
        log.append([row])
    old = schema("rounds")
    old = pa.schema([f for f in old if f.name not in ("recovered", "message")])  # written by an older version
    log._write(old.empty_table(), "seg-000000000099.arrow")
    files = log._files()
    assert [f[0] for f in files][:1] == ["base"] and len(files) > 2
    lite = _rows_lite(files, TABLES["rounds"])
    want = _pylist(log.read())
    assert [repr(list(r.items())) for r in lite] == [repr(list(r.items())) for r in want]  # repr: NaN
    assert [r["round"] for r in lite] == list(range(11))


def test_what_it_does_not_read_is_left_to_pyarrow(tmp_path):
    t = pa.table({"a": pa.array([1, 2], pa.int32())})
    with pytest.raises(Unsupported):
        read_columns(_write(t, tmp_path / "i32.arrow"))
    t = pa.table({"a": pa.array(["x", "y", "x"]).dictionary_encode()})
    with pytest.raises(Unsupported):
        read_columns(_write(t, tmp_path / "dict.arrow"))
    t = pa.table({"a": pa.array(["x" * 1000] * 50)})
    blob = _write(t, tmp_path / "zstd.arrow", options=ipc.IpcWriteOptions(compression="zstd"))
    with pytest.raises(Unsupported):
        read_columns(blob)
    good = _write(pa.table({"a": pa.array([1.5, None])}), tmp_path / "ok.arrow")
    assert read_columns(good)[2] == {"a": [1.5, None]}
    for bad in (b"", good[:len(good) // 2], good[:-3], b"ARROW1" + bytes(40) + b"ARROW1",
                good[:100] + bytes(len(good) - 106) + good[-6:]):
        with pytest.raises(Unsupported):
            read_columns(bad)


def test_a_damaged_segment_makes_rows_read_with_pyarrow(tmp_path):
    """An emptied segment (power loss, see formats.round_log) is not read by the lite reader: pyarrow's path
    then skips it, as before."""
    log = RoundLog(tmp_path)
    log.append([{"round": 0, "status": "OPTIMAL"}])
    log.append([{"round": 1, "status": "OPTIMAL"}])
    log._files()[-1][2].write_bytes(b"")
    assert _rows_lite(log._files(), TABLES["rounds"]) is None
    assert [r["round"] for r in log.rows()] == [0]
