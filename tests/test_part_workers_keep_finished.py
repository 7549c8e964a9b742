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
    assert len(said) == 1 and "its part 1 was solved again on new workers (the finished ones kept)" in said[0], said


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
