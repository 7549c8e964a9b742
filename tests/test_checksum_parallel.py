"""The checksums of a generation's files are computed side by side in threads (``formats.checksum.files_crc32``: zlib
releases the GIL while it hashes): the same CRC-32s in the caller's order, a file that cannot be read reported at its
own place, and a damaged generation judged as one by one (the first damaged file in the manifest's order)."""

from __future__ import annotations

import errno
import os
import threading

import pytest

from formats import checkpoint
from formats import checksum as C
from formats.checkpoint import StateStore
from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from solver.model.settings import Settings
from tests.helpers import small_lp


@pytest.fixture
def two_cores(monkeypatch):
    monkeypatch.setattr(C.os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)


def test_the_checksums_are_one_by_ones_in_order_and_hashed_in_threads(tmp_path, two_cores, monkeypatch):
    paths = []
    for i, size in enumerate((0, 1, 5_000, 300_000, 70_000)):
        p = tmp_path / f"f{i}"
        p.write_bytes(os.urandom(size))
        paths.append(p)
    names = set()
    real = C.file_crc32

    def spy(path):
        names.add(threading.current_thread().name)
        return real(path)

    got = C.files_crc32(paths, None, spy)  # sizes unknown: counted as large, hashed side by side
    assert got == [real(p) for p in paths]
    assert names and all(n.startswith("copter-crc") for n in names)
    assert C.files_crc32(paths, [p.stat().st_size for p in paths]) == got  # small: one by one, the same


def test_a_file_that_cannot_be_read_is_reported_at_its_place(tmp_path, two_cores):
    paths = [tmp_path / "a", tmp_path / "missing", tmp_path / "b"]
    paths[0].write_bytes(b"x" * 100)
    paths[2].write_bytes(b"y" * 100)
    got = C.files_crc32(paths, None)
    assert got[0] == C.file_crc32(paths[0]) and got[2] == C.file_crc32(paths[2])
    assert isinstance(got[1], OSError) and got[1].errno == errno.ENOENT


def _flip(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))


def test_a_damaged_generation_names_its_first_damaged_file_in_threads_too(tmp_path, two_cores, monkeypatch):
    st = tmp_path / "st"
    rounds.init(small_lp(), st, Settings())
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), tmp_path / "d.parquet")
    rounds.step(tmp_path / "d.parquet", st)
    checkpoint._RECENT.clear()
    monkeypatch.setattr(C, "PARALLEL_MIN_BYTES", 0)  # this small generation hashed side by side too
    assert StateStore(st, reuse=False).damage(1, verify=True) == ""
    gen = st / "gen-000001"
    files = list(checkpoint.json.loads((gen / "generation.json").read_text())["crc32"])
    first, later = files[1], files[-1]
    for rel in (later, first):  # two damaged files: the one first in the manifest is named
        target = gen / rel
        data = target.read_bytes()
        target.unlink()  # a new inode: the other generations' hard links keep their bytes
        target.write_bytes(data)
        _flip(target)
    why = StateStore(st, reuse=False).damage(1, verify=True)
    assert why.startswith(f"{first} has CRC-32 "), why
