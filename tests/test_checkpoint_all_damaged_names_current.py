"""Every generation damaged (one file shared by every round through hard links, flipped in place), after a rollback:
the error names the round CURRENT names first, then the newest. It named only the newest round (helper-190, session
49: ``no complete generation: gen-000002 is damaged`` after ``rollback --to 0``), which read as if the rollback had
not happened."""

from __future__ import annotations

import os

from formats.checkpoint import forget_recent
from tests.helpers import run_main, snapshot, te_stream_state


def test_the_error_names_currents_round_then_the_newest(tmp_path, capsys):
    st, deltas = te_stream_state(tmp_path, 2)
    shared = st / "gen-000002" / "problem" / "cost.arrow"
    assert os.stat(shared).st_nlink == 3  # the same file in rounds 0, 1 and 2
    raw = bytearray(shared.read_bytes())
    raw[len(raw) // 2] ^= 64
    shared.write_bytes(bytes(raw))
    forget_recent()  # as a new process: the rounds this one stored are read again
    code, _, err = run_main(capsys, "rollback", "--to", "0", "--state", st)
    assert code == 0, err  # rollback checks sizes only (README): the same-size damage shows at the next read
    before = snapshot(st)
    code, _, err = run_main(capsys, "step", deltas[0], "--state", st)
    assert code == 3
    assert "no complete generation: gen-000000 is damaged (problem/cost.arrow" in err
    assert "the round CURRENT names; so is every other generation, the newest gen-000002 (problem/cost.arrow" in err
    assert snapshot(st) == before


def test_a_single_damaged_generation_is_named_once(tmp_path, capsys):
    st, deltas = te_stream_state(tmp_path, 0)
    f = st / "gen-000000" / "problem" / "cost.arrow"
    raw = bytearray(f.read_bytes())
    raw[len(raw) // 2] ^= 64
    f.write_bytes(bytes(raw))
    forget_recent()
    code, _, err = run_main(capsys, "export", "--state", st, "-o", tmp_path / "x.mps")
    assert code == 3
    assert "no complete generation: gen-000000 is damaged (problem/cost.arrow" in err
    assert err.rstrip().endswith("the round CURRENT names")
