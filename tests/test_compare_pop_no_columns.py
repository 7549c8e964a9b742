"""``copter compare --baseline pop`` on a round whose model has no column (a partitioned state after a delta that
dropped every client, README "Partitioned rounds") gives NOT_APPLICABLE POP rows saying the model has no column,
and the other baselines run. It was exit 2 saying ``--k 4 is more than the 0 columns of round 2's model; choose
at most 1`` (the default --k refused, and the advice contradicting the count), and ``--k 1`` said that the
variable names carry no '<client>/' prefix, of a model without variables."""

from __future__ import annotations

import json

import pytest

from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from tests.helpers import cli_json, four_client_allocation


@pytest.fixture
def empty_round(tmp_path):
    """A K = 2 state (inline) whose round 1 dropped every client: 2 capacity rows, 0 columns."""
    base = tmp_path / "base.parquet"
    p = four_client_allocation()
    write_problem(p, base)
    st = tmp_path / "st"
    code, out = cli_json("init", base, "--state", st, "--partitions", "2", "--executor", "inline", "--json")
    assert code == 0, out
    delta = tmp_path / "d1.parquet"
    write_delta(Delta.concat([Delta.drop_vars(list(p.col_names)), Delta.drop_cons([f"c{i}/demand" for i in range(4)])],
                             base_round=0), delta)
    code, out = cli_json("step", delta, "--state", st, "--json")
    assert code == 0 and json.loads(out)["n_cols"] == 0, out
    return st


@pytest.mark.parametrize("ks", [[], ["--k", "1"], ["--k", "2", "--k", "3"]])
def test_pop_rows_are_not_applicable_and_highs_runs(empty_round, ks):
    code, out = cli_json("compare", "-b", "highs", "-b", "pop", *ks, "--state", empty_round, "--json")
    assert code == 0, out
    rows = {r["name"]: r for r in json.loads(out)["baselines"]}
    assert rows["highs"]["status"] == "OPTIMAL"
    pops = [r for name, r in rows.items() if name.startswith("pop-")]
    assert pops and all(r["status"] == "NOT_APPLICABLE" for r in pops), rows
    assert all("no column" in r["message"] and "prefix" not in r["message"] for r in pops), rows
