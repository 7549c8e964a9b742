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


def test_the_default_k_beyond_a_small_models_columns_is_a_not_applicable_row(tmp_path):
    """helper-230: ``compare -b highs -b pop`` on a 2-column model (netlib's chip) was exit 2 naming a ``--k 4``
    the user never typed, and HiGHS did not run. The default K now gives a NOT_APPLICABLE POP row; a K the user
    gives is still checked (exit 2)."""
    from tests.helpers import lp

    write_problem(lp([-1.0, -2.0], [[1.0, 1.0], [1.0, 0.0]], [0.0, 0.0], [4.0, 3.0], [0.0, 0.0], [10.0, 10.0]),
                  tmp_path / "m.parquet")
    st = tmp_path / "st"
    assert cli_json("init", tmp_path / "m.parquet", "--state", st)[0] == 0
    code, out = cli_json("compare", "-b", "highs", "-b", "pop", "--state", st, "--json")
    assert code == 0, out
    rows = {r["name"]: r for r in json.loads(out)["baselines"]}
    assert rows["highs"]["status"] == "OPTIMAL" and rows["pop-4"]["status"] == "NOT_APPLICABLE", rows
    assert "default --k" in rows["pop-4"]["message"] and "2 columns" in rows["pop-4"]["message"]
    for given in (["-b", "pop", "--k", "4"], ["-b", "pop-4"]):
        code, out = cli_json("compare", "-b", "highs", *given, "--state", st, "--json")
        msg = json.loads(out)["error"]["message"]
        assert code == 2 and "more than the 2 columns" in msg, out
        assert msg.startswith("--k 4" if "--k" in given else "--baseline pop-4"), msg  # what the user typed
