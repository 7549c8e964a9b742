"""``--state ''`` is a usage error (exit 2 naming --state) for every command that takes ``--state``: an empty
path was the working directory, and ``copter init base.parquet --state ''`` wrote CURRENT, config.json,
gen-000000 and log among the user's files with exit 0. An empty ``COPTER_STATE=`` still means
``./copter-state``, as an unset one does."""

from __future__ import annotations

import json

import pytest

from copter_cli.app import build
from formats.io import write_delta, write_problem
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import run_main, small_lp, snapshot


def _state_commands() -> list[str]:
    """Every command (at any depth: worker's subcommands too) with a --state option."""
    import typer.main

    found = []

    def walk(cmd, path):
        for name, sub in (getattr(cmd, "commands", None) or {}).items():
            walk(sub, [*path, name])
        if any("--state" in getattr(p, "opts", ()) for p in cmd.params):
            found.append(" ".join(path))

    walk(typer.main.get_command(build()), [])
    return sorted(found)


COMMANDS = _state_commands()
ARGS = {"init": ["base.parquet"], "step": ["d.parquet"]}


def test_the_commands_with_state_are_all_checked():
    assert {"init", "step", "show", "history", "rollback", "export", "compare", "report"} <= set(COMMANDS)


@pytest.fixture
def cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("COPTER_STATE", raising=False)
    write_problem(small_lp(), tmp_path / "base.parquet")
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), tmp_path / "d.parquet")
    (tmp_path / "mine.txt").write_text("the user's file\n")
    return tmp_path


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("form", [["--state", ""], ["--state="]], ids=["separate", "equals"])
def test_an_empty_state_is_a_usage_error_and_nothing_is_written(capsys, cwd, command, form):
    before = snapshot(cwd)
    code, out, err = run_main(capsys, *command.split(), *ARGS.get(command, []), *form, "--json")
    assert code == 2, (out, err)
    msg = json.loads(out)["error"]["message"]
    assert "--state" in msg and "empty" in msg
    assert f"error (usage, exit 2): {msg}" in err and len(err.strip().splitlines()) == 1
    assert snapshot(cwd) == before and sorted(p.name for p in cwd.iterdir()) == ["base.parquet", "d.parquet",
                                                                                  "mine.txt"]


def test_an_empty_state_without_json_is_one_line(capsys, cwd):
    code, out, err = run_main(capsys, "init", "base.parquet", "--state", "")
    assert code == 2 and out == "" and err.startswith("error (usage, exit 2): --state") and not (cwd / "CURRENT").exists()


def test_an_empty_copter_state_variable_means_the_default(capsys, cwd, monkeypatch):
    monkeypatch.setenv("COPTER_STATE", "")
    code, _, err = run_main(capsys, "init", "base.parquet", "--json")
    assert code == 0, err
    assert (cwd / "copter-state" / "CURRENT").exists() and not (cwd / "CURRENT").exists()
    assert rounds.show(cwd / "copter-state")["round"] == 0
