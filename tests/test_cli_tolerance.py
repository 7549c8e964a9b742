"""A relative KKT tolerance of 1 or more (or inf) accepts any point: refused as a usage error (exit 2)."""

import pytest
from typer.testing import CliRunner

from copter_cli.app import app


@pytest.mark.parametrize("opt,value", [("--tol", "5"), ("--tol", "inf"), ("--tol", "1"),
                                       ("--relaxation-tol", "2")])
def test_tolerance_of_one_or_more_is_a_usage_error_naming_the_option(tmp_path, opt, value):
    res = CliRunner().invoke(app, ["solve", str(tmp_path / "missing.mps"), opt, value])
    assert res.exit_code == 2
    assert opt in res.output
