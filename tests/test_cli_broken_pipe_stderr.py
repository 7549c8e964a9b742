"""A reader that goes away while human output is still being written on stderr (``copter solve x --json
2>&1 | head -c 5``) ends the command with exit 141 and nothing more printed, as a closed stdout does
(rich's own broken-pipe handler exits 1, an internal error)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

from formats.io import write_problem
from tests.helpers import small_lp

REPO = Path(__file__).resolve().parents[1]


def test_closed_pipe_on_stdout_and_stderr_exits_141(tmp_path):
    write_problem(small_lp(), tmp_path / "p.parquet")
    env = dict(os.environ, PYTHONPATH=str(REPO), COPTER_WORKER="off", COPTER_PROGRESS_DELAY="inf")
    r, w = os.pipe()
    os.close(r)  # stderr's reader is gone before anything is written (as `head -c 5` after the JSON)
    with open(tmp_path / "out.json", "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "copter_cli", "solve", str(tmp_path / "p.parquet"),
                                 "--json"], stdout=out, stderr=w, env=env, cwd=tmp_path)
    os.close(w)
    assert proc.wait(timeout=600) == 141  # the JSON is written, then the summary on stderr hits the closed pipe
    assert (tmp_path / "out.json").read_text().startswith('{"status"')


def test_rich_console_raises_broken_pipe_instead_of_exiting_1():
    from copter_cli.output import rich_console

    class Closed(io.StringIO):
        def write(self, s):
            raise BrokenPipeError(32, "Broken pipe")

    c = rich_console(file=Closed())
    try:
        c.print("x")
    except BrokenPipeError:
        pass
    else:  # pragma: no cover - the failure this test is about: rich raised SystemExit(1) instead
        raise AssertionError("no BrokenPipeError")
