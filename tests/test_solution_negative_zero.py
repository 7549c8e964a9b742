"""A zero is written as 0.0 in solution.parquet and duals.parquet, never -0.0: a MILP's point (lseu round 1)
held 66 values of -0.0, which pyarrow and pandas print as ``-0.0``. Both files of a round and of ``solve -o``
are built by ``formats.reports.solution_table`` / ``duals_table``."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq

from formats.reports import duals_table, solution_table, write_parquet


def test_solution_and_duals_tables_write_no_negative_zero(tmp_path):
    x = np.array([-0.0, 1.0, 0.0, -2.5])
    rc = np.array([0.0, -0.0, 3.0, -0.0])
    write_parquet(tmp_path / "solution.parquet", solution_table(np.array(["a", "b", "c", "d"]), x, rc), False)
    write_parquet(tmp_path / "duals.parquet", duals_table(np.array(["r", "s"]), np.array([-0.0, 1.0]),
                                                          np.array([2.0, -0.0])), False)
    sol = pq.read_table(tmp_path / "solution.parquet")
    duals = pq.read_table(tmp_path / "duals.parquet")
    for table, cols in ((sol, ("value", "reduced_cost")), (duals, ("activity", "dual"))):
        for c in cols:
            v = table.column(c).to_numpy()
            assert not np.signbit(v[v == 0.0]).any(), c
    np.testing.assert_array_equal(sol.column("value").to_numpy(), [0.0, 1.0, 0.0, -2.5])
    assert np.signbit(x[0])  # the caller's arrays are left as they were


def test_changes_table_writes_no_negative_zero():
    """changes.parquet too: a MILP job moving off a configuration read ``new_value -0.0`` there and 0.0 in
    solution.parquet (helper-153's output audit)."""
    from formats.reports import changes_table

    names = np.array(["j0/a", "j0/b", "j1/a"], dtype=object)
    old = np.array([1.0, -0.0, 0.0])
    new = np.array([-0.0, 1.0, 2.0])
    table = changes_table(names, old, names, new, np.array([], dtype=object), np.array([], dtype=object),
                          integer=np.array([True, True, False]))
    assert table.num_rows >= 2
    for c in ("old_value", "new_value"):
        v = table.column(c).to_numpy(zero_copy_only=False)
        v = v[~np.isnan(v)]
        assert not np.signbit(v[v == 0.0]).any(), (c, table.to_pylist())
    assert np.signbit(new[0])
