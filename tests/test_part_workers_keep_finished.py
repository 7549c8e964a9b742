"""A part worker that dies breaks the whole process pool (``concurrent.futures``' BrokenProcessPool), and every part
was solved again on new workers, the finished ones too: a round paid its parts twice for one death. The parts the
pool had finished now keep their results; only the others run again, and the round's warning names them."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time

import pytest

from solver.lp.pdhg import progress_callback
from solver.partition import executor

pytestmark = pytest.mark.skipif("forkserver" not in mp.get_all_start_methods(), reason="no forkserver here")


def _part(runs: str, seen: str, x: int, last: int = 1) -> int:
    """Parts before ``last`` return at once; part ``last`` waits until the driver has seen them finished (``seen``,
    written by the progress callback), then its first worker dies; its retry runs 0.6 s (the driver's line reports
    it). Every run appends its part to ``runs``."""
    with open(runs, "a") as f:
        f.write(f"{x}\n")
    if x == last and os.path.exists(seen + ".died"):
        time.sleep(0.6)
    if x == last:
        t0 = time.monotonic()
        while not os.path.exists(seen) and time.monotonic() - t0 < 60.0:
            time.sleep(0.02)
        if not os.path.exists(seen + ".died"):
            open(seen + ".died", "w").close()
            os.kill(os.getpid(), signal.SIGKILL)
    return x + 10


def test_a_dead_worker_has_only_the_unfinished_parts_solved_again(tmp_path):
    runs, seen = str(tmp_path / "runs"), str(tmp_path / "seen")

    def progress(info: dict) -> None:  # the driver's wait reports the parts done
        if info.get("parts_done", 0) >= 1 and not os.path.exists(seen):
            open(seen, "w").close()

    executor.take_retries()
    try:
        with progress_callback(progress):
            assert executor.map_parts(_part, [(runs, seen, 0), (runs, seen, 1)], "process", 2) == [10, 11]
    finally:
        executor.shutdown()
    assert os.path.exists(seen + ".died")
    with open(runs) as f:
        assert sorted(f.read().split()) == ["0", "1", "1"]  # part 0 once; part 1 twice (its death, its retry)
    said = executor.take_retries()
    assert len(said) == 1 and "the part it had not finished (1) was solved again on new workers, the finished ones kept" \
        in said[0], said


def test_the_progress_line_counts_every_part_of_the_round_through_a_retry(tmp_path):
    """After a retry of part 2 of 3 the driver's progress line read ``parts done 0/1``: it counted the futures of
    the retry, not the round's parts."""
    runs, seen = str(tmp_path / "runs"), str(tmp_path / "seen")
    said = []

    def progress(info: dict) -> None:
        said.append((info["parts_done"], info["parts"]))
        if info["parts_done"] >= 2 and not os.path.exists(seen):
            open(seen, "w").close()

    try:
        with progress_callback(progress):
            out = executor.map_parts(_part, [(runs, seen, p, 2) for p in range(3)], "process", 2)
    finally:
        executor.shutdown()
    assert out == [10, 11, 12] and os.path.exists(seen + ".died")
    assert said and all(k == 3 for _, k in said), said
    assert said[-1] == (2, 3), said  # the retry of part 2 runs with parts 0 and 1 done
    executor.take_retries()


def _square(x: int) -> int:
    return x * x


def test_a_pool_broken_after_every_part_ended_solves_nothing_again(monkeypatch):
    """A worker that dies after the last part has ended still breaks the pool: the parts' results are kept, none is
    solved again, and the round's warning says so."""
    from concurrent.futures.process import BrokenProcessPool

    real_collect, calls = executor._collect, []

    def broken_after(futures, pool, check=lambda: None, *parts):
        calls.append(len(futures))
        for f in futures:
            f.result()
        raise BrokenProcessPool("A child process terminated abruptly")

    monkeypatch.setattr(executor, "_collect", broken_after)
    executor.take_retries()
    try:
        assert executor.map_parts(_square, [(3,), (4,)], "process", 2) == [9, 16]
    finally:
        monkeypatch.setattr(executor, "_collect", real_collect)
        executor.shutdown()
    assert calls == [2]
    said = executor.take_retries()
    assert len(said) == 1 and "after every part had ended; nothing was solved again" in said[0], said


def _dies_mid_result(marker: str, x: int) -> int:
    """Part 0's first worker dies as one killed while it wrote its result: it takes the pool's result pipe's write
    lock, writes a message header and part of the message, and SIGKILLs itself. Part 1 ends a moment later and
    needs that lock to send its own result."""
    if x == 0 and not os.path.exists(marker):
        import gc
        import struct
        from multiprocessing.queues import SimpleQueue

        open(marker, "w").close()
        queue = next(o for o in gc.get_objects() if isinstance(o, SimpleQueue) and getattr(o, "_wlock", None))
        if queue._wlock is not None:
            queue._wlock.acquire()
        os.write(queue._writer.fileno(), struct.pack("!i", 4096) + b"\0" * 100)  # 100 of 4,096 bytes
        os.kill(os.getpid(), signal.SIGKILL)
    if x == 1:
        time.sleep(0.5)
    return x + 10


def test_a_worker_killed_while_it_wrote_its_result_is_retried_not_waited_for(tmp_path):
    """helper-207: a worker killed while writing its result left the pool's manager thread waiting inside ``recv``
    for the rest of the message and the other worker waiting for the write lock: ``copter step`` waited forever (3
    of 3 such kills). The round's wait now sees the worker gone (DEAD_WORKER_GRACE), kills the pool, whose manager
    thread then reads end-of-file and ends, and solves the parts again on a new pool."""
    import concurrent.futures.process as cfp
    import threading

    marker = str(tmp_path / "died")
    out: list = []
    executor.take_retries()

    def run() -> None:
        out.append(executor.map_parts(_dies_mid_result, [(marker, 0), (marker, 1)], "process", 2))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(120.0)
    try:
        assert not t.is_alive(), "the round still waits for a worker that died mid-result"
        assert out == [[10, 11]]
        said = executor.take_retries()
        assert len(said) == 1 and "solved again on new workers" in said[0], said
    finally:
        executor.shutdown()
    deadline = time.monotonic() + 30.0  # and no manager thread is left waiting (the process's exit joins them)
    while time.monotonic() < deadline and any(isinstance(th, cfp._ExecutorManagerThread) and th.is_alive()
                                              for th in threading.enumerate()):
        time.sleep(0.1)
    assert not any(isinstance(th, cfp._ExecutorManagerThread) and th.is_alive() for th in threading.enumerate())
