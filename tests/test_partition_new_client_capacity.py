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
