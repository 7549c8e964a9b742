"""Parts travel to process-pool workers through shared memory (``solver.partition.shipping``): the same values,
arrays the worker may write without touching the coordinator's, numba's array types unchanged, the memory files
closed afterwards, and the pool's pipe when a worker cannot map them."""

from __future__ import annotations

import os
import pickle
from dataclasses import replace

import numpy as np
import pytest

from solver.partition import executor, shipping

pytestmark = pytest.mark.skipif(not shipping.available(), reason="no memfd_create or /proc (not Linux)")


def _task(seed: int = 0) -> tuple:
    rng = np.random.default_rng(seed)
    big = rng.standard_normal(50_000)  # 400 kB: shared
    idx = rng.integers(0, 1 << 30, 70_000).astype(np.int32)  # 280 kB: shared
    small = np.arange(10, dtype=np.int64)  # in the pickle
    names = np.array([f"c{i}" for i in range(2_000)], dtype=object)  # objects: in the pickle
    fortran = np.asfortranarray(rng.standard_normal((300, 200)))  # 480 kB, F order
    return big, idx, small, names, fortran, {"k": 3}


def _describe(big, idx, small, names, fortran, extra):
    """Worker side: what the arrays look like there; then it writes to every array it got."""
    import numba

    out = {"pid": os.getpid(), "sums": [float(big.sum()), int(idx.astype(np.int64).sum()), int(small.sum()),
                                        float(fortran.sum())],
           "names": [names[0], names[-1]], "extra": extra,
           "writable": [a.flags.writeable for a in (big, idx, small, fortran)],
           "aligned": [a.flags.aligned for a in (big, idx, fortran)],
           "layout": [big.flags.c_contiguous, idx.flags.c_contiguous, fortran.flags.f_contiguous],
           "types": [str(numba.typeof(a)) for a in (big, idx, fortran)]}
    big[:] = -1.0
    idx[:] = 7
    fortran[:] = 0.0
    return out


def test_pack_unpack_round_trip_shares_large_buffers_only():
    task = _task()
    s = shipping.pack(task)
    try:
        assert s.fd >= 0 and len(s.spans) == 3  # big, idx, fortran; small and the names stay in the pickle
        assert all(f == -1 and off % shipping.ALIGN == 0 for f, off, _ in s.spans) and s.shared == ()
        assert len(s.data) < 100_000
        back = pickle.loads(pickle.dumps(s))  # what the pipe carries pickles
        got = shipping.unpack(back)
    finally:
        shipping.release([s])
    for a, b in zip(task[:5], got[:5], strict=True):
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)
        assert a.flags.c_contiguous == b.flags.c_contiguous and a.flags.f_contiguous == b.flags.f_contiguous
    assert got[5] == task[5]
    got[0][:] = 5.0  # copy-on-write: the packed arrays and the file are not changed
    assert not np.any(task[0] == 5.0)


def test_an_object_without_large_buffers_needs_no_file():
    s = shipping.pack((np.arange(5), "x"))
    assert s.fd == -1 and s.spans == ()
    out = shipping.unpack(s)
    assert np.array_equal(out[0], np.arange(5)) and out[1] == "x"


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


def test_map_parts_ships_through_shared_memory_and_closes_the_files(monkeypatch):
    tasks = [_task(0), _task(1)]
    want = [_describe(*pickle.loads(pickle.dumps(t))) for t in tasks]  # in this process, on copies
    executor.take_ship_seconds()
    called = []
    real = shipping.timed_pack
    monkeypatch.setattr(shipping, "timed_pack", lambda t: called.append(1) or real(t))
    executor.map_parts(_describe, [_task(9), _task(8)], "process", 2)  # the pool and its pipes made before
    before = _open_fds()
    got = executor.map_parts(_describe, tasks, "process", 2)
    assert _open_fds() == before  # no memory file left open here
    assert called == [1, 1, 1, 1] and executor.take_ship_seconds() > 0
    for g, w in zip(got, want, strict=True):
        assert g["pid"] != os.getpid()
        for key in ("sums", "names", "extra", "writable", "aligned", "layout", "types"):
            assert g[key] == w[key], key
    assert all(got[0]["writable"]) and all(got[0]["aligned"]) and all(got[0]["layout"])
    # the workers wrote to their arrays: the coordinator's are as they were
    fresh = [_task(0), _task(1)]
    for t, f in zip(tasks, fresh, strict=True):
        for a, b in zip(t[:5], f[:5], strict=True):
            assert np.array_equal(a, b)


def test_without_shared_memory_the_pipe_carries_the_parts(monkeypatch):
    monkeypatch.setattr(shipping, "available", lambda: False)
    executor.take_ship_seconds()
    got = executor.map_parts(_describe, [_task(3)], "process", 1)
    assert got[0]["sums"] == _describe(*_task(3))["sums"]
    assert executor.take_ship_seconds() == 0.0


def test_a_worker_that_cannot_map_the_file_gets_the_parts_through_the_pipe():
    tasks = [_task(4), _task(5)]
    packed = [shipping.pack(t) for t in tasks]
    try:  # a process that does not exist holds them: /proc/<pid>/fd/<fd> cannot be opened
        lost = [replace(s, pid=2**22 + 1) for s in packed]
        got = executor._run_pool(_describe, tasks, list(lost), [False, False], 2, ())
    finally:
        shipping.release(packed)
    assert [g["sums"] for g in got] == [_describe(*t)["sums"] for t in [_task(4), _task(5)]]
    assert all(g["pid"] != os.getpid() for g in got)


def test_a_solved_part_is_the_same_shipped_or_piped(monkeypatch):
    """A part solved by a worker from mapped arrays ends bitwise as from piped copies (same kernels, same
    arrays' types: nothing compiled anew)."""
    from solver.workloads import make_scenario
    from tests.partition_helpers import fresh_split

    problem = make_scenario("te", 16, seed=4).base()
    _, _, parts, settings = fresh_split(problem, 2)
    tasks = [(p.problem, settings, None) for p in parts]
    monkeypatch.setattr(shipping, "MIN_SHARED_BYTES", 1)  # a small model: every array through shared memory
    probe = shipping.pack(tasks[0])
    shipping.release([probe])
    assert len(probe.spans) >= 8  # costs, bounds, the matrix
    shipped = executor.run_parts(tasks, "process", 2)
    monkeypatch.setattr(shipping, "available", lambda: False)
    piped = executor.run_parts(tasks, "process", 2)
    for a, b in zip(shipped, piped, strict=True):
        assert a["result"].status == b["result"].status
        assert np.array_equal(a["result"].x, b["result"].x) and np.array_equal(a["result"].y, b["result"].y)


def test_names_travel_as_arrow_strings_and_come_back_as_object_arrays_of_str():
    names = np.array([f"job{i}/gpu{i % 7}" for i in range(20_000)], dtype=object)
    with_none = np.array(["a"] * 2_000 + [None], dtype=object)
    numbers = np.array(list(range(3_000)), dtype=object)
    few = np.array(["x", "y"], dtype=object)
    s = shipping.pack((names, with_none, numbers, few))
    try:
        assert len(s.spans) >= 2 and len(s.data) < 60_000  # the names' bytes are out of the pickle
        got = shipping.unpack(s)
    finally:
        shipping.release([s])
    for a, b in zip((names, with_none, numbers, few), got, strict=True):
        assert b.dtype == object and b.shape == a.shape and b.tolist() == a.tolist()
        assert [type(v) for v in b[:3]] == [type(v) for v in a[:3]]
    assert got[1][-1] is None


def test_shared_empty_arrays_are_plain_arrays_in_a_file_of_their_own():
    """Writable, aligned, C-contiguous, numba's types of np.empty's; their file is closed with the last of them;
    small requests and a machine without memory files get np.empty."""
    import numba

    before = _open_fds()
    idx, val = shipping.shared_empty([(300_000, np.int32), (300_000, np.float64)])
    held = _open_fds() - before
    assert held  # the file's descriptor (and the mapping's own duplicate of it)
    for a, like in ((idx, np.empty(3, np.int32)), (val, np.empty(3))):
        assert a.flags.writeable and a.flags.aligned and a.flags.c_contiguous
        assert numba.typeof(a) == numba.typeof(like)
    del a
    assert shipping._in_arena(memoryview(val).cast("B")) is not None
    assert shipping._in_arena(memoryview(np.empty(200_000)).cast("B")) is None
    val[:] = 2.5
    del idx
    assert _open_fds() - before == held  # val still maps the file
    del val
    assert _open_fds() == before
    small = shipping.shared_empty([(10, np.float64)])
    assert small[0].base is None and _open_fds() == before


def test_shared_empty_falls_back_to_plain_arrays(monkeypatch):
    monkeypatch.setattr(shipping, "available", lambda: False)
    a, = shipping.shared_empty([(1_000_000, np.float64)])
    assert a.base is None and a.shape == (1_000_000,)
    monkeypatch.undo()

    def no_file(*_a, **_k):
        raise OSError(24, "Too many open files")

    monkeypatch.setattr(shipping.os, "memfd_create", no_file)
    b, = shipping.shared_empty([(1_000_000, np.float64)])
    assert b.base is None and b.flags.writeable


def test_arrays_built_in_shared_memory_ship_by_reference_without_a_copy():
    """pack writes nothing for buffers in a shared_empty file (no file of its own when there are no others), the
    worker's mapping is copy-on-write, release leaves the arrays' file open so a retry can ship them again, and a
    worker in another process gets the same values."""
    val, idx = shipping.shared_empty([(200_000, np.float64), (200_000, np.int32)])
    rng = np.random.default_rng(2)
    val[:] = rng.standard_normal(val.size)
    idx[:] = rng.integers(0, 1 << 30, idx.size)
    other = rng.standard_normal(50_000)  # a plain array: written into pack's own file
    for obj, own_file in (((val, idx, "x"), False), ((val, other, idx), True)):
        s = shipping.pack(obj)
        try:
            assert len(s.shared) == 1 and (s.fd >= 0) is own_file
            assert [f for f, _, _ in s.spans] == ([0, 0] if not own_file else [0, -1, 0])
            assert s.size == (other.nbytes if own_file else 0)  # only the plain array was written
            got = shipping.unpack(pickle.loads(pickle.dumps(s)))
        finally:
            shipping.release([s])
        for a, b in zip(obj, got, strict=True):
            if isinstance(a, np.ndarray):
                assert np.array_equal(a, b) and b.flags.writeable and b.flags.aligned
        got[0][:] = 0.0  # copy-on-write: the builder's array is untouched
        assert not np.any(val == 0.0)
    again = executor.map_parts(_sums, [(val, idx), (idx, val)], "process", 2)  # after release: the file is open
    assert again == [_sums(val, idx), _sums(idx, val)]


def _sums(a, b):
    return float(a.sum()), float(b.sum()), os.getpid() != 0


def test_built_parts_live_in_shared_memory_and_equal_the_plain_kernel(monkeypatch):
    """build_part_problems writes each part's entries into shared_empty arrays, bitwise the allocating kernel's."""
    from solver.partition.clients import GLOBAL, SHARED
    from solver.partition.split_kernels import part_matrix
    from solver.workloads import make_scenario
    from tests.partition_helpers import fresh_split

    problem = make_scenario("te", 16, seed=4).base()
    monkeypatch.setattr(shipping, "MIN_ARENA_BYTES", 0)
    r, _, parts, _ = fresh_split(problem, 2)
    grouping, col_part = r.grouping, r.col_part
    cp, ci, cv = problem._csc()
    for p, part in enumerate(parts):
        sub = part.problem
        assert shipping._in_arena(memoryview(sub.a_data).cast("B")) is not None
        assert shipping._in_arena(memoryview(sub.a_indices).cast("B")) is not None
        rc = grouping.row_client
        everywhere = (rc == SHARED) | (rc == GLOBAL)
        client_part = np.full(grouping.n_clients, -1, dtype=np.int64)
        client_part[grouping.col_client[grouping.col_client >= 0]] = col_part[grouping.col_client >= 0]
        row_part = np.where(rc >= 0, client_part[np.maximum(rc, 0)], -1).astype(np.int64)
        ptr, rows, idx, val = part_matrix(cp, ci, cv, part.cols.astype(np.int64), everywhere, row_part, p,
                                          problem.n_rows)
        np.testing.assert_array_equal(sub.a_indptr, ptr)
        np.testing.assert_array_equal(part.rows, rows)
        np.testing.assert_array_equal(sub.a_indices, idx)
        np.testing.assert_array_equal(sub.a_data, val)
        # the column and row vectors are in the part's file too (pack writes none of them), the whole model's values
        for f in ("cost", "col_lower", "col_upper", "integrality", "row_lower", "row_upper"):
            arr = getattr(sub, f)
            assert shipping._in_arena(memoryview(arr).cast("B")) is not None, f
            assert arr.flags.c_contiguous and arr.flags.writeable and arr.flags.aligned, f
        for f in ("cost", "col_lower", "col_upper", "integrality"):
            assert getattr(sub, f).dtype == getattr(problem, f).dtype, f
            np.testing.assert_array_equal(getattr(sub, f), getattr(problem, f)[part.cols])
        own = rc[part.rows] >= 0  # a client's own rows keep their bounds; shared rows carry the part's share
        np.testing.assert_array_equal(sub.row_lower[own], problem.row_lower[part.rows][own])
        np.testing.assert_array_equal(sub.row_upper[own], problem.row_upper[part.rows][own])


def test_parts_in_shared_memory_equal_the_plain_arrays_build(monkeypatch):
    """The parts built into shared_empty files equal, field by field and dtype by dtype, the ones built into plain
    arrays (shared_empty's fallback below MIN_ARENA_BYTES), and the pack of such a part writes only what is not in
    its file (the pointers, the names): its large vectors travel by reference."""
    from solver.workloads import make_scenario
    from tests.partition_helpers import fresh_split

    problem = make_scenario("te", 16, seed=4).base()
    monkeypatch.setattr(shipping, "MIN_ARENA_BYTES", 0)
    _, _, shared_parts, _ = fresh_split(problem, 2)
    monkeypatch.setattr(shipping, "MIN_ARENA_BYTES", 1 << 60)
    _, _, plain_parts, _ = fresh_split(problem, 2)
    fields = ("cost", "col_lower", "col_upper", "integrality", "row_lower", "row_upper", "a_indptr", "a_indices",
              "a_data", "col_names", "row_names")
    for a, b in zip(shared_parts, plain_parts, strict=True):
        for f in fields:
            got, want = getattr(a.problem, f), getattr(b.problem, f)
            assert got.dtype == want.dtype, f
            np.testing.assert_array_equal(got, want)
        assert shipping._in_arena(memoryview(b.problem.cost).cast("B")) is None
    monkeypatch.setattr(shipping, "MIN_SHARED_BYTES", 1)  # every buffer out of band, so each span is counted
    sub = shared_parts[0].problem
    shipment = shipping.pack(sub)
    try:
        by_ref = sum(n for f, _, n in shipment.spans if f >= 0)
        in_file = sum(getattr(sub, f).nbytes for f in ("cost", "col_lower", "col_upper", "integrality", "row_lower",
                                                        "row_upper", "a_indices", "a_data"))
        assert by_ref == in_file
    finally:
        shipping.release([shipment])


def test_only_shared_empty_mappings_ship_by_reference_and_views_keep_their_offset():
    """A slice of a shared_empty array ships by reference at its own offset; an array over any other mapping (not
    made by shared_empty) is written into pack's own file like any array."""
    import mmap as mmap_module

    val, = shipping.shared_empty([(300_000, np.float64)])
    val[:] = np.arange(val.size, dtype=np.float64)
    view = val[1_000:250_000:1][::-1][::-1]  # views of views of the mapping
    fd = os.memfd_create("not-an-arena")
    try:
        os.ftruncate(fd, 1 << 21)
        mm = mmap_module.mmap(fd, 1 << 21)
    finally:
        os.close(fd)
    foreign = np.frombuffer(mm, dtype=np.float64, count=200_000)
    foreign[:] = 3.0
    s = shipping.pack((view, foreign))
    try:
        assert [f for f, _, _ in s.spans] == [0, -1] and s.size == foreign.nbytes
        assert s.spans[0][1] == 1_000 * 8  # the slice's offset in the file
        got = shipping.unpack(s)
    finally:
        shipping.release([s])
    assert np.array_equal(got[0], view) and np.array_equal(got[1], foreign)
    del foreign, got
    mm.close()
