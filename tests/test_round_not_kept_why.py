"""``show --round N`` (and ``export``/``rollback``) on a round that is not kept says what became of it: a failed
round was not stored and its report is under ``failed/`` (``copter show`` had printed "last failed round: 1
..." and then ``show --round 1`` answered only "round 1 is not kept (kept rounds: 0)"); a round older than every
kept one was pruned by ``--keep`` and is still a row of ``copter history``. Exit 2 as before."""

from __future__ import annotations

import json

from formats.io import write_delta
from solver.model.delta import Delta
from tests.helpers import infeasible_delta, run_main, small_lp_state


def _error(capsys, *args) -> dict:
    code, out, _ = run_main(capsys, *args, "--json")
    assert code == 2, out
    return json.loads(out)["error"]


def test_a_failed_round_names_its_record(tmp_path, capsys):
    st, _ = small_lp_state(tmp_path)
    bad = tmp_path / "bad.parquet"
    write_delta(infeasible_delta(), bad)
    assert run_main(capsys, "step", bad, "--state", st)[0] == 4
    (record,) = (st / "failed").iterdir()
    for args in (("show", "--round", "1"), ("export", "--round", "1", "-o", tmp_path / "x.mps")):
        msg = _error(capsys, *args, "--state", st)["message"]
        assert "round 1 is not kept" in msg and "failed (PRIMAL_INFEASIBLE)" in msg, msg
        assert str(record / "report.json") in msg and "copter history" in msg


def test_a_pruned_round_says_so(tmp_path, capsys):
    st, _ = small_lp_state(tmp_path, "--keep", "1")
    for r in (1, 2):
        d = tmp_path / f"d{r}.parquet"
        write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0 + r])], base_round=r - 1), d)
        assert run_main(capsys, "step", d, "--state", st)[0] == 0
    msg = _error(capsys, "rollback", "--to", "0", "--state", st)["message"]
    assert "kept rounds: 2" in msg and "round 0 was pruned" in msg and "copter history" in msg, msg
    msg = _error(capsys, "show", "--round", "7", "--state", st)["message"]  # never made: said so (helper-184)
    assert msg.endswith("(kept rounds: 2); the newest round is 2: round 7 has not been made yet"), msg
