"""copter_cli.solving_stack (issue #15): a console process imports the round's modules with the cyclic collector
paused, freezes them and turns the collector back on; an in-process caller is left alone."""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import gc, json, sys
from copter_cli import entry, solving_stack
entry.CONSOLE[0] = True
before = gc.get_freeze_count()
first = solving_stack.load()
after_first = gc.get_freeze_count()
gc.disable()
second = solving_stack.load()  # the collector off: left off, nothing frozen
print(json.dumps({"first": first, "second": second, "frozen_before": before, "frozen_after": after_first,
                  "enabled_after_first": True, "enabled_after_second": gc.isenabled(),
                  "frozen_after_second": gc.get_freeze_count(),
                  "modules": [m for m in ("numba", "numpy", "pyarrow", "solver.lp.dispatch", "solver.rounds.loop")
                              if m in sys.modules]}))
"""


def test_console_process_imports_the_stack_then_freezes_and_collects_again():
    proc = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["first"] is True and out["second"] is False
    assert out["frozen_before"] == 0 and out["frozen_after"] > 100_000  # numba, numpy, pyarrow: ~0.5M objects
    assert out["enabled_after_second"] is False and out["frozen_after_second"] == out["frozen_after"]
    assert out["modules"] == ["numba", "numpy", "pyarrow", "solver.lp.dispatch", "solver.rounds.loop"]


def test_collector_is_on_after_load_in_a_console_process():
    code = ("import gc; from copter_cli import entry, solving_stack; entry.CONSOLE[0] = True; "
            "solving_stack.load(); print(gc.isenabled())")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.stdout.strip() == "True", proc.stderr[-2000:]


def test_an_import_error_still_turns_the_collector_back_on(monkeypatch):
    from copter_cli import entry, solving_stack

    monkeypatch.setattr(entry, "CONSOLE", [True])
    monkeypatch.setitem(sys.modules, "solver.rounds.loop", None)  # `import solver.rounds.loop` raises ImportError
    unfreeze = gc.get_freeze_count() == 0
    raised = False
    try:
        solving_stack.load()
    except ImportError:
        raised = True
    finally:
        enabled = gc.isenabled()
        gc.enable()
        if unfreeze:
            gc.unfreeze()  # this test process keeps collecting what the call froze
    assert raised and enabled


def test_in_process_callers_are_left_alone(monkeypatch):
    from copter_cli import entry, solving_stack

    monkeypatch.setattr(entry, "CONSOLE", [False])
    frozen = gc.get_freeze_count()
    assert solving_stack.load() is False
    assert gc.isenabled() and gc.get_freeze_count() == frozen


def test_step_and_init_load_the_stack_before_the_round(monkeypatch, tmp_path):
    """The call sites: ``copter init`` and ``copter step`` call it after the prepare check, before the round."""
    from typer.testing import CliRunner

    from copter_cli import solving_stack
    from copter_cli.app import app
    from solver.model.delta import Delta
    from solver.prepare import prepare
    from tests.helpers import small_lp

    prepare(force=False)
    calls = []
    monkeypatch.setattr(solving_stack, "load", lambda: calls.append("load") or False)
    import solver.rounds as rounds

    real_init, real_step = rounds.init, rounds.step
    monkeypatch.setattr(rounds, "init", lambda *a, **k: calls.append("init") or real_init(*a, **k))
    monkeypatch.setattr(rounds, "step", lambda *a, **k: calls.append("step") or real_step(*a, **k))
    from formats.io import write_delta, write_problem

    base, delta, st = tmp_path / "base.parquet", tmp_path / "d.parquet", tmp_path / "state"
    write_problem(small_lp(), base)
    write_delta(Delta.concat([Delta.vars(["x0"], cost=[0.5])], base_round=0), delta)
    runner = CliRunner()
    assert runner.invoke(app, ["init", str(base), "--state", str(st), "--json"]).exit_code == 0
    assert runner.invoke(app, ["step", str(delta), "--state", str(st), "--json"]).exit_code == 0
    assert calls == ["load", "init", "load", "step"]
