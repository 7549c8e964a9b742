"""A partitioned round whose whole-model solve proves the model unbounded ends DUAL_INFEASIBLE, exit 4, as a
monolithic round does (helper-239, session 60): the round compared its feasible merged point with the whole solve,
and kept the merged point (an LP OPTIMAL at 1.003e6 for K = 2, 3, 4; a MILP step FEASIBLE), exit 0, on models HiGHS
and the monolithic ``copter solve`` / ``init`` / ``step`` find unbounded."""

from __future__ import annotations

import json
import math

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from copter_cli.app import app

INF = math.inf


def _unbounded_lp(path):
    """max -7 x + y - 1e6 z + 3 w + 10 v + 1.5, -1000 <= x + y - z + w - v <= 1000, x <= 8, y in [0, 16], z = -1,
    w >= 0, v in [0, 12]: w and x move together without bound (x -> -inf, w -> +inf)."""
    cols = [("a/x", -7.0, -INF, 8.0), ("b/y", 1.0, 0.0, 16.0), ("b/z", -1e6, -1.0, -1.0), ("c/w", 3.0, 0.0, INF),
            ("d/v", 10.0, 0.0, 12.0)]
    coef = [1.0, 1.0, -1.0, 1.0, -1.0]
    t = pa.table({"kind": ["var"] * 5 + ["con"] + ["coef"] * 5,
                  "var": [c[0] for c in cols] + [None] + [c[0] for c in cols],
                  "con": [None] * 5 + ["r"] * 6,
                  "value": [c[1] for c in cols] + [None] + coef,
                  "lower": [c[2] for c in cols] + [-1000.0] + [None] * 5,
                  "upper": [c[3] for c in cols] + [1000.0] + [None] * 5,
                  "integer": pa.array([False] * 5 + [None] * 6, pa.bool_())})
    meta = {"copter.format": "problem", "copter.version": "1", "copter.sense": "max", "copter.objective_offset": "1.5"}
    pq.write_table(t.replace_schema_metadata(meta), path)


def _bounded_milp_and_opening_delta(base, delta):
    """min -2 y, x + y in [-1000, 1000], x, y integers in [-10, 10]; the delta frees both columns (unbounded)."""
    t = pa.table({"kind": ["var", "var", "con", "coef", "coef"], "var": ["a/x", "b/y", None, "a/x", "b/y"],
                  "con": [None, None, "r", "r", "r"], "value": [0.0, -2.0, None, 1.0, 1.0],
                  "lower": [-10.0, -10.0, -1000.0, None, None], "upper": [10.0, 10.0, 1000.0, None, None],
                  "integer": [True, True, None, None, None]})
    pq.write_table(t.replace_schema_metadata({"copter.format": "problem", "copter.version": "1",
                                              "copter.sense": "min"}), base)
    d = pa.table({"kind": ["var", "var"], "var": ["a/x", "b/y"], "con": pa.array([None, None], pa.string()),
                  "value": pa.array([None, None], pa.float64()), "lower": [-INF, -INF], "upper": [INF, INF],
                  "integer": pa.array([None, None], pa.bool_())})
    pq.write_table(d.replace_schema_metadata({"copter.format": "delta", "copter.version": "1",
                                              "copter.base_round": "0"}), delta)


def _run(*args):
    res = CliRunner().invoke(app, [str(a) for a in args])
    return res.exit_code, json.loads(res.stdout)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_an_unbounded_lp_is_dual_infeasible_partitioned_or_not(tmp_path, k):
    _unbounded_lp(tmp_path / "base.parquet")
    opts = ["--partitions", str(k), "--executor", "inline"] if k > 1 else []
    code, rep = _run("init", tmp_path / "base.parquet", "--state", tmp_path / "st", "--json", *opts)
    assert (code, rep["status"]) == (4, "DUAL_INFEASIBLE"), rep["message"]
    if k > 1:
        assert rep["partitions"]["fallback"]["kept"] == "whole"
        assert "the whole model has no optimum (DUAL_INFEASIBLE)" in rep["message"]


@pytest.mark.parametrize("k", [1, 2])
def test_a_step_that_makes_a_milp_unbounded_is_dual_infeasible_partitioned_or_not(tmp_path, k):
    _bounded_milp_and_opening_delta(tmp_path / "base.parquet", tmp_path / "open.parquet")
    opts = ["--partitions", str(k), "--executor", "inline"] if k > 1 else []
    code, rep = _run("init", tmp_path / "base.parquet", "--state", tmp_path / "st", "--json", *opts)
    assert code == 0 and rep["status"] == "OPTIMAL"
    code, rep = _run("step", tmp_path / "open.parquet", "--state", tmp_path / "st", "--json")
    assert (code, rep["status"]) == (4, "DUAL_INFEASIBLE"), rep["message"]
    code, shown = _run("show", "--state", tmp_path / "st", "--json")
    assert shown["round"] == 0  # the failed round is not current
