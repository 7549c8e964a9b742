"""Round output writers (formats/reports.py): changes table, report fields, strict JSON."""

from __future__ import annotations

import json
import math

import numpy as np
import pyarrow.parquet as pq

from formats import reports
from solver.model.result import SolveResult
from solver.model.status import Status


def _names(*s):
    return np.array(list(s), dtype=object)


def test_changes_lists_added_removed_and_moved_by_name():
    t = reports.changes_table(_names("a", "b", "c"), np.array([1.0, 2.0, 3.0]), _names("a", "c", "d"),
                              np.array([1.0 + 5e-7, 3.5, 7.0]), _names("r1", "r2"), _names("r2", "r3"))
    rows = list(zip(*[t.column(c).to_pylist() for c in ("kind", "name", "old_value", "new_value")], strict=True))
    assert rows == [("var_added", "d", None, 7.0), ("var_removed", "b", 2.0, None),
                    ("value_changed", "c", 3.0, 3.5), ("con_added", "r3", None, None),
                    ("con_removed", "r1", None, None)]
    assert reports.changed_variable_count(t) == 3


def test_changes_from_a_position_map_equal_changes_from_names():
    rng = np.random.default_rng(0)
    old = np.array([f"x{i}" for i in range(1000)], dtype=object)
    keep = np.sort(rng.choice(1000, 900, replace=False))
    new = np.concatenate([old[keep], np.array([f"n{i}" for i in range(50)], dtype=object)])
    col_map = np.concatenate([keep, np.full(50, -1)])
    ox, nx = rng.random(1000), rng.random(950)
    nx[:900] = np.where(rng.random(900) < 0.5, ox[keep], nx[:900])
    rows = _names("c0")
    by_name = reports.changes_table(old, ox, new, nx, rows, rows)
    by_map = reports.changes_table(old, ox, new, nx, rows, rows, col_map=col_map, row_map=np.array([0]))
    assert by_name.equals(by_map)


def test_no_previous_round_lists_everything_as_added():
    t = reports.changes_table(None, None, _names("a"), np.array([2.0]), None, _names("r"))
    assert t.column("kind").to_pylist() == ["var_added", "con_added"]


def _result(mip=None):
    return SolveResult(status=Status.OPTIMAL, x=np.zeros(2), y=np.zeros(1), reduced_cost=np.zeros(2),
                       row_activity=np.zeros(1), objective=1.5, dual_objective=1.5, primal_residual_rel=1e-7,
                       dual_residual_rel=2e-7, gap_rel=0.0, iterations=12, warm_started=True, mip=mip,
                       message="converged")


def test_round_report_has_the_section_7_fields_and_lp_bound_only_for_milps():
    rep = reports.round_report(round_=3, result=_result(), seconds={"solve": 0.5}, delta_sha256="ab",
                               changed_variables=1, paths={"solution_path": "gen-000003/solution.parquet"})
    assert rep["round"] == 3 and rep["status"] == "OPTIMAL" and rep["seconds"]["solve"] == 0.5
    assert set(rep["seconds"]) == {"load", "apply", "kernels", "solve", "integerize", "save", "total"}
    assert "lp_bound" not in rep and rep["message"] == "converged"
    rep = reports.round_report(round_=3, result=_result({"lp_bound": 2.0, "gap_rel": 0.25}), seconds={})
    assert rep["lp_bound"] == 2.0 and rep["gap_rel"] == 0.25


def test_dumps_is_strict_json():
    text = reports.dumps({"a": math.inf, "b": math.nan, "c": np.float64(-math.inf), "s": Status.FEASIBLE,
                          "i": np.int64(3)})
    assert json.loads(text) == {"a": "inf", "b": None, "c": "-inf", "s": "FEASIBLE", "i": 3}


def test_write_parquet_round_trips(tmp_path):
    t = reports.solution_table(_names("a", "b"), np.array([1.0, 2.0]), np.array([0.0, -1.0]))
    reports.write_parquet(tmp_path / "s.parquet", t)
    assert pq.read_table(tmp_path / "s.parquet").equals(t)
