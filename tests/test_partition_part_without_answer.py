"""A part that ends without an answer (ITERATION_LIMIT, NUMERICAL_ERROR; a MILP part's NO_INTEGER_SOLUTION) says
nothing about the whole model, as an infeasible one does: the round is solved whole (``partitions.fallback``
``failed_parts``). helper-191 (session 49): an LB 64 x 8 LP at K = 4 whose part 1 ran PDHG to 1,000,000 iterations
under its shares ended the round ITERATION_LIMIT, exit 5, nothing stored, on a model HiGHS solved in milliseconds."""

from __future__ import annotations

from dataclasses import replace

import pytest

from solver.baselines.highs import solve_highs
from solver.model.settings import Settings
from solver.model.status import Status
from solver.partition import round as pround
from solver.workloads import make_scenario


@pytest.mark.parametrize("status", [Status.ITERATION_LIMIT, Status.NUMERICAL_ERROR])
def test_a_part_without_an_answer_has_the_round_solved_whole(monkeypatch, status):
    problem = make_scenario("te", 12, seed=3).base()
    real = pround.run_parts

    def one_gives_up(tasks, *a, **kw):
        outs = real(tasks, *a, **kw)
        outs[1]["result"] = replace(outs[1]["result"], status=status, point_feasible=False)
        return outs

    monkeypatch.setattr(pround, "run_parts", one_gives_up)
    cfg = pround.PartitionConfig(k=3, executor="inline", whole_below_nnz=0, probe=False)
    out = pround.solve_round(problem, Settings(), cfg)
    fb = out.report["fallback"]
    assert fb["failed_parts"] == {"1": status.name} and fb["status"] == "OPTIMAL"
    assert out.result.status == Status.OPTIMAL
    assert f"part 1 {status.name}" in out.result.message and "solved whole" in out.result.message
    best = solve_highs(problem).objective
    assert abs(out.result.objective - best) <= 1e-4 * max(1.0, abs(best))
    assert out.data.parts[1].state is None  # its iterate is not the next round's warm start
