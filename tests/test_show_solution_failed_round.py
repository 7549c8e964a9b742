"""``copter show --solution`` of a round stored with ``--accept-failed`` (not OPTIMAL or FEASIBLE) warns that its
values are the last iterate, not an allocation (helper-166: it printed "210 nonzero ... sum 51.9984" with exit 0
and only the header saying PRIMAL_INFEASIBLE, for a cron job's ``> alloc.txt``)."""

from __future__ import annotations

from solver import rounds
from tests.helpers import infeasible_delta, small_lp


def test_failed_round_solution_carries_a_warning(tmp_path):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    ok = rounds.show_solution(st)
    assert not any("last iterate" in w for w in ok.get("warnings", [])), ok.get("warnings")
    rep = rounds.step(infeasible_delta(), st, accept_failed=True)
    assert rep["status"] not in ("OPTIMAL", "FEASIBLE"), rep["status"]
    out = rounds.show_solution(st)
    assert out["round"] == 1
    assert any(f"round 1 ended {rep['status']}" in w and "not a feasible allocation" in w
               for w in out.get("warnings", [])), out.get("warnings")
