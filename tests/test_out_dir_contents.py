"""What ``--out DIR`` holds after a batch and after a failed round (README "Each round writes ..."): a batch's
rounds are copied in turn, so DIR holds the last stored round's files; a failed round that is not stored has no
outputs and copies only its report.json (``"accepted": false``), next to the files of the round that is still
current; every Parquet file's ``copter.round`` says which round it holds."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from formats.io import write_delta
from solver.model.delta import Delta
from tests.helpers import infeasible_delta, run_main, small_lp_state


def _round_of(path) -> int:
    return int(pq.read_schema(path).metadata[b"copter.round"])


def test_a_batch_leaves_its_last_round_and_a_failed_round_only_its_report(tmp_path, capsys):
    st, d1 = small_lp_state(tmp_path)
    d2 = tmp_path / "d2.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[6.0])], base_round=1), d2)
    out = tmp_path / "out"
    code, _, err = run_main(capsys, "step", d1, d2, "--state", st, "--out", out)
    assert code == 0, err
    assert json.loads((out / "report.json").read_text())["round"] == 2
    assert {_round_of(out / f) for f in ("solution.parquet", "duals.parquet", "changes.parquet")} == {2}

    bad = tmp_path / "bad.parquet"
    write_delta(infeasible_delta(), bad)
    code, _, err = run_main(capsys, "step", bad, "--force", "--state", st, "--out", out)
    assert code == 4, err
    report = json.loads((out / "report.json").read_text())
    assert report["round"] == 3 and report["accepted"] is False and report["current_round"] == 2
    assert {_round_of(out / f) for f in ("solution.parquet", "duals.parquet", "changes.parquet")} == {2}
