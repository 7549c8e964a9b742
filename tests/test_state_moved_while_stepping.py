"""A state folder moved (``mv``) or removed (``rm -rf``) while ``copter step`` solves (helper-240, session 60): the
save ended "internal error: FileNotFoundError" (exit 1) and made an empty folder at the old path again. Now exit 7,
reason ``state_moved``, naming the path; nothing is created at the old path; the moved folder is the state it was."""

from __future__ import annotations

import json
import os
import shutil

import pytest

from solver.rounds import commit
from tests.helpers import run_main, small_lp_state, snapshot


def _move_before(monkeypatch, st, to, when):
    """Move (or remove: ``to`` None) the state folder before ``save_round`` starts (``when`` "start") or while it
    writes the generation (``when`` "writing": after the problem's arrays, before the state)."""
    from formats.generation import GenerationWriter

    def away():
        if to is None:
            shutil.rmtree(st)
        else:
            os.rename(st, to)

    if when == "start":
        real = commit.save_round

        def save_round(*a, **k):
            away()
            return real(*a, **k)

        monkeypatch.setattr(commit, "save_round", save_round)
        import solver.rounds.loop as loop

        if getattr(loop, "save_round", None) is real:
            monkeypatch.setattr(loop, "save_round", save_round)
    else:
        real_state = GenerationWriter.save_state

        def save_state(self, *a, **k):
            away()
            return real_state(self, *a, **k)

        monkeypatch.setattr(GenerationWriter, "save_state", save_state)


@pytest.mark.parametrize("when", ["start", "writing"])
@pytest.mark.parametrize("how", ["mv", "rm"])
def test_a_state_moved_or_removed_during_a_step_is_exit_7_and_nothing_comes_back(tmp_path, capsys, monkeypatch,
                                                                                  when, how):
    st, delta = small_lp_state(tmp_path)
    to = tmp_path / "moved" if how == "mv" else None
    before = snapshot(st)
    _move_before(monkeypatch, st, to, when)
    code, out, err = run_main(capsys, "step", delta, "--state", st, "--json")
    assert code == 7, err
    got = json.loads(out)["error"]
    assert got["reason"] == "state_moved" and "moved or removed while this command ran" in got["message"]
    assert not st.exists()  # no empty folder at the old path
    if to is not None:
        after = snapshot(to)
        assert {k: v for k, v in after.items() if not k.startswith(".tmp-")} == before
        assert (to / "CURRENT").read_text().strip() == "0"
