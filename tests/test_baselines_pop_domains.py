"""POP on a small generated instance of each workload domain: the combined point is feasible on the full
problem, clients come from the generators' names, and the shared rows are the resources they name."""

from __future__ import annotations

import pytest

from solver.baselines.pop import solve_pop
from solver.model.status import Status
from solver.partition.clients import SHARED, group_clients
from solver.workloads import make_scenario
from solver.workloads.common import RESOURCE_WORDS


@pytest.mark.parametrize(("domain", "scale", "k"), [("sia", 64, 2), ("te", 12, 4), ("lb", "32x4", 2)])
def test_pop_point_on_a_generated_instance_is_feasible_on_the_full_problem(domain, scale, k):
    p = make_scenario(domain, scale, seed=0).base()
    g = group_clients(p)
    shared_names = p.row_names[g.row_client == SHARED]
    assert shared_names.size > 0
    assert all(str(n).split("/", 1)[0] in RESOURCE_WORDS for n in shared_names)  # gpus/, link/, load/, mem/
    r = solve_pop(p, k=k, seed=1, workers=0, time_limit_seconds=30)
    assert r.status == Status.FEASIBLE, r.message
    assert r.max_row_violation_rel <= 1e-6 and r.max_bound_violation <= 1e-9
    assert r.integrality_violation <= 1e-6
