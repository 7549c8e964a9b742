"""The share update cadence when init is given none (``solver.partition.config.default_update_every``): fixed
shares for an LP above ``whole_below_nnz`` (on TE Kdl the price step moved the shares away from the probe's
split), after every round for a MILP or an LP solved whole each round; stored in config.json as the number."""

from __future__ import annotations

import json

import pytest

from solver import rounds
from solver.partition.round import PartitionConfig, default_update_every
from solver.workloads import make_scenario


def _stored(state) -> dict:
    return json.loads((state / "config.json").read_text())["partition"]


@pytest.mark.parametrize("domain,scale,whole_below,expected", [
    ("te", 16, 1, 0),         # an LP above the limit: the probe's shares stay
    ("te", 16, 200_000, 1),   # an LP solved whole each round: shares from the whole optimum
    ("sia", 64, 1, 1),        # a MILP: price updates
])
def test_init_stores_the_default_cadence_for_the_models_kind(tmp_path, domain, scale, whole_below, expected):
    sc = make_scenario(domain, scale, seed=3)
    base = sc.base()
    assert default_update_every(base, whole_below) == expected
    state = tmp_path / "st"
    rounds.init(base, state, partition={"k": 2, "executor": "inline", "whole_below_nnz": whole_below})
    assert _stored(state)["update_every"] == expected


def test_a_given_cadence_is_stored_as_given(tmp_path):
    sc = make_scenario("te", 16, seed=3)
    state = tmp_path / "st"
    rounds.init(sc.base(), state, partition={"k": 2, "executor": "inline", "whole_below_nnz": 1, "update_every": 3})
    assert _stored(state)["update_every"] == 3


def test_large_lp_rounds_keep_the_probes_shares_by_default(tmp_path):
    """Through a step: with no cadence given an LP above the limit moves no share (moved_next 0)."""
    sc = make_scenario("te", 16, seed=3)
    state = tmp_path / "st"
    rounds.init(sc.base(), state, partition={"k": 2, "executor": "inline", "whole_below_nnz": 1})
    rep = rounds.step(sc.next_delta(1), state)
    assert rep["partitions"]["shares"]["moved_next"] == 0.0


def test_the_library_default_resolves_per_round():
    assert PartitionConfig(k=2).update_every is None
