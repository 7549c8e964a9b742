"""A command's answer goes to stdout, diagnostics to stderr: ``copter show --solution > file`` gave an empty
file, because every human view (report table, allocation, history, "wrote FILE") was printed on stderr. Run
through the console script with stdout redirected to a file, as a user's shell does."""

from __future__ import annotations

import os
import subprocess
import sys

from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from tests.helpers import REPO, small_lp


def copter(tmp_path, *args) -> tuple[int, str, str]:
    """``python -m copter_cli ARGS > file``: (exit code, the file's text, stderr)."""
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_WORKER_DIR=str(tmp_path / "no-worker"))
    with open(tmp_path / "answer.txt", "w") as out:
        proc = subprocess.run([sys.executable, "-m", "copter_cli", *map(str, args)], stdout=out,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=600)
    return proc.returncode, (tmp_path / "answer.txt").read_text(), proc.stderr


def test_every_answer_is_on_stdout_and_nothing_else_on_stderr(tmp_path):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), tmp_path / "d1.parquet")
    cases = [
        (("init", tmp_path / "base.parquet", "--state", st), "copter round 0"),
        (("step", tmp_path / "d1.parquet", "--state", st), "copter round 1"),
        (("show", "--state", st), "copter round 1"),
        (("show", "--solution", "--state", st), "round 1 (OPTIMAL"),
        (("show", "--solution", "--changes", "--state", st), "since round 0"),
        (("history", "--state", st), "copter history"),
        (("export", "-o", tmp_path / "x.mps", "--state", st), "wrote"),
        (("convert", tmp_path / "base.parquet", tmp_path / "b.mps"), "rows"),
        (("solve", tmp_path / "b.mps"), "Model status"),
    ]
    for args, needle in cases:
        code, out, err = copter(tmp_path, *args)
        assert code == 0, (args, err)
        assert needle in out, (args, out, err)
        assert err == "", (args, err)


def test_errors_and_warnings_stay_on_stderr(tmp_path):
    code, out, err = copter(tmp_path, "show", "--state", tmp_path / "nope")
    assert code == 3 and out == "" and "error (state, exit 3)" in err
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    write_delta(Delta.vars(["x3"], cost=[5.0]), tmp_path / "d1.parquet")  # no copter.base_round: a warning
    assert copter(tmp_path, "init", tmp_path / "base.parquet", "--state", st)[0] == 0
    code, out, err = copter(tmp_path, "step", tmp_path / "d1.parquet", "--state", st)
    assert code == 0 and "copter round 1" in out and "warning: " not in out
    assert "warning: " in err and "copter round" not in err
