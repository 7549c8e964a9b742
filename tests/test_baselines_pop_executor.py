"""POP's parts on the executor of partitioned rounds (issue #18 item 3): ``solve_pop(executor=...)`` and
``copter compare --baseline pop --executor process|ray|inline``.

The executor changes where the parts run, not what they compute; a part worker that dies twice fails the
baseline (PartWorkerError, exit code 5) with the state untouched; ``ray`` without Ray is a missing optional extra (exit 8)
naming the extra. The Ray runs themselves are in ``tests/test_baselines_pop_ray.py``.
"""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import write_problem
from solver import rounds
from solver.baselines.pop import solve_pop
from solver.model.errors import MissingDependencyError, PartWorkerError, UsageError
from solver.model.status import Status
from solver.partition.executor import FAULT_ENV
from tests.helpers import client_allocation, snapshot

runner = CliRunner()


def test_pop_gives_the_same_result_inline_and_in_worker_processes():
    p = client_allocation()
    res = {ex: solve_pop(p, k=4, seed=7, executor=ex, workers=2) for ex in ("inline", "process")}
    for ex, r in res.items():
        assert r.status == Status.FEASIBLE and r.extra["executor"] == ex and f"executor {ex}" in r.message
        assert r.extra["pop_seconds"] == pytest.approx(r.extra["setup_seconds"] + r.extra["max_part_seconds"])
    assert res["process"].objective == pytest.approx(res["inline"].objective, rel=1e-9)
    np.testing.assert_allclose(res["process"].x, res["inline"].x, rtol=1e-9, atol=1e-12)
    assert solve_pop(p, k=4, seed=7, executor="process", workers=0).extra["executor"] == "inline"  # 0: here


def test_unknown_executor_is_a_usage_error_and_ray_without_ray_a_missing_extra(monkeypatch):
    with pytest.raises(UsageError, match="unknown executor 'threads'"):
        solve_pop(client_allocation(4), k=2, executor="threads")
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(MissingDependencyError, match=r"pip install .\.\[ray\]."):
        solve_pop(client_allocation(4), k=2, executor="ray")


def test_a_part_worker_killed_twice_fails_pop_and_the_pool_recovers(monkeypatch):
    p = client_allocation()
    monkeypatch.setenv(FAULT_ENV, "1")  # the worker solving part 1 SIGKILLs itself, on the retry too
    with pytest.raises(PartWorkerError, match="part 1 died twice") as err:
        solve_pop(p, k=2, seed=1, executor="process")
    assert err.value.part == 1
    monkeypatch.delenv(FAULT_ENV)
    assert solve_pop(p, k=2, seed=1, executor="process").status == Status.FEASIBLE  # a fresh pool


# --- copter compare --------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def base(tmp_path_factory):
    d = tmp_path_factory.mktemp("popx")
    write_problem(client_allocation(), d / "base.parquet")
    return d / "base.parquet"


def _init(base, state, *args) -> None:
    res = runner.invoke(app, ["init", str(base), "--state", str(state), *args, "--json"])
    assert res.exit_code == 0, res.output


def _compare(state, *args):
    res = runner.invoke(app, ["compare", "-b", "pop", "--k", "2", "--state", str(state), *args, "--json"])
    return res, json.loads(res.stdout) if res.stdout.strip() else None


def test_compare_runs_pop_on_the_executor_given_with_the_same_objective(base, tmp_path):
    st = tmp_path / "st"
    _init(base, st)
    rows = {}
    for ex in ("inline", "process"):
        res, out = _compare(st, "--executor", ex)
        assert res.exit_code == 0, res.output
        rows[ex] = out["baselines"][0]
        assert rows[ex]["name"] == "pop-2" and rows[ex]["executor"] == ex and rows[ex]["status"] == "FEASIBLE"
    assert rows["process"]["objective"] == pytest.approx(rows["inline"]["objective"], rel=1e-9)
    res, out = _compare(st)
    assert out["baselines"][0]["executor"] == "process"  # a monolithic state: process by default
    res, out = _compare(st, "--pop-workers", "0")
    assert out["baselines"][0]["executor"] == "inline"


def test_compare_on_a_partitioned_state_defaults_to_its_executor(base, tmp_path):
    st = tmp_path / "st"
    rounds.init(base, st, partition={"k": 2, "executor": "inline"})
    res, out = _compare(st)
    assert res.exit_code == 0, res.output
    assert out["baselines"][0]["executor"] == "inline"
    res, out = _compare(st, "--executor", "process")  # the option overrides the state's
    assert out["baselines"][0]["executor"] == "process"


def test_compare_with_a_killed_pop_worker_exits_5_and_leaves_the_state_untouched(base, tmp_path, monkeypatch):
    st = tmp_path / "st"
    _init(base, st)
    before = snapshot(st)
    monkeypatch.setenv(FAULT_ENV, "0")
    res, out = _compare(st, "-b", "highs", "--executor", "process")
    assert res.exit_code == 5, res.output
    err = out["error"]
    assert err["kind"] == "worker_died" and err["part"] == 0
    assert "baseline pop-2 failed" in err["message"] and "died twice" in err["message"]
    assert snapshot(st) == before  # no compare rows in the round log, nothing else written


@pytest.mark.parametrize("args, needle, code, kind", [
    (["--executor", "ray"], "pip install '.[ray]'", 8, "missing_dependency"),  # an optional extra: exit 8 (was 2)
    (["--executor", "threads"], "unknown executor 'threads'", 2, "usage"),
    (["--executor", "process", "--pop-workers", "0"], "contradicts --executor process", 2, "usage"),
])
def test_an_executor_that_cannot_run_is_a_usage_error_and_the_state_is_untouched(base, tmp_path, monkeypatch,
                                                                                 args, needle, code, kind):
    st = tmp_path / "st"
    _init(base, st)
    before = snapshot(st)
    monkeypatch.setitem(sys.modules, "ray", None)  # Ray not installed
    res, out = _compare(st, *args)
    assert res.exit_code == code, res.output
    assert out["error"]["kind"] == kind and needle in out["error"]["message"]
    assert snapshot(st) == before
