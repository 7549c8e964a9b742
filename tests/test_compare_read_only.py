"""``copter compare`` on a state it cannot write (user trial 18): a read-only file system or folder refuses the
writer lock's file (EROFS / EACCES: ``cannot lock``, exit 7) and compare compared nothing, while with the lock
held by another writer it runs and warns. Comparing reads only: it runs, leaves the round log and the state as
they were, and warns that its rows were not logged (and, for ``highs-warm``, that the basis was not kept).
The tests run as root, where chmod does not refuse, so the file system's refusal is raised where it happens."""

from __future__ import annotations

import errno
import json

import filelock
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import write_problem
from formats.parquet import write_delta
from solver.model.delta import Delta
from solver.rounds import basis_store
from tests.helpers import four_client_allocation

runner = CliRunner()


def _read_only(*_a, **_k):
    raise OSError(errno.EROFS, "Read-only file system")


def _files(root):
    return {p.relative_to(root): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def stepped(tmp_path):
    write_problem(four_client_allocation(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    assert runner.invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", str(st)]).exit_code == 0
    write_delta(Delta.concat([Delta.vars(["c0/a"], cost=[2.0])], base_round=0), tmp_path / "d1.parquet")
    assert runner.invoke(app, ["step", str(tmp_path / "d1.parquet"), "--state", str(st)]).exit_code == 0
    return st


def test_compare_on_a_read_only_state_runs_and_warns(stepped, monkeypatch):
    before = _files(stepped)
    monkeypatch.setattr(filelock.FileLock, "acquire", _read_only)
    monkeypatch.setattr(basis_store, "save_basis", _read_only)
    res = runner.invoke(app, ["compare", "-b", "highs", "-b", "highs-warm", "--state", str(stepped), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert [b["status"] for b in out["baselines"]] == ["OPTIMAL", "OPTIMAL"]
    warnings = " ".join(out["warnings"])
    assert "compare results not added to the round log" in warnings and "Read-only file system" in warnings
    assert "highs-warm's basis of round 1 not kept" in warnings
    assert _files(stepped) == before  # nothing written
    table = runner.invoke(app, ["compare", "-b", "highs", "--state", str(stepped)])
    assert table.exit_code == 0 and "not added to the round log" in table.output
