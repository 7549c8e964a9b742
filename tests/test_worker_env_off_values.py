"""``COPTER_WORKER`` turns the worker off with the usual spellings of "no" (``off``, ``0``, ``false``, ``no``, any
case, surrounding spaces ignored), and a value it does not know is a ``warning:`` line naming it, the command then
running in-process (the behaviour without a worker). Only ``off`` counted: ``COPTER_WORKER=0`` or ``=false`` sent
every command to a running worker without a word."""

from __future__ import annotations

import pytest

from copter_cli import worker_client as wc


@pytest.fixture
def reached(monkeypatch):
    """Whether run_or_return went looking for a worker (it then reads the folder's paths); it finds none."""
    calls = []

    def paths():
        calls.append(True)
        return {"dir": "/nonexistent-copter-worker-folder", "socket": "/nonexistent-copter-worker-folder/w.sock"}

    monkeypatch.setattr(wc, "paths", paths)
    monkeypatch.delenv("COPTER_WORKER_DEBUG", raising=False)
    return calls


@pytest.mark.parametrize("value", ["off", "OFF", "0", "false", "False", "no", " off "])
def test_the_usual_spellings_of_no_turn_it_off(monkeypatch, capfd, reached, value):
    monkeypatch.setenv("COPTER_WORKER", value)
    assert wc.run_or_return(["copter", "step", "d.parquet"]) is None
    assert reached == [], value
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize("value", ["", "on", "1", "true", "yes"])
def test_on_or_unset_looks_for_the_worker(monkeypatch, capfd, reached, value):
    monkeypatch.setenv("COPTER_WORKER", value)
    assert wc.run_or_return(["copter", "step", "d.parquet"]) is None  # no worker there: in-process
    assert reached == [True], value
    assert capfd.readouterr().err == ""


def test_an_unknown_value_is_named_and_the_command_runs_in_process(monkeypatch, capfd, reached):
    monkeypatch.setenv("COPTER_WORKER", "disabled")
    assert wc.run_or_return(["copter", "step", "d.parquet"]) is None
    assert reached == []
    err = capfd.readouterr().err
    assert err.startswith("warning: ") and "COPTER_WORKER" in err and "'disabled'" in err, err


def test_a_command_that_is_not_routed_says_nothing(monkeypatch, capfd, reached):
    monkeypatch.setenv("COPTER_WORKER", "disabled")
    assert wc.run_or_return(["copter", "history"]) is None
    assert reached == [] and capfd.readouterr().err == ""


@pytest.mark.parametrize("argv, why", [(["copter", "step", "d.parquet"], "COPTER_WORKER='off'"),
                                       (["copter", "history"], "history is not handed to the worker")])
def test_debug_says_where_every_command_runs(monkeypatch, capfd, reached, argv, why):
    """README: COPTER_WORKER_DEBUG=1 "prints on stderr where each command ran and why"; a command the worker
    never takes, or every command under COPTER_WORKER=off, printed nothing."""
    monkeypatch.setenv("COPTER_WORKER", "off")
    monkeypatch.setenv("COPTER_WORKER_DEBUG", "1")
    assert wc.run_or_return(argv) is None
    err = capfd.readouterr().err
    assert err.startswith("copter worker: in-process (") and why in err, err


def test_the_worker_folder_does_not_depend_on_xdg_runtime_dir(monkeypatch, tmp_path):
    # helper-215: the README's systemd user unit (which has XDG_RUNTIME_DIR) started a worker under
    # $XDG_RUNTIME_DIR/copter, and its crontab's rounds (which have not) looked in ~/.cache/copter/worker
    monkeypatch.delenv("COPTER_WORKER_DIR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    cron = wc.worker_dir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "run"))
    assert wc.worker_dir() == cron == str(tmp_path / ".cache" / "copter" / "worker")
    monkeypatch.setenv("COPTER_WORKER_DIR", str(tmp_path / "w"))
    assert wc.worker_dir() == str(tmp_path / "w")
