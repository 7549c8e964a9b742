"""A kept round cut off the current branch by a damaged or missing round above it is not called "pruned"
(helper-167: ``rollback --to 0`` said "round 0 was pruned (... init --keep)" with gen-000000 complete on disk and
round 1's state.arrow truncated)."""

from __future__ import annotations

import shutil

import pytest

from solver import rounds
from solver.model.errors import UsageError
from tests.helpers import snapshot, te_stream_state


@pytest.fixture
def three_rounds(tmp_path):
    return te_stream_state(tmp_path, 2)[0]


def test_a_damaged_round_between_is_named(three_rounds):
    arrow = three_rounds / "gen-000001" / "state.arrow"
    arrow.write_bytes(arrow.read_bytes()[:100])
    before = snapshot(three_rounds)
    with pytest.raises(UsageError) as err:
        rounds.rollback(three_rounds, to=0)
    assert snapshot(three_rounds) == before
    msg = str(err.value)
    assert "pruned" not in msg and "round 0's generation is complete" in msg and "round 1 is damaged" in msg, msg


def test_a_missing_round_between_is_named(three_rounds):
    shutil.rmtree(three_rounds / "gen-000001")
    with pytest.raises(UsageError) as err:
        rounds.rollback(three_rounds, to=0)
    assert "pruned" not in str(err.value) and "round 1 is missing" in str(err.value), str(err.value)


def test_a_pruned_round_is_still_called_pruned(three_rounds):
    shutil.rmtree(three_rounds / "gen-000000")
    with pytest.raises(UsageError) as err:
        rounds.rollback(three_rounds, to=0)
    assert "was pruned" in str(err.value)
