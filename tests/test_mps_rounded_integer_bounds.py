"""Writing MPS rounds an integer column's fractional bounds inward (``formats.mps.write_mps``: the same integer
points, and what MPS readers accept), which tightens the file's LP relaxation; `convert` and `export` did it without
a word (an integer x in [0.5, 3.7] read back as [1, 3], helper-209). Now they warn, naming the first such variable
and the count; Parquet keeps the bounds as they are, and so says nothing."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import read_problem, write_delta
from solver.model.delta import Delta


def _problem(path, lower, upper):
    names = [f"x{i}" for i in range(len(lower))]
    d = Delta.concat([Delta.vars(names, cost=[1.0] * len(names), lower=lower, upper=upper,
                                 integer=[True] * len(names)),
                      Delta.cons(["need"], lower=[1.0]), Delta.coefs(var=names, con=["need"] * len(names),
                                                                      value=[1.0] * len(names))])
    d.format = "problem"
    write_delta(d, path)
    return path


def test_fractional_integer_bounds_written_to_mps_are_named(tmp_path):
    src = _problem(tmp_path / "p.parquet", [0.0, 0.5, 0.0], [10.0, 3.7, 7.5])
    res = CliRunner().invoke(app, ["convert", str(src), str(tmp_path / "p.mps"), "--json"])
    assert res.exit_code == 0, res.output
    warnings = json.loads(res.stdout)["warnings"]
    hit = [w for w in warnings if "rounded inward" in w]
    assert hit and "'x1'" in hit[0] and "[0.5, 3.7]" in hit[0] and "[1, 3]" in hit[0] and "(2 such" in hit[0], warnings
    back = read_problem(tmp_path / "p.mps")  # what the warning is about
    assert back.col_lower.tolist() == [0.0, 1.0, 0.0] and back.col_upper.tolist() == [10.0, 3.0, 7.0]
    res = CliRunner().invoke(app, ["convert", str(src), str(tmp_path / "q.parquet"), "--json"])
    assert res.exit_code == 0 and "warnings" not in json.loads(res.stdout)  # Parquet keeps them


def test_integral_bounds_say_nothing(tmp_path):
    src = _problem(tmp_path / "p.parquet", [0.0, -2.0], [10.0, float("inf")])
    res = CliRunner().invoke(app, ["convert", str(src), str(tmp_path / "p.mps"), "--json"])
    assert res.exit_code == 0, res.output
    assert not any("rounded inward" in w for w in json.loads(res.stdout).get("warnings", []))
