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


def test_version_command_json_names_copter_and_its_libraries(capsys):
    code, out = _main(capsys, "version", "--json")
    info = json.loads(out)
    assert code == 0 and info["copter"] == version("copter")
    assert {"highspy", "numba", "numpy", "pyarrow"} <= set(info)
