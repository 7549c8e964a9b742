"""A part infeasible under its shares sends the round to the whole solve right after the parts: nothing is merged
(the merge, its dual ascent and its re-check on the whole model used to run first and were thrown away)."""

from __future__ import annotations

import pytest

from formats.io import read_problem
from solver.model.settings import Settings
from solver.model.status import Status
from solver.partition import round as pround
from tests.helpers import require_data


def test_a_failed_part_is_solved_whole_without_a_merge(monkeypatch):
    p = read_problem(require_data("mps") / "afiro.mps")  # part 0 PRIMAL_INFEASIBLE (test_partition_fallback)

    def no_merge(*a, **kw):
        raise AssertionError("merged although a part failed")

    monkeypatch.setattr(pround, "merge_parts", no_merge)
    out = pround.solve_round(p, Settings(), pround.PartitionConfig(k=2, client_regex=r"^X(?P<client>\d)",
                                                                   executor="inline"))
    assert out.result.status == Status.OPTIMAL and out.result.objective == pytest.approx(-464.7531, rel=1e-3)
    assert "PRIMAL_INFEASIBLE" in out.report["fallback"]["failed_parts"].values()
    assert out.report["seconds"]["merge"] == 0.0 and out.data is not None
