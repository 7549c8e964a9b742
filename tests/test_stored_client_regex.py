"""A state initialised with ``--client-regex`` (partitioned rounds) is grouped by it everywhere: ``show --solution``
and ``compare``'s POP took the default '<client>/' prefix, so a new user's afiro state (``^X(?P<client>\\d)``) showed
one "(no client)" group and POP-2 NOT_APPLICABLE ("carry no '<client>/' prefix")."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from solver import rounds

DATA = Path(os.environ.get("COPTER_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
AFIRO = DATA / "mps" / "afiro.mps"
REGEX = r"^X(?P<client>\d)"

pytestmark = pytest.mark.skipif(not AFIRO.exists() and os.environ.get("COPTER_REQUIRE_DATA") != "1",
                                reason=f"{AFIRO} absent (set COPTER_DATA)")


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    st = tmp_path_factory.mktemp("afiro") / "st"
    rounds.init(AFIRO, st, partition={"k": 2, "executor": "inline", "client_regex": REGEX})
    return st


def test_show_solution_groups_by_the_stored_client_regex(state):
    out = rounds.show_solution(state)
    assert out["client_regex"] == REGEX
    clients = {c["client"] for c in out["clients"]}
    assert len(clients - {None}) >= 2, clients
    given = rounds.show_solution(state, client_regex="^(?P<client>X)")  # an explicit one still wins
    assert given["client_regex"] == "^(?P<client>X)" and {c["client"] for c in given["clients"]} - {None} == {"X"}


def test_compares_pop_groups_by_the_stored_client_regex(state):
    out = rounds.compare(state, ["pop"], ks=[2], pop_workers=0)
    pop = next(r for r in out["baselines"] if r["name"] == "pop-2")
    assert pop["status"] != "NOT_APPLICABLE", pop  # grouped and solved (afiro's parts: infeasible under POP's shares)
    assert "prefix" not in pop["message"], pop["message"]
