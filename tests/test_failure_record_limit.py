"""A failed round whose failure record the machine refuses (``ulimit -f``) says how the round ended: it said only
"failed/.tmp-round-.../report.json: cannot write: File too large" (exit 7), and an operator never learnt that the
delta made the model infeasible (helper-167, session 34)."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp

from formats.io import write_delta, write_problem
from solver.model.problem import Problem
from tests.helpers import REPO, infeasible_delta, small_lp_state, snapshot

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE")


def _limited(*args):
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (512, 512))

    env = {**os.environ, "PYTHONPATH": str(REPO), "COPTER_WORKER": "off"}
    return subprocess.run([sys.executable, "-m", "copter_cli", *map(str, args), "--json"], env=env,
                          capture_output=True, text=True, timeout=300, preexec_fn=limit)


def test_an_infeasible_step_whose_record_cannot_be_written_says_it_was_infeasible(tmp_path):
    st, _ = small_lp_state(tmp_path)
    d = tmp_path / "inf.parquet"
    write_delta(infeasible_delta(), d)
    before = snapshot(st)
    p = _limited("step", d, "--state", st)
    assert p.returncode == 7, p.stderr
    err = json.loads(p.stdout)["error"]
    assert err["message"].startswith("round 1 ended PRIMAL_INFEASIBLE (CURRENT stays at round 0, nothing was stored), "
                                     "and its failure record under failed/ could not be kept: "), err
    assert "File too large" in err["message"], err
    assert (err["kind"], err["round"], err["round_status"], err["errno"]) == ("environment", 1, "PRIMAL_INFEASIBLE",
                                                                              "EFBIG"), err
    assert err["file"].startswith(str(st / "failed")) and err["file"].endswith("report.json"), err
    assert snapshot(st) == before  # no record, no log line, CURRENT as it was
    assert "round 1 ended PRIMAL_INFEASIBLE" in p.stderr


def test_an_infeasible_init_whose_record_cannot_be_written_says_it_was_infeasible(tmp_path):
    # x0 <= 1 by its bounds, and a row forces x0 >= 5
    bad = Problem.from_arrays(cost=np.ones(2), col_lower=np.zeros(2), col_upper=np.ones(2),
                              row_lower=np.array([5.0]), row_upper=np.array([np.inf]),
                              matrix=sp.csc_matrix(np.array([[1.0, 0.0]])), row_names=["force"],
                              col_names=["x0", "x1"])
    write_problem(bad, tmp_path / "bad.parquet")
    st = tmp_path / "st"
    p = _limited("init", tmp_path / "bad.parquet", "--state", st)
    assert p.returncode == 7, p.stderr
    err = json.loads(p.stdout)["error"]
    assert err["message"].startswith("round 0 ended PRIMAL_INFEASIBLE (no state was initialised), and its failure "
                                     "record under failed/ could not be kept: "), err
    assert (err["round"], err["round_status"]) == (0, "PRIMAL_INFEASIBLE"), err
    assert not (st / "CURRENT").exists() and not (st / "config.json").exists()
    assert not (st / "failed").exists() or not any((st / "failed").iterdir())
