"""``copter compare`` on a round whose stored names carry a patch (from round 2 of a Sia stream on).

The loaded problem holds per-process Arrow copies of its names (``solver.differential.names.
attach_arrow_names``): for a patched generation a closure that builds them (``formats.checkpoint_arrays.
stored_names``). HiGHS baselines run in a child process under their deadline (``solver.baselines.guard``), so the
problem is pickled; the closure could not be, and compare failed with exit 1 ("Can't pickle local object
'stored_names.<locals>.build'") on every such round. ``Problem.__getstate__`` leaves the copies out.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys

import numpy as np
from typer.testing import CliRunner

from copter_cli.app import app
from formats.checkpoint import StateStore
from tests.helpers import REPO

runner = CliRunner()


def _stream(tmp_path):
    res = runner.invoke(app, ["demo", "--domain", "sia", "--rounds", "2", "--scale", "128",
                              "--dir", str(tmp_path / "d"), "--json"])
    assert res.exit_code == 0, res.output
    state = tmp_path / "d" / "state"
    assert (state / "gen-000002" / "problem" / "col_names.patch.arrow").exists()  # the case under test
    return state


def test_a_problem_loaded_from_a_patched_generation_pickles_without_its_arrow_names(tmp_path):
    state = _stream(tmp_path)
    problem = StateStore(state, reuse=False).load(with_state=False).problem
    assert callable(problem.__dict__["_arrow_names"][0])  # the closure the child could not take
    back = pickle.loads(pickle.dumps(problem))
    assert "_arrow_names" not in back.__dict__
    assert "_arrow_names" in problem.__dict__  # the parent keeps its copies
    np.testing.assert_array_equal(back.col_names, problem.col_names)
    np.testing.assert_array_equal(back.a_data, problem.a_data)
    assert back.col_index()[problem.col_names[-1]] == problem.n_cols - 1


def test_compare_runs_on_round_2_of_a_sia_stream(tmp_path):
    """A fresh process, as a user runs it (in this process the demo's own generations are cached without the
    closure, which hid the failure)."""
    state = _stream(tmp_path)
    env = dict(os.environ, COPTER_WORKER="off", PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.run([sys.executable, "-m", "copter_cli", "compare", "--state", str(state), "-b", "highs",
                           "--json"], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = json.loads(proc.stdout)["baselines"]
    assert rows and rows[0]["name"].startswith("highs") and rows[0]["status"] in ("OPTIMAL", "FEASIBLE"), rows
