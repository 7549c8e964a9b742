"""A large LP round's first pass builds its parts in threads while the first ones already run, the part whose previous
solve made the most work first (``solver.partition.prepared``): the same parts, warm starts and results as built all
at once; the executor submits a sequence whose items wait for their part, in the order given, results by index."""

from __future__ import annotations

import os
import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest

from solver.differential import apply_delta
from solver.model.settings import Settings
from solver.partition import executor, split
from solver.partition import round as pround
from solver.partition.prepared import PreparedTasks, expected_work, submission_order
from solver.workloads import make_scenario


def _double(i, x):
    return i, 2 * x


class _Slow:
    """A task sequence whose item i becomes ready after ``delay[i]`` seconds (as a part still being built)."""

    def __init__(self, delays):
        self.delays, self.asked = delays, []

    def __len__(self):
        return len(self.delays)

    def __getitem__(self, i):
        if not 0 <= i < len(self):
            raise IndexError(i)
        self.asked.append(i)
        time.sleep(self.delays[i])
        return (i, 10 + i)


def test_expected_work_is_the_previous_passes_times_the_columns():
    st = [SimpleNamespace(engine={"passes": 100.0}), SimpleNamespace(engine={"passes": 40.0})]
    assert expected_work(st, np.array([10, 30])) == [1000.0, 1200.0]
    assert expected_work([st[0], None], np.array([10, 30])) is None  # a part without a record: no one favoured
    assert expected_work([st[0], SimpleNamespace(engine={"passes": float("nan")})], np.array([1, 1])) is None
    assert expected_work([st[0], SimpleNamespace(engine={})], np.array([1, 1])) is None


def test_the_order_is_the_most_work_first_ties_by_part():
    assert submission_order([0, 1, 2, 3], [5.0, 9.0, 5.0, 7.0]) == [1, 3, 0, 2]
    assert submission_order([1, 3], [0.0, 2.0, 9.0, 8.0]) == [1, 0]  # task indices: part 3 first
    assert submission_order([0, 2, 5], None) == [0, 1, 2]


@pytest.mark.parametrize("how", ["process", "inline"])
def test_map_parts_takes_a_waiting_sequence_in_the_order_given(how):
    tasks = _Slow([0.0, 0.3, 0.0])
    try:
        out = executor.map_parts(_double, tasks, how, 2, order=[2, 0, 1])
    finally:
        executor.shutdown()
    assert out == [(0, 20), (1, 22), (2, 24)]  # by task index, whatever the order
    submitted = executor.take_submitted()
    if how == "inline":  # runs index order, submits nothing
        assert tasks.asked == [0, 1, 2] and all(np.isnan(submitted))
    else:
        assert tasks.asked[:3] == [2, 0, 1]
        assert submitted[2] < submitted[0] < submitted[1]
        assert submitted[1] - submitted[0] >= 0.25  # task 1 went when it was ready, after the others
    assert executor.take_submitted() == []


def test_an_order_that_is_not_a_permutation_is_refused():
    with pytest.raises(ValueError, match="not a permutation"):
        executor.map_parts(_double, [(0, 1), (1, 2)], "inline", order=[0, 0])


def test_prepared_tasks_wait_for_their_part_and_raise_its_error():
    gate = threading.Event()

    def prepare(p):
        if p == 1:
            gate.wait(5)
        if p == 2:
            raise MemoryError("no room for part 2")
        return SimpleNamespace(problem=f"P{p}"), f"W{p}", time.perf_counter()

    tasks = PreparedTasks(4, [0, 1, 3], "S", prepare, order=[1, 0, 2], threads=2)
    assert len(tasks) == 3
    assert tasks[0] == ("P0", "S", "W0") and tasks[2] == ("P3", "S", "W3")
    gate.set()
    assert tasks[1] == ("P1", "S", "W1")
    with pytest.raises(MemoryError, match="part 2"):  # an unsolved part is built too (the round stores it)
        tasks.parts()


@pytest.fixture(scope="module")
def stream():
    sc = make_scenario("te", 24, seed=5)
    base = sc.base()
    new, info = apply_delta(base, sc.next_delta(1))
    return base, new, info


def _rounds(stream, prepared: bool, monkeypatch):
    """Round 0 and warm round 1 of the stream, K = 3 on two worker processes, the parts prepared beside the running
    ones (``prepared``) or built all at once."""
    base, new, info = stream
    monkeypatch.setattr(split, "BUILD_THREADS_MIN_NNZ", 0 if prepared else 10**12)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)  # the threads this needs, on any machine
    cfg = pround.PartitionConfig(k=3, executor="process", workers=2, update_every=1, whole_below_nnz=0)
    st = Settings(tol=1e-6)
    try:
        first = pround.solve_round(base, st, cfg)
        second = pround.solve_round(new, st, cfg, first.data, info, (base.n_cols, base.n_rows), None, base)
    finally:
        executor.shutdown()
    return first, second


def test_a_round_with_prepared_parts_gives_the_same_results_bitwise(stream, monkeypatch):
    eager = _rounds(stream, False, monkeypatch)
    piped = _rounds(stream, True, monkeypatch)
    for a, b in zip(eager, piped, strict=True):
        assert a.result.status == b.result.status
        assert a.result.objective == b.result.objective
        np.testing.assert_array_equal(a.result.x, b.result.x)
        np.testing.assert_array_equal(a.result.y, b.result.y)
        for pa, pb in zip(a.data.parts, b.data.parts, strict=True):
            np.testing.assert_array_equal(pa.cols, pb.cols)
            np.testing.assert_array_equal(pa.rows, pb.rows)
            np.testing.assert_array_equal(pa.state.x, pb.state.x)
        np.testing.assert_array_equal(a.data.shares, b.data.shares)
    # round 0's first pass starts from the probe's points (built at once); the warm round's is prepared
    assert "critical_path_seconds" not in str(piped[0].report["shares"]["passes"])
    first_pass = piped[1].report["shares"]["passes"][0]
    assert first_pass["kind"] == "pass" and first_pass["critical_path_seconds"] > 0
    assert first_pass["overlapped_seconds"] >= 0
    s = piped[1].report["seconds"]
    assert s["phases"]["prepare_parts"] > 0 and "map_warm" not in s["phases"]
    assert s["on_k_cores"] == pytest.approx(s["setup"] + s["ship"] + s["slowest_part"] + s["merge"] - s["overlapped"],
                                            abs=1e-5)
    assert piped[1].report.get("fallback", {}).get("kept") != "whole"  # the merged point is what was compared
    for out in eager:
        assert out.report["seconds"]["overlapped"] == 0 and "prepare_parts" not in out.report["seconds"]["phases"]
