"""Re-applying a delta whose round has been pruned since (``--keep``) is the no-op the README promises ("Running
a batch again is harmless: a delta already applied is a no-op"), known from the round log, which outlives the
generations: with the default ``--keep 5``, ``copter step d1 ... d6`` run again stopped at d1 with exit 3
("delta is for round 0 but the state's current round is 6; use --force to apply it anyway", advice that would
apply it twice). A different delta for that old round is still refused (exit 3)."""

from __future__ import annotations

import json

from formats.io import write_delta
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp_state, snapshot


def _deltas(tmp_path, n: int) -> list:
    paths = []
    for r in range(1, n + 1):
        p = tmp_path / f"d{r}.parquet"
        write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0 + r])], base_round=r - 1), p)
        paths.append(p)
    return paths


def test_a_batch_run_again_after_pruning_is_a_no_op(tmp_path, capsys):
    st, _ = small_lp_state(tmp_path, "--keep", "1")
    ds = _deltas(tmp_path, 3)
    code, out, err = run_main(capsys, "step", *ds, "--state", st, "--json")
    assert code == 0, err
    objectives = [r["objective"] for r in json.loads(out)["rounds"]]
    assert sorted(p.name for p in st.glob("gen-*")) == ["gen-000003"]
    before = snapshot(st)
    code, out, err = run_main(capsys, "step", *ds, "--state", st, "--json")
    assert code == 0, err
    res = json.loads(out)
    assert [(r["round"], r["no_op"]) for r in res["rounds"]] == [(1, True), (2, True), (3, True)]
    assert [r["objective"] for r in res["rounds"]] == objectives  # each from its own round (the log's row)
    assert res["current_round"] == 3 and res["stopped_at"] is None
    assert "no longer kept" in res["rounds"][0]["message"]
    assert snapshot(st) == before


def test_another_delta_for_a_pruned_round_is_still_refused(tmp_path, capsys):
    st, _ = small_lp_state(tmp_path, "--keep", "1")
    assert run_main(capsys, "step", *_deltas(tmp_path, 2), "--state", st)[0] == 0
    other = tmp_path / "other.parquet"
    write_delta(Delta.concat([Delta.vars(["x4"], cost=[9.0])], base_round=0), other)
    code, out, err = run_main(capsys, "step", other, "--state", st, "--json")
    assert code == 3 and json.loads(out)["error"]["kind"] == "round_mismatch", err
