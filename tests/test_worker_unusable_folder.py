"""``copter worker status`` on a worker folder that cannot be used (a file, open to other users) says why, as
``worker start`` refuses it; it said only "no worker running for this install" (exit 0). And ``worker start`` with
``COPTER_WORKER_DIR`` naming a file says that the path is not a directory: it said only "File exists"."""

from __future__ import annotations

import json
import os

from tests.helpers import cli_json

ENVIRONMENT = 7  # copter's exit code for a fault of the environment


def test_status_names_a_file_where_the_folder_should_be(tmp_path, monkeypatch):
    spot = tmp_path / "w"
    spot.write_text("not a folder")
    monkeypatch.setenv("COPTER_WORKER_DIR", str(spot))
    code, out = cli_json("worker", "status", "--json")
    res = json.loads(out)
    assert code == 0 and res["running"] is False, out
    assert "is not a directory" in res["message"] and str(spot) in res["message"], res


def test_status_names_a_folder_open_to_others(tmp_path, monkeypatch):
    spot = tmp_path / "w"
    spot.mkdir()
    os.chmod(spot, 0o755)
    monkeypatch.setenv("COPTER_WORKER_DIR", str(spot))
    code, out = cli_json("worker", "status", "--json")
    assert code == 0 and "open to other users" in json.loads(out)["message"], out


def test_status_of_a_missing_folder_says_no_worker_and_nothing_else(tmp_path, monkeypatch):
    monkeypatch.setenv("COPTER_WORKER_DIR", str(tmp_path / "not-yet"))
    code, out = cli_json("worker", "status", "--json")
    res = json.loads(out)
    assert code == 0 and res["running"] is False and "message" not in res, out


def test_start_names_a_file_where_the_folder_should_be(tmp_path, monkeypatch):
    spot = tmp_path / "w"
    spot.write_text("not a folder")
    monkeypatch.setenv("COPTER_WORKER_DIR", str(spot))
    code, out = cli_json("worker", "start", "--json")
    error = json.loads(out)["error"]
    assert code == ENVIRONMENT, out
    assert "is not a directory" in error["message"] and "COPTER_WORKER_DIR" in error["message"], error
    assert spot.read_text() == "not a folder"
