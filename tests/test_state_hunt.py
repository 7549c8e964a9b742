"""State folders found by the bad-input hunt (session 10): a ``CURRENT`` that is a folder (``step`` stored
its generation and then failed replacing it: an exit-1 traceback), a damaged ``config.json`` value (blamed
on an option the user never gave), and a refused command leaving a ``.lock`` in a folder that is not a
state. Each is exit 3 naming the culprit, with every path under the folder unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formats.io import write_delta
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp, snapshot


def _tree(root: Path) -> tuple[dict, list]:
    """File bytes and every path (folders included) under ``root``."""
    return snapshot(root), sorted(str(p.relative_to(root)) for p in root.rglob("*"))


@pytest.fixture
def state(tmp_path) -> Path:
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    d = tmp_path / "d1.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), d)
    rounds.step(d, st)
    return st


def _cmds(tmp_path, st) -> list[list]:
    d = tmp_path / "d2.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[7.0])], base_round=1), d)
    return [["step", d, "--state", st], ["rollback", "--state", st, "--to", "0"], ["show", "--state", st],
            ["history", "--state", st]]


@pytest.mark.parametrize("name", ["CURRENT", "config.json"])
def test_a_folder_where_copter_keeps_a_file_is_exit_3_naming_it(tmp_path, capsys, state, name):
    (state / name).unlink()
    (state / name).mkdir()
    before = _tree(state)
    for args in _cmds(tmp_path, state):
        code, out, _ = run_main(capsys, *args, "--json")
        assert code == 3, (args, out)
        err = json.loads(out)["error"]
        assert err["file"] == str(state / name) and "folder" in err["message"], err
        assert _tree(state) == before


@pytest.mark.parametrize("name", ["failed", "abandoned"])
def test_a_file_where_copter_keeps_a_folder_is_exit_3_naming_it(tmp_path, capsys, state, name):
    """helper-156 (session 31): a regular file ``failed`` made a failing round end with exit 1 (FileExistsError)
    after solving, its record lost; a file ``abandoned`` the same (NotADirectoryError) for a step after a
    rollback."""
    (state / name).write_text("x")
    before = _tree(state)
    bad = tmp_path / "infeasible.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], lower=[5.0], upper=[4.0])], base_round=1), bad)
    for args in [*_cmds(tmp_path, state), ["step", bad, "--state", state]]:
        code, out, _ = run_main(capsys, *args, "--json")
        assert code == 3, (args, out)
        err = json.loads(out)["error"]
        assert err["file"] == str(state / name) and "not a folder" in err["message"], err
        assert _tree(state) == before


@pytest.mark.parametrize("key,value", [("tol", -5), ("integer_fallback", "zzz"), ("tol", "abc"), ("keep", 0),
                                       ("keep", "3"), ("settings", [1]),
                                       ("tol", 1e-12), ("relaxation_tol", 5e-11)])  # below the options' floor
def test_a_damaged_config_value_is_exit_3_naming_config_json_and_the_key(tmp_path, capsys, state, key, value):
    path = state / "config.json"
    body = json.loads(path.read_text())
    if key in ("keep", "settings"):
        body[key] = value
        entity = key
    else:
        body["settings"][key] = value
        entity = f"settings.{key}"
    path.write_text(json.dumps(body))
    before = _tree(state)
    for args in [*_cmds(tmp_path, state), ["show", "--state", state, "--solution"]]:
        code, out, _ = run_main(capsys, *args, "--json")
        assert code == 3, (args, out)
        err = json.loads(out)["error"]
        assert err["file"] == str(path) and err["entity"] == entity, (args, err)
        assert "--" not in err["message"]  # no option the user never gave
        assert _tree(state) == before


def test_a_command_refusing_a_folder_that_is_not_a_state_leaves_no_lock(tmp_path, capsys):
    folder = tmp_path / "notastate"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n")
    (tmp_path / "bad.mps").write_text("not an MPS file\n")
    d = tmp_path / "d.parquet"
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[7.0])], base_round=0), d)
    before = _tree(folder)
    for args in (["step", d, "--state", folder], ["rollback", "--state", folder, "--to", "0"],
                 ["init", tmp_path / "bad.mps", "--state", folder],
                 ["init", tmp_path / "missing.mps", "--state", folder]):
        code, out, _ = run_main(capsys, *args, "--json")
        assert code == 3, (args, out)
        assert _tree(folder) == before, args  # no .lock either
    code, out, _ = run_main(capsys, "init", tmp_path / "bad.mps", "--state", tmp_path / "new", "--json")
    assert code == 3 and not (tmp_path / "new").exists()


def test_init_into_an_existing_folder_and_onto_a_state_still_behave(tmp_path, capsys, state):
    from formats.io import write_problem

    base = tmp_path / "base.mps"
    write_problem(small_lp(), base)
    folder = tmp_path / "empty"
    folder.mkdir()
    code, out, _ = run_main(capsys, "init", base, "--state", folder, "--json")
    assert code == 0, out
    assert (folder / "CURRENT").read_text() == "0\n"
    (tmp_path / "bad.mps").write_text("not an MPS file\n")
    before = _tree(state)
    code, out, _ = run_main(capsys, "init", tmp_path / "bad.mps", "--state", state, "--json")
    assert code == 3 and "already an initialised state" in json.loads(out)["error"]["message"]
    assert _tree(state) == before
