"""``init`` refuses a folder that holds entries of its own (exit 2, nothing written): a state folder is copter's,
and outputs inside one are refused, so ``init --state .`` in the folder of the deltas left ``export -o`` and
``diff -o`` there refused for good (user trial 38). Hidden entries, ``lost+found`` and copter's own leftovers
(a failed init's ``failed/`` and ``.lock``) do not count."""

from __future__ import annotations

import os

from formats.io import write_delta, write_problem
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp, snapshot


def test_a_folder_with_the_users_files_is_refused_and_left_as_it_was(capsys, tmp_path):
    write_problem(small_lp(), tmp_path / "base.parquet")
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[2.0])], base_round=0), tmp_path / "delta_0001.parquet")
    (tmp_path / "inner").mkdir()
    before = snapshot(tmp_path)
    code, _, err = run_main(capsys, "init", tmp_path / "base.parquet", "--state", tmp_path)
    assert code == 2 and "holds entries that are not a copter state's" in err
    assert "base.parquet, delta_0001.parquet, inner" in err
    assert snapshot(tmp_path) == before and sorted(os.listdir(tmp_path)) == ["base.parquet", "delta_0001.parquet",
                                                                              "inner"]


def test_hidden_entries_lost_and_found_and_a_failed_inits_leftovers_are_accepted(capsys, tmp_path):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    (st / "lost+found").mkdir(parents=True)
    (st / ".gitkeep").write_text("")
    code, _, _ = run_main(capsys, "init", tmp_path / "base.parquet", "--state", st, "--iteration-limit", "1")
    assert code == 5 and (st / "failed").is_dir()  # a failed round 0: its record stays, nothing initialised
    code, _, err = run_main(capsys, "init", tmp_path / "base.parquet", "--state", st)
    assert code == 0, err


def test_a_users_config_json_or_log_folder_is_theirs_not_copters(capsys, tmp_path):
    """Names copter also uses count as copter's only by what they hold (review 38: a user's ``config.json`` was
    overwritten by init, and a user's ``log/`` got copter's round log beside their ``app.log``)."""
    write_problem(small_lp(), tmp_path / "base.parquet")
    for name, make in (("config.json", lambda p: p.write_text('{"my": "settings"}')),
                       ("log", lambda p: (p.mkdir(), (p / "app.log").write_text("hello\n"))),
                       ("log", lambda p: ((p / "rounds").mkdir(parents=True), (p / "rounds" / "app.log").write_text(""))),
                       ("failed", lambda p: (p.mkdir(), (p / "round-trip.csv").write_text("a,b\n")))):
        st = tmp_path / f"st-{len(list(tmp_path.iterdir()))}"
        st.mkdir()
        make(st / name)
        before = snapshot(st)
        code, _, err = run_main(capsys, "init", tmp_path / "base.parquet", "--state", st)
        assert code == 2 and f"({name})" in err, err
        assert snapshot(st) == before


def test_a_stray_generation_folder_does_not_let_the_users_files_through(capsys, tmp_path):
    """Any ``gen-*`` entry skipped the check (helper-179): a state was made beside the user's files."""
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    (st / "gen-000003").mkdir(parents=True)
    (st / "notes.txt").write_text("mine")
    code, _, err = run_main(capsys, "init", tmp_path / "base.parquet", "--state", st)
    assert code == 2 and "(notes.txt)" in err and (st / "gen-000003").is_dir()
