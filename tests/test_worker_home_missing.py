"""``copter worker start`` under a home folder that does not exist (``HOME=/nonexistent``, how a service account says
"write nothing here") made ``/nonexistent/.cache/copter/worker`` as root and started a worker there (helper-241,
session 60). It is now exit 7 naming the home folder and ``COPTER_WORKER_DIR``; nothing is created."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from copter_cli import worker_control
from solver.model.errors import EnvironmentFaultError


def test_ensure_folder_refuses_the_default_folder_under_a_missing_home(monkeypatch, tmp_path):
    home = tmp_path / "nonexistent"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("COPTER_WORKER_DIR", raising=False)
    folder = str(home / ".cache" / "copter" / "worker")
    with pytest.raises(EnvironmentFaultError, match="the home folder .* does not exist.*COPTER_WORKER_DIR"):
        worker_control.ensure_folder(folder)
    assert not home.exists()


def test_a_worker_dir_given_is_made_whatever_home_is(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "nonexistent"))
    monkeypatch.setenv("COPTER_WORKER_DIR", str(tmp_path / "w"))
    worker_control.ensure_folder(str(tmp_path / "w"))
    assert (tmp_path / "w").is_dir() and (os.stat(tmp_path / "w").st_mode & 0o777) == 0o700


def test_worker_start_under_a_missing_home_is_exit_7_and_makes_nothing(tmp_path):
    home = tmp_path / "nonexistent"
    env = {k: v for k, v in os.environ.items() if k != "COPTER_WORKER_DIR"}
    env["HOME"] = str(home)
    out = subprocess.run([sys.executable, "-m", "copter_cli", "worker", "start", "--timeout", "0"], env=env,
                         capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert out.returncode == 7, out.stderr
    assert f"the home folder {home} does not exist" in out.stderr and "COPTER_WORKER_DIR" in out.stderr
    assert not home.exists()


@pytest.mark.parametrize("kind", ["empty", "file"])
def test_an_empty_home_or_a_file_as_home_is_refused(monkeypatch, tmp_path, kind):
    """helper-242: ``HOME=`` (Python reads it as "/") made /.cache/copter/worker; a file as HOME said "does not
    exist"."""
    monkeypatch.delenv("COPTER_WORKER_DIR", raising=False)
    if kind == "empty":
        monkeypatch.setenv("HOME", "")
        words = "HOME is set but empty"
    else:
        (tmp_path / "afile").write_text("x")
        monkeypatch.setenv("HOME", str(tmp_path / "afile"))
        words = "is not a folder"
    home = os.path.expanduser("~")
    with pytest.raises(EnvironmentFaultError, match=words):
        worker_control.ensure_folder(os.path.join(home, ".cache", "copter", "worker"))
