"""A zero prints as 0.0 in every JSON copter writes, never -0.0: a maximisation whose dual objective is 0
(negated: -0.0) printed ``"dual_objective": -0.0`` in ``solve``/``init``/``step``/``show --json`` and in the
stored report.json, and ``history --json`` its ``lp_bound``. Both JSON writers (the CLI's and report.json's)
take their floats through ``formats.json_numbers.json_float``."""

from __future__ import annotations

import json
import math

import numpy as np
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.output import dumps as cli_dumps
from formats.io import write_delta
from formats.reports import dumps as report_dumps
from solver.model.delta import Delta


def _zero_max(path):
    """max a/x - a/y s.t. a/x + a/y + b/z <= 0, a/x in [-1, 0], a/y in [0, 1], b/z in [-2, 0]: optimum 0."""
    d = Delta.concat([Delta.vars(["a/x", "a/y", "b/z"], cost=[1.0, -1.0, 0.0], lower=[-1.0, 0.0, -2.0],
                                 upper=[0.0, 1.0, 0.0]),
                      Delta.cons(["r"], upper=[0.0]), Delta.coefs(["a/x", "a/y", "b/z"], ["r"] * 3, [1.0] * 3)])
    d.format, d.sense = "problem", -1
    write_delta(d, path)
    return path


def _no_negative_zero(text: str) -> None:
    def walk(o):
        if isinstance(o, float):
            assert not (o == 0.0 and math.copysign(1.0, o) < 0), text
        elif isinstance(o, dict):
            for v in o.values():
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)
    walk(json.loads(text))


def test_the_json_writers_print_a_zero_as_0_0():
    for dumps in (cli_dumps, report_dumps):
        assert dumps({"a": -0.0, "b": np.float64(-0.0), "c": [-0.0], "d": -1.5, "e": math.inf}) == \
            '{"a": 0.0, "b": 0.0, "c": [0.0], "d": -1.5, "e": "inf"}'


def test_no_json_answer_or_stored_report_holds_minus_zero(tmp_path):
    p = _zero_max(tmp_path / "p.parquet")
    st = tmp_path / "S"
    runner = CliRunner()
    res = runner.invoke(app, ["solve", str(p), "--json"])
    assert res.exit_code == 0, res.output
    out = res.stdout.strip().splitlines()[0]
    _no_negative_zero(out)
    assert json.loads(out)["dual_objective"] == 0.0
    assert runner.invoke(app, ["init", str(p), "--state", str(st)]).exit_code == 0
    d = Delta.vars(["a/x"], cost=[2.0])
    d.base_round = 0
    write_delta(d, tmp_path / "d1.parquet")
    for args in (["step", str(tmp_path / "d1.parquet")], ["show"], ["show", "--solution", "--changes"],
                 ["history"]):
        res = runner.invoke(app, [*args, "--state", str(st), "--json"])
        assert res.exit_code == 0, res.output
        _no_negative_zero(res.stdout.strip().splitlines()[0])
    for rep in st.glob("gen-*/report.json"):
        _no_negative_zero(rep.read_text())
