"""Every usage error click finds is copter's one line on stderr, with or without ``--json``: ``error (usage, exit
2): MESSAGE`` with click's own message, suggestions included. Without ``--json`` click printed its box
("Usage: copter step [OPTIONS] ... Try 'copter step --help' for help. Error: No such option: --tl") instead."""

from __future__ import annotations

import subprocess
import sys

import pytest

from solver.model.errors import MissingDependencyError
from tests.helpers import run_main


@pytest.mark.parametrize(("args", "message"), [
    (("step", "d.parquet", "--tl", "5"), "No such option: --tl Did you mean --tol?"),
    (("stpe",), "No such command 'stpe'. Did you mean 'step'?"),
    (("step",), "Missing argument 'DELTA...'."),
    (("solve", "--tol"), "Option '--tol' requires an argument."),
    (("worker", "bogus"), "No such command 'bogus'."),
    (("init", "b.parquet", "--executor", "bogus"),
     "Invalid value for '--executor': unknown executor 'bogus'; choose process, ray, inline"),
    (("--json-out",), "No such option: --json-out"),
])
def test_a_click_usage_error_is_one_copter_line_on_stderr(capsys, args, message):
    code, out, err = run_main(capsys, *args)
    assert code == 2 and out == ""
    assert err == f"error (usage, exit 2): {message}\n"


def test_executor_ray_without_ray_is_one_copter_line(capsys, monkeypatch):
    import solver.partition.executor as executor

    def no_ray(name):
        raise MissingDependencyError("--executor ray needs Ray, which is not installed: pip install 'copter[ray]'",
                                     package="ray")

    monkeypatch.setattr(executor, "check_executor", no_ray)
    code, out, err = run_main(capsys, "init", "b.parquet", "--partitions", "2", "--executor", "ray")
    assert code == 8 and out == ""
    assert err == ("error (missing_dependency, exit 8): --executor ray needs Ray, which is not installed: pip install "
                   "'copter[ray]'\n")


@pytest.mark.parametrize("args", [(), ("worker",)])
def test_copter_or_a_group_alone_prints_the_help_then_the_error_line_on_stderr(capsys, args):
    # every non-zero exit prints an `error (...)` line (README); bare `copter`/`copter worker` printed help only
    code, out, err = run_main(capsys, *args)
    assert code == 2 and out == "" and "Commands:" in err
    assert ("step" if not args else "status") in err
    assert err.endswith("\nerror (usage, exit 2): missing command (help printed above on stderr)\n")


def test_the_console_script_prints_the_same_line():
    copter = [sys.executable, "-c", "from copter_cli.entry import main; main()"]
    res = subprocess.run([*copter, "stpe"], capture_output=True, text=True, check=False)
    assert res.returncode == 2 and res.stdout == ""
    assert res.stderr == "error (usage, exit 2): No such command 'stpe'. Did you mean 'step'?\n"
