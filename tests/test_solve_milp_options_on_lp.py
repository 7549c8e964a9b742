"""``copter solve`` given MILP-only options (``--mip-gap``, ``--integer-fallback``, ``--submip-*``,
``--relaxation-*``) for a model without integer columns warns that they have no effect (stderr ``warning:`` and
the JSON's ``warnings``), exit 0 as before: ``solve lp.parquet --mip-gap 0.1`` said nothing, so a user could
believe the gap applied. On a MILP, or without such options, no warning."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from formats.io import write_problem
from tests.helpers import run_main, small_lp


@pytest.mark.parametrize("json_out", [False, True])
def test_milp_options_on_an_lp_warn(tmp_path, capsys, json_out):
    write_problem(small_lp(), tmp_path / "lp.parquet")
    code, out, err = run_main(capsys, "solve", tmp_path / "lp.parquet", "--mip-gap", "0.1", "--submip-seconds", "0",
                              "--tol", "1e-5", *(["--json"] if json_out else []))
    assert code == 0, err
    (line,) = [ln for ln in err.splitlines() if ln.startswith("warning:")]
    assert "--submip-seconds, --mip-gap apply to MILPs only" in line and "lp.parquet" in line, line
    assert "--tol" not in line
    if json_out:
        assert json.loads(out)["warnings"] == [line.removeprefix("warning: ")]


def test_no_warning_on_a_milp_or_without_milp_options(tmp_path, capsys):
    p = small_lp()
    write_problem(p, tmp_path / "lp.parquet")
    write_problem(dataclasses.replace(p, integrality=np.ones(p.n_cols, dtype=bool)), tmp_path / "mip.parquet")
    for args in (("lp.parquet", "--tol", "1e-5"), ("mip.parquet", "--mip-gap", "0.1")):
        code, out, err = run_main(capsys, "solve", tmp_path / args[0], *args[1:], "--json")
        assert code == 0 and "warning" not in err and "warnings" not in json.loads(out), err
