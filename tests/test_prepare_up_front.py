"""The kernel warm-up never lands inside a test's timed or fault-injected command: the session prepares the
kernels up front (``kernels_prepared`` in tests/conftest.py), and a warm-up that still runs inside a command
(a stamp gone stale) leaves the crash tests' fault injection to the command's own round."""

from __future__ import annotations

import os

import pytest

import solver.prepare as sp


def test_the_session_prepared_the_kernels_before_the_first_test(kernels_prepared):
    assert set(kernels_prepared) == {"ran", "seconds"}
    if kernels_prepared["ran"]:  # it ran: the stamp it wrote exists (whatever later tests compiled since)
        assert sp.stamp_path().exists()


def test_the_warm_up_runs_without_the_crash_tests_fault_injection(tmp_path, monkeypatch):
    """A step that warms up first under COPTER_FAULT_INJECT=after_current was SIGKILLed in a scratch round
    (its CURRENT untouched, the test expecting the round stored failed); COPTER_FAULT_ERRNO=ENOSPC@N counted
    the scratch writes. The warm-up sees none of them, and they are back afterwards."""
    faults = {"COPTER_FAULT_INJECT": "after_current", "COPTER_FAULT_ERRNO": "ENOSPC@1",
              "COPTER_FAULT_TRACE": str(tmp_path / "trace.tsv")}
    for k, v in faults.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))  # the stamp goes there, not the tree's
    seen = []
    monkeypatch.setattr(sp, "WARM_UP", (lambda tmp: seen.append({k: os.environ.get(k) for k in faults}),))
    sp.prepare(force=True)
    assert seen == [dict.fromkeys(faults)]
    assert {k: os.environ.get(k) for k in faults} == faults
    assert not (tmp_path / "trace.tsv").exists()


def test_the_fault_variables_come_back_after_an_interrupted_warm_up(monkeypatch, tmp_path):
    monkeypatch.setenv("COPTER_FAULT_INJECT", "after_current")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))

    def interrupted(tmp):
        raise KeyboardInterrupt

    monkeypatch.setattr(sp, "WARM_UP", (interrupted,))
    with pytest.raises(KeyboardInterrupt):
        sp.prepare(force=True)
    assert os.environ["COPTER_FAULT_INJECT"] == "after_current"
    from formats import undo

    undo.begin_command()
