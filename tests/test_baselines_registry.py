"""solver/baselines/registry.py: the one table compare and bench look baselines up in."""

from __future__ import annotations

import numpy as np
import pytest

from solver.baselines import registry
from solver.differential import apply_delta
from solver.model.delta import Delta
from solver.model.errors import UsageError
from tests.helpers import small_lp


def test_names_descriptions_and_lookups():
    assert {"highs", "highs-simplex", "highs-ipm", "highs-pdlp", "highs-warm", "pop"} <= set(registry.names())
    assert all(registry.describe()[n] for n in registry.names())
    assert registry.get("pop-16").name == "pop-16"
    with pytest.raises(UsageError, match="unknown baseline gurobi; choose from highs"):
        registry.get("gurobi")
    with pytest.raises(UsageError, match="part count"):
        registry.get("pop")
    with pytest.raises(UsageError, match="at least 1"):
        registry.get("pop-0")


def test_expand_keeps_order_drops_duplicates_and_gives_one_pop_row_per_k():
    assert registry.expand(["highs-warm", "pop", "highs", "pop", "pop-4"], [2, 4]) == \
        ["highs-warm", "pop-2", "pop-4", "highs"]
    with pytest.raises(UsageError):
        registry.expand(["highs", "cplex"], [4])


def test_every_entry_runs_with_one_signature_and_agrees_on_the_optimum():
    p = small_lp()
    ctx = registry.BaselineContext(time_limit_seconds=60.0, pop_workers=0, pop_client_regex=r"x\d+")
    objs = {}
    for name in ("highs", "highs-simplex", "highs-ipm", "highs-warm"):
        res = registry.get(name).run(p, ctx)
        assert res.status.name == "OPTIMAL", (name, res.message)
        objs[name] = res.objective
    ref = objs["highs"]
    assert all(abs(v - ref) <= 1e-6 * max(1.0, abs(ref)) for v in objs.values()), objs
    pop = registry.get("pop-2").run(p, ctx)
    assert pop.name == "pop-2" and pop.x is not None and pop.x.shape == (p.n_cols,)


def test_highs_warm_keeps_its_instance_in_the_callers_memory_across_rounds():
    p0 = small_lp()
    memory: dict = {}
    ctx = registry.BaselineContext(time_limit_seconds=60.0, memory=memory)
    warm = registry.get("highs-warm")
    r0 = warm.run(p0, ctx)
    instance = memory["instance"]
    p1, info = apply_delta(p0, Delta.vars(["x1"], cost=[3.0]))
    ctx.round, ctx.info = 1, info
    r1 = warm.run(p1, ctx)
    assert memory["instance"] is instance
    cold = registry.get("highs").run(p1, ctx)
    assert r0.status.name == r1.status.name == "OPTIMAL"
    assert np.isclose(r1.objective, cold.objective, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name", ["pop-\u0662", "pop-\uff14", "pop-\u00b2"])
def test_a_pop_part_count_in_other_digits_is_unknown(name):
    # --baseline pop-٢ ran POP with 2 parts in a row named 'pop-٢' (exit 0) where --k ٢ is a usage error
    with pytest.raises(UsageError, match="unknown baseline"):
        registry.get(name)
