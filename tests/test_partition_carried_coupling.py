"""A partitioned LP round's merge bounds the merged point with an exact step on the whole model's assignment rows
(``solver.partition.bound.assignment_step``), whose choice (a greedy walk over the transposed pattern: 0.35 s of CPU
on TE Kdl, in a thread beside the parts on a 2-core machine) depends on the matrix alone. The round stores the
other rows (``PartitionData.coupling_rows``, ``partition/coupling.arrow``) and the next round on the same matrix
rebuilds the choice from them in one checked pass. Checked: the rebuilt arrays are the greedy's, a set that does not
fit is ignored, a stream of rounds (one process each) chooses only where nothing was carried and gives the same
rounds bitwise, a delta that changes the matrix carries nothing, and a damaged file is no hint."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc

from formats import checkpoint
from solver import prepare, rounds
from solver.lp import alm_schur
from solver.model.settings import Settings
from solver.partition import store as part_store
from solver.partition.bound import assignment_rows_of, coupling_rows
from solver.workloads.te import TEScenario

PARTITION = {"k": 2, "executor": "inline", "update_every": 0, "whole_below_nnz": 0}


def test_carried_coupling_rows_give_the_greedys_assignment_rows_and_a_misfit_is_ignored():
    p = TEScenario(nodes=10, seed=3).base()
    want = assignment_rows_of(p)
    coupling = coupling_rows(want, p.n_rows)
    got = assignment_rows_of(p, coupling)
    for name in ("rows", "rp", "rc", "coef", "row_of_col"):
        np.testing.assert_array_equal(getattr(got, name), getattr(want, name))
    # every row an assignment row: not pairwise disjoint on this matrix, so the greedy's choice is made instead
    misfit = assignment_rows_of(p, np.empty(0, dtype=np.int64))
    np.testing.assert_array_equal(misfit.rows, want.rows)


def _stream(tmp_path, name: str, monkeypatch, drop_stored: bool, rounds_: int = 3):
    """K = 2 rounds of a TE ring stream, each as a new process; returns (each step's merged x, the whole model's
    greedy choices each step made, the coupling rows each round stored). ``drop_stored``: read no stored rows (what
    a state from before them gives)."""
    chosen: list = []
    real = alm_schur.assignment_rows
    sc = TEScenario(nodes=12, seed=4)
    st_dir = tmp_path / name
    prepare.forget_process_caches()
    rounds.init(sc.base(), st_dir, settings=Settings(engine="alm", tol=1e-6), partition=PARTITION)
    m = checkpoint.StateStore(st_dir).load().problem.n_rows
    monkeypatch.setattr(alm_schur, "assignment_rows", lambda *a: chosen.append(a[3]) or real(*a))
    read = part_store._coupling_rows
    points, whole, stored = [], [], []
    for r in range(rounds_):
        if drop_stored:
            monkeypatch.setattr(part_store, "_coupling_rows", lambda folder: None)
        prepare.forget_process_caches()
        chosen.clear()
        rep = rounds.step(sc.next_delta(r + 1, None), st_dir)
        assert rep["status"] in ("OPTIMAL", "FEASIBLE") and "assignment_exact" in rep["partitions"]["bound_candidate"]
        monkeypatch.setattr(part_store, "_coupling_rows", read)
        gen = checkpoint.StateStore(st_dir).load()
        points.append(gen.state.x)
        whole.append(sum(1 for rows in chosen if rows == m))
        stored.append(part_store.load(gen.path).coupling_rows)
    monkeypatch.undo()
    return points, whole, stored


def test_a_process_per_round_stream_carries_the_whole_models_choice(tmp_path, monkeypatch):
    carried, whole_carried, stored = _stream(tmp_path, "carried", monkeypatch, drop_stored=False)
    chosen, whole_chosen, _ = _stream(tmp_path, "chosen", monkeypatch, drop_stored=True)
    assert whole_chosen == [1, 1, 1] and whole_carried == [0, 0, 0]
    assert all(rows is not None and rows.dtype == np.int64 and rows.size for rows in stored)
    for x1, x2 in zip(carried, chosen, strict=True):
        assert np.array_equal(x1, x2)


def test_a_delta_that_changes_the_matrix_carries_no_choice(tmp_path, monkeypatch):
    from solver.model.delta import Delta

    sc = TEScenario(nodes=12, seed=4)
    st_dir = tmp_path / "st"
    prepare.forget_process_caches()
    rounds.init(sc.base(), st_dir, settings=Settings(engine="alm", tol=1e-6), partition=PARTITION)
    gen = checkpoint.StateStore(st_dir).load()
    assert part_store.load(gen.path).coupling_rows is not None
    offered = []
    real = assignment_rows_of
    import solver.partition.merge as merge

    monkeypatch.setattr(merge, "assignment_rows_of", lambda p, c=None: offered.append(c) or real(p, c))
    col = gen.problem.col_names[0]
    row = gen.problem.row_names[int(gen.problem.a_indices[0])]
    prepare.forget_process_caches()
    rep = rounds.step(Delta.concat([sc.next_delta(1, None), Delta.coefs([col], [row], [2.0])], base_round=0), st_dir)
    assert rep["status"] in ("OPTIMAL", "FEASIBLE")
    assert offered == [None]  # the matrix changed: the stored rows are not offered


def test_a_damaged_coupling_file_is_no_hint(tmp_path):
    sc = TEScenario(nodes=12, seed=4)
    st_dir = tmp_path / "st"
    rounds.init(sc.base(), st_dir, settings=Settings(engine="alm", tol=1e-6), partition=PARTITION)
    gen = checkpoint.StateStore(st_dir).load()
    path = gen.path / "partition" / "coupling.arrow"
    for table in (pa.table({"row": pa.array([1.5, 2.0])}), pa.table({"other": pa.array([1])}),
                  pa.table({"row": pa.array([1, None], type=pa.int64())})):
        path.chmod(0o644)
        with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, table.schema) as w:
            w.write_table(table)
        data = part_store.load(gen.path)
        assert data.coupling_rows is None and data.parts  # the rest of the partition loads
    path.write_bytes(b"not arrow")
    assert part_store.load(gen.path).coupling_rows is None
