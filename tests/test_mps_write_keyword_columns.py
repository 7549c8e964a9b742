"""A column named like a section keyword HiGHS's free parser takes for a header at the start of a data line (NAME,
OBJSENSE, QSECTION, QCMATRIX, CSECTION, any letter case) is refused by the MPS writer (exit 3 through the CLI),
nothing written: ``convert`` and ``export`` wrote such a file with exit 0, HiGHS read a column OBJSENSE's model with
costs [1, 0, 0] and objective 0 instead of -3, and copter's own reader refused it (helper-170)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from formats.io import read_problem, write_problem
from formats.mps_sections import HEADER_FIELDS
from solver.model.errors import ValidationError
from solver.model.problem import Problem
from tests.helpers import run_main


def _model(name: str) -> Problem:
    return Problem.from_arrays(cost=np.array([1.0, -1.0, -1.0]), col_lower=np.zeros(3),
                               col_upper=np.array([5.0, 4.0, 4.0]), row_lower=np.array([-np.inf]),
                               row_upper=np.array([3.0]), matrix=sp.csc_matrix(np.ones((1, 3))),
                               col_names=["x", name, "y"], row_names=["c1"])


@pytest.mark.parametrize("name", [*HEADER_FIELDS, "objsense", "Name", "qSection"])
def test_a_column_named_like_a_header_field_is_refused(tmp_path, name):
    out = tmp_path / "m.mps"
    with pytest.raises(ValidationError, match="MPS section keyword") as e:
        write_problem(_model(name), out)
    assert e.value.entity == name and e.value.file == str(out)
    assert not out.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["ROWS", "COLUMNS", "RHS", "BOUNDS", "OBJSENSEX", "NAMES"])
def test_other_keyword_like_columns_round_trip(tmp_path, name):
    p = _model(name)
    write_problem(p, tmp_path / "m.mps")
    back = read_problem(tmp_path / "m.mps")
    assert back.col_names.tolist() == p.col_names.tolist()
    np.testing.assert_array_equal(back.cost, p.cost)


def test_cli_convert_exit_3_naming_the_column(tmp_path, capsys):
    write_problem(_model("OBJSENSE"), tmp_path / "b.parquet")
    code, out, err = run_main(capsys, "convert", tmp_path / "b.parquet", tmp_path / "b.mps")
    assert code == 3 and "'OBJSENSE' is an MPS section keyword" in err, err
    assert not (tmp_path / "b.mps").exists()
