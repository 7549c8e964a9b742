"""A command ended by an interrupt leaves no temporary folder behind. The CLI's handler ends the process at
once (``os._exit``) outside a ``formats.undo`` region, which skips ``tempfile.TemporaryDirectory``'s finalizer:
``copter init big.mps`` stopped by a ``timeout`` while HiGHS read the file left ``$TMPDIR/copter-mps-*`` (its
log, and a copy of the model when the file has blank lines). Such folders are now
``formats.undo.temporary_folder``s, removed by the handler too."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from formats.io import write_problem
from tests.helpers import REPO, small_lp

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals")

SCRIPT = r"""
import os, signal, sys, time
from copter_cli import entry
entry.install()  # the console script's handler: outside a region it runs the undo actions and exits at once
from formats import undo
with undo.temporary_folder("copter-test-") as tmp:
    open(os.path.join(tmp, "f"), "w").write("x")
    os.kill(os.getpid(), int(sys.argv[1]))
    time.sleep(30)
"""


def env_with(tmp, fault: str | None = None) -> dict:
    env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(tmp), COPTER_WORKER_DIR="/nonexistent-copter-worker")
    env.pop("COPTER_FAULT_INJECT", None)
    if fault:
        env["COPTER_FAULT_INJECT"] = fault
    return env


@pytest.mark.parametrize("sig", [2, 15, 1], ids=["SIGINT", "SIGTERM", "SIGHUP"])
def test_temporary_folder_is_removed_when_an_interrupt_ends_the_process(tmp_path, sig):
    res = subprocess.run([sys.executable, "-c", SCRIPT, str(sig)], env=env_with(tmp_path), capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 128 + sig, res.stderr[-2000:]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("command", [["init", "{mps}", "--state", "{st}"], ["solve", "{mps}"],
                                     ["convert", "{mps}", "{out}"]], ids=["init", "solve", "convert"])
def test_a_command_interrupted_while_reading_mps_leaves_no_folder(tmp_path, command):
    files = tmp_path / "files"
    files.mkdir()
    mps = files / "m.mps"
    write_problem(small_lp(), mps)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    args = [a.format(mps=mps, st=tmp_path / "st", out=files / "m.parquet") for a in command]
    res = subprocess.run([sys.executable, "-m", "copter_cli", *args], env=env_with(tmp, "sigterm_while_reading_mps"),
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 143, res.stderr[-2000:]
    assert "interrupted by SIGTERM" in res.stderr
    assert list(tmp.iterdir()) == []
    assert sorted(p.name for p in files.iterdir()) == ["m.mps"] and not (tmp_path / "st").exists()
