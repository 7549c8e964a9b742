"""A warm partitioned round groups its clients from the previous round's stored grouping
(``solver.partition.clients.carry_grouping``): the same ClientGrouping as grouping every name afresh, and
the stored ``partition/columns.arrow`` round-trips; a state without it still groups every name."""

from __future__ import annotations

import numpy as np

from solver.differential import apply_delta
from solver.model.problem import Problem
from solver.partition import clients as C
from solver.partition.split import build_part_problems, column_parts, pop_shares


def _problem() -> Problem:
    # clients a, b, c (and global g); rows: a's own, b's own, a shared row, a global-only row, an empty row
    cols = ["a/x", "b/x", "a/y", "g", "c/x", "b/y"]
    rows = ["ra", "rb", "cap", "rg", "re"]
    dense = np.array([[1, 0, 1, 0, 0, 0],
                      [0, 1, 0, 0, 0, 1],
                      [1, 1, 1, 0, 1, 1],
                      [0, 0, 0, 1, 0, 0],
                      [0, 0, 0, 0, 0, 0]], dtype=float)
    csc = [(np.flatnonzero(dense[:, j]), dense[np.flatnonzero(dense[:, j]), j]) for j in range(len(cols))]
    indptr = np.concatenate([[0], np.cumsum([r.size for r, _ in csc])]).astype(np.int64)
    return Problem(col_names=np.asarray(cols, dtype=object), row_names=np.asarray(rows, dtype=object),
                   cost=np.ones(len(cols)), col_lower=np.zeros(len(cols)), col_upper=np.full(len(cols), 4.0),
                   row_lower=np.full(len(rows), -np.inf), row_upper=np.full(len(rows), 3.0),
                   integrality=np.zeros(len(cols), dtype=bool), a_indptr=indptr,
                   a_indices=np.concatenate([r for r, _ in csc]).astype(np.int32),
                   a_data=np.concatenate([v for _, v in csc]), sense=1, offset=0.0, name="t")


def _same(g1: C.ClientGrouping, g2: C.ClientGrouping) -> None:
    assert np.array_equal(g1.col_client, g2.col_client)
    assert np.array_equal(g1.row_client, g2.row_client)
    assert list(g1.client_names) == list(g2.client_names)


def test_row_clients_matches_the_definition():
    p = _problem()
    g = C.group_clients(p)
    assert list(g.row_client) == [g.col_client[0], g.col_client[1], C.SHARED, C.GLOBAL, C.EMPTY]


def test_carry_grouping_equals_a_fresh_grouping_after_drops_and_additions():
    from solver.workloads.sia import SiaScenario

    sc = SiaScenario(total_gpus=256, seed=0)
    p = sc.base()
    g = C.group_clients(p)
    for r in (1, 2, 3):  # jobs arrive and finish every round: clients added and dropped
        q, info = apply_delta(p, sc.next_delta(r, None))
        carried = C.carry_grouping(q, g.col_client, g.client_names, info.col_map)
        fresh = C.group_clients(q)
        _same(carried, fresh)
        assert (info.col_map < 0).any()
        p, g = q, carried


def test_carry_grouping_refuses_a_grouping_that_does_not_fit():
    p = _problem()
    g0 = C.group_clients(p)
    try:
        C.carry_grouping(p, g0.col_client[:-1], g0.client_names, np.arange(p.n_cols))
    except ValueError:
        pass
    else:  # pragma: no cover
        raise AssertionError("a column map past the stored grouping was accepted")


def test_build_part_problems_rows_in_order_and_nonzeros_kept():
    p = _problem()
    g = C.group_clients(p)
    cp = column_parts(g, np.arange(g.n_clients) % 2)
    parts = build_part_problems(p, g, cp, 2, pop_shares(p, g, cp, 2))
    for part in parts:
        assert np.all(np.diff(part.rows) > 0)
        sub = part.problem
        dense = np.zeros((p.n_rows, p.n_cols))
        for j in range(p.n_cols):
            dense[p.a_indices[p.a_indptr[j]:p.a_indptr[j + 1]], j] = p.a_data[p.a_indptr[j]:p.a_indptr[j + 1]]
        for jj, j in enumerate(part.cols):
            lo, hi = sub.a_indptr[jj], sub.a_indptr[jj + 1]
            got = dict(zip(part.rows[sub.a_indices[lo:hi]], sub.a_data[lo:hi], strict=True))
            assert all(dense[i, j] == v for i, v in got.items())


def test_a_partitioned_state_stores_its_columns_clients_and_the_next_round_carries_them(tmp_path, monkeypatch):
    from solver import rounds
    from solver.partition import round as pround
    from solver.partition import store
    from solver.workloads.sia import SiaScenario

    sc = SiaScenario(total_gpus=256, seed=0)
    state = tmp_path / "st"
    p0 = sc.base()
    rounds.init(p0, state, partition={"k": 2, "executor": "inline"})
    d1 = sc.next_delta(1, None)

    def no_fresh_grouping(*a, **kw):
        raise AssertionError("round 1 grouped every name instead of carrying round 0's grouping")

    monkeypatch.setattr(pround, "group_clients", no_fresh_grouping)
    rounds.step(d1, state)
    p1, _ = apply_delta(p0, d1)
    gens = sorted(p for p in state.glob("gen-*") if (p / store.FOLDER).is_dir())
    assert len(gens) == 2
    for gen, problem in zip(gens, (p0, p1), strict=True):  # round 1 carried round 0's: the same as a fresh one
        data = store.load(gen)
        fresh = C.group_clients(problem)
        assert np.array_equal(data.col_client, fresh.col_client)
        assert list(data.assignment.client_names) == list(fresh.client_names)


def test_a_generation_without_columns_clients_still_loads(tmp_path):
    from solver.partition import store
    from solver.partition.layout import Assignment

    data = store.PartitionData(assignment=Assignment(k=2, client_names=np.asarray(["a", "b"], dtype=object),
                                                     client_part=np.array([0, 1])),
                               parts=[store.PartState(cols=np.array([0]), rows=np.array([0]), state=None)] * 2,
                               shared_rows=np.array([1]), shares=np.full((2, 1), 0.5))
    store.save(tmp_path, data)
    assert store.load(tmp_path).col_client is None
    data.col_client = np.array([0, 1, C.GLOBAL])
    (tmp_path / "g2").mkdir()
    store.save(tmp_path / "g2", data)
    assert list(store.load(tmp_path / "g2").col_client) == [0, 1, C.GLOBAL]


def test_route_of_a_carried_grouping_equals_the_name_join():
    """carry_grouping records each client's previous index (previous_client), which route uses instead of joining
    the client names (0.2-0.3 s at TE Kdl's 568k clients): the same assignment, new and dropped counts."""
    from dataclasses import replace

    from solver.partition.layout import initial_assignment, route
    from solver.workloads.sia import SiaScenario

    sc = SiaScenario(total_gpus=256, seed=1)
    p = sc.base()
    g = C.group_clients(p)
    assign = initial_assignment(g, 3, 0)
    seen_new = seen_dropped = 0
    for r in (1, 2, 3, 4):
        q, info = apply_delta(p, sc.next_delta(r, None))
        carried = C.carry_grouping(q, g.col_client, assign.client_names, info.col_map)
        prev_names = list(assign.client_names)
        for name, i in zip(carried.client_names, carried.previous_client, strict=True):
            assert (prev_names[i] == name) if i >= 0 else (name not in prev_names)
        joined = replace(carried, previous_client=None, carried_from=None)
        (a1, n1, d1), (a2, n2, d2) = route(assign, carried), route(assign, joined)
        assert (n1, d1) == (n2, d2)
        assert np.array_equal(a1.client_part, a2.client_part)
        assert list(a1.client_names) == list(a2.client_names)
        seen_new, seen_dropped = seen_new + n1, seen_dropped + d1
        # a grouping carried from other names than the assignment's is joined by name
        other = replace(carried, carried_from=np.asarray(prev_names, dtype=object))
        assert np.array_equal(route(assign, other)[0].client_part, a2.client_part)
        p, g, assign = q, carried, a1
    assert seen_new and seen_dropped
