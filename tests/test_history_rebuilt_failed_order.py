"""``copter history`` lists a round's rows in the order they happened, also a failed round's record that the
round log lacks and history rebuilds from ``failed/`` (a failed ``init``: its round 0 initialised nothing, so no
log existed to take its row; or a crash between the record and its log row). Such a row was sorted after every
logged row of its round, so after a failed ``init`` and a successful one, ``history --last 1`` (what a cron
job reads for "how did the newest round go") answered the old PRIMAL_INFEASIBLE/ITERATION_LIMIT record instead
of the current round 0, and the table ended with a round 0 that failed before the one marked current."""

from __future__ import annotations

import json

from formats.io import write_problem
from tests.helpers import run_main, small_lp


def test_a_failed_init_comes_before_the_round_0_that_followed_it(tmp_path, capsys):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    assert run_main(capsys, "init", tmp_path / "base.parquet", "--state", st, "--iteration-limit", "1")[0] == 5
    assert run_main(capsys, "init", tmp_path / "base.parquet", "--state", st)[0] == 0

    code, out, _ = run_main(capsys, "history", "--state", st, "--json")
    rows = json.loads(out)["rounds"]
    assert code == 0 and [(r["round"], r["kind"]) for r in rows] == [(0, "failed"), (0, "generation")], rows
    assert rows[-1]["current"] and rows[-1]["status"] == "OPTIMAL"

    code, out, _ = run_main(capsys, "history", "--state", st, "--json", "--last", "1")
    (newest,) = json.loads(out)["rounds"]
    assert code == 0 and newest["kind"] == "generation" and newest["current"], newest
