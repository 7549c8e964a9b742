"""`copter diff` of a dump whose new names come before old ones (a dump sorted by name, a new client "aaa").

To give NEW's order exactly, diff recreates (drops and re-adds) every survivor after the first new name, and a
recreated entity is a new one: the next round started cold (388 PDHG iterations instead of 6 on 40 jobs x 6
servers), changes.parquet listed every variable as removed and added (changed_variables 486 instead of 36), all
without a word. diff now says how many survivors it recreates, and ``--by-name`` keeps every survivor (its place
and its warm start; new names appended in NEW's order), the result equal to NEW up to the order of entities."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import read_problem, write_delta
from solver import rounds
from solver.differential.apply import apply_delta
from solver.differential.diff import diff
from solver.model.delta import Delta


def _model(jobs: list[str], n_srv: int = 3) -> Delta:
    """Each job's demand row and columns job/s<j> in it and in the shared capacity rows cap/s<j> (names in
    ``jobs``' order), every cost from the job's and server's number."""
    cols = [f"{c}/s{j}" for c in jobs for j in range(n_srv)]
    cost = [-1.0 - (sum(map(ord, c)) % 7) - 0.1 * j for c in jobs for j in range(n_srv)]
    d = Delta.concat([Delta.cons([f"cap/s{j}" for j in range(n_srv)], upper=[12.0] * n_srv),
                      Delta.cons([f"{c}/demand" for c in jobs], lower=[1.0] * len(jobs), upper=[3.0] * len(jobs)),
                      Delta.vars(cols, cost=cost, upper=[2.0] * len(cols)),
                      Delta.coefs(var=cols * 2, con=[f"cap/s{j}" for _ in jobs for j in range(n_srv)]
                                  + [f"{c}/demand" for c in jobs for _ in range(n_srv)], value=[1.0] * 2 * len(cols))])
    d.format = "problem"
    return d


def _canonical(p) -> tuple:
    """The problem by name: (columns, rows, coefficients) as sorted tuples, order-free."""
    m = p.matrix().tocoo()
    cols = sorted(zip(p.col_names.tolist(), p.cost.tolist(), p.col_lower.tolist(), p.col_upper.tolist(),
                      p.integrality.tolist(), strict=True))
    rows = sorted(zip(p.row_names.tolist(), p.row_lower.tolist(), p.row_upper.tolist(), strict=True))
    coefs = sorted(zip(p.row_names[m.row].tolist(), p.col_names[m.col].tolist(), m.data.tolist(), strict=True))
    return cols, rows, coefs, p.sense, p.offset


@pytest.fixture
def dumps(tmp_path):
    jobs = [f"job{i}" for i in range(8)]
    write_delta(_model(jobs), tmp_path / "old.parquet")
    write_delta(_model(["aaa", *jobs[:3], *jobs[4:]]), tmp_path / "new.parquet")  # aaa first, job3 gone
    return tmp_path


def test_by_name_keeps_every_survivor_and_gives_new_up_to_order(dumps):
    old, new = read_problem(dumps / "old.parquet"), read_problem(dumps / "new.parquet")
    exact = diff(old, new)
    assert exact.table.column("kind").to_pylist().count("drop_var") == 24  # every old column recreated
    d = diff(old, new, by_name=True)
    kinds = d.table.column("kind").to_pylist()
    assert kinds.count("drop_var") == 3 and kinds.count("drop_con") == 1  # job3's only
    got, _ = apply_delta(old, d)
    assert _canonical(got) == _canonical(new)
    assert got.col_names.tolist()[:21] == [n for n in old.col_names.tolist() if not n.startswith("job3/")]


def test_the_cli_says_what_it_recreates_and_by_name_keeps_the_warm_start(dumps):
    run = CliRunner().invoke
    res = run(app, ["diff", str(dumps / "old.parquet"), str(dumps / "new.parquet"), "-o", str(dumps / "d.parquet"),
                    "--base-round", "0", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["recreated"] == {"var": 21, "con": 7} and "--by-name" in out["warnings"][0]
    res = run(app, ["diff", str(dumps / "old.parquet"), str(dumps / "new.parquet"), "-o",
                    str(dumps / "d2.parquet"), "--base-round", "0", "--by-name", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["recreated"] == {"var": 0, "con": 0} and "warnings" not in out
    state = dumps / "st"
    rounds.init(dumps / "old.parquet", state)
    rep = rounds.step(dumps / "d2.parquet", state)
    assert rep["warm_started"] and rep["status"] == "OPTIMAL"
    assert np.isclose(rep["objective"], rounds.init(dumps / "new.parquet", dumps / "st2")["objective"], rtol=1e-3)


def test_the_warning_names_what_breaks_olds_order_a_new_name_or_a_reorder(tmp_path):
    # a dump that only reorders (no new name) recreates too; the warning said "a new name comes before them"
    jobs = [f"job{i}" for i in range(4)]
    write_delta(_model(jobs), tmp_path / "old.parquet")
    write_delta(_model([jobs[1], jobs[0], *jobs[2:]]), tmp_path / "swapped.parquet")
    write_delta(_model(["aaa", *jobs]), tmp_path / "added.parquet")
    run = CliRunner().invoke
    res = run(app, ["diff", str(tmp_path / "old.parquet"), str(tmp_path / "swapped.parquet"), "-o",
                    str(tmp_path / "d.parquet"), "--base-round", "0", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["recreated"]["var"] > 0
    assert "comes before them" not in out["warnings"][0]  # no new name comes before them
    assert "'job0/s0' comes after 'job1/s2', which follows it in OLD" in out["warnings"][0]
    res = run(app, ["diff", str(tmp_path / "old.parquet"), str(tmp_path / "added.parquet"), "-o",
                    str(tmp_path / "d2.parquet"), "--base-round", "0", "--json"])
    assert res.exit_code == 0, res.output
    assert "NEW's new variable 'aaa/s0' comes before them" in json.loads(res.stdout)["warnings"][0]
