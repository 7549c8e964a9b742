"""A MILP round's message names the HiGHS MIP step whose point it returns (``pipeline.HIGHS_STEP_NAMES``).

Before, HiGHS first, the fallback (no heuristic point) and the improvement step (seeded with the heuristic point)
all read "integer point from the fallback"; only ``mip.steps`` told them apart. ``source`` stays "fallback" (the
report's field keeps its values) and the message starts with it."""

from __future__ import annotations

import pytest

from formats.io import read_problem
from solver.integer import solve_milp
from solver.model.settings import Settings
from tests.helpers import require_data

#: what the message says for each step (``pipeline.HIGHS_STEP_NAMES``)
NAMES = {"highs_first": "HiGHS first: HiGHS MIP on the small model",
         "fallback": "HiGHS MIP fallback: the heuristics found no point",
         "improvement": "improvement step: HiGHS MIP seeded with the heuristic point"}
CASES = [
    # p0033 (98 nonzeros) goes to HiGHS first
    ("p0033.mps.gz", {}, "highs_first", "small model: HiGHS first"),
    # egout through the stages: rounding leaves a point ~20% worse, HiGHS seeded with it finds the optimum (with
    # HiGHS presolve in front of the cold stage; without it, the default since session 29, it rounds to the optimum)
    ("egout.mps", {"integer_highs_max_nonzeros": 0, "presolve": "on"}, "improvement", "gap above mip_gap_tol"),
    # flugpl through the stages: the heuristics find no point, the fallback does
    ("flugpl.mps", {"integer_highs_max_nonzeros": 0, "mip_gap_tol": 1e-4}, "fallback", None),
]


@pytest.mark.parametrize("name, settings, step, reason", CASES, ids=[c[2] for c in CASES])
def test_the_message_names_the_highs_step_that_found_the_point(name, settings, step, reason):
    p = read_problem(require_data("mps") / name)
    res = solve_milp(p, Settings(**settings), None)
    assert res.mip["source"] == "fallback" and res.point_feasible
    # the step that ran is the one the message names, and no other HiGHS step is named
    ran = [s.get("reason") for s in res.mip["steps"] if s["step"] == "fallback"]
    assert ran[-1] is None if reason is None else ran[-1].startswith(reason)
    assert res.message.startswith(f"integer point from the fallback ({NAMES[step]});"), res.message
    assert all(NAMES[k] not in res.message for k in NAMES if k != step)


def test_the_pipeline_names_are_these():
    from solver.integer.pipeline import HIGHS_STEP_NAMES

    assert HIGHS_STEP_NAMES == NAMES
