"""The warning of a step that moves later generations into ``abandoned/`` names what left them.

A user hunt: ``copter step d1`` killed after its generation was renamed into place but before ``CURRENT`` named
it (kill -9, a power loss: ``COPTER_FAULT_INJECT=before_current``) leaves ``gen-000001`` beside ``CURRENT`` =
0. The next ``copter step d1`` makes round 1 again and moves the old one aside, with the warning "round(s) 1 of
the branch left by a rollback moved into ..." although nobody ran a rollback. Since session 50 the commit's journal
lets the next writer undo the killed commit first, and its warning says a step ended before its commit finished.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from formats.io import write_delta, write_problem
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp

REPO = Path(__file__).resolve().parents[1]


def test_round_left_by_a_killed_step_is_not_called_a_rollback(tmp_path, capsys):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    d = tmp_path / "d1.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), d)
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_FAULT_INJECT="before_current", COPTER_WORKER="off")
    p = subprocess.run([sys.executable, "-m", "copter_cli", "step", str(d), "--state", str(st)], env=env,
                       capture_output=True, timeout=300)
    assert p.returncode == -9, p.stderr
    assert (st / "gen-000001").is_dir() and (st / "CURRENT").read_text().strip() == "0"
    code, out, err = run_main(capsys, "step", d, "--state", st, "--json")
    assert code == 0, out
    warning = next(w for w in json.loads(out)["warnings"] if "abandoned" in w)
    # the next writer's lock undoes the killed commit (its journal, formats.checkpoint.StateStore.open_commit) and
    # says so: the killed step's round is kept aside, and no rollback is named
    assert "a command on this state ended before its commit finished" in warning, warning
    assert "its round 1, never made current, was moved into" in warning and "rollback" not in warning, warning
