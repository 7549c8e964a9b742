"""A stdout the machine refuses (a file over the size limit ``ulimit -f``, a full disk) is exit 7 naming stdout
and its file, like any write the machine refuses (``formats/written.py`` for MPS), never exit 1 with a traceback:
``copter show > file`` over the limit ended with ``OSError: [Errno 27] File too large`` (with ``--json`` the
error's own JSON object hit the same limit, inside the handler)."""

from __future__ import annotations

import os
import resource
import subprocess
import sys

import pytest

from solver import rounds
from tests.helpers import REPO, small_lp

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_FSIZE, /proc/self/fd")


def over_the_limit(tmp_path, *args, limit: int = 0) -> tuple[int, str, bytes]:
    """``ulimit -f`` (``limit`` bytes) then ``python -m copter_cli ARGS > file``: (exit code, stderr, file)."""
    out_path = tmp_path / "answer.txt"
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_WORKER_DIR=str(tmp_path / "no-worker"),
               PYTHONDONTWRITEBYTECODE="1")  # a .pyc cut by the limit would break later imports

    def limited():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.RLIM_INFINITY))

    with open(out_path, "w") as out:
        proc = subprocess.run([sys.executable, "-m", "copter_cli", *map(str, args)], stdout=out,
                              stderr=subprocess.PIPE, text=True, env=env, timeout=600, preexec_fn=limited)
    return proc.returncode, proc.stderr, out_path.read_bytes()


@pytest.mark.parametrize("args", [("show",), ("show", "--json"), ("show", "--solution"),
                                  ("show", "--solution", "--json"), ("history",), ("history", "--json"),
                                  ("version",), ("--version",), ("show", "--help")])
def test_a_stdout_over_the_file_size_limit_is_exit_7_naming_it(tmp_path, args):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    state = ("--state", st) if args[0] in ("show", "history") and "--help" not in args else ()
    code, err, written = over_the_limit(tmp_path, *args, *state)
    assert code == 7, (args, err)
    assert f"error (environment, exit 7): stdout ({tmp_path / 'answer.txt'}): cannot write: File too large" in err
    assert "Traceback" not in err and written == b""


def test_an_answer_cut_by_the_limit_is_exit_7(tmp_path):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    code, err, written = over_the_limit(tmp_path, "show", "--state", st, limit=100)
    assert code == 7 and "stdout (" in err and "File too large" in err and "Traceback" not in err, err
    assert len(written) == 100


def test_a_json_answer_cut_by_the_limit_is_exit_7(tmp_path):
    """One JSON object cut short by the limit: Python's buffered stdout dropped the rest without an error
    (exit 0 with a truncated object a reader cannot parse)."""
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    code, err, written = over_the_limit(tmp_path, "show", "--json", "--state", st, limit=100)
    assert code == 7 and "stdout (" in err and "File too large" in err and "Traceback" not in err, err
    assert len(written) == 100


@pytest.mark.parametrize("args", [("show", "--solution", "--top", "300", "--entries", "50"), ("history",),
                                  ("history", "--csv")])
def test_a_human_answer_cut_by_the_limit_after_its_first_write_is_exit_7(tmp_path, args):
    """A human answer (rich's table) of several KB under ``ulimit -f 1``: the first 1,024 bytes were taken, Python's
    buffered stdout dropped the rest at the flush without an error, and the command exited 0 with a cut answer
    (``show --solution --top 300``: 1,024 of 7,952 bytes, exit 0). Every write of an answer now goes to the
    descriptor until each byte is taken, as a JSON answer's does."""
    from solver.model.delta import Delta
    from tests.helpers import client_allocation

    st = tmp_path / "st"
    rounds.init(client_allocation(200), st)
    for r in range(12):  # history: a table of 13 rows, several KB
        rounds.step(Delta.concat([Delta.vars([f"c{r}/a"], cost=[2.0 + r])], base_round=r), st)
    full = subprocess.run([sys.executable, "-m", "copter_cli", *args, "--state", str(st)], capture_output=True,
                          env=dict(os.environ, PYTHONPATH=str(REPO)), timeout=600).stdout
    assert len(full) > 2048, len(full)  # the answer is over the limit below
    code, err, written = over_the_limit(tmp_path, *args, "--state", st, limit=1024)
    assert code == 7, (code, err, len(written))
    assert f"error (environment, exit 7): stdout ({tmp_path / 'answer.txt'}): cannot write: File too large" in err
    assert "Traceback" not in err and written == full[:1024]
