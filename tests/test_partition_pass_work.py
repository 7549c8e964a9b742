"""A partitioned LP round that solves its parts more than once (a share-reclaim pass after a dropped client,
``--partition-passes``) reports what every pass ran: each part's ``iterations`` summed over the passes, and the
engine of its busiest pass where the kept pass ran none (helper-189, session 48: "pdhg, 0 iterations" for parts whose
ALM ran 16-35 Newton steps in the first pass). ``solver.partition.pass_work``."""

from __future__ import annotations

import json

from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from solver.model.result import SolveResult
from solver.model.status import Status
from solver.partition.pass_work import PassWork
from tests.helpers import client_allocation, run_main


def _res(it: int, engine: str, reason: str) -> SolveResult:
    return SolveResult(status=Status.OPTIMAL, x=None, y=None, reduced_cost=None, row_activity=None, objective=0.0,
                       dual_objective=0.0, primal_residual_rel=0.0, dual_residual_rel=0.0, gap_rel=0.0,
                       iterations=it, engine=engine, engine_reason=reason)


def test_pass_work_sums_iterations_and_keeps_the_busiest_passes_engine():
    w = PassWork(3)
    w.add([_res(5, "alm", "warm ALM"), None, _res(2, "alm", "warm ALM")])
    w.add([_res(0, "pdhg", "returned unchanged, no engine runs"), None, _res(3, "pdhg", "PDHG warm")])
    out = w.apply([_res(0, "pdhg", "returned unchanged, no engine runs"), None, _res(3, "pdhg", "PDHG warm")])
    assert out[1] is None
    assert (out[0].iterations, out[0].engine) == (5, "alm")
    assert "5 iterations in an earlier pass" in out[0].engine_reason and "returned unchanged" in out[0].engine_reason
    assert (out[2].iterations, out[2].engine, out[2].engine_reason) == (5, "pdhg", "PDHG warm")  # it ran: its own


def test_one_pass_is_left_as_it_is():
    w = PassWork(1)
    r = [_res(0, "pdhg", "returned unchanged")]
    w.add(r)
    assert w.apply(r) is r


def test_a_reclaim_round_reports_the_first_passes_work(tmp_path, capsys):
    base = client_allocation(n_clients=4, seed=2)
    write_problem(base, tmp_path / "base.parquet")
    code, _, err = run_main(capsys, "init", tmp_path / "base.parquet", "--partitions", "2", "--whole-below-nnz", "0",
                            "--executor", "inline", "--state", tmp_path / "st")
    assert code == 0, err
    write_delta(Delta.concat([Delta.drop_cons(["c0/demand"]), Delta.drop_vars(["c0/a", "c0/b"])]), tmp_path / "d.parquet")
    code, out, err = run_main(capsys, "step", tmp_path / "d.parquet", "--json", "--state", tmp_path / "st")
    assert code == 0, err
    rep = json.loads(out)
    passes = rep["partitions"]["shares"]["passes"]
    assert len(passes) == 2 and passes[0]["reclaimed"] > 0  # the reclaim pass ran
    parts = [p for p in rep["partitions"]["parts"] if p["status"] != "EMPTY"]
    assert all(p["iterations"] > 0 and p["engine"] in ("alm", "pdhg") for p in parts), parts
    assert rep["iterations"] == max(p["iterations"] for p in parts) > 0
    busiest = max(parts, key=lambda p: p["iterations"])
    assert rep["engine"] == busiest["engine"], (rep["engine"], busiest)
    if "fallback" not in rep["partitions"] or rep["partitions"]["fallback"].get("kept") != "whole":
        assert f"part {busiest['part']} {busiest['engine']}" in rep["message"]  # "engines: part 0 alm, part 1 alm"
