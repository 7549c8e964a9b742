"""A delta file rewritten between the hash a step records and the read it applies is refused (exit 3 through the
CLI, nothing applied): otherwise the new content would be stored under the old content's ``delta_sha256``, and a
later retry of the old file would be taken for a no-op of a round that never applied it (helper-125's hunt,
session 21). The step reads the file once and parses the bytes it hashed (``solver.rounds.loop._read_delta``):
reading the path again let a file replaced B, A, B store A's round under B's hash (helper-170, session 36), and a
rewrite after that read changes nothing of the round."""

from __future__ import annotations

import hashlib

import pytest

import formats.io
from formats.checkpoint import StateStore
from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from solver.model.errors import InputError
from solver.rounds import loop
from tests.helpers import run_main, small_lp


def _delta(path, cost: float) -> None:
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[cost])]), path)


def _rewriting_hash(monkeypatch, path, cost: float) -> None:
    """The step's hash of the file, after which 'another program' rewrites it with another cost."""
    real = loop.delta_hash

    def hash_then_rewrite(delta):
        h = real(delta)
        _delta(path, cost)
        return h

    monkeypatch.setattr(loop, "delta_hash", hash_then_rewrite)


def _rewriting_reader(monkeypatch, path, cost: float) -> None:
    """read_delta that parses, then has 'another program' rewrite the file with another cost."""
    real = formats.io.read_delta

    def read_then_rewrite(p, *a, **k):
        d = real(p, *a, **k)
        _delta(path, cost)
        return d

    monkeypatch.setattr(formats.io, "read_delta", read_then_rewrite)


def test_library_step_refuses_a_delta_rewritten_after_its_hash(tmp_path, monkeypatch):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    d = tmp_path / "d.parquet"
    _delta(d, 5.0)
    _rewriting_hash(monkeypatch, d, 7.0)
    with pytest.raises(InputError, match="changed while copter read it") as e:
        rounds.step(d, st)
    assert e.value.file == str(d)
    assert StateStore(st).load(with_state=False).round == 0  # nothing applied


def test_a_file_replaced_b_a_b_is_refused_not_stored_under_bs_hash(tmp_path, monkeypatch):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    d, b = tmp_path / "d.parquet", tmp_path / "b.parquet"
    _delta(d, 7.0)  # B
    _delta(b, 7.0)
    _rewriting_hash(monkeypatch, d, 5.0)  # A in place while the step reads
    _rewriting_reader(monkeypatch, d, 7.0)  # B back after the read
    with pytest.raises(InputError, match="changed while copter read it"):
        rounds.step(d, st)
    assert StateStore(st).load(with_state=False).round == 0
    monkeypatch.undo()
    rep = rounds.step(b, st)  # B itself is applied, not taken for a no-op of a round made from A
    assert rep["round"] == 1 and rep["delta_sha256"] == hashlib.sha256(b.read_bytes()).hexdigest()


def test_a_rewrite_after_the_read_changes_nothing_of_the_round(tmp_path, monkeypatch):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    d = tmp_path / "d.parquet"
    _delta(d, 5.0)
    five = d.read_bytes()
    _rewriting_reader(monkeypatch, d, 7.0)
    rep = rounds.step(d, st)
    assert rep["round"] == 1 and rep["delta_sha256"] == hashlib.sha256(five).hexdigest()  # what it applied
    monkeypatch.undo()
    assert rounds.step(d, st)["round"] == 2  # the 7.0 file is another delta


def test_cli_step_exit_3_and_state_untouched(tmp_path, monkeypatch, capsys):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    before = sorted(p.name for p in st.rglob("*"))
    d = tmp_path / "d.parquet"
    _delta(d, 5.0)
    _rewriting_hash(monkeypatch, d, 7.0)
    code, out, err = run_main(capsys, "step", d, "--state", st)
    assert code == 3, out + err
    assert "changed while copter read it" in err and "d.parquet" in err
    assert sorted(p.name for p in st.rglob("*")) == before
    monkeypatch.undo()  # the file is complete now: the step applies it
    code, out, err = run_main(capsys, "step", d, "--state", st)
    assert code == 0, out + err
    assert StateStore(st).load(with_state=False).round == 1


def test_unchanged_file_steps_as_before(tmp_path):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    d = tmp_path / "d.parquet"
    _delta(d, 5.0)
    assert rounds.step(d, st)["round"] == 1


def test_a_delta_removed_after_its_hash_is_a_changed_file_not_an_internal_error(tmp_path, monkeypatch):
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    d = tmp_path / "d.parquet"
    _delta(d, 5.0)
    real = loop.delta_hash

    def hash_then_remove(delta):
        h = real(delta)
        d.unlink()
        return h

    monkeypatch.setattr(loop, "delta_hash", hash_then_remove)
    with pytest.raises(InputError, match="changed while copter read it"):
        rounds.step(d, st)
    assert StateStore(st).load(with_state=False).round == 0
