"""A partitioned LP round computes the model's implied column upper bounds and assignment rows (the merge's
Lagrangian bound needs them) in a thread, started once its parts are submitted to their worker processes
(``solver.partition.background.ImpliedUpperBuild``): the same bounds and rows, so the same merged bound, as
computed in the merge."""

from __future__ import annotations

import numpy as np
import pytest

from solver.model.settings import Settings
from solver.partition import background
from solver.partition import round as pround
from solver.partition.bound import assignment_rows_of, implied_upper
from solver.workloads import make_scenario


@pytest.fixture(scope="module")
def te():
    return make_scenario("te", 24, seed=5).base()


@pytest.mark.parametrize("in_thread", [True, False])
def test_the_build_equals_implied_upper_in_a_thread_or_not(te, in_thread):
    build = background.ImpliedUpperBuild(te)
    if in_thread:
        build.start()
        build.start()  # once: the executor calls it again after a retry's submission
    got = build.result()
    assert build.in_thread == in_thread
    np.testing.assert_array_equal(got.up, implied_upper(te))
    want = assignment_rows_of(te)
    for field in ("rows", "rp", "rc", "coef"):
        np.testing.assert_array_equal(getattr(got.arows, field), getattr(want, field))
    assert got.seconds_up > 0 and got.seconds_rows > 0 and got.seconds_row_scale > 0
    # the row scales are left in termination's cache: the merge's re-check reads them without a pass
    from solver.lp import termination

    hit = termination._ROW_ABSMAX.get(id(te.a_data))
    assert hit is not None and hit[0]() is te.a_data
    want_scale = np.zeros(te.n_rows)
    np.maximum.at(want_scale, te.a_indices, np.abs(te.a_data))
    np.testing.assert_array_equal(hit[2], want_scale)


def test_a_build_that_fails_raises_in_the_callers_thread(te, monkeypatch):
    def boom(problem):
        raise MemoryError("no room for the implied bounds")

    monkeypatch.setattr(background, "implied_upper", boom)
    build = background.ImpliedUpperBuild(te)
    build.start()
    with pytest.raises(MemoryError, match="no room"):
        build.result()


def test_an_lp_round_on_workers_computes_them_during_the_parts_and_merges_the_same_bound(te):
    st = Settings(tol=1e-6)
    cfg = dict(k=2, update_every=0)
    procs = pround.solve_round(te, st, pround.PartitionConfig(executor="process", workers=2, **cfg))
    inline = pround.solve_round(te, st, pround.PartitionConfig(executor="inline", **cfg))
    phases = procs.report["seconds"]["phases"]
    assert phases["implied_upper_in_thread"] > 0 and "implied_upper_wait" in phases
    assert phases["assignment_rows_in_thread"] > 0 and "assignment_rows" not in phases
    assert phases["row_scale_in_thread"] > 0
    assert "implied_upper_in_thread" not in inline.report["seconds"]["phases"]  # inline: the merge computes them
    assert inline.report["seconds"]["phases"]["assignment_rows"] > 0
    # this small model is also solved whole: the merged point's bound is the fallback's
    bound = procs.report["fallback"]["merged_bound"]
    assert procs.report["fallback"]["kept"] == "whole" and procs.report["bound"] is None
    assert bound is not None
    assert bound == inline.report["fallback"]["merged_bound"]  # the same parts' points, the same bounds: bitwise
    assert procs.result.objective == inline.result.objective


def test_the_thread_starts_once_the_parts_are_submitted(te, monkeypatch):
    from solver.partition import executor

    seen = []
    real = executor._submit_all

    def submit(*args, **kw):
        seen.append(("submit", None))
        return real(*args, **kw)

    real_start = background.ImpliedUpperBuild.start

    def start(self):
        seen.append(("start", self.in_thread))
        real_start(self)

    monkeypatch.setattr(executor, "_submit_all", submit)
    monkeypatch.setattr(background.ImpliedUpperBuild, "start", start)
    pround.solve_round(te, Settings(tol=1e-6), pround.PartitionConfig(k=2, executor="process", workers=2,
                                                                      update_every=0))
    starts = [i for i, e in enumerate(seen) if e[0] == "start"]
    # a cold round's probe submits first (its merge needs no bound); the first pass's submission starts the thread
    assert starts and seen[starts[0] - 1] == ("submit", None) and seen[starts[0]] == ("start", False)


@pytest.mark.skipif(not hasattr(__import__("os"), "setpriority"), reason="no per-thread priorities here")
def test_the_thread_runs_at_a_lower_priority_than_the_process_and_only_it(te, monkeypatch):
    """The implied-bounds thread yields to the part workers (``ImpliedUpperBuild.nice``): its own nice value is
    the process's plus 10; the calling thread keeps its priority; computed in the caller (no thread) nothing
    changes."""
    import os
    import threading

    seen = {}

    def record(self):
        seen["nice"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
        return None

    monkeypatch.setattr(background.ImpliedUpperBuild, "_compute", record)
    base = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    b = background.ImpliedUpperBuild(te)
    b.start()
    b.result()
    assert seen["nice"] == min(base + background.ImpliedUpperBuild.nice, 19)
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == base  # the caller's is untouched
    inline = background.ImpliedUpperBuild(te)
    inline.result()  # no thread: computed here, at the caller's priority
    assert seen["nice"] == base
