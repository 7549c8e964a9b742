"""The matrix scaling carried between rounds in the solver state (``solver.lp.alm_scaling.seed``).

A ``copter step`` process starts with empty caches, so before this every round recomputed the Ruiz and
Pock-Chambolle factors of an unchanged matrix (TE Kdl: ~1 s a round). Now the state stores them, the round loop
seeds the ALM's cache with them when the delta leaves the matrix unchanged, and the scaled values are built from
A's values and the final factors either way. Checked here: the kernel against its numpy twin (bitwise), computed
and seeded factors give bitwise the same scaled matrix, the seed refuses what does not fit, state.arrow keeps the
factors (and an older one without them still loads), and a stream of rounds with fresh caches every round (one
process per round) comes out bitwise the same with and without the carried factors, which it then actually uses.
The coupling rows of the ALM's Newton systems (``solver.lp.alm_schur``) travel with the factors: the same streams
choose the assignment rows only where nothing was carried, and state.arrow / parts.arrow keep them.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.ipc as ipc
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from formats import checkpoint
from formats.generation import load_state_arrays, save_state_arrays
from solver import rounds
from solver.lp import alm_scaling, alm_schur
from solver.model.settings import Settings
from solver.model.state import MatrixScaling, SolverState
from solver.workloads.te import TEScenario


def _csc(seed: int, m: int, n: int, density: float):
    rng = np.random.default_rng(seed)
    A = sp.random(m, n, density=density, random_state=seed, format="csc")
    A.data = rng.choice([-1.0, 1.0], A.nnz) * 10.0 ** rng.uniform(-4, 4, A.nnz)
    A.sort_indices()
    return A.indptr.astype(np.int64), A.indices.astype(np.int32), A.data.astype(np.float64)


def _fresh_process() -> None:
    """What a new process starts with: no kept factors, Schur structure or generation."""
    alm_scaling._CACHE.clear()
    alm_schur._LAST.clear()
    checkpoint._RECENT.clear()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 30), st.integers(1, 40), st.floats(0.02, 0.6))
def test_scaled_values_kernel_is_its_twin_bitwise(seed, m, n, density):
    cp, ci, cv = _csc(seed, m, n, density)
    rng = np.random.default_rng(seed + 1)
    d1, d2 = 10.0 ** rng.uniform(-3, 3, m), 10.0 ** rng.uniform(-3, 3, n)
    got = alm_scaling.scaled_values(cp, ci, cv, d1, d2, np.empty_like(cv))
    assert np.array_equal(got.view(np.int64), alm_scaling.scaled_values_ref(cp, ci, cv, d1, d2).view(np.int64))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 30), st.integers(1, 40), st.floats(0.02, 0.6),
       st.sampled_from([(10, 1.0), (3, None), (0, 1.0), (10, 0.5)]))
def test_seeded_factors_give_the_computed_scaled_matrix_bitwise(seed, m, n, density, options):
    ruiz, alpha = options
    cp, ci, cv = _csc(seed, m, n, density)
    _fresh_process()
    cp64, ci32, cvs, d1, d2 = alm_scaling.matrix_factors(cp, ci, cv, m, ruiz, alpha)
    carried = alm_scaling.factors_of(cp, ci, cv, m)
    assert carried.ruiz_iterations == ruiz and carried.pock_chambolle_alpha == alpha
    # a new process: the same matrix in new arrays, the factors from the state
    cp2, ci2, cv2 = cp.copy(), ci.copy(), cv.copy()
    _fresh_process()
    assert alm_scaling.seed(cp2, ci2, cv2, m, carried)
    _, _, cvs2, e1, e2 = alm_scaling.matrix_factors(cp2, ci2, cv2, m, ruiz, alpha)
    for a, b in ((cvs, cvs2), (d1, e1), (d2, e2)):
        assert np.array_equal(a.view(np.int64), b.view(np.int64))
    assert np.array_equal(cv2, cv)  # A's own values are never scaled in place


def test_the_seed_refuses_what_does_not_fit():
    cp, ci, cv = _csc(3, 6, 9, 0.4)
    good = MatrixScaling(10, 1.0, np.ones(6), np.ones(9))
    for bad in (MatrixScaling(10, 1.0, np.ones(5), np.ones(9)), MatrixScaling(10, 1.0, np.ones(6), np.ones(10)),
                MatrixScaling(10, 1.0, np.r_[0.0, np.ones(5)], np.ones(9)),
                MatrixScaling(10, 1.0, np.ones(6), np.r_[np.nan, np.ones(8)]),
                MatrixScaling(10, 1.0, np.ones(6), np.r_[np.inf, np.ones(8)])):
        _fresh_process()
        assert not alm_scaling.seed(cp, ci, cv, 6, bad)
        assert alm_scaling.factors_of(cp, ci, cv, 6) is None
    _fresh_process()
    computed = alm_scaling.matrix_factors(cp, ci, cv, 6, 10, 1.0)
    assert not alm_scaling.seed(cp, ci, cv, 6, good)  # the process already holds this matrix's own factors
    assert alm_scaling.matrix_factors(cp, ci, cv, 6, 10, 1.0) is computed
    # seeded for other options: matrix_factors computes its own
    _fresh_process()
    assert alm_scaling.seed(cp, ci, cv, 6, good)
    fresh = alm_scaling.matrix_factors(cp, ci, cv, 6, 3, None)
    assert not np.array_equal(fresh[3], np.ones(6))


def test_state_arrow_keeps_the_factors_and_an_older_one_loads(tmp_path):
    sc = MatrixScaling(7, None, np.array([0.5, 2.0]), np.array([1.0, 3.0, 0.25]), coupling_rows=np.array([1]))
    path = tmp_path / "state.arrow"
    save_state_arrays(path, SolverState(x=np.zeros(3), y=np.ones(2), scaling=sc))
    got = load_state_arrays(path).scaling
    assert got.ruiz_iterations == 7 and got.pock_chambolle_alpha is None
    assert np.array_equal(got.row_factors, sc.row_factors) and np.array_equal(got.col_factors, sc.col_factors)
    assert got.coupling_rows.dtype == np.int64 and got.coupling_rows.tolist() == [1]
    with pa.memory_map(str(path)) as src:  # written before the coupling rows were stored: factors, no rows
        table = ipc.open_file(src).read_all().drop_columns(["coupling_rows"])
    before = tmp_path / "before-coupling.arrow"
    with pa.OSFile(str(before), "wb") as sink, ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    got = load_state_arrays(before).scaling
    assert got.coupling_rows is None and np.array_equal(got.row_factors, sc.row_factors)
    save_state_arrays(path, SolverState(x=np.zeros(3), y=np.ones(2)))
    assert load_state_arrays(path).scaling is None
    with pa.memory_map(str(path)) as src:  # a state written before the factors were stored
        table = ipc.open_file(src).read_all().drop_columns(["row_scale", "col_scale", "scaling"])
    older = tmp_path / "older.arrow"
    with pa.OSFile(str(older), "wb") as sink, ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    old = load_state_arrays(older)
    assert old.scaling is None and np.array_equal(old.y, np.ones(2))


def _stream(tmp_path, name: str, monkeypatch, carry: bool, rounds_: int = 3):
    """A TE ring stream (demands move, the matrix does not) with the ALM engine, every round in "a new process";
    returns (each round's x, y, and how many Ruiz runs each step made)."""
    scaled = []
    real = alm_scaling.ruiz_passes

    def counting(*args):
        scaled.append(1)
        return real(*args)

    monkeypatch.setattr(alm_scaling, "ruiz_passes", counting)
    chosen = _count_greedy(monkeypatch)
    if not carry:
        monkeypatch.setattr(alm_scaling, "seed", lambda *a: False)
    sc = TEScenario(nodes=12, seed=4)
    st_dir = tmp_path / name
    _fresh_process()
    rounds.init(sc.base(), st_dir, settings=Settings(engine="alm", tol=1e-6))
    runs, points = [], []
    for r in range(rounds_):
        _fresh_process()
        scaled.clear()
        chosen.clear()
        rep = rounds.step(sc.next_delta(r + 1, None), st_dir)
        assert rep["status"] == "OPTIMAL", rep
        gen = checkpoint.StateStore(st_dir).load()
        points.append((gen.state.x, gen.state.y))
        runs.append((len(scaled), len(chosen)))
        assert gen.state.scaling is not None and gen.state.scaling.coupling_rows is not None  # for the next round
    monkeypatch.undo()
    return points, runs


def _count_greedy(monkeypatch) -> list:
    """Count the runs of the greedy choice of assignment rows (``alm_schur.assignment_rows``)."""
    chosen: list = []
    real = alm_schur.assignment_rows
    monkeypatch.setattr(alm_schur, "assignment_rows", lambda *a: chosen.append(1) or real(*a))
    return chosen


def test_a_process_per_round_stream_is_the_same_with_carried_factors(tmp_path, monkeypatch):
    carried, runs_carried = _stream(tmp_path, "carried", monkeypatch, carry=True)
    computed, runs_computed = _stream(tmp_path, "computed", monkeypatch, carry=False)
    assert runs_computed == [(1, 1)] * 3 and runs_carried == [(0, 0)] * 3  # (Ruiz runs, greedy choices) a step
    for (x1, y1), (x2, y2) in zip(carried, computed, strict=True):
        assert np.array_equal(x1, x2) and np.array_equal(y1, y2)


def test_a_delta_that_changes_the_matrix_does_not_carry_the_factors(tmp_path, monkeypatch):
    from solver.model.delta import Delta

    sc = TEScenario(nodes=12, seed=4)
    st_dir = tmp_path / "st"
    _fresh_process()
    rounds.init(sc.base(), st_dir, settings=Settings(engine="alm", tol=1e-6))
    gen = checkpoint.StateStore(st_dir).load()
    stale = gen.state.scaling
    seeded = []
    monkeypatch.setattr(alm_scaling, "seed", lambda *a: seeded.append(a) or False)
    _fresh_process()
    col = gen.problem.col_names[0]
    row = gen.problem.row_names[int(gen.problem.a_indices[0])]
    rep = rounds.step(Delta.concat([sc.next_delta(1, None), Delta.coefs([col], [row], [2.0])], base_round=0), st_dir)
    assert rep["engine"] == "alm" and "returned unchanged" not in rep["message"], rep
    assert seeded == []  # the matrix changed: the old factors are not offered
    new = checkpoint.StateStore(st_dir).load().state.scaling
    assert new is not None and not np.array_equal(new.col_factors, stale.col_factors)


@pytest.mark.parametrize("engine", ["pdhg"])
def test_a_round_that_never_scales_for_the_alm_keeps_no_stale_factors(tmp_path, engine):
    sc = TEScenario(nodes=12, seed=4)
    st_dir = tmp_path / "st"
    _fresh_process()
    rounds.init(sc.base(), st_dir, settings=Settings(engine=engine, tol=1e-6))
    assert checkpoint.StateStore(st_dir).load().state.scaling is None


def test_a_read_only_matrix_compiles_no_other_kernel_signature():
    """A matrix in read-only arrays (memory-mapped, zero-copy from Arrow) scales with the signatures prepare
    compiled: numba types a read-only array as another signature, which would compile mid-stream."""
    cp, ci, cv = _csc(5, 8, 12, 0.4)
    _fresh_process()
    alm_scaling.matrix_factors(cp, ci, cv, 8, 10, 1.0)
    before = len(alm_scaling.scaled_values.signatures)
    ro = cv.copy()
    ro.flags.writeable = False
    _fresh_process()
    alm_scaling.matrix_factors(cp, ci, ro, 8, 10, 1.0)
    carried = alm_scaling.factors_of(cp, ci, ro, 8)
    _fresh_process()
    assert alm_scaling.seed(cp, ci, ro, 8, carried)
    alm_scaling.matrix_factors(cp, ci, ro, 8, 10, 1.0)
    assert len(alm_scaling.scaled_values.signatures) == before


def _part_stream(tmp_path, name: str, monkeypatch, carry: bool, rounds_: int = 3):
    """A TE ring stream with K = 2 parts (inline executor) and the ALM engine, every round in "a new process";
    returns (each round's merged x, the parts' stored factors, how many Ruiz runs each step made)."""
    scaled = []
    real = alm_scaling.ruiz_passes
    monkeypatch.setattr(alm_scaling, "ruiz_passes", lambda *a: scaled.append(1) or real(*a))
    chosen = _count_greedy(monkeypatch)
    if not carry:
        monkeypatch.setattr(alm_scaling, "seed", lambda *a: False)
    sc = TEScenario(nodes=12, seed=4)
    st_dir = tmp_path / name
    _fresh_process()
    rounds.init(sc.base(), st_dir, settings=Settings(engine="alm", tol=1e-6),
                partition={"k": 2, "executor": "inline", "update_every": 0})
    runs, points, stored = [], [], []
    for r in range(rounds_):
        _fresh_process()
        scaled.clear()
        chosen.clear()
        rep = rounds.step(sc.next_delta(r + 1, None), st_dir)
        assert rep["status"] in ("OPTIMAL", "FEASIBLE"), rep
        gen = checkpoint.StateStore(st_dir).load()
        points.append(gen.state.x)
        runs.append((len(scaled), len(chosen)))
        from solver.partition import store as part_store

        stored.append([p.state.scaling for p in part_store.load(gen.path).parts])
    monkeypatch.undo()
    return points, stored, runs


def test_partitioned_rounds_carry_each_parts_factors_checked_by_checksum(tmp_path, monkeypatch):
    """A part's matrix is rebuilt every round (in its worker, a new process each step): its factors travel in
    partition/parts.arrow with the checksum of the matrix they belong to, and the worker takes them only for a
    matrix of that checksum. Same merged points bitwise, no Ruiz run where the parts' matrices did not change."""
    carried, stored, runs_carried = _part_stream(tmp_path, "carried", monkeypatch, carry=True)
    computed, _, runs_computed = _part_stream(tmp_path, "computed", monkeypatch, carry=False)
    assert all(sc is not None and sc.matrix_crc is not None and sc.coupling_rows is not None
               for parts in stored for sc in parts)
    # every step solves both parts with the ALM (and this small model whole once more, in this process), and
    # every round, init's too, stored the parts' factors and coupling rows for the next
    assert [(c - 2, g - 2) for c, g in runs_computed] == runs_carried, (runs_carried, runs_computed)
    for x1, x2 in zip(carried, computed, strict=True):
        assert np.array_equal(x1, x2)


def test_a_part_factor_of_another_matrix_is_refused_by_its_checksum():
    cp, ci, cv = _csc(7, 10, 14, 0.3)
    _fresh_process()
    alm_scaling.matrix_factors(cp, ci, cv, 10, 10, 1.0)
    sc = alm_scaling.factors_of(cp, ci, cv, 10, crc=alm_scaling.matrix_crc(cp, ci, cv))
    assert sc.matrix_crc == alm_scaling.matrix_crc(cp.copy(), ci.copy(), cv.copy())  # of the content, not the arrays
    other = cv.copy()
    other[0] *= 2.0  # one coefficient: the same shapes, another matrix
    _fresh_process()
    assert not alm_scaling.seed(cp, ci, other, 10, sc)
    assert not alm_scaling.seed(cp.copy(), ci.copy(), cv.copy(), 10, sc, crc=sc.matrix_crc ^ 1)  # the caller's crc
    assert alm_scaling.seed(cp.copy(), ci.copy(), cv.copy(), 10, sc)


def test_stored_options_round_trip_and_a_part_scaling_needs_its_checksum():
    from solver.partition.store import _part_scaling

    d1, d2 = np.array([0.5, 2.0]), np.array([1.0, 3.0, 0.25])
    for sc in (MatrixScaling(10, 1.0, d1, d2), MatrixScaling(3, None, d1, d2, matrix_crc=123)):
        got = MatrixScaling.from_stored(sc.options_json(), d1, d2)
        assert (got.ruiz_iterations, got.pock_chambolle_alpha, got.matrix_crc) == (
            sc.ruiz_iterations, sc.pock_chambolle_alpha, sc.matrix_crc)
    assert MatrixScaling.from_stored(None, d1, d2) is None
    with pytest.raises(ValueError):
        MatrixScaling.from_stored(MatrixScaling(10, 1.0, d1, d2).options_json(), None, d2)
    with pytest.raises(ValueError, match="checksum"):
        _part_scaling(MatrixScaling(10, 1.0, d1, d2).options_json(), d1, d2)
    assert _part_scaling(MatrixScaling(10, 1.0, d1, d2, 7).options_json(), d1, d2).matrix_crc == 7


def test_stored_coupling_rows_outside_the_matrix_are_dropped_not_trusted():
    d1, d2 = np.array([0.5, 2.0]), np.array([1.0, 3.0, 0.25])
    text = MatrixScaling(10, 1.0, d1, d2, 7).options_json()
    assert MatrixScaling.from_stored(text, d1, d2, np.array([0, 1])).coupling_rows.tolist() == [0, 1]
    for bad in (np.array([2]), np.array([-1]), np.array([[0]])):
        assert MatrixScaling.from_stored(text, d1, d2, bad).coupling_rows is None


def test_a_seed_with_coupling_rows_hands_them_to_the_alm_and_a_seed_without_forgets_older_ones():
    cp, ci, cv = _csc(3, 9, 12, 0.3)
    _fresh_process()
    alm_scaling.matrix_factors(cp, ci, cv, 9, 10, 1.0)
    assert alm_scaling.coupling_rows_of(cp, ci, cv) is None  # nothing chosen yet
    alm_scaling.note_coupling_rows(cp, ci, cv, np.array([2, 5]))
    sc = alm_scaling.factors_of(cp, ci, cv, 9)
    assert sc.coupling_rows.tolist() == [2, 5]
    _fresh_process()
    cp2, ci2, cv2 = cp.copy(), ci.copy(), cv.copy()
    assert alm_scaling.seed(cp2, ci2, cv2, 9, sc)
    assert alm_scaling.coupling_rows_of(cp2, ci2, cv2).tolist() == [2, 5]
    assert alm_scaling.coupling_rows_of(cp, ci, cv) is None  # other arrays
    cp3 = cp.copy()
    assert alm_scaling.seed(cp3, ci2, cv2, 9, MatrixScaling(10, 1.0, sc.row_factors, sc.col_factors))
    assert alm_scaling.coupling_rows_of(cp3, ci2, cv2) is None


def test_the_cache_keeps_no_coupling_rows_of_a_matrix_it_moved_on_from():
    cp, ci, cv = _csc(4, 6, 9, 0.4)
    _fresh_process()
    alm_scaling.matrix_factors(cp, ci, cv, 6, 10, 1.0)
    alm_scaling.note_coupling_rows(cp, ci, cv, np.array([1]))
    other = _csc(5, 6, 9, 0.4)
    alm_scaling.matrix_factors(*other, 6, 10, 1.0)
    assert "coupling" not in alm_scaling._CACHE  # the first matrix is not held alive through its rows
    assert alm_scaling.coupling_rows_of(cp, ci, cv) is None


@pytest.mark.parametrize("column", [
    pa.array([["a", "b"]], type=pa.list_(pa.string())),  # not integers
    pa.array([[1.7, 2.0]], type=pa.list_(pa.float64())),  # not integers: never truncated to rows 1, 2
    pa.array([[1, None]], type=pa.list_(pa.int64())),  # a null inside
    pa.array([7], type=pa.int64()),  # not a list
])
def test_a_damaged_coupling_rows_column_is_no_hint_and_the_state_still_loads(tmp_path, column):
    sc = MatrixScaling(7, None, np.array([0.5, 2.0]), np.array([1.0, 3.0, 0.25]), coupling_rows=np.array([1]))
    path = tmp_path / "state.arrow"
    save_state_arrays(path, SolverState(x=np.zeros(3), y=np.ones(2), scaling=sc))
    with pa.memory_map(str(path)) as src:
        table = ipc.open_file(src).read_all()
    table = table.set_column(table.column_names.index("coupling_rows"), "coupling_rows", column)
    damaged = tmp_path / "damaged.arrow"
    with pa.OSFile(str(damaged), "wb") as sink, ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    got = load_state_arrays(damaged)
    assert got.scaling.coupling_rows is None and np.array_equal(got.scaling.row_factors, sc.row_factors)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 200), st.integers(0, 2**31 - 1))
def test_the_checksum_word_kernel_is_its_twin(k, seed):
    rng = np.random.default_rng(seed)
    words = rng.integers(0, 2**63, k, dtype=np.uint64) * np.uint64(2) + rng.integers(0, 2, k, dtype=np.uint64)
    h = np.uint64(rng.integers(0, 2**63))
    assert int(alm_scaling.fnv1a_words(words, h)) == alm_scaling.fnv1a_words_ref(words, h)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 12), st.integers(1, 12), st.integers(0, 2**31 - 1))
def test_the_matrix_checksum_sees_every_byte_and_the_shapes(m, n, seed):
    """Any one changed value, row index or pointer, an odd int32 tail (a last partial word) included, and another
    dtype or split of the same bytes change the checksum (the word kernel's twin: the test above)."""
    rng = np.random.default_rng(seed)
    A = sp.random_array((m, n), density=0.5, format="csc", rng=rng)
    A.sort_indices()
    cp, ci, cv = A.indptr.astype(np.int64), A.indices.astype(np.int32), A.data.copy()
    base = alm_scaling.matrix_crc(cp, ci, cv)
    assert 0 <= base < 2**32
    assert base == alm_scaling.matrix_crc(cp.copy(), ci.copy(), cv.copy())  # of the content, not the arrays
    if cv.size:
        j = int(rng.integers(cv.size))
        v = cv.copy()
        v[j] = np.nextafter(v[j], np.inf)  # one ulp of one coefficient
        assert alm_scaling.matrix_crc(cp, ci, v) != base
        i = ci.copy()
        i[j] ^= 1 << int(rng.integers(0, 8))  # one bit of one index (the last, odd-placed entry included)
        assert alm_scaling.matrix_crc(cp, i, cv) != base
        i = ci.copy()
        i[-1] += 1  # the very last int32: in the zero-padded partial word when nnz is odd
        assert alm_scaling.matrix_crc(cp, i, cv) != base
    p = cp.copy()
    p[-1] += 1
    assert alm_scaling.matrix_crc(p, ci, cv) != base
    assert alm_scaling.matrix_crc(cp, ci.astype(np.int64), cv) != base  # the dtype is part of it
