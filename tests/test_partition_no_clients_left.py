"""A partitioned step whose delta drops every client solves what is left of the model whole, every part EMPTY
(README: parts left without a client are EMPTY, not solved), and later deltas' clients fill the parts again.
It was exit 2 telling the user to use ``--client-regex``, an option of ``init`` (the hunter's pd_dropall on the
Sia demo at K = 2); the "no clients" usage error belongs to round 0 only."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse as sp

from formats.io import write_delta, write_problem
from solver import rounds
from solver.api import solve_problem
from solver.differential import apply_delta
from solver.model.delta import Delta
from solver.model.problem import Problem
from solver.model.settings import Settings
from solver.partition import round as pround
from solver.workloads import make_scenario
from tests.helpers import run_main

CLIENTS = ("c0", "c1", "c2")


def _with_global() -> Problem:
    """Three clients c{i} (columns c{i}/a, c{i}/b; a demand row each) sharing the capacity row ``cap``, and a
    global column ``alpha`` with a global row ``lim`` (alpha <= 2; its own bound 4); maximise. Without the
    clients: max 3 alpha = 6."""
    cols = [f"{c}/{r}" for c in CLIENTS for r in ("a", "b")] + ["alpha"]
    rows = [f"{c}/demand" for c in CLIENTS] + ["cap", "lim"]
    dense = np.zeros((5, 7))
    for i in range(3):
        dense[i, 2 * i:2 * i + 2] = 1.0
    dense[3, :6] = 1.0
    dense[4, 6] = 1.0
    return Problem.from_arrays(cost=np.r_[np.arange(1.0, 7.0), 3.0], col_lower=np.zeros(7),
                               col_upper=np.r_[np.full(6, 3.0), 4.0], row_lower=np.full(5, -np.inf),
                               row_upper=np.array([2.0, 2.0, 2.0, 5.0, 2.0]), matrix=sp.csc_array(dense),
                               col_names=cols, row_names=rows, sense=-1)


def _drop_all() -> Delta:
    return Delta.concat([Delta.drop_cons([f"{c}/demand" for c in CLIENTS]),
                         Delta.drop_vars([f"{c}/{r}" for c in CLIENTS for r in ("a", "b")])])


def _add_clients(names) -> Delta:
    """New clients, each one column ``<name>/a`` (cost 1, <= 1) on ``cap`` and its own demand row."""
    kind, var, con, value, upper = [], [], [], [], []
    for c in names:
        kind += ["con", "var", "coef", "coef"]
        var += [None, f"{c}/a", f"{c}/a", f"{c}/a"]
        con += [f"{c}/demand", None, f"{c}/demand", "cap"]
        value += [None, 1.0, 1.0, 1.0]
        upper += [1.0, 1.0, None, None]
    return Delta.from_columns(kind, var=var, con=con, value=value, upper=upper)


def test_dropping_every_client_solves_the_global_rest_whole_and_new_clients_fill_the_parts(tmp_path):
    state = tmp_path / "st"
    # the parts' own round (no small-LP whole solve, which would add its own fallback section)
    rounds.init(_with_global(), state, partition={"k": 2, "executor": "inline", "whole_below_nnz": 0})
    rep = rounds.step(_drop_all(), state)
    assert rep["status"] == "OPTIMAL", rep["message"]
    parts = rep["partitions"]["parts"]
    assert [p["status"] for p in parts] == ["EMPTY", "EMPTY"] and rep["partitions"]["clients_dropped"] == 3
    assert rep["partitions"]["fallback"]["reason"] == "no_clients"
    assert rep["objective"] == pytest.approx(6.0)  # alpha = 2 at cost 3: the global column was solved
    assert "EMPTY" in rep["message"]
    rep = rounds.step(_add_clients(["n0", "n1", "n2"]), state)
    assert rep["status"] == "OPTIMAL", rep["message"]
    parts = rep["partitions"]["parts"]
    assert rep["partitions"]["clients_added"] == 3 and "fallback" not in rep["partitions"]
    assert sorted(p["clients"] for p in parts) == [1, 2] and all(p["status"] != "EMPTY" for p in parts)
    assert rep["objective"] == pytest.approx(3.0 + 6.0)  # three clients at 1 each, alpha still 2


def test_rounds_without_any_client_go_on_until_one_comes_back(tmp_path):
    """After a delta dropped every client, a delta that adds none (a cost of the global column; an empty one) is
    another round of the global rest: it was an IndexError (exit 1) in the carried grouping, whose renumbering of
    no clients was indexed all the same, and the state stayed stuck until a delta added a client (helper-181)."""
    state = tmp_path / "st"
    rounds.init(_with_global(), state, partition={"k": 2, "executor": "inline", "whole_below_nnz": 0})
    rounds.step(_drop_all(), state)
    rep = rounds.step(Delta.from_columns(["var"], var=["alpha"], value=[5.0]), state)
    assert rep["status"] == "OPTIMAL", rep["message"]
    assert rep["objective"] == pytest.approx(10.0)  # alpha = 2 at cost 5
    assert rep["partitions"]["fallback"]["reason"] == "no_clients"
    rep = rounds.step(_add_clients(["n0"]), state)
    assert rep["status"] == "OPTIMAL", rep["message"]
    assert rep["partitions"]["clients_added"] == 1


def test_a_cold_start_without_clients_is_no_usage_error():
    """A step whose state has no partition data (``prev`` None, ``info`` given) and no clients left."""
    base = _with_global()
    problem, info = apply_delta(base, _drop_all())
    out = pround.solve_round(problem, Settings(), pround.PartitionConfig(k=2, executor="inline"), None, info)
    assert out.result.status.name == "OPTIMAL" and out.report["fallback"]["reason"] == "no_clients"
    assert out.result.objective == pytest.approx(solve_problem(problem, Settings(), None).objective)


def test_cli_step_dropping_every_job_of_the_demo_exits_0(tmp_path, capsys):
    """The hunter's reproduction: ``copter init <Sia demo>.parquet --partitions 2``, then a delta dropping all
    twelve jobs."""
    sc_base = make_scenario("sia", 32, seed=0).base()
    base = tmp_path / "base.parquet"
    write_problem(sc_base, base)
    state = tmp_path / "st"
    code, _, err = run_main(capsys, "init", base, "--partitions", "2", "--executor", "inline", "--state", state)
    assert code == 0, err
    jobs = sorted({n.split("/")[0] for n in sc_base.col_names})
    delta = tmp_path / "dropall.parquet"
    write_delta(Delta.concat([Delta.drop_cons([f"{j}/one" for j in jobs]),
                              Delta.drop_vars([n for n in sc_base.col_names if n.split("/")[0] in jobs])]), delta)
    code, out, err = run_main(capsys, "step", delta, "--state", state, "--json")
    assert code == 0, err
    rep = json.loads(out)
    assert rep["status"] == "OPTIMAL" and rep["n_cols"] == 0
    assert [p["status"] for p in rep["partitions"]["parts"]] == ["EMPTY", "EMPTY"]
