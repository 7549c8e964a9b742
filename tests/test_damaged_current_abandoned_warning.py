"""A step after a damaged current round moves that round into ``abandoned/`` and says so, whatever the damage:
a file missing or resized (an incomplete generation) was moved without the warning that a same-size corrupted
one got (helper-164)."""

from __future__ import annotations

import json

import pytest

from formats.io import write_delta, write_problem
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp


def _step(d, st, cost: float, base_round: int, capsys) -> dict:
    """``copter step`` of a delta setting x3's cost, written to ``d``: its JSON report (exit 0 asserted)."""
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[cost])], base_round=base_round), d)
    code, out, _ = run_main(capsys, "step", d, "--state", st, "--json")
    assert code == 0, out
    return json.loads(out)


@pytest.mark.parametrize("damage", ["missing", "resized"])
def test_the_damaged_round_moved_aside_is_named(tmp_path, capsys, damage):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    for r, cost in ((1, 5.0), (2, 6.0)):
        _step(tmp_path / f"d{r}.parquet", st, cost, r - 1, capsys)
    sol = st / "gen-000002" / "solution.parquet"
    data = sol.read_bytes()
    if damage == "missing":
        sol.unlink()
    else:
        sol.write_bytes(data + b"\0")
    rep = _step(tmp_path / "d2b.parquet", st, 7.0, 1, capsys)
    assert rep["round"] == 2 and rep["abandoned_rounds"] == [2], rep
    moved = [w for w in rep["warnings"] if "moved into" in w]
    assert moved and "the earlier round(s) 2 after round 1" in moved[0], rep["warnings"]
    assert "a damaged round" in moved[0]
    assert len(list((st / "abandoned").iterdir())) == 1


def test_a_file_named_like_the_next_generation_is_moved_aside_and_named_not_deleted(tmp_path, capsys):
    # helper-211: a user's file named gen-000001 was replaced by round 1 and removed without a word, where a stray
    # folder of that name is moved into abandoned/ with a warning
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    (st / "gen-000001").write_text("precious\n")
    rep = _step(tmp_path / "d1.parquet", st, 5.0, 0, capsys)
    assert rep["round"] == 1 and rep["abandoned_rounds"] == [1], rep
    assert any("moved into" in w for w in rep["warnings"]), rep
    (batch,) = (st / "abandoned").iterdir()
    assert (batch / "gen-000001").read_text() == "precious\n"
    assert (st / "gen-000001").is_dir()
