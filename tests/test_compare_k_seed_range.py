"""``copter compare``'s POP options out of range are usage errors (exit 2 naming the option), checked before
any baseline runs: ``--seed -1`` was an internal error (numpy's generator refused it deep inside POP, exit 1),
``--k 1e20`` an OverflowError (exit 1), and a ``--k`` far above the model's columns only allocated per-part
arrays (``--k 100000000`` on a 32-column model: 18 GB and the process killed)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import write_problem
from tests.helpers import small_lp


def cli(*args):
    res = CliRunner().invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cmpk")
    write_problem(small_lp(), tmp / "base.parquet")
    st = tmp / "st"
    code, out = cli("init", tmp / "base.parquet", "--state", st, "--json")
    assert code == 0, out
    return st, json.loads(out)["n_cols"]


@pytest.mark.parametrize("extra,option", [
    (("--seed", "-1"), "--seed"),
    (("--k", str(10**20)), "--k"),
    (("--k", "N+1"), "--k"),
    (("--baseline", "pop-N+1"), "--baseline pop-"),  # what the user typed, not a --k they did not
])
def test_out_of_range_pop_options_are_exit_2_naming_the_option(state, extra, option):
    st, n_cols = state
    extra = tuple(a.replace("N+1", str(n_cols + 1)) for a in extra)
    code, out = cli("compare", "--state", st, "--baseline", "pop", "--pop-workers", "0",
                    "--pop-client-regex", "(?P<client>.)", *extra, "--json")
    assert code == 2, (extra, out)
    error = json.loads(out)["error"]
    assert error["kind"] == "usage" and error["message"].startswith(option), error


def test_k_up_to_the_column_count_still_runs(state):
    st, n_cols = state
    code, out = cli("compare", "--state", st, "--baseline", "pop", "--pop-workers", "0",
                    "--pop-client-regex", "(?P<client>.*)", "--k", str(n_cols), "--json")
    assert code == 0, out
    assert [row["name"] for row in json.loads(out)["baselines"]] == [f"pop-{n_cols}"]
