"""``copter worker start --idle-timeout S`` when this install's worker already runs with another idle timeout:
the running worker keeps its own, and the command now says so (a ``warning:`` line, the JSON's ``warnings``),
exit 0 as before. It said only "worker already running" after ``worker start --idle-timeout 0`` (the README's
@reboot line) on a worker started with the default 900 s, which then exited when idle. Without the option
on the command line (the README's cron line, ``worker start`` before every round) nothing is said.
The worker itself is replaced by a fake answer: what is tested is what the command makes of it."""

from __future__ import annotations

import json

import pytest

from copter_cli import worker_control
from tests.helpers import run_main


def _running(idle: float):
    def start(idle_timeout, timeout, prepare, progress=None):
        return {"running": True, "pid": 4242, "socket": "/tmp/w.sock", "log": "/tmp/w.log", "served": 3,
                "idle_timeout_seconds": idle, "already_running": True, "start_seconds": 0.01}
    return start


@pytest.mark.parametrize("json_out", [False, True])
def test_another_idle_timeout_is_a_warning(capsys, monkeypatch, json_out):
    monkeypatch.setattr(worker_control, "start", _running(900.0))
    code, out, err = run_main(capsys, "worker", "start", "--idle-timeout", "0", *(["--json"] if json_out else []))
    assert code == 0, err
    (line,) = [ln for ln in err.splitlines() if ln.startswith("warning:")]
    assert "--idle-timeout 0 is not applied" in line and "pid 4242" in line and "900 s" in line, line
    assert "copter worker stop" in line
    if json_out:
        assert json.loads(out)["warnings"] == [line.removeprefix("warning: ")]
    else:
        assert "already running" in out and "exits after 900 s without a command" in out


@pytest.mark.parametrize("args", [[], ["--idle-timeout", "900"]])
def test_same_or_default_idle_timeout_says_nothing(capsys, monkeypatch, args):
    monkeypatch.setattr(worker_control, "start", _running(900.0))
    code, out, err = run_main(capsys, "worker", "start", *args, "--json")
    assert code == 0 and "warning" not in err and "warnings" not in json.loads(out), err


def test_never_idling_worker_is_named_so(capsys, monkeypatch):
    monkeypatch.setattr(worker_control, "start", _running(0.0))
    code, out, err = run_main(capsys, "worker", "start", "--idle-timeout", "60")
    assert code == 0
    assert "never exits when idle" in out and "--idle-timeout 60 is not applied" in err, (out, err)


@pytest.mark.parametrize(("running", "asked"), [(0.0, "inf"), (float("inf"), "0")])
def test_zero_and_inf_are_the_same_never_idling_timeout(capsys, monkeypatch, running, asked):
    """``--idle-timeout 0`` and ``inf`` both mean never: a worker started with one is no mismatch for the other."""
    monkeypatch.setattr(worker_control, "start", _running(running))
    code, out, err = run_main(capsys, "worker", "start", "--idle-timeout", asked)
    assert code == 0 and "warning" not in err and "never exits when idle" in out, (out, err)
