"""A delta's ``sense`` is +1 / -1 / None, ``"min"`` / ``"max"`` taken as such, anything else refused (helper-208:
``Delta(..., sense="min")`` was written as ``copter.sense = max``, since the writer stored everything but the
integer 1 as a maximisation, and ``copter solve`` then maximised)."""

from __future__ import annotations

import numpy as np
import pyarrow.parquet as pq
import pytest

from formats.io import read_problem, write_delta
from solver.model.delta import Delta


def _problem(**meta) -> Delta:
    return Delta.concat([Delta.vars(["c0/x"], cost=[1.0], upper=[5.0]), Delta.cons(["c0/r"], lower=[1.0]),
                         Delta.coefs(["c0/x"], ["c0/r"], [1.0])], format="problem", **meta)


@pytest.mark.parametrize(("given", "stored", "problem_sense"),
                         [("min", "min", 1), ("MAX", "max", -1), (" Min ", "min", 1), (1, "min", 1), (-1, "max", -1),
                          (np.int64(-1), "max", -1), (np.int32(1), "min", 1)])
def test_a_sense_is_written_as_given(tmp_path, given, stored, problem_sense):
    path = tmp_path / "p.parquet"
    write_delta(_problem(sense=given), path)
    assert pq.read_schema(path).metadata[b"copter.sense"].decode() == stored
    assert read_problem(path).sense == problem_sense


@pytest.mark.parametrize("given", [0, 2, -2, True, False, "minimise", "", 1.0, "1", np.float64(-1.0)])
def test_any_other_sense_is_refused(given):
    with pytest.raises(ValueError, match="sense must be"):
        _problem(sense=given)


def test_a_sense_set_after_construction_is_checked_when_written(tmp_path):
    d = _problem(sense=1)
    d.sense = "minimize"
    with pytest.raises(ValueError, match="'minimize'"):
        write_delta(d, tmp_path / "p.parquet")
    assert not (tmp_path / "p.parquet").exists()
    d.sense = None
    write_delta(d, tmp_path / "p.parquet")
    assert pq.read_schema(tmp_path / "p.parquet").metadata[b"copter.sense"] == b"min"  # a problem's default, said
