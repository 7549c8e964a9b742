"""A state written before the 1e20 rule keeps a finite 1e20 bound on disk; loading it must apply the rule.

Every reader has read a bound of magnitude >= 1e20 as no bound since ``solver.model.problem.INF_BOUND``; a state
initialised before that stored such a bound as a finite number. HiGHS (presolve, ``compare``'s baselines) reads it
as infinite, PDHG would not: one model would be two. ``StateStore.load`` normalises it.
"""

from __future__ import annotations

import json

import numpy as np
from typer.testing import CliRunner

from copter_cli.app import app
from formats import checkpoint
from formats.checkpoint import StateStore
from solver import rounds
from solver.model.settings import Settings
from tests.helpers import lp

runner = CliRunner()


def _stored_col_upper(state) -> np.ndarray:
    """The stored col_upper array as the checkpoint holds it, before any rule is applied on load."""
    from formats.checkpoint_arrays import StoredArray, load_array

    folder = state / "gen-000000" / "problem"
    meta = json.loads((folder / "meta.json").read_text())
    return np.asarray(load_array(str(folder), "col_upper", StoredArray.from_json(meta["arrays"]["col_upper"]))[0])


def test_a_stored_1e20_bound_loads_as_no_bound(tmp_path):
    state = tmp_path / "state"
    # max x + y s.t. x + y <= 4, x <= 1e20, y <= 1, built without the readers (the old rule kept 1e20 finite)
    p = lp([-1.0, -1.0], [[1.0, 1.0]], [-np.inf], [4.0], [0.0, 0.0], [1.0, 1.0])
    rounds.init(p.replace(col_upper=np.array([1e20, 1.0])), state_dir=state)
    checkpoint._RECENT.clear()  # a later command is a new process: no generation kept in memory
    raw = _stored_col_upper(state)
    gen = StateStore(state, reuse=False).load(with_state=False)
    assert raw[0] == 1e20  # what the old rule wrote
    np.testing.assert_array_equal(gen.problem.col_upper, [np.inf, 1.0])
    np.testing.assert_array_equal(gen.problem.col_lower, [0.0, 0.0])
    assert np.isneginf(gen.problem.row_lower[0]) and gen.problem.row_upper[0] == 4.0


def test_a_stored_lower_bound_of_1e20_is_refused_naming_its_column(tmp_path):
    """x >= 1e20 was a (huge) finite lower bound for the old rule; now it reads as +inf: no finite point. Every
    command that loads the model says so naming the column (exit 3), instead of a NaN round or another name."""
    from formats.io import write_delta
    from solver.model.delta import Delta
    from tests.helpers import snapshot

    state = tmp_path / "state"
    p = lp([1.0, 1.0], [[1.0, 1.0]], [-np.inf], [4e20], [0.0, 0.0], [1.0, 1.0])
    # the old rule: a lower bound of 1e20 and upper 2e20 on the second column were finite numbers
    rounds.init(p.replace(col_lower=np.array([0.0, 1e20]), col_upper=np.array([1.0, 2e20])), state_dir=state,
                settings=Settings(time_limit_seconds=10.0), accept_failed=True)
    checkpoint._RECENT.clear()
    col = str(p.col_names[1])
    d = Delta.vars([str(p.col_names[0])], cost=[2.0])
    write_delta(d, tmp_path / "d.parquet")
    before = snapshot(state)
    for args in (["export", "-o", str(tmp_path / "x.mps")], ["step", str(tmp_path / "d.parquet")]):
        out = runner.invoke(app, [*args, "--state", str(state)])
        text = " ".join(out.output.split())
        assert out.exit_code == 3, (args, out.output)
        assert f"column {col}: its stored lower bound 1e+20 reads as +inf" in text, text
    assert snapshot(state) == before
