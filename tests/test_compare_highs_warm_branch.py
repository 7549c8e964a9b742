"""``copter compare --baseline highs-warm`` never hot-starts from the basis of a round that a rollback abandoned.

The bases live in ``STATE/baselines/highs-warm/round-NNNNNN.parquet``, outside the generations, so a rollback
leaves them. After ``rollback --to 0`` and new rounds 1' and 2', compare on 2' loaded ``round-000001.parquet``,
the basis of the OLD round 1 (another problem), and said "basis from round 1". Each basis now carries the id
of the generation it was computed on, and only the live branch's round below the current one is used (found
by helper-133's sweep of later-round commands, one fresh process each).
"""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from tests.helpers import cli_json, small_lp


def _warm_row(st) -> dict:
    code, out = cli_json("compare", "--state", st, "-b", "highs-warm", "--json")
    assert code == 0, out
    (row,) = json.loads(out)["baselines"]
    return row


def test_highs_warm_ignores_the_basis_of_an_abandoned_round(tmp_path):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    deltas = {}
    for name, var in (("a1", "x3"), ("b1", "x5"), ("b2", "x7")):
        deltas[name] = tmp_path / f"{name}.parquet"
        write_delta(Delta.concat([Delta.vars([var], cost=[5.0])]), deltas[name])
    for args in (("init", tmp_path / "base.parquet"), ("step", deltas["a1"])):
        code, out = cli_json(*args, "--state", st, "--json")
        assert code == 0, out
    first = _warm_row(st)  # round 1 of branch A: its basis (and round 0's) kept
    assert "round 0 solved cold first" in first["message"], first["message"]
    old = pq.read_table(st / "baselines" / "highs-warm" / "round-000001.parquet").schema.metadata
    assert old[b"copter.generation_id"] == json.loads((st / "gen-000001" / "generation.json").read_text())["id"].encode()

    for args in (("rollback", "--to", "0"), ("step", deltas["b1"]), ("step", deltas["b2"])):
        code, out = cli_json(*args, "--state", st, "--json")
        assert code == 0, out
    row = _warm_row(st)  # round 2 of branch B: round-000001.parquet is branch A's round 1
    # was "...; basis from round 1" (branch A's); now the live round 1 is solved first to get its own
    assert row["message"].endswith("round 1 solved cold first (untimed) to get its basis"), row["message"]
    new = pq.read_table(st / "baselines" / "highs-warm" / "round-000001.parquet").schema.metadata
    assert new[b"copter.generation_id"] == json.loads((st / "gen-000001" / "generation.json").read_text())["id"].encode()
    assert _warm_row(st)["message"].endswith("basis from round 1")  # the live round 1's basis is used again


def test_the_bases_kept_are_the_ones_written_last_not_the_highest_rounds(tmp_path):
    """After ``rollback --to 1`` the old branch's bases of rounds 2 and 3 outranked (by round number) the basis of
    round 0 compare had just written for the live round 1, and deleted it: every compare there solved round 0 cold
    again. The prune keeps the bases written last."""
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    code, out = cli_json("init", tmp_path / "base.parquet", "--state", st, "--json")
    assert code == 0, out
    for i, var in enumerate(("x3", "x5", "x7"), start=1):
        write_delta(Delta.concat([Delta.vars([var], cost=[5.0])]), tmp_path / f"d{i}.parquet")
        code, out = cli_json("step", tmp_path / f"d{i}.parquet", "--state", st, "--json")
        assert code == 0, out
    _warm_row(st)  # round 3: bases of rounds 2 and 3
    code, out = cli_json("rollback", "--to", "1", "--state", st, "--json")
    assert code == 0, out
    assert "round 0 solved cold first" in _warm_row(st)["message"]  # writes round 0's and round 1's
    again = _warm_row(st)["message"]
    assert again.endswith("basis from round 0"), again  # was "...; round 0 solved cold first" again
