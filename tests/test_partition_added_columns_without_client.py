"""A delta whose added columns all fall outside ``--client-regex`` (no client: global columns, as at init) steps a
partitioned state. It failed with an internal error (exit 1, IndexError in ``carry_grouping``): the added names'
dictionary of clients was empty and was indexed for the columns without one."""

from __future__ import annotations

import json

import numpy as np

from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from solver.partition.clients import GLOBAL, carry_grouping, group_clients
from tests.helpers import cli_json, client_allocation, highs_solution

REGEX = r"^(?P<client>c\d+)/"


def _add_unmatched(p) -> Delta:
    """Two columns named outside REGEX (n1/a, n1/b) in the capacity rows, with their own demand row."""
    return Delta.concat([Delta.vars(["n1/a", "n1/b"], cost=[1.5, 1.7], upper=[3.0, 3.0]),
                         Delta.cons(["n1/demand"], upper=[2.0]),
                         Delta.coefs(var=["n1/a", "n1/b", "n1/a", "n1/b"],
                                     con=["n1/demand", "n1/demand", "cap/a", "cap/b"], value=[1.0, 1.0, 1.1, 0.9])],
                        base_round=0)


def test_carry_grouping_reads_added_columns_without_a_client_as_global():
    from solver.differential import apply_delta

    p = client_allocation(n_clients=4)
    before = group_clients(p, client_regex=REGEX)
    q, info = apply_delta(p, _add_unmatched(p))
    g = carry_grouping(q, before.col_client, before.client_names, info.col_map, client_regex=REGEX)
    fresh = group_clients(q, client_regex=REGEX)
    assert (g.col_client[-2:] == GLOBAL).all()
    np.testing.assert_array_equal(g.col_client, fresh.col_client)
    assert list(g.client_names) == list(fresh.client_names)


def test_step_adding_columns_outside_the_client_regex(tmp_path):
    p = client_allocation(n_clients=4)
    write_problem(p, tmp_path / "base.parquet")
    st = tmp_path / "st"
    code, out = cli_json("init", tmp_path / "base.parquet", "--state", st, "--partitions", "2", "--executor",
                         "inline", "--client-regex", REGEX, "--json")
    assert code == 0, out
    write_delta(_add_unmatched(p), tmp_path / "d1.parquet")
    code, out = cli_json("step", tmp_path / "d1.parquet", "--state", st, "--json")
    assert code == 0, out
    report = json.loads(out)
    from solver.differential import apply_delta

    q, _ = apply_delta(p, _add_unmatched(p))
    best = highs_solution(q)[1]  # a small LP: also solved whole, so the round reaches the optimum
    assert report["status"] == "OPTIMAL", out
    assert abs(report["objective"] - best) <= 1e-3 * abs(best), (report["objective"], best)
