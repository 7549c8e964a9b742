"""A constraint with no bound on either side (a free row, e.g. one kept to read its activity) is written to MPS as
an extra ``N`` row, which HiGHS's reader (so copter's) drops with its coefficients: `convert p.parquet p.mps`
then `convert p.mps q.parquet` lost the row without a word, and a later delta naming it was refused. Writing MPS
now warns, naming the first such row and the count."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import read_problem, write_delta
from solver.model.delta import Delta


def _problem(path):
    d = Delta.concat([Delta.vars(["x", "y"], cost=[1.0, 2.0], upper=[4.0, 4.0]),
                      Delta.cons(["need", "watch", "watch2"], lower=[1.0, None, None]),
                      Delta.coefs(var=["x", "y", "x", "y"], con=["need", "need", "watch", "watch2"],
                                  value=[1.0, 1.0, 3.0, 1.0])])
    d.format = "problem"
    write_delta(d, path)
    return path


def test_writing_free_rows_to_mps_says_they_are_lost(tmp_path):
    src = _problem(tmp_path / "p.parquet")
    res = CliRunner().invoke(app, ["convert", str(src), str(tmp_path / "p.mps"), "--json"])
    assert res.exit_code == 0, res.output
    warnings = json.loads(res.stdout)["warnings"]
    assert any("'watch'" in w and "2 " in w and "N row" in w for w in warnings), warnings
    assert read_problem(tmp_path / "p.mps").n_rows == 1  # what the warning is about
    res = CliRunner().invoke(app, ["convert", str(src), str(tmp_path / "q.parquet"), "--json"])
    assert res.exit_code == 0 and "warnings" not in json.loads(res.stdout)  # Parquet keeps them
