"""Every command that solves (``solve``, ``step``, ``compare``, besides ``init`` and ``demo``) compiles the
numba kernels first, through ``solver.prepare.prepare`` with its progress line on stderr, never silently
mid-solve (a fresh install's first ``copter solve`` compiled for 12.9 s without a word, and its report counted
the compilation as solve time).

The fast tests replace ``solver.prepare.prepare`` with a recorder that says the progress line (as a cold
cache does) and check each command calls it before it solves; a real first command against an empty numba
cache, and the commands after it, run in ``tests/test_prepare_cli.py``.
"""

from __future__ import annotations

import json

import pytest

from solver import prepare as prep
from tests.helpers import require_data, run_main


@pytest.fixture
def events(monkeypatch) -> list[str]:
    """Records "prepare" (with the progress line said) and "solve" (solver.api.solve_problem) in call order."""
    import solver.api

    seen: list[str] = []

    def fake_prepare(progress=None, force=True):
        seen.append("prepare")
        if progress is not None:
            progress(prep.PROGRESS_MESSAGE)
        return {"seconds": 0.0, "skipped": False, "compiled": 1, "kernels": None, "reached": None, "stamp": None}

    real_solve = solver.api.solve_problem

    def recording_solve(*args, **kw):
        seen.append("solve")
        return real_solve(*args, **kw)

    monkeypatch.setattr(prep, "prepare", fake_prepare)
    monkeypatch.setattr(solver.api, "solve_problem", recording_solve)
    return seen


def test_solve_prepares_before_it_solves(capsys, events):
    mps = require_data("mps")
    code, out, err = run_main(capsys, "solve", mps / "afiro.mps", "--json")
    assert code == 0, err
    assert json.loads(out)["status"] == "OPTIMAL"
    assert events[:2] == ["prepare", "solve"], events
    assert prep.PROGRESS_MESSAGE in err and prep.PROGRESS_MESSAGE not in out


def test_step_and_compare_prepare_first(capsys, events, tmp_path):
    from formats.io import write_delta
    from solver.model.delta import Delta

    mps = require_data("mps")
    st = tmp_path / "st"
    code, _, err = run_main(capsys, "init", mps / "afiro.mps", "--state", st, "--json")
    assert code == 0, err
    assert events[0] == "prepare"
    write_delta(Delta.concat([Delta.vars(["X02"], cost=[-0.5])], base_round=0), tmp_path / "d1.parquet")
    for args in (("step", tmp_path / "d1.parquet"), ("compare", "--baseline", "highs")):
        events.clear()
        code, out, err = run_main(capsys, *args, "--state", st, "--json")
        assert code == 0, (args, err)
        assert events and events[0] == "prepare", (args, events)
        assert prep.PROGRESS_MESSAGE in err and prep.PROGRESS_MESSAGE not in out, args
    assert json.loads(out)["round"] == 1
