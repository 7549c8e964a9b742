"""POP's parts as Ray tasks (``copter compare --baseline pop --executor ray``, issue #18 item 3).

Skipped with a reason when Ray is not importable, unless ``COPTER_REQUIRE_RAY=1`` (CI installs the ``ray``
extra and sets it), which turns the missing module into an error. The local cluster is the session's
``ray_cluster`` (``tests/conftest.py``), shared with ``tests/test_partition_ray.py``.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import write_problem
from solver.baselines.pop import solve_pop
from solver.model.errors import PartWorkerError
from solver.model.status import Status
from solver.partition.executor import FAULT_ENV
from tests.helpers import client_allocation, require_ray, snapshot

require_ray()

runner = CliRunner()


def test_pop_on_ray_equals_pop_inline(ray_cluster):
    p = client_allocation()
    inline = solve_pop(p, k=4, seed=7, executor="inline")
    on_ray = solve_pop(p, k=4, seed=7, executor="ray")
    assert on_ray.status == Status.FEASIBLE and on_ray.extra["executor"] == "ray"
    assert on_ray.objective == pytest.approx(inline.objective, rel=1e-9)
    np.testing.assert_allclose(on_ray.x, inline.x, rtol=1e-9, atol=1e-12)
    assert on_ray.extra["pop_seconds"] == pytest.approx(on_ray.extra["setup_seconds"]
                                                        + on_ray.extra["max_part_seconds"])


def test_compare_with_pop_on_ray_and_a_killed_ray_task(ray_cluster, tmp_path, monkeypatch):
    write_problem(client_allocation(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    res = runner.invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", str(st), "--json"])
    assert res.exit_code == 0, res.output
    rows = {}
    for ex in ("inline", "ray"):
        res = runner.invoke(app, ["compare", "-b", "pop", "--k", "2", "--executor", ex, "--state", str(st), "--json"])
        assert res.exit_code == 0, res.output
        rows[ex] = json.loads(res.stdout)["baselines"][0]
    assert rows["ray"]["executor"] == "ray" and rows["ray"]["status"] == "FEASIBLE"
    assert rows["ray"]["objective"] == pytest.approx(rows["inline"]["objective"], rel=1e-9)

    before = snapshot(st)
    monkeypatch.setenv(FAULT_ENV, "1")  # the task of part 1 dies, and again on Ray's retry (max_retries=1)
    with pytest.raises(PartWorkerError, match="Ray task solving part 1"):
        solve_pop(client_allocation(), k=2, seed=0, executor="ray")
    res = runner.invoke(app, ["compare", "-b", "pop", "--k", "2", "--executor", "ray", "--state", str(st), "--json"])
    assert res.exit_code == 5, res.output
    err = json.loads(res.stdout)["error"]
    assert err["kind"] == "worker_died" and err["part"] == 1 and "executor ray" in err["message"]
    assert snapshot(st) == before
