"""Deltas that add variables without a client (global: every part holds them all) took a partitioned state past
``init``'s warning line (more than half the variables global) without a word: ``init`` checks only the base
(helper-214, session 54). The round that crosses the line now says so, once; the rounds after it do not repeat it,
and a round below the line says nothing."""

from __future__ import annotations

import json

import numpy as np

from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from solver.partition.clients import GLOBAL, global_growth_warning
from tests.helpers import cli_json, client_allocation


def _globals(names: list[str], base_round: int) -> Delta:
    """Columns named without '<client>/' in the capacity row cap/a (global columns)."""
    return Delta.concat([Delta.vars(names, cost=[1.0] * len(names), upper=[1.0] * len(names)),
                         Delta.coefs(var=names, con=["cap/a"] * len(names), value=[1.0] * len(names))],
                        base_round=base_round)


def _warned(report: dict) -> list[str]:
    return [w for w in report.get("warnings", []) if "now have no client" in w]


def test_the_round_that_makes_most_variables_global_warns_once(tmp_path):
    p = client_allocation(n_clients=4)  # 8 variables, all with a client
    write_problem(p, tmp_path / "base.parquet")
    st = tmp_path / "st"
    code, out = cli_json("init", tmp_path / "base.parquet", "--state", st, "--partitions", "2", "--executor",
                         "inline", "--json")
    assert code == 0, out
    reports = []
    batches = (["g1", "g2", "g3"], [f"g{i}" for i in range(4, 10)], ["g10"])  # 3 of 11, 9 of 17, 10 of 18 global
    for r, names in enumerate(batches):
        write_delta(_globals(names, r), tmp_path / f"d{r}.parquet")
        code, out = cli_json("step", tmp_path / f"d{r}.parquet", "--state", st, "--json")
        assert code == 0, out
        reports.append(json.loads(out))
    assert [len(_warned(rep)) for rep in reports] == [0, 1, 0], [rep.get("warnings") for rep in reports]
    assert _warned(reports[1])[0].startswith("9 of 17 variables (53%) now have no client (the previous round: 3 of "
                                             "11)")


def test_the_line_is_more_than_half():
    ids = np.array([0, 1, 2, GLOBAL, GLOBAL])
    assert global_growth_warning(ids, np.array([0, 1, GLOBAL, GLOBAL])) is None  # exactly half
    said = global_growth_warning(ids, np.array([0, GLOBAL, GLOBAL, GLOBAL, GLOBAL]))
    assert said.startswith("4 of 5 variables (80%) now have no client (the previous round: 2 of 5)")
    assert global_growth_warning(np.array([GLOBAL, GLOBAL, 0]), np.array([GLOBAL, GLOBAL, GLOBAL])) is None
    assert global_growth_warning(None, np.array([GLOBAL])) is None
    assert global_growth_warning(ids, np.array([], dtype=np.int64)) is None


def test_the_advice_fits_what_the_delta_did():
    """A delta that only dropped clients added nothing to rename: the warning said "name the added variables"
    all the same (helper-231, session 58)."""
    before = np.array([0, 0, 1, 1, 2, 2, GLOBAL, GLOBAL])
    dropped = global_growth_warning(before, np.array([2, GLOBAL, GLOBAL]))  # clients 0 and 1 dropped
    assert dropped.startswith("2 of 3 variables (67%) now have no client (the previous round: 2 of 8)"), dropped
    assert "added variables" not in dropped and "this round added none" in dropped, dropped
    added = global_growth_warning(before, np.array([0, 0, 1, 1, 2, 2, *[GLOBAL] * 7]))
    assert "name the added variables '<client>/...'" in added, added
