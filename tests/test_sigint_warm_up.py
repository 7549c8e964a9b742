"""SIGINT while ``copter step`` first runs the kernel warm-up (a stale compile stamp, e.g. after an upgrade):
the warm-up's own tiny rounds live in a scratch folder, so the interrupted error must name the user's state
and the round its CURRENT really names, never "round 2 is stored and current" of a scratch round; exit 130,
the state byte-identical.

Deterministic, in real subprocesses (the console script's SIGINT handler): a wrapper replaces the warm-up
(``solver.prepare.WARM_UP``) by one scratch init + step followed by an interrupt, once sent as a signal
outside any unwinding region (the handler ends the process at once) and once raised as KeyboardInterrupt
(as inside a region: it unwinds through ``prepare``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import small_lp, snapshot

REPO = Path(__file__).resolve().parents[1]

WRAPPER = """
import os, signal, sys, time
import solver.prepare as sp

HOW = sys.argv.pop(1)

def scratch_rounds(tmp):
    from solver import rounds
    from solver.model.delta import Delta
    from tests.helpers import small_lp
    rounds.init(small_lp(), state_dir=tmp / "s")
    rounds.step(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), state_dir=tmp / "s")
    if HOW == "signal":
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(30)
    raise KeyboardInterrupt

sp.WARM_UP = (scratch_rounds,)
sp.is_prepared = lambda: False  # a stale stamp
from copter_cli.entry import main
main()
"""


@pytest.mark.parametrize("how", ["signal", "raise"])
@pytest.mark.parametrize("json_out", [True, False])
def test_an_interrupted_warm_up_names_the_users_state_and_its_current(tmp_path, how, json_out):
    st = tmp_path / "st"
    rounds.init(small_lp(), state_dir=st)
    d = tmp_path / "d1.parquet"
    write_delta(Delta.concat([Delta.vars(["x4"], cost=[5.0])], base_round=0), d)
    before = snapshot(st)
    wrapper = tmp_path / "w.py"
    wrapper.write_text(WRAPPER)
    scratch_parent = tmp_path / "tmp"
    scratch_parent.mkdir()
    env = dict(os.environ, PYTHONPATH=str(REPO), TMPDIR=str(scratch_parent))
    env.pop("COPTER_FAULT_INJECT", None)
    p = subprocess.run([sys.executable, str(wrapper), how, "step", str(d), "--state", str(st),
                        *(["--json"] if json_out else [])], env=env, capture_output=True, text=True, timeout=300)
    assert p.returncode == 130, (p.stdout, p.stderr)
    assert list(scratch_parent.iterdir()) == [], "the warm-up's scratch folder outlived the interrupt"
    assert "Traceback" not in p.stderr and "stored and current" not in p.stderr + p.stdout
    message = (f"interrupted while warming up the solver kernels, before the command's own work; the state is "
               f"unchanged ({st}: CURRENT names round 0)")
    assert f"error (interrupted, exit 130): {message}" in p.stderr
    if json_out:
        assert json.loads(p.stdout)["error"] == {"code": 130, "kind": "interrupted", "message": message}
    assert snapshot(st) == before


def test_the_message_of_an_interrupt_after_the_warm_up_is_the_commands_again():
    """The scratch rounds' "stored" records do not outlive the warm-up; the command's own do."""
    from formats import undo

    undo.begin_command()
    with undo.scratch("while X"):
        undo.done("round 2 is stored and current")
        assert undo.interrupted_message() == "interrupted while X; the state is unchanged"
    assert undo.interrupted_message() == "interrupted; the state is unchanged"
    undo.done("round 1 is stored and current")
    assert undo.interrupted_message() == "interrupted; round 1 is stored and current"
    undo.begin_command()


def test_outside_scratch_work_the_message_is_unchanged():
    from formats import undo

    undo.begin_command()
    undo.about_state(lambda: "/st: CURRENT names round 0")
    assert undo.interrupted_message() == "interrupted; the state is unchanged"
    with undo.scratch("while X"):
        assert undo.interrupted_message() == "interrupted while X; the state is unchanged (/st: CURRENT names round 0)"
    undo.begin_command()
