"""An empty client is no client: a --client-regex whose group can match the empty string
(``^(?P<client>x)?``) put every name it did not really match into one client named "" instead of the
documented no-client group (None, "(no client)"); so did a name starting with '/' under the default rule, in
show --solution and in POP / partitioned rounds' grouping (fresh-install hunter, session 13)."""

from __future__ import annotations

import pyarrow as pa

from solver.model.problem import Problem
from solver.partition.clients import GLOBAL, group_clients
from solver.rounds import allocation as alloc


def test_an_optional_client_group_that_matches_nothing_means_no_client():
    t = pa.table({"name": ["xa/1", "b/2", "c"], "value": [1.0, 2.0, 4.0]})
    got = alloc.allocation(t, client_regex="^(?P<client>x)?")
    assert [(c["client"], c["nonzero"], c["sum"]) for c in got["clients"]] == [(None, 2, 6.0), ("x", 1, 1.0)]


def test_a_name_starting_with_a_slash_has_no_client_by_default():
    t = pa.table({"name": ["/a", "/b", "k/c"], "value": [1.0, 2.0, 4.0]})
    got = alloc.allocation(t)
    assert [(c["client"], c["nonzero"]) for c in got["clients"]] == [("k", 1), (None, 2)]


def test_pop_grouping_makes_empty_clients_global():
    p = Problem.from_arrays(cost=[1.0, 1.0, 1.0], col_lower=[0] * 3, col_upper=[1] * 3, row_lower=[0, 0],
                            row_upper=[1, 1], matrix=[[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]],
                            col_names=["xa", "yb", "xc"], row_names=["r1", "r2"])
    g = group_clients(p, client_regex="^(?P<client>x)?")
    assert list(g.col_client == GLOBAL) == [False, True, False]
