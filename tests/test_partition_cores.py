"""init --partitions K says so when this machine has fewer usable cores than parts (user trial 37: K = 2 / 4 steps
2x slower than monolithic ones on 2 cores, nothing to say why)."""

from __future__ import annotations

from solver.partition import cores


def test_fewer_cores_than_parts_is_warned_for_worker_processes_only(monkeypatch):
    monkeypatch.setattr(cores, "usable_cores", lambda: 2)
    (w,) = cores.cores_warning(4, "process")
    assert w.startswith("4 parts on 2 cores: the parts share them") and "--executor ray" in w
    assert cores.cores_warning(4, "process", workers=1)[0].startswith("4 parts on 1 worker: ")
    assert cores.cores_warning(2, "process") == []
    assert cores.cores_warning(8, "ray") == []  # the cluster's cores
    assert cores.cores_warning(8, "inline") == []  # a model too small for workers: one after another by design
    monkeypatch.setattr(cores, "usable_cores", lambda: 1)
    assert cores.cores_warning(2, "process")[0].startswith("2 parts on 1 core: ")


def test_usable_cores_is_the_affinity():
    import os

    assert cores.usable_cores() == len(os.sched_getaffinity(0))


def test_init_reports_the_warning(tmp_path, monkeypatch):
    """The wiring (solver/rounds/loop.py): ``init --partitions 4 --executor process`` with two usable cores."""
    import json

    from typer.testing import CliRunner

    from copter_cli.app import app
    from formats.io import write_problem
    from tests.helpers import client_allocation

    monkeypatch.setattr(cores, "usable_cores", lambda: 2)
    write_problem(client_allocation(), tmp_path / "base.parquet")
    res = CliRunner().invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", str(tmp_path / "s"),
                                   "--partitions", "4", "--executor", "process", "--json"])
    assert res.exit_code == 0, res.output
    assert any(w.startswith("4 parts on 2 cores") for w in json.loads(res.stdout)["warnings"])
