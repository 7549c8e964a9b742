"""A warm partitioned round whose delta leaves the matrix alone reuses the previous round's row owners
(``ClientGrouping.row_client``) and shared-row presence instead of a pass over the matrix each
(``solver.partition.round._setup``; ``partition/rows.arrow`` and the ``t<p>`` columns of ``shares.arrow``):
what it reuses equals what the passes compute, and a delta that changes the matrix or the columns computes
them again."""

from __future__ import annotations

import numpy as np
import pytest

from formats.io import read_delta
from solver import rounds
from solver.differential import apply_delta
from solver.partition import clients as C
from solver.partition import round as pround
from solver.partition import shares as sh
from solver.partition import store
from solver.partition.split import column_parts, shared_rows
from solver.workloads import make_scenario
from tests.partition_helpers import partitioned_te_state


def _generations(state):
    return sorted(p for p in state.glob("gen-*") if (p / store.FOLDER).is_dir())


def _computed(problem, data):
    """(row_client, presence) of ``problem`` computed afresh for the stored grouping and assignment."""
    g = C.group_clients(problem)
    assert np.array_equal(g.col_client, data.col_client)
    rows_sh = shared_rows(g)
    assert np.array_equal(rows_sh, data.shared_rows)
    return g.row_client, sh.presence(problem, column_parts(g, data.assignment.client_part), rows_sh,
                                     data.assignment.k)


def _no_pass(monkeypatch):
    """Make both passes fail loudly, as the carried round must not run them."""
    def row_pass(*a, **kw):
        raise AssertionError("the round classified the rows again though the matrix did not change")

    def presence_pass(*a, **kw):
        raise AssertionError("the round measured the shared rows' presence again though the matrix did not change")

    monkeypatch.setattr(C, "row_clients", row_pass)
    monkeypatch.setattr(sh, "presence", presence_pass)


def test_a_round_that_leaves_the_matrix_alone_reuses_the_row_owners_and_presence(tmp_path, monkeypatch):
    state, delta = partitioned_te_state(tmp_path)
    from formats.checkpoint import StateStore

    p0 = StateStore(state).load().problem
    d1 = read_delta(delta)
    p1, info = apply_delta(p0, d1)
    assert not info.matrix_changed  # TE demands move row bounds only
    with monkeypatch.context() as m:
        _no_pass(m)
        rounds.step(d1, state)
    g0, g1 = _generations(state)
    for gen, problem in ((g0, p0), (g1, p1)):
        data = store.load(gen)
        assert data.row_client is not None and data.presence is not None
        rc, pres = _computed(problem, data)
        assert np.array_equal(data.row_client, rc)
        assert data.presence.dtype == bool and np.array_equal(data.presence, pres)
        assert (rc == C.SHARED).any() and (rc >= 0).any() and pres.any()  # owned and shared rows both


def test_a_round_that_changes_the_matrix_computes_them_again(tmp_path):
    """Sia rounds add and drop jobs (columns and their entries): both passes run, and what the next round stores
    is this round's, not the previous one's."""
    sc = make_scenario("sia", 256, seed=0)
    state = tmp_path / "st"
    p = sc.base()
    rounds.init(p, state, partition={"k": 2, "executor": "inline"})
    calls = {"rows": 0, "presence": 0}
    real_rows, real_presence = C.row_clients, sh.presence

    def rows(*a, **kw):
        calls["rows"] += 1
        return real_rows(*a, **kw)

    def presence(*a, **kw):
        calls["presence"] += 1
        return real_presence(*a, **kw)

    mp = pytest.MonkeyPatch()
    mp.setattr(C, "row_clients", rows)
    mp.setattr(sh, "presence", presence)
    try:
        for r in (1, 2):
            d = sc.next_delta(r, None)
            p, info = apply_delta(p, d)
            assert info.matrix_changed
            before = dict(calls)
            rounds.step(d, state)
            assert calls["rows"] > before["rows"] and calls["presence"] > before["presence"]
            data = store.load(_generations(state)[-1])
            rc, pres = _computed(p, data)
            assert np.array_equal(data.row_client, rc) and np.array_equal(data.presence, pres)
    finally:
        mp.undo()


def test_carry_grouping_takes_the_previous_row_owners_only_when_every_column_stayed():
    """The carry's own guard: offered row owners are taken when every column kept its place and client (here a
    marker array, to see which one came back), and ignored, the rows classified afresh, when a column moved."""
    sc = make_scenario("sia", 256, seed=0)
    p = sc.base()
    g = C.group_clients(p)
    marker = np.full(p.n_rows, 7, dtype=np.int64)
    same = C.carry_grouping(p, g.col_client, g.client_names, np.arange(p.n_cols), prev_row_client=marker)
    assert np.array_equal(same.row_client, marker)
    q, info = apply_delta(p, sc.next_delta(1, None))
    assert (info.col_map < 0).any()
    moved = C.carry_grouping(q, g.col_client, g.client_names, info.col_map,
                             prev_row_client=np.full(q.n_rows, 7, dtype=np.int64))
    assert np.array_equal(moved.row_client, C.group_clients(q).row_client)
    wrong_shape = C.carry_grouping(p, g.col_client, g.client_names, np.arange(p.n_cols),
                                   prev_row_client=marker[:-1])
    assert np.array_equal(wrong_shape.row_client, g.row_client)


def test_a_generation_without_row_owners_or_presence_still_loads_and_the_next_round_computes_them(tmp_path,
                                                                                                  monkeypatch):
    """An older state (no rows.arrow, no t<p> columns): the next round runs both passes and stores both."""
    import os

    from formats.checkpoint import StateStore

    state, delta = partitioned_te_state(tmp_path)
    g0 = _generations(state)[0]
    data = store.load(g0)
    assert data.row_client is not None
    data.row_client, data.presence = None, None
    folder = tmp_path / "old"
    folder.mkdir()
    store.save(folder, data)
    assert not (folder / store.FOLDER / "rows.arrow").exists()
    old = store.load(folder)
    assert old.row_client is None and old.presence is None
    p0 = StateStore(state).load().problem
    d1 = read_delta(delta)
    p1, info = apply_delta(p0, d1)
    real = sh.presence
    seen = []
    monkeypatch.setattr(sh, "presence", lambda *a, **kw: seen.append(1) or real(*a, **kw))
    cfg = pround.PartitionConfig(k=old.assignment.k, executor="inline")
    r = pround._setup(p1, cfg, old, info, None)
    assert seen  # computed
    rc, pres = _computed(p1, old)
    assert np.array_equal(r.grouping.row_client, rc) and np.array_equal(r.present, pres)
    assert os.path.isdir(g0)


def test_a_shared_rows_regex_edited_in_config_json_applies_at_the_next_round(tmp_path):
    """``config.json``'s partition keys are read every round: row owners classified with another
    ``shared_rows_regex`` are not reused (the round classifies again), though the delta leaves the matrix alone."""
    import json

    from formats.checkpoint import StateStore

    state, delta = partitioned_te_state(tmp_path)
    cfg = state / "config.json"
    c = json.loads(cfg.read_text())
    c["partition"]["shared_rows_regex"] = "/cap$"  # every demand row shared too
    cfg.write_text(json.dumps(c))
    p0 = StateStore(state).load().problem
    d1 = read_delta(delta)
    p1, info = apply_delta(p0, d1)
    assert not info.matrix_changed
    rounds.step(d1, state)
    data = store.load(_generations(state)[-1])
    fresh = C.group_clients(p1, shared_rows_regex="/cap$")
    assert np.array_equal(data.row_client, fresh.row_client)
    assert data.row_client_regex == "/cap$"
    assert (fresh.row_client == C.SHARED).sum() > (C.group_clients(p1).row_client == C.SHARED).sum()
    assert np.array_equal(data.shared_rows, shared_rows(fresh))


def test_a_stored_regex_round_trips_and_rows_without_one_are_not_reused(tmp_path):
    import pyarrow as pa
    import pyarrow.ipc as ipc

    from solver.partition.layout import Assignment

    data = store.PartitionData(assignment=Assignment(k=2, client_names=np.asarray(["a", "b"], dtype=object),
                                                     client_part=np.array([0, 1])),
                               parts=[store.PartState(cols=np.array([0]), rows=np.array([0]), state=None)] * 2,
                               shared_rows=np.array([1]), shares=np.full((2, 1), 0.5),
                               row_client=np.array([0, C.SHARED, C.GLOBAL]), row_client_regex="^cap",
                               presence=np.array([[True], [False]]))
    store.save(tmp_path, data)
    got = store.load(tmp_path)
    assert list(got.row_client) == [0, C.SHARED, C.GLOBAL] and got.row_client_regex == "^cap"
    assert got.presence.tolist() == [[True], [False]]
    data.row_client_regex = None
    (tmp_path / "g2").mkdir()
    store.save(tmp_path / "g2", data)
    assert store.load(tmp_path / "g2").row_client_regex is None
    assert store.load(tmp_path / "g2").row_client is not None
    # a rows.arrow without the regex it was classified with (not one this code writes): not known, not reused
    path = tmp_path / "g2" / store.FOLDER / "rows.arrow"
    table = pa.table({"client": pa.array([0, -1, -3], type=pa.int32())})
    with pa.OSFile(str(path), "wb") as sink, ipc.new_file(sink, table.schema) as w:
        w.write_table(table)
    assert store.load(tmp_path / "g2").row_client is None


def test_a_round_after_every_client_was_dropped_carries_an_empty_grouping():
    """Once a delta dropped every client, the next carry has no client to renumber: every column is global (it
    used to index an empty renumbering and fail with an IndexError, exit 1, until a delta added a client back)."""
    sc = make_scenario("te", 16, seed=4)
    p = sc.base()
    no_clients = C.carry_grouping(p, np.full(p.n_cols, C.GLOBAL), np.empty(0, dtype=object), np.arange(p.n_cols))
    assert no_clients.n_clients == 0 and (no_clients.col_client == C.GLOBAL).all()
    assert np.array_equal(no_clients.row_client, C.row_clients(p, no_clients.col_client))
