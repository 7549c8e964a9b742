"""A reader (``show``, ``export``, ``compare``, ``step``'s load) whose current round is pruned while it reads it.

A user hunt: ``copter show --solution`` or ``copter export`` beside a cron ``copter step`` on a state made with
``--keep 1`` (or a batch catching up): the reader read CURRENT (round N), the step stored round N+1, moved
CURRENT and pruned round N, and the reader then said ``generation gen-0000NN is damaged: No such file`` (exit 3)
or warned ``CURRENT names round N, whose generation is missing; using the newest complete generation``: a false
alarm about a healthy state. A reader now reads CURRENT again when it moved on meanwhile.

The writer is simulated inside the reader's own reads (deterministic): the first read of round 1 moves
CURRENT to round 2 and removes round 1, as a step with ``--keep 1`` does.
"""

from __future__ import annotations

import shutil

import pytest

from formats import checkpoint
from formats.checkpoint import StateStore
from formats.io import write_problem
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import small_lp


@pytest.fixture
def st(tmp_path):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", st)
    rounds.step(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), st)
    rounds.step(Delta.concat([Delta.vars(["x3"], cost=[0.5])], base_round=1), st)
    (st / "CURRENT").write_text("1\n")  # the reader sees round 1 current; round 2 is the writer's next round
    return st


def _writer_moves_on(st):
    (st / "CURRENT").write_text("2\n")
    shutil.rmtree(st / "gen-000001")


def test_current_moved_on_is_not_called_damage(st, monkeypatch):
    store = StateStore(st)
    real = StateStore.damage
    fired = []

    def damage(self, round_, verify=False):
        if round_ == 1 and not fired:
            fired.append(1)
            _writer_moves_on(st)
        return real(self, round_, verify)

    monkeypatch.setattr(StateStore, "damage", damage)
    assert store.current() == (2, None)


def test_load_of_a_round_pruned_meanwhile_reads_the_new_current(st, monkeypatch):
    store = StateStore(st)
    real = checkpoint.json.loads
    fired = []

    def loads(text, *a, **k):
        out = real(text, *a, **k)
        if isinstance(out, dict) and "arrays" in out and not fired and (st / "gen-000001").exists():
            fired.append(1)
            _writer_moves_on(st)
        return out

    monkeypatch.setattr(checkpoint.json, "loads", loads)
    gen = store.load()
    assert fired and gen.round == 2 and gen.warning is None


def test_show_solution_of_a_round_pruned_meanwhile_reads_the_new_current(st, monkeypatch):
    import pyarrow.parquet as pq

    real = pq.ParquetFile.__init__
    fired = []

    def init(self, source, *a, **k):
        if not fired and "gen-000001" in str(source):
            fired.append(1)
            _writer_moves_on(st)
        return real(self, source, *a, **k)

    monkeypatch.setattr(pq.ParquetFile, "__init__", init)
    out = rounds.show_solution(st, changes=True)
    assert fired and out["round"] == 2 and "warnings" not in out
