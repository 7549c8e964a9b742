"""Every answer on stdout is UTF-8, whatever the locale says: with an ASCII stdout (``LC_ALL=C`` without Python's
UTF-8 coercion, ``PYTHONIOENCODING=ascii``) ``show``, ``show --solution`` and ``history --csv`` ended on a name
such as ``café/x`` with "internal error: UnicodeEncodeError" (exit 1) after part of the answer, and a Latin-1
stdout wrote the name in another encoding than the state's files (helper-236, session 59)."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

from copter_cli.output import answer_bytes
from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from solver.model.problem import Problem
from tests.helpers import REPO

NAME = "café/x"


def _state(tmp_path):
    """A two-variable LP whose first variable is ``café/x``, then a round made infeasible (its failed record's
    message names the variable)."""
    p = Problem.from_arrays(cost=np.array([2.0, 1.0]), col_lower=np.zeros(2), col_upper=np.full(2, 5.0),
                            row_lower=np.array([-np.inf]), row_upper=np.array([8.0]), matrix=np.ones((1, 2)),
                            sense=-1, col_names=[NAME, "plain/y"], row_names=["cap"])
    write_problem(p, tmp_path / "base.parquet")
    write_delta(Delta.concat([Delta.cons(["cap"], lower=[100.0], upper=[200.0])], base_round=0),
                tmp_path / "infeasible.parquet")
    st = tmp_path / "st"
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_WORKER_DIR=str(tmp_path / "no-worker"))
    for args, code in ((("init", tmp_path / "base.parquet"), 0), (("step", tmp_path / "infeasible.parquet"), 4)):
        proc = subprocess.run([sys.executable, "-m", "copter_cli", *map(str, args), "--state", str(st)], env=env,
                              capture_output=True, timeout=600)
        assert proc.returncode == code, proc.stderr.decode(errors="replace")
    return st, env


@pytest.mark.parametrize("encoding", [{"PYTHONIOENCODING": "ascii"}, {"PYTHONIOENCODING": "latin-1"},
                                      {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0",
                                       "PYTHONIOENCODING": ""}], ids=["ascii", "latin-1", "C-locale"])
def test_non_ascii_names_reach_stdout_as_utf8_whatever_the_locale(tmp_path, encoding):
    st, env = _state(tmp_path)
    env = {k: v for k, v in {**env, **encoding}.items() if v != ""}
    for args in (["show"], ["show", "--solution"], ["history", "--csv"], ["history"]):
        proc = subprocess.run([sys.executable, "-m", "copter_cli", *args, "--state", str(st)], env=env,
                              capture_output=True, timeout=600)
        err = proc.stderr.decode(errors="replace")
        assert proc.returncode == 0 and "internal error" not in err, (args, err)
        out = proc.stdout.decode("utf-8")  # raises on any other encoding
        if args != ["history"]:  # the table shows no name; the others name the variable
            assert NAME in out, (args, out)


def test_answer_bytes_keeps_a_paths_undecodable_bytes_and_escapes_a_lone_surrogate():
    assert answer_bytes(NAME) == NAME.encode("utf-8")
    assert answer_bytes(os.fsdecode(b"st-\xff")) == b"st-\xff"  # a file name's byte as it was on disk
    assert answer_bytes("a\ud800b") == b"a\\ud800b"
