"""A state written before the 1e20 rule keeps a finite 1e20 bound on disk; loading it must apply the rule.

Every reader has read a bound of magnitude >= 1e20 as no bound since ``solver.model.problem.INF_BOUND``; a state
initialised before that stored such a bound as a finite number. HiGHS (presolve, ``compare``'s baselines) reads it
as infinite, PDHG would not: one model would be two. ``StateStore.load`` normalises it.
"""

from __future__ import annotations

import numpy as np
from typer.testing import CliRunner

import solver.model.problem as problem_mod
from copter_cli.app import app
from formats.checkpoint import StateStore
from formats.io import write_problem
from tests.helpers import lp

runner = CliRunner()


def test_a_stored_1e20_bound_loads_as_no_bound(tmp_path, monkeypatch):
    model = tmp_path / "m.parquet"
    state = tmp_path / "state"
    # max x + y s.t. x + y <= 4, x <= 1e20 (no bound), y <= 1
    monkeypatch.setattr(problem_mod, "INF_BOUND", 1e30)  # the old rule: 1e20 stayed finite
    write_problem(lp([-1.0, -1.0], [[1.0, 1.0]], [-np.inf], [4.0], [0.0, 0.0], [1e20, 1.0]), str(model))
    res = runner.invoke(app, ["init", str(model), "--state", str(state)])
    assert res.exit_code == 0, res.output
    raw = StateStore(state, reuse=False).load(with_state=False)
    monkeypatch.undo()
    assert problem_mod.INF_BOUND == 1e20
    gen = StateStore(state, reuse=False).load(with_state=False)
    assert raw.problem.col_upper[0] == 1e20  # what the old rule wrote
    np.testing.assert_array_equal(gen.problem.col_upper, [np.inf, 1.0])
    np.testing.assert_array_equal(gen.problem.col_lower, [0.0, 0.0])
    assert np.isneginf(gen.problem.row_lower[0]) and gen.problem.row_upper[0] == 4.0
