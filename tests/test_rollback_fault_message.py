"""A rollback whose write the machine refuses says that CURRENT still names the round it named.

`copter rollback --to 0` on a full disk said only `st: cannot write: No space left on device` (exit 7), where a
step says `round 1 was not stored, the state directory is unchanged`: a user could not tell which round is
current without another command."""

from __future__ import annotations

import json

from formats.faults import reset_io_faults
from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp, snapshot


def test_a_refused_rollback_names_the_current_round(capsys, tmp_path, monkeypatch):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    d = tmp_path / "d1.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), d)
    rounds.step(d, st)
    before = snapshot(st)
    monkeypatch.setenv("COPTER_FAULT_ERRNO", "ENOSPC@1")  # the first write: CURRENT's temporary file
    reset_io_faults()
    code, out, _ = run_main(capsys, "rollback", "--to", "0", "--state", st, "--json")
    monkeypatch.delenv("COPTER_FAULT_ERRNO")
    err = json.loads(out)["error"]
    assert code == 7 and err["errno"] == "ENOSPC", err
    assert "CURRENT still names round 1, the state directory is unchanged" in err["message"], err
    assert err["round_stored"] is False and err["current_round"] == 1
    assert snapshot(st) == before
