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


# helper-213: `demo --dir ''` wrote base.parquet and state/ among the user's files; `report -o ''` said "-o . is a
# folder"; `report -o r.html/` and `export -o e.mps/` wrote the file without the slash
@pytest.mark.parametrize(("argv", "said"), [
    (["demo", "--rounds", "0", "--dir", ""], "--dir is empty"),
    (["report", "--state", "st", "-o", ""], "-o is empty"),
    (["report", "--state", "st", "-o", "r.html/"], "-o 'r.html/' ends in /"),
    (["report", "--state", "st", "--png", ""], "--png is empty"),
    (["export", "--state", "st", "-o", "e.mps/"], "-o 'e.mps/' ends in /"),
    (["solve", "base.parquet", "-o", "x.parquet/"], "-o 'x.parquet/' ends in /"),
    (["step", "d.parquet", "--state", "st", "--out", ""], "--out is empty"),
])
def test_an_empty_folder_or_a_slash_ended_output_file_is_a_usage_error_and_nothing_is_written(capsys, cwd, argv,
                                                                                               said):
    assert rounds.init(cwd / "base.parquet", cwd / "st")["round"] == 0
    before = snapshot(cwd)
    code, out, err = run_main(capsys, *argv, "--json")
    assert code == 2, (out, err)
    assert said in json.loads(out)["error"]["message"]
    assert snapshot(cwd) == before


def test_a_name_too_long_and_a_folder_that_takes_no_entry_are_typed_errors(capsys, cwd):
    # helper-213: each was "internal error", exit 1 (after the page was written, for --png /proc/...)
    assert rounds.init(cwd / "base.parquet", cwd / "st")["round"] == 0
    long = "r" * 300
    for argv in (["report", "--state", "st", "-o", f"{long}.html"], ["export", "--state", "st", "-o", f"{long}.mps"]):
        code, out, err = run_main(capsys, *argv, "--json")
        assert code == 2 and "file name too long" in json.loads(out)["error"]["message"], (out, err)
    (cwd / "pd" / "churn.png").mkdir(parents=True)
    code, out, err = run_main(capsys, "report", "--state", "st", "-o", "x.html", "--png", "pd", "--json")
    assert code == 2 and "churn.png is a folder" in json.loads(out)["error"]["message"], (out, err)
    assert not (cwd / "x.html").exists()
    import importlib.util
    import os

    if os.path.isdir("/proc/self") and importlib.util.find_spec("matplotlib") is not None:  # the page is drawn first
        code, out, err = run_main(capsys, "report", "--state", "st", "-o", "y.html", "--png", "/proc/copter-x",
                                  "--json")
        assert code == 7 and "accepts no new entry" in json.loads(out)["error"]["message"], (out, err)
        assert not (cwd / "y.html").exists()


@pytest.mark.parametrize("argv", [["step", "{bad}", "--state", "st"], ["init", "{bad}", "--state", "s2"],
                                  ["solve", "base.parquet", "-o", "{bad}"], ["history", "--state", "{bad}"],
                                  ["report", "--state", "{bad}"]])
def test_a_path_that_is_not_utf8_is_a_usage_error_naming_it(capsys, cwd, argv):
    # helper-213: a state folder named with a 0xFF byte read in history, failed report (exit 1, internal error) and
    # compare (exit 3, "damaged"); a delta so named was called a Parquet file with a damaged footer
    import os

    bad = os.fsdecode(b"d\xff.parquet")
    assert rounds.init(cwd / "base.parquet", cwd / "st")["round"] == 0
    before = snapshot(cwd)
    code, out, err = run_main(capsys, *[a.format(bad=bad) for a in argv], "--json")
    assert code == 2, (out, err)
    assert "is not valid UTF-8" in json.loads(out)["error"]["message"]
    assert snapshot(cwd) == before
