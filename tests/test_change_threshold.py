"""changes.parquet and ``changed_variables`` count a continuous move only above the round's solve tolerance
(``|new - old| > tol * max(1, |old|, |new|)``) and an integer move exactly (issue #16: a 1e-5 move read as a
job migration)."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest
import scipy.sparse as sp

from formats import reports
from formats.io import write_problem
from solver import rounds
from solver.model.delta import Delta
from solver.model.problem import Problem
from solver.model.settings import Settings


def _names(*xs):
    return np.array(xs, dtype=object)


def _moved(table) -> dict:
    t = table.filter(table.column("kind").to_numpy(zero_copy_only=False) == "value_changed")
    return dict(zip(t.column("name").to_pylist(), t.column("new_value").to_pylist(), strict=True))


def test_a_continuous_move_below_tol_is_not_a_change_and_an_integer_0_to_1_move_is():
    names = _names("small", "big", "rel_small", "rel_big", "int_up", "int_same")
    old = np.array([0.3, 0.3, 1000.0, 1000.0, 0.0, 2.0])
    new = np.array([0.3 + 1e-5, 0.3 + 2e-4, 1000.05, 1000.5, 1.0, 2.0])
    integer = np.array([False, False, False, False, True, True])
    t = reports.changes_table(names, old, names, new, _names(), _names(), tol=1e-4, integer=integer)
    # 1e-5 <= 1e-4 * 1: noise; 2e-4 > 1e-4; 0.05 <= 1e-4 * 1000.05: noise; 0.5 > 0.1; integer 0 -> 1 counts
    assert set(_moved(t)) == {"big", "rel_big", "int_up"}
    assert reports.changed_variable_count(t) == 3


def test_an_integer_move_counts_exactly_however_small_and_a_tighter_tol_sees_more():
    names = _names("i", "c")
    t = reports.changes_table(names, np.array([3.0, 0.0]), names, np.array([3.0 + 1e-9, 1e-5]), _names(),
                              _names(), tol=1e-4, integer=np.array([True, False]))
    assert set(_moved(t)) == {"i"}
    t = reports.changes_table(names, np.array([3.0, 0.0]), names, np.array([3.0, 1e-5]), _names(), _names(),
                              tol=1e-6)
    assert set(_moved(t)) == {"c"}


def test_nan_on_either_side_counts_as_moved():
    names = _names("a", "b")
    t = reports.changes_table(names, np.array([np.nan, 1.0]), names, np.array([1.0, np.nan]), _names(), _names())
    assert set(_moved(t)) == {"a", "b"}


def _jobs() -> Problem:
    """max x0 + x1 + y s.t. cap: x0 + x1 + y <= 10; x in [0, 1]; y integer in [0, 0]."""
    A = sp.csc_array(np.ones((1, 3)))
    return Problem.from_arrays(cost=[1.0, 1.0, 1.0], col_lower=[0.0, 0.0, 0.0], col_upper=[1.0, 1.0, 0.0],
                               row_lower=[-np.inf], row_upper=[10.0], matrix=A, col_names=["x0", "x1", "y"],
                               row_names=["cap"], integrality=[False, False, True], sense=-1)


@pytest.mark.parametrize(("tol", "expected"), [(1e-4, {"x1", "y"}), (1e-6, {"x0", "x1", "y"})])
def test_a_round_counts_moves_at_its_own_solve_tolerance(tmp_path, tol, expected):
    write_problem(_jobs(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    rounds.init(tmp_path / "base.parquet", state_dir=st, settings=Settings(tol=tol, mip_gap_tol=0.0))
    # x0: 1 -> 1 + 1e-5 (below 1e-4, above 1e-6); x1: 1 -> 2; y: 0 -> 1 (integer)
    d = Delta.concat([Delta.vars(["x0", "x1", "y"], upper=[1.0 + 1e-5, 2.0, 1.0])], base_round=0)
    rep = rounds.step(d, state_dir=st)
    assert rep["status"] == "OPTIMAL"
    x = dict(zip(*pq.read_table(st / rep["solution_path"]).select(["name", "value"]).to_pydict().values(),
                 strict=True))
    assert x["x0"] == pytest.approx(1.0 + 1e-5, abs=1e-9) and x["y"] == 1.0  # the moves really happened
    changes = pq.read_table(st / rep["changes_path"])
    assert set(_moved(changes)) == expected
    assert rep["changed_variables"] == len(expected)
