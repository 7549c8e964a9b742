"""``copter compare``'s table shows the POP columns ("POP s", "POP x copter": POP's own time measure) only when a
POP baseline ran: ``--baseline highs`` alone printed two columns of "-" and a footnote about them (a new user's
trial, session 55)."""

from __future__ import annotations

from formats.io import write_problem
from tests.helpers import client_allocation, run_main


def _table(tmp_path, capsys, *baselines: str) -> str:
    write_problem(client_allocation(n_clients=8), tmp_path / "base.parquet")
    st = tmp_path / "st"
    if not (st / "CURRENT").exists():
        assert run_main(capsys, "init", tmp_path / "base.parquet", "--state", st)[0] == 0
    args = [a for b in baselines for a in ("--baseline", b)]
    code, out, err = run_main(capsys, "compare", *args, "--state", st)
    assert code == 0, err
    return out + err


def test_without_pop_the_table_has_no_pop_columns(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    text = _table(tmp_path, capsys, "highs")
    assert "x copter" in text and "POP s" not in text and "POP x copter" not in text
    with_pop = _table(tmp_path, capsys, "highs", "pop")
    assert "POP s" in with_pop and "POP x copter" in with_pop and "POP's own measure" in with_pop
