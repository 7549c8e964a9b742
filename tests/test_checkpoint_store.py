"""The checkpoint store (formats/checkpoint.py): round trip, sharing, atomic CURRENT, incomplete
generations, locking and pruning. Hand-built problems; no solver involved."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from formats import checkpoint_arrays as ca
from formats.checkpoint import StateStore, gen_name
from solver.model.errors import StateBusyError, StateError
from solver.model.problem import Problem
from solver.model.state import SolverState


def make_problem(n=3000, m=200, seed=0, density=0.01) -> Problem:
    rng = np.random.default_rng(seed)
    A = sp.random(m, n, density=density, random_state=seed, format="csc")
    return Problem.from_arrays(cost=rng.normal(size=n), col_lower=np.zeros(n),
                               col_upper=np.where(rng.random(n) < 0.5, np.inf, 10.0),
                               row_lower=np.full(m, -np.inf), row_upper=rng.random(m) + 1, matrix=A,
                               integrality=rng.random(n) < 0.2, sense=-1, offset=3.5, name="hand")


def save(store: StateStore, r: int, p: Problem, prev=None, changed=None, state=None):
    w = store.begin(r)
    w.save_problem(p, prev, changed)
    w.save_state(state)
    w.commit({"round": r})
    store.set_current(r)
    return w


def test_problem_and_state_round_trip_bit_identical(tmp_path):
    p = make_problem()
    rng = np.random.default_rng(1)
    s = SolverState(x=rng.random(p.n_cols), y=rng.normal(size=p.n_rows), step_size=0.25, primal_weight=3.0,
                    iterations=77, integer_x=np.round(rng.random(p.n_cols)))
    store = StateStore(tmp_path / "st")
    with store.lock(create=True):
        save(store, 0, p, state=s)
    g = StateStore(tmp_path / "st", reuse=False).load()
    assert g.round == 0 and g.warning is None
    assert g.problem.equals(p) and g.problem.name == "hand" and g.problem.sense == -1
    for k in ("x", "y", "integer_x"):
        assert np.array_equal(getattr(g.state, k), getattr(s, k))
    assert (g.state.step_size, g.state.primal_weight, g.state.iterations) == (0.25, 3.0, 77)


def test_numeric_arrays_load_writable(tmp_path):
    """Loaded arrays are writable copies of the mapped files (a read-only array is another numba signature:
    a kernel would compile mid-stream, issue #15), patched or not, problem and warm state alike."""
    p = make_problem()
    store = StateStore(tmp_path / "st")
    with store.lock(create=True):
        save(store, 0, p, state=SolverState(x=np.ones(p.n_cols), y=np.zeros(p.n_rows)))
    g = StateStore(tmp_path / "st", reuse=False).load()
    for name in ("a_indptr", "a_indices", "a_data", "cost", "col_lower", "row_upper"):
        assert getattr(g.problem, name).flags.writeable, name
    assert g.state.x.flags.writeable and g.state.y.flags.writeable


def test_unchanged_arrays_are_hard_links_and_small_change_is_a_patch(tmp_path):
    p = make_problem()
    store = StateStore(tmp_path / "st")
    with store.lock(create=True):
        save(store, 0, p)
        g0 = store.load()
        cost = p.cost.copy()
        cost[[5, 17, 2000]] += 1.0
        p1 = p.replace(cost=cost)
        w = save(store, 1, p1, g0, {"cost"})
    d0, d1 = tmp_path / "st" / "gen-000000" / "problem", tmp_path / "st" / "gen-000001" / "problem"
    for f in ("a_data", "a_indices", "col_names", "cost"):  # cost's base is shared too
        assert os.stat(d0 / f"{f}.arrow").st_ino == os.stat(d1 / f"{f}.arrow").st_ino
    assert w.stored["cost"].patch and w.stored["cost"].patch_entries == 3
    assert StateStore(tmp_path / "st", reuse=False).load().problem.equals(p1)


def test_large_change_rewrites_the_array_in_full(tmp_path):
    p = make_problem()
    store = StateStore(tmp_path / "st")
    with store.lock(create=True):
        save(store, 0, p)
        p1 = p.replace(cost=p.cost + 1.0)
        w = save(store, 1, p1, store.load(), {"cost"})
    assert not w.stored["cost"].patch
    assert store.load().problem.equals(p1)


def test_patches_are_cumulative_against_the_base_and_survive_pruning(tmp_path):
    p = make_problem()
    store = StateStore(tmp_path / "st")
    with store.lock(create=True):
        save(store, 0, p)
        cur = p
        for r in range(1, 5):
            cost = cur.cost.copy()
            cost[r * 10] = -r
            cur = cur.replace(cost=cost)
            save(store, r, cur, store.load(), {"cost"})
            store.prune(2, r)
    assert store.generations() == [3, 4]
    g = StateStore(tmp_path / "st", reuse=False).load()
    assert g.problem.equals(cur) and g.stored["cost"].patch_entries == 4


@settings(max_examples=25, deadline=None)
@given(n=st.integers(0, 3000), n2=st.integers(0, 3000), k=st.integers(0, 400), seed=st.integers(0, 10**6))
def test_save_array_load_array_returns_the_saved_array(tmp_path_factory, n, n2, k, seed):
    """Any mix of changed entries, growth and shrinkage: what is loaded is what was saved."""
    rng = np.random.default_rng(seed)
    d = tmp_path_factory.mktemp("arr")
    a0, a1 = d / "g0", d / "g1"
    a0.mkdir()
    a1.mkdir()
    base = rng.normal(size=n)
    s0 = ca.save_array(str(a0), "v", base, None, None, None, True)
    loaded0, b0 = ca.load_array(str(a0), "v", s0)
    new = np.resize(base, n2) if n else rng.normal(size=n2)
    if n2:
        new[rng.integers(0, n2, size=k)] = rng.normal(size=k)
    s1 = ca.save_array(str(a1), "v", new, str(a0), s0, b0, True)
    loaded1, _ = ca.load_array(str(a1), "v", s1)
    assert np.array_equal(loaded0, base) and np.array_equal(loaded1, new)


def test_name_arrays_patch_and_grow(tmp_path):
    names = np.array([f"x{i}" for i in range(5000)], dtype=object)
    g0, g1 = tmp_path / "a", tmp_path / "b"
    g0.mkdir()
    g1.mkdir()
    s0 = ca.save_array(str(g0), "n", names, None, None, None, True)
    _, b0 = ca.load_array(str(g0), "n", s0)
    new = np.concatenate([names, np.array(["new1", "new2"], dtype=object)])
    new[7] = "renamed"
    s1 = ca.save_array(str(g1), "n", new, str(g0), s0, b0, True)
    out, _ = ca.load_array(str(g1), "n", s1)
    assert s1.patch and s1.patch_entries == 3 and out.tolist() == new.tolist()


def test_current_is_replaced_atomically_without_leftovers(tmp_path):
    store = StateStore(tmp_path / "st")
    with store.lock(create=True):
        save(store, 0, make_problem(n=50, m=5))
        save(store, 1, make_problem(n=50, m=5, seed=1), store.load())
    assert (tmp_path / "st" / "CURRENT").read_text() == "1\n"
    assert not [p for p in os.listdir(tmp_path / "st") if p.startswith(".") and p != ".lock"]


def test_incomplete_generation_named_by_current_falls_back_to_newest_complete(tmp_path):
    store = StateStore(tmp_path / "st")
    p = make_problem(n=50, m=5)
    with store.lock(create=True):
        save(store, 0, p)
        save(store, 1, p, store.load())
    # damage round 1: a file shorter than its manifest says (a torn write)
    f = tmp_path / "st" / "gen-000001" / "problem" / "cost.arrow"
    os.unlink(f)
    f.write_bytes(b"ARROW1")
    g = store.load()
    assert g.round == 0 and "incomplete" in g.warning and "round 0" in g.warning
    assert store.generations() == [0]


def test_generation_without_manifest_is_ignored(tmp_path):
    store = StateStore(tmp_path / "st")
    with store.lock(create=True):
        save(store, 0, make_problem(n=50, m=5))
    (tmp_path / "st" / gen_name(7) / "problem").mkdir(parents=True)
    (tmp_path / "st" / "CURRENT").write_text("7\n")
    g = store.load()
    assert g.round == 0 and "round 7" in g.warning


@pytest.mark.parametrize("content", [b"", b"garbage\n", b"\xff\xfe"])
def test_unreadable_current_uses_newest_complete_generation(tmp_path, content):
    store = StateStore(tmp_path / "st")
    p = make_problem(n=50, m=5)
    with store.lock(create=True):
        save(store, 0, p)
        save(store, 1, p, store.load())
    (tmp_path / "st" / "CURRENT").write_bytes(content)
    g = store.load()
    assert g.round == 1 and "CURRENT" in g.warning


def test_uninitialised_directory_is_a_state_error(tmp_path):
    with pytest.raises(StateError, match="not an initialised"):
        StateStore(tmp_path / "nothing").load()


def test_second_writer_gets_busy_at_once(tmp_path):
    store = StateStore(tmp_path / "st")
    with store.lock(create=True):
        pass
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time, filelock; l = filelock.FileLock(sys.argv[1]); l.acquire(); "
         "print('held', flush=True); time.sleep(30)", str(tmp_path / "st" / ".lock")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        t = time.perf_counter()
        with pytest.raises(StateBusyError, match="busy"):
            with store.lock(create=True):
                pass
        assert time.perf_counter() - t < 5.0
    finally:
        holder.kill()
        holder.wait()
    with store.lock(create=True):  # released by the OS when the holder died
        pass


def test_lock_is_reentrant_within_one_process(tmp_path):
    store, again = StateStore(tmp_path / "st"), StateStore(tmp_path / "st")
    with store.lock(create=True), again.lock():
        pass


def test_prune_keeps_the_newest_k_and_the_current_one(tmp_path):
    store = StateStore(tmp_path / "st")
    p = make_problem(n=50, m=5)
    with store.lock(create=True):
        for r in range(6):
            save(store, r, p, store.load() if r else None)
        store.set_current(1)
        removed = store.prune(3, 1)
    assert store.generations() == [1, 3, 4, 5] and removed == [0, 2]


def test_failed_round_records_are_kept_and_bounded(tmp_path):
    store = StateStore(tmp_path / "st")
    with store.lock(create=True):
        for r in range(4):
            store.record_failure(r, {"round": r, "status": "PRIMAL_INFEASIBLE"}, keep=2)
    assert len(store.failures()) == 2


def test_failed_records_are_pruned_and_shown_by_write_time_not_round(tmp_path):
    """After a rollback, a new failure has a lower round than the undone branch's records: sorted by name, the
    record just written was pruned at once (its report named a missing folder) and ``show`` called the undone
    branch's failure the newest; records of one second kept a random one (helper-233, session 58)."""
    from formats.checkpoint import load_failure

    store = StateStore(tmp_path / "st")
    with store.lock(create=True):
        for _ in range(3):
            store.record_failure(11, {"round": 11, "status": "ITERATION_LIMIT"}, keep=3)
        newest = store.record_failure(9, {"round": 9, "status": "ITERATION_LIMIT"}, keep=3)
        assert newest.is_dir() and store.failures()[-1] == newest
        assert [load_failure(p)["round"] for p in store.failures()] == [11, 11, 9]
        written = [store.record_failure(r, {"round": r, "try": i}, keep=2) for i, r in enumerate((5, 4, 3, 2))]
    assert store.failures() == written[-2:]  # the two written last, within one second or not


def test_in_process_reuse_returns_the_committed_generation_and_notices_outside_changes(tmp_path):
    store = StateStore(tmp_path / "st")
    p = make_problem(n=50, m=5)
    with store.lock(create=True):
        save(store, 0, p)
    assert store.load().problem is p  # no read-back of what this process just wrote
    w = StateStore(tmp_path / "st", reuse=False)
    with w.lock():
        save(w, 0, make_problem(n=50, m=5, seed=3))  # another writer replaced round 0
    assert store.load().problem.equals(make_problem(n=50, m=5, seed=3))


def test_committing_a_round_moves_later_generations_aside_and_prune_bounds_them(tmp_path):
    store = StateStore(tmp_path / "st")
    p = make_problem(n=50, m=5)
    with store.lock(create=True):
        for r in range(4):
            save(store, r, p, store.load() if r else None)
        for back in (2, 1, 0):  # three rollbacks, each followed by a new round: three abandoned batches
            store.set_current(back)
            save(store, back + 1, p, store.load())
        assert store.generations() == [0, 1] and store.current() == (1, None)
        assert len(list((store.root / "abandoned").iterdir())) == 3
        store.prune(2, 1)
    batches = sorted((store.root / "abandoned").iterdir())
    assert len(batches) == 2 and sorted(g.name for g in batches[-1].iterdir()) == ["gen-000001", "gen-000002"]


def test_lineage_treats_generations_without_ids_as_linked(tmp_path):
    store = StateStore(tmp_path / "st")
    p = make_problem(n=50, m=5)
    with store.lock(create=True):
        for r in range(3):
            save(store, r, p, store.load() if r else None)
    for r in range(3):  # an older state directory: manifests without id/parent_id
        path = store.root / f"gen-{r:06d}" / "generation.json"
        man = json.loads(path.read_text())
        man.pop("id"), man.pop("parent_id")
        path.write_text(json.dumps(man))
    assert store.lineage(1) == [0, 1, 2]


def test_an_array_that_only_shrinks_loads_at_its_new_length(tmp_path):
    # found by the property test above (n=1025 -> 1024, nothing else changed): the base file is shared with
    # the previous generation, so the shorter length must be recorded as an (empty) patch
    base = np.arange(1025, dtype=np.float64)
    g0, g1 = tmp_path / "g0", tmp_path / "g1"
    g0.mkdir()
    g1.mkdir()
    s0 = ca.save_array(str(g0), "v", base, None, None, None, True)
    _, b0 = ca.load_array(str(g0), "v", s0)
    s1 = ca.save_array(str(g1), "v", base[:1024].copy(), str(g0), s0, b0, True)
    out, _ = ca.load_array(str(g1), "v", s1)
    assert s1.patch and s1.patch_entries == 0 and np.array_equal(out, base[:1024])


@pytest.mark.parametrize("dtype", ["float64", "int32", "int64", "bool"])
@pytest.mark.parametrize("patched", [False, True])
def test_loaded_arrays_are_private_writable_views_that_never_touch_the_file(tmp_path, dtype, patched):
    """load_array hands out a copy-on-write view of the stored file (no copy of the whole array): it must be
    writable and aligned (numba's one signature), equal to what was saved, and writing it must change neither
    the file nor the base array the next save compares against (nor an earlier generation's hard-linked file)."""
    import hashlib

    rng = np.random.default_rng(7)
    n = 5000
    saved = (rng.random(n) < 0.5) if dtype == "bool" else (rng.normal(size=n) * 100).astype(dtype)
    g0, g1 = tmp_path / "g0", tmp_path / "g1"
    g0.mkdir()
    g1.mkdir()
    s0 = ca.save_array(str(g0), "v", saved, None, None, None, True)
    folder, stored, want = str(g0), s0, saved
    if patched:
        _, b0 = ca.load_array(str(g0), "v", s0)
        want = saved.copy()
        want[[3, 4000]] = want[[4, 4001]] if dtype != "bool" else ~want[[3, 4000]]
        stored = ca.save_array(str(g1), "v", want, str(g0), s0, b0, True)
        folder = str(g1)
        assert stored.patch
    files = sorted(tmp_path.rglob("*.arrow"))
    before = {f: hashlib.sha256(f.read_bytes()).hexdigest() for f in files}
    values, base = ca.load_array(folder, "v", stored)
    assert values.flags.writeable and values.flags.aligned and values.flags.c_contiguous
    assert values.dtype == want.dtype and np.array_equal(values, want)
    assert values.base is not None  # a view of the mapping, not a copy of the whole array
    assert not base.flags.writeable
    base_before = base.copy()
    values[:] = values[::-1]  # every page written
    assert np.array_equal(base, base_before)
    assert {f: hashlib.sha256(f.read_bytes()).hexdigest() for f in files} == before
    again, _ = ca.load_array(folder, "v", stored)
    assert np.array_equal(again, want)
