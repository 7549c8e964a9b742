"""An output path inside a copter state directory (the command's own or any other) is refused before anything
is written: exit 2 naming the option and the state, the state byte-identical, no file made. ``copter export
--state s -o s/gen-000000/solution.parquet`` and ``copter solve ok.mps -o s/gen-000000/duals.parquet`` exited
0, and every later command said ``no complete generation: gen-000000 is damaged`` (exit 3)."""

from __future__ import annotations

import json
import os

import pytest

from formats.io import write_problem
from solver import rounds
from tests.helpers import run_main, small_lp, snapshot


@pytest.fixture
def home(tmp_path, monkeypatch):
    """tmp_path as the working directory, with states ``s`` and ``t`` and problems base/new.parquet."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COPTER_STATE", raising=False)
    rounds.init(small_lp(), tmp_path / "s")
    rounds.init(small_lp(), tmp_path / "t")
    write_problem(small_lp(), tmp_path / "base.parquet")
    write_problem(small_lp(seed=1), tmp_path / "new.parquet")
    return tmp_path


REFUSED = [
    (["export", "--state", "s", "-o", "s/gen-000000/solution.parquet"], "-o", "s"),
    (["export", "--state", "s", "-o", "s/round.mps"], "-o", "s"),
    (["export", "--state", "s", "-o", "t/gen-000000/problem.mps"], "-o", "t"),  # another state
    (["solve", "base.parquet", "-o", "s/gen-000000/duals.parquet"], "-o", "s"),
    (["convert", "base.parquet", "s/gen-000000/solution.parquet"], "DST", "s"),
    (["diff", "base.parquet", "new.parquet", "-o", "s/gen-000000/changes.parquet"], "-o", "s"),  # as typed (user trial 37)
    (["report", "--state", "s", "-o", "s/report.html"], "-o", "s"),
    (["report", "--state", "s", "-o", "page.html", "--png", "t/gen-000000"], "--png", "t"),
    (["step", "d.parquet", "--state", "s", "--out", "t/gen-000000"], "--out", "t"),  # another state's folder
    (["demo", "--dir", "s/gen-000000", "--rounds", "0"], "--dir", "s"),
]


@pytest.mark.parametrize("args,option,state", REFUSED, ids=[" ".join(a[:1] + [o]) + f" {i}"
                                                            for i, (a, o, _) in enumerate(REFUSED)])
def test_an_output_inside_a_state_is_refused_and_the_states_kept(capsys, home, args, option, state):
    from formats.io import write_delta
    from solver.model.delta import Delta

    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), home / "d.parquet")
    before = {name: snapshot(home / name) for name in ("s", "t")}
    code, out, err = run_main(capsys, *args, "--json")
    assert code == 2, (out, err)
    msg = json.loads(out)["error"]["message"]
    assert msg.startswith(f"{option} ") and f"copter state directory {os.path.realpath(home / state)}" in msg
    assert msg in err and len(err.strip().splitlines()) == 1
    assert {name: snapshot(home / name) for name in ("s", "t")} == before
    assert not (home / "page.html").exists()
    assert run_main(capsys, "show", "--state", "s", "--json")[0] == 0  # still a sound state


def test_a_symbolic_link_into_a_state_is_refused(capsys, home):
    (home / "link").symlink_to(home / "s" / "gen-000000")
    before = snapshot(home / "s")
    code, _, err = run_main(capsys, "export", "--state", "s", "-o", "link/solution.parquet")
    assert code == 2 and "-o link/solution.parquet" in err and os.path.realpath(home / "s") in err
    assert snapshot(home / "s") == before


def test_a_state_is_known_by_its_config_without_current(capsys, home):
    (home / "t" / "CURRENT").unlink()  # a damaged state: config.json still says copter-state
    code, _, err = run_main(capsys, "export", "--state", "s", "-o", "t/x.mps")
    assert code == 2 and os.path.realpath(home / "t") in err
    assert not (home / "t" / "x.mps").exists()


def test_a_folder_with_someone_elses_config_is_no_state(capsys, home):
    (home / "proj").mkdir()
    (home / "proj" / "config.json").write_text('{"format": "something-else"}')
    code, out, err = run_main(capsys, "export", "--state", "s", "-o", "proj/x.mps")
    assert code == 0, (out, err)
    assert (home / "proj" / "x.mps").exists()


def test_exports_default_file_inside_a_state_is_refused(capsys, home, monkeypatch):
    monkeypatch.chdir(home / "s")  # export's default file is round-NNNNNN.mps in the working directory
    before = snapshot(home / "s")
    code, _, err = run_main(capsys, "export", "--state", ".")
    assert code == 2 and "-o (default) round-000000.mps" in err and os.path.realpath(home / "s") in err
    assert snapshot(home / "s") == before


def test_init_refuses_a_state_inside_another_state(capsys, home):
    before = snapshot(home / "s")  # a state in gen-000000 would be deleted when that generation is pruned
    code, _, err = run_main(capsys, "init", "base.parquet", "--state", "s/gen-000000/inner")
    assert code == 2 and "--state s/gen-000000/inner" in err and os.path.realpath(home / "s") in err
    assert snapshot(home / "s") == before
    assert run_main(capsys, "init", "base.parquet", "--state", "fresh")[0] == 0  # a state of its own is fine
