"""A client added to a part whose shares a drop emptied gets the capacity the other part leaves unused (hunt 37b).

With fixed shares (``--whole-below-nnz 0`` on a small LP), dropping every client of part 1 gave its shares to part 0
(0.999 / 0.001); a valuable client added next went to part 1, the least loaded, and stayed starved: 71% below the
monolithic optimum in that round and every one after. A round that adds clients now reads stranded capacity off
its first pass as a round that drops them does (``solver.partition.dropped``), a part's dual below 0.1% of the
row's largest counting as no price (part 0 left a quarter of capA unused at a dual of 1.2e-4 against 220)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
from typer.testing import CliRunner

from copter_cli.app import app

COLUMNS = ["kind", "var", "con", "value", "lower", "upper"]
TYPES = [pa.string(), pa.string(), pa.string(), pa.float64(), pa.float64(), pa.float64()]


def _write(path, rows, meta):
    t = pa.table({c: pa.array([r.get(c) for r in rows], t) for c, t in zip(COLUMNS, TYPES, strict=True)})
    pq.write_table(t.replace_schema_metadata({k.encode(): str(v).encode() for k, v in meta.items()}), path)


def _client(k, dem=5.0):
    rows = []
    for j, cap in enumerate(("capA", "capB")):
        v = f"c{k}/{cap}"
        rows += [dict(kind="var", var=v, value=1.0 + 0.1 * k + 0.05 * j, lower=0.0),
                 dict(kind="coef", var=v, con=cap, value=1.0), dict(kind="coef", var=v, con=f"dem{k}", value=1.0)]
    return rows + [dict(kind="con", con=f"dem{k}", upper=dem)]


def _drop(k):
    return [dict(kind="drop_var", var=f"c{k}/capA"), dict(kind="drop_var", var=f"c{k}/capB"),
            dict(kind="drop_con", con=f"dem{k}")]


def _delta(base_round):
    return {"copter.format": "delta", "copter.version": 1, "copter.base_round": base_round}


def _step(runner, path, state):
    res = runner.invoke(app, ["step", str(path), "--state", str(state), "--json"])
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_a_new_client_in_an_emptied_part_gets_the_unused_capacity(tmp_path):
    runner = CliRunner()
    rows = [dict(kind="con", con="capA", upper=20.0), dict(kind="con", con="capB", upper=20.0)]
    for k in range(8):
        rows += _client(k)
    _write(tmp_path / "base.parquet", rows, {"copter.format": "problem", "copter.version": 1, "copter.sense": "max"})
    _write(tmp_path / "d1.parquet", sum((_client(k, dem=1.0) for k in range(8, 48)), []), _delta(0))
    part, mono = tmp_path / "p", tmp_path / "m"
    for state, extra in ((part, ["--partitions", "2", "--whole-below-nnz", "0"]), (mono, [])):
        res = runner.invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", str(state), *extra])
        assert res.exit_code == 0, res.output
        _step(runner, tmp_path / "d1.parquet", state)
    clients = pa.ipc.open_file(str(part / "gen-000001" / "partition" / "clients.arrow")).read_all().to_pydict()
    emptied = [int(n[1:]) for n, p in zip(clients["name"], clients["part"], strict=True) if p == 1]
    kept = [int(n[1:]) for n, p in zip(clients["name"], clients["part"], strict=True) if p == 0]
    assert emptied and kept
    _write(tmp_path / "d2.parquet", sum((_drop(k) for k in emptied), []), _delta(1))  # part 1 left without clients
    _write(tmp_path / "d3.parquet", _drop(kept[0]) + _client(100, dem=5.0), _delta(2))  # one out, a valuable one in
    for name in ("d2", "d3"):
        got = _step(runner, tmp_path / f"{name}.parquet", part)
        want = _step(runner, tmp_path / f"{name}.parquet", mono)
    assert got["partitions"]["shares"]["mean_per_part"][1] > 0.05  # the new client's part got capacity back
    assert got["objective"] >= want["objective"] * (1 - 0.005), (got["objective"], want["objective"])  # was 71% below


def _new_client(name, rng, value):
    from solver.model.delta import Delta

    b = rng.uniform(0.5, 2.0, 2)
    return Delta.concat([
        Delta.cons([f"{name}/demand"], upper=[rng.uniform(1.0, 4.0)]),
        Delta.vars([f"{name}/a", f"{name}/b"], cost=[value * rng.uniform(1, 1.3), value * rng.uniform(1, 1.3)],
                   lower=[0.0, 0.0], upper=[3.0, 3.0]),
        Delta.coefs(var=[f"{name}/a", f"{name}/b", f"{name}/a", f"{name}/b"],
                    con=[f"{name}/demand", f"{name}/demand", "cap/a", "cap/b"], value=[1.0, 1.0, b[0], b[1]])])


def test_new_clients_priced_above_their_donors_get_capacity_that_is_used_not_stranded(tmp_path):
    """Two valuable clients added to an 8-client allocation LP at K = 3 (fixed shares): the other parts use all of
    their shares (nothing stranded, nothing dropped), so no move applied and the round merged 20.8% below the
    monolithic optimum; the priced parts with added clients now take share by what the new clients can use, from
    the lower-priced parts (solver.partition.dropped.added_moves), kept only as a better merge (hunt 38)."""
    import numpy as np

    from formats.io import write_delta, write_problem
    from solver.model.delta import Delta
    from tests.helpers import client_allocation

    runner = CliRunner()
    rng = np.random.default_rng(303)
    write_problem(client_allocation(8, 3), tmp_path / "base.parquet")
    write_delta(Delta.concat([_new_client(f"n{i}", rng, 2.5) for i in range(2)], base_round=0), tmp_path / "d1.parquet")
    got = {}
    for name, extra in (("part", ["--partitions", "3", "--whole-below-nnz", "0"]), ("mono", [])):
        res = runner.invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", str(tmp_path / name), *extra])
        assert res.exit_code == 0, res.output
        got[name] = _step(runner, tmp_path / "d1.parquet", tmp_path / name)
    passes = got["part"]["partitions"]["shares"]["passes"]
    assert any(p.get("reclaimed") for p in passes), passes  # the added clients' move took the extra pass
    loss = (got["mono"]["objective"] - got["part"]["objective"]) / got["mono"]["objective"]
    assert loss < 0.03, (got["part"]["objective"], got["mono"]["objective"])  # was 20.8%, now 1.5%


def _hunt_client(name, value, dem, rng):
    """helper-179's client: a demand row ``name/demand`` <= dem over two columns (bound 3), each on one of the
    shared rows cap/a, cap/b with a coefficient U(0.5, 2)."""
    rows = [dict(kind="con", con=f"{name}/demand", upper=dem)]
    for r in ("a", "b"):
        v = f"{name}/{r}"
        rows += [dict(kind="var", var=v, value=value * rng.uniform(1, 1.3), lower=0.0, upper=3.0),
                 dict(kind="coef", var=v, con=f"{name}/demand", value=1.0),
                 dict(kind="coef", var=v, con=f"cap/{r}", value=float(rng.uniform(0.5, 2.0)))]
    return rows


def test_a_move_that_overshoots_is_tried_again_at_half(tmp_path, monkeypatch):
    """helper-179's stream (6 clients, minimised, K = 2, fixed shares): round 3 adds a client to a part holding
    0.001 of both capacity rows; the added clients' move (0.78 of a row) merged worse than the pass before and was
    dropped, so the round ended 11.9% above the monolithic optimum and stayed there. A reclaim pass that merges
    worse is now tried once more with half its move, kept when that is better than the pass before. (The whole solve
    of a merge more than LP_FAR_GAP from its bound, which an earlier round of this stream meets, is turned off: this
    test is about the parts' own moves; tests/test_partition_lp_far.py has that one.)"""
    import numpy as np

    monkeypatch.setattr("solver.partition.after_merge.LP_FAR_GAP", float("inf"))

    def rng():
        return np.random.default_rng(7)  # the generator re-seeded each file, as helper-179's script did

    g = rng()
    base = [dict(kind="con", con="cap/a", upper=3.6), dict(kind="con", con="cap/b", upper=3.0)]
    for i in range(6):
        base += _hunt_client(f"c{i}", -g.uniform(1, 2), g.uniform(1, 4), g)
    _write(tmp_path / "base.parquet", base, {"copter.format": "problem", "copter.version": 1, "copter.sense": "min"})
    _write(tmp_path / "a1.parquet", _hunt_client("n1", -3.0, 3.0, rng()), _delta(0))
    _write(tmp_path / "a2.parquet", _hunt_client("n2", -8.0, 3.0, rng()) + _drop_client("c1"), _delta(1))
    _write(tmp_path / "a3.parquet", _hunt_client("n3", -5.0, 2.0, rng()), _delta(2))
    runner, got = CliRunner(), {}
    for name, extra in (("part", ["--partitions", "2", "--whole-below-nnz", "0"]), ("mono", [])):
        res = runner.invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", str(tmp_path / name), *extra])
        assert res.exit_code == 0, res.output
        for d in ("a1", "a2", "a3"):
            got[name] = _step(runner, tmp_path / f"{d}.parquet", tmp_path / name)
    passes = got["part"]["partitions"]["shares"]["passes"]
    assert [p.get("kept") for p in passes[1:]] == [False, True], passes  # the full move dropped, the half kept
    gap = (got["part"]["objective"] - got["mono"]["objective"]) / abs(got["mono"]["objective"])
    assert gap < 0.03, (got["part"]["objective"], got["mono"]["objective"])  # was 11.9%, now 1.3%


def _drop_client(name):
    return [dict(kind="drop_var", var=f"{name}/a"), dict(kind="drop_var", var=f"{name}/b"),
            dict(kind="drop_con", con=f"{name}/demand")]
