"""``copter --version`` (eager root option) and ``copter version``: the installed package's version."""

from __future__ import annotations

import json
from importlib.metadata import version

import pytest

from copter_cli.app import main


def _main(capsys, *args: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as ex:
        main(list(args))
    out, _ = capsys.readouterr()
    return ex.value.code if isinstance(ex.value.code, int) else 0, out


def test_version_flag_prints_the_installed_package_version_and_exits_0(capsys):
    code, out = _main(capsys, "--version")
    assert code == 0 and out == f"copter {version('copter')}\n"


def test_version_flag_runs_before_any_command(capsys):
    code, out = _main(capsys, "--version", "show", "--state", "/nonexistent/state")
    assert code == 0 and out.startswith("copter ")


def test_version_command_prints_on_stdout_like_the_flag(capsys):
    """``copter version`` is the command's requested output: stdout (as ``--version``), nothing on stderr."""
    with pytest.raises(SystemExit) as ex:
        main(["version"])
    out, err = capsys.readouterr()
    assert ex.value.code in (0, None) and err == ""
    assert out.startswith(f"copter {version('copter')}  ") and "numba " in out and out.endswith("\n")


@pytest.mark.parametrize("args", [["version"], ["--version"], ["version", "--json"]])
def test_version_into_a_closed_stdout_ends_quietly_with_141(args):
    """The console script, stdout's reader gone before anything is written: exit 141, nothing on stderr
    (README "Exit codes"), as for every command's stdout answer."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    r, w = os.pipe()
    os.close(r)
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.Popen([sys.executable, "-m", "copter_cli", *args], stdout=w, stderr=subprocess.PIPE,
                            env=env, text=True)
    os.close(w)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 141 and err == "", (args, proc.returncode, err)


def test_version_command_json_names_copter_and_its_libraries(capsys):
    code, out = _main(capsys, "version", "--json")
    info = json.loads(out)
    assert code == 0 and info["copter"] == version("copter")
    assert {"highspy", "numba", "numpy", "pyarrow"} <= set(info)


def test_help_never_shows_a_flag_as_taking_a_value_and_lists_commands_untruncated(capsys):
    import typer.main

    from copter_cli.app import app

    commands = typer.main.get_command(app).commands
    for name in commands:
        code, out = _main(capsys, name, "--help")
        assert code == 0 and "<bool>" not in out and "--help" in out, name
    code, out = _main(capsys, "--help")
    listed = [line.split()[0] for line in out.split("Commands:")[1].splitlines() if line.strip()]
    assert code == 0 and sorted(listed) == sorted(commands) and "..." not in out.split("Commands:")[1]
