"""A successful ``init`` sets aside (into ``abandoned/``) the failed round 0s that earlier inits of another base
left in the folder: ``history`` listed box1's PRIMAL_INFEASIBLE round 0 as the failed round 0 of the afiro state
made there next (user trial 38). A failed attempt at the same base stays in this state's history."""

from __future__ import annotations

from formats.io import write_problem
from solver import rounds
from solver.differential.apply import apply_delta
from solver.model.settings import Settings
from tests.helpers import infeasible_delta, small_lp


def test_failed_round_zeros_of_another_base_leave_the_history_those_of_this_base_stay(tmp_path):
    bad, _ = apply_delta(small_lp(), infeasible_delta())
    write_problem(bad, tmp_path / "other.parquet")
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    assert rounds.init(tmp_path / "other.parquet", st)["status"] == "PRIMAL_INFEASIBLE"
    assert not rounds.init(tmp_path / "base.parquet", st, Settings(iteration_limit=1))["accepted"]
    assert len(list((st / "failed").iterdir())) == 2
    assert rounds.init(tmp_path / "base.parquet", st)["status"] == "OPTIMAL"
    rows = rounds.history(st)
    assert [(r["round"], r["kind"], r["status"]) for r in rows] == [(0, "failed", "ITERATION_LIMIT"),
                                                                    (0, "generation", "OPTIMAL")]
    moved = list((st / "abandoned").glob("*/failed-round-000000-*"))
    assert len(moved) == 1 and (moved[0] / "report.json").is_file()  # kept, not deleted


def test_a_fault_setting_them_aside_is_a_warning_round_zero_stays_stored(tmp_path, monkeypatch):
    """Round 0 is stored and current before the set-aside: a refused rename there made a successful init exit 7
    with no report, and init could not run again (review 38). Now a warning, the state initialised."""
    import errno

    from formats.checkpoint import StateStore

    bad, _ = apply_delta(small_lp(), infeasible_delta())
    write_problem(bad, tmp_path / "other.parquet")
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "other.parquet", st)

    def refuse(self, records):
        raise OSError(errno.EIO, "Input/output error", str(self.root / "abandoned"))

    monkeypatch.setattr(StateStore, "set_aside_failures", refuse)
    rep = rounds.init(tmp_path / "base.parquet", st)
    assert rep["status"] == "OPTIMAL" and rep["accepted"]
    assert any("were not moved into abandoned/" in w for w in rep["warnings"])
    assert rounds.show(st)["round"] == 0
