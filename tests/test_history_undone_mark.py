"""``copter history`` marks a kept round after the current one ``undone`` (helper-158: after ``rollback --to 0`` the
rounds 1-2 were listed with no mark, though the README says a rollback's abandoned rounds are not shown; they are
kept, and not abandoned, until the next step). The mark also holds when ``--last`` leaves the current round out,
and goes with the rounds once the next step moves them into ``abandoned/``."""

from __future__ import annotations

import re

from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp


def _marks(out: str) -> dict[int, str]:
    """round -> mark of a piped history table (the mark column is the second; '' when empty)."""
    marks = {}
    for ln in out.splitlines():
        m = re.match(r"^\s*(\d+)\s{2,}(\*|failed|undone)?\s{2,}", ln)
        if m:
            marks[int(m.group(1))] = m.group(2) or ""
    return marks


def test_rounds_a_rollback_undid_are_marked_until_the_next_step(tmp_path, capsys):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    for i in range(3):
        d = tmp_path / f"d{i + 1}.parquet"
        write_delta(Delta.concat([Delta.vars(["x1"], cost=[1.0 + i])], base_round=i), d)
        rounds.step(d, st)
    rounds.rollback(st, to=1)
    code, out, err = run_main(capsys, "history", "--state", st)
    assert code == 0, err
    assert _marks(out) == {0: "", 1: "*", 2: "undone", 3: "undone"}, out
    code, out, _ = run_main(capsys, "history", "--state", st, "--last", "1")
    assert _marks(out) == {3: "undone"}, out
    d = tmp_path / "again.parquet"
    write_delta(Delta.concat([Delta.vars(["x2"], cost=[3.0])], base_round=1), d)
    assert run_main(capsys, "step", d, "--state", st)[0] == 0
    code, out, _ = run_main(capsys, "history", "--state", st)
    assert _marks(out) == {0: "", 1: "", 2: "*"}, out  # the undone rounds went into abandoned/
