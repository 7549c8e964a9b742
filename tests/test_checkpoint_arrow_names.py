"""A loaded checkpoint hands its memory-mapped Arrow names to the delta's name look-ups (issue #15): a
``copter step`` process resolves names with ``pyarrow.compute.index_in`` against them instead of building a
name -> position dict in Python, with the same result."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import scipy.sparse as sp

from formats.checkpoint import StateStore
from solver.differential import apply_delta
from solver.model.delta import Delta
from solver.model.problem import Problem


def _problem(n: int = 3000, m: int = 40) -> Problem:
    rng = np.random.default_rng(3)
    a = sp.random(m, n, density=0.02, random_state=3, format="csc")
    return Problem.from_arrays(cost=rng.normal(size=n), col_lower=np.zeros(n), col_upper=np.ones(n),
                               row_lower=np.full(m, -np.inf), row_upper=np.ones(m), matrix=a,
                               integrality=np.ones(n, dtype=bool), sense=-1, name="names")


def _save_and_load(tmp_path, p: Problem) -> Problem:
    store = StateStore(tmp_path / "st")
    with store.lock(create=True):
        w = store.begin(0)
        w.save_problem(p)
        w.commit({"round": 0})
        store.set_current(0)
    return StateStore(tmp_path / "st", reuse=False).load().problem


def _delta(p: Problem) -> Delta:
    cols, rows = p.col_names, p.row_names
    return Delta.concat([Delta.drop_vars([cols[5], cols[2000]]), Delta.drop_cons([rows[7]]),
                         Delta.vars([cols[10], cols[2999], "new_x"], cost=[1.0, 2.0, 3.0], lower=[0.0] * 3,
                                    upper=[1.0] * 3),
                         Delta.coefs(["new_x", cols[11]], [rows[0], rows[1]], [1.5, 2.5])])


def test_loaded_problem_carries_its_arrow_names_and_applies_without_a_name_dict(tmp_path):
    p = _problem()
    loaded = _save_and_load(tmp_path, p)
    arrow = loaded.__dict__.get("_arrow_names")
    assert arrow is not None and all(isinstance(a, pa.Array) for a in arrow)
    assert arrow[0].to_pylist() == p.col_names.tolist() and arrow[1].to_pylist() == p.row_names.tolist()
    d = _delta(p)
    q_loaded, info_loaded = apply_delta(loaded, d)
    q_memory, info_memory = apply_delta(p, d)
    assert q_loaded.equals(q_memory)
    assert np.array_equal(info_loaded.col_map, info_memory.col_map)
    assert np.array_equal(info_loaded.row_map, info_memory.row_map)
    assert loaded._col_index is None and loaded._row_index is None  # resolved through Arrow, no dict built


def test_unknown_names_are_still_refused_through_the_arrow_names(tmp_path):
    import pytest

    from solver.model.errors import ValidationError

    loaded = _save_and_load(tmp_path, _problem())
    with pytest.raises(ValidationError, match="no_such_var"):
        apply_delta(loaded, Delta.drop_vars(["no_such_var"]))


def test_patched_names_are_gathered_from_base_and_patch(tmp_path):
    """A round that added a few names stores them as a patch on the earlier base: the Arrow copy is built from
    both on first use and resolves the next delta as the in-memory problem does."""
    p0 = _problem()
    store = StateStore(tmp_path / "st")
    with store.lock(create=True):
        w = store.begin(0)
        w.save_problem(p0)
        w.commit({"round": 0})
        store.set_current(0)
    g0 = StateStore(tmp_path / "st", reuse=False).load()
    p1, info = apply_delta(p0, Delta.concat([
        Delta.vars(["grown_a", "grown_b"], cost=[1.0, 1.0], lower=[0.0, 0.0], upper=[1.0, 1.0]),
        Delta.coefs(["grown_a", "grown_b"], [p0.row_names[0], p0.row_names[1]], [1.0, 1.0])]))
    with store.lock():
        w = store.begin(1)
        w.save_problem(p1, g0, set(info.changed_fields))
        w.commit({"round": 1})
        store.set_current(1)
    assert w.stored["col_names"].patch  # the case under test
    loaded = StateStore(tmp_path / "st", reuse=False).load().problem
    assert callable(loaded.__dict__["_arrow_names"][0])
    d = _delta(p1)
    q_loaded, _ = apply_delta(loaded, d)
    assert q_loaded.equals(apply_delta(p1, d)[0])
    assert loaded._col_index is None
    assert loaded.__dict__["_arrow_names"][0].to_pylist() == p1.col_names.tolist()


def test_stored_names_equal_the_loaded_names_after_a_rename_a_growth_and_a_shrink(tmp_path):
    from formats import checkpoint_arrays as ca

    names = np.array([f"x{i}" for i in range(5000)], dtype=object)
    folders = [tmp_path / c for c in "abc"]
    for f in folders:
        f.mkdir()
    s0 = ca.save_array(str(folders[0]), "n", names, None, None, None, True)
    assert ca.stored_names(str(folders[0]), "n", s0).to_pylist() == names.tolist()
    _, b0 = ca.load_array(str(folders[0]), "n", s0)
    grown = np.concatenate([names, np.array(["new1", "new2"], dtype=object)])
    grown[7] = "renamed"
    s1 = ca.save_array(str(folders[1]), "n", grown, str(folders[0]), s0, b0, True)
    shrunk = grown[:4990].copy()
    shrunk[3] = "again"
    s2 = ca.save_array(str(folders[2]), "n", shrunk, str(folders[0]), s0, b0, True)
    for folder, st, want in ((folders[1], s1, grown), (folders[2], s2, shrunk)):
        assert st.patch
        build = ca.stored_names(str(folder), "n", st)
        assert build().to_pylist() == want.tolist() == ca.load_array(str(folder), "n", st)[0].tolist()
    assert ca.stored_names(str(folders[0]), "n", ca.StoredArray(length=3, dtype="float64")) is None


def test_each_side_looks_its_names_up_once_whatever_the_phases(tmp_path, monkeypatch):
    """Drops, upserts and coefs on existing names: one look-up of the delta's distinct names per side (each
    ``index_in`` against Arrow names hashes all of the problem's names: once, not once per phase)."""
    import solver.differential.apply as apply_mod

    p = _problem()
    loaded = _save_and_load(tmp_path, p)
    calls = []
    real = apply_mod.lookup

    def counting(index, names):
        calls.append(len(names))
        return real(index, names)

    cols, rows = p.col_names, p.row_names
    d = Delta.concat([Delta.drop_vars([cols[5]]), Delta.vars([cols[10]], cost=[4.0]),
                      Delta.coefs([cols[12], cols[13]], [rows[0], rows[1]], [1.5, 2.5]),
                      Delta.drop_cons([rows[7]]), Delta.cons([rows[8]], upper=[3.0])])
    want, _ = apply_delta(p, d)
    monkeypatch.setattr(apply_mod, "lookup", counting)
    q, _ = apply_delta(loaded, d)
    assert q.equals(want)
    assert calls == [4, 4]  # columns: x5, x10, x12, x13; rows: c0, c1, c7, c8
