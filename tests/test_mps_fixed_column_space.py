"""A fixed-format MPS file whose first name with a space is a column's (its rows have none) reads.

HiGHS's free parser meets that name in COLUMNS, warns `Row name "X 1" with spaces has length 3, so assume fixed
format` and switches to the fixed-format parser, which reads the file. copter accepted only the switch's own
warning (forplan's row names hold spaces, so its free parser gives only that one) and refused such a valid file:
`ambiguous MPS content HiGHS would ignore: Row name "X 1" with spaces has length 3, so assume fixed format`."""

from __future__ import annotations

import highspy
import numpy as np
from typer.testing import CliRunner

from copter_cli.app import app
from formats.mps import read_mps


def _fixed(name: str, row: str, value: str, row2: str = "", value2: str = "") -> str:
    """A fixed-format data line: name in columns 5-12, row 15-22, value 25-36, row 40-47, value 50-61."""
    line = f"    {name:<8}  {row:<8}  {value:>12}"
    return (line + f"   {row2:<8}  {value2:>12}" if row2 else line) + "\n"


_TEXT = ("NAME          T\nROWS\n N  OBJ\n L  C1\n G  C2\nCOLUMNS\n" + _fixed("X1", "OBJ", "-1", "C1", "1")
         + _fixed("X 1", "C2", "1") + _fixed("Y", "OBJ", "-2", "C1", "1") + "RHS\n" + _fixed("RHS", "C1", "10", "C2", "1")
         + "ENDATA\n")


def test_a_column_name_with_a_space_reads_as_highs_reads_it(tmp_path):
    p = tmp_path / "m.mps"
    p.write_text(_TEXT)
    problem = read_mps(p)
    assert problem.col_names.tolist() == ["X1", "X 1", "Y"]
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(p))
    lp = h.getLp()
    assert np.array_equal(problem.cost, np.asarray(lp.col_cost_)) and problem.nnz == len(lp.a_matrix_.value_)


def test_solve_of_that_file_succeeds(tmp_path):
    p = tmp_path / "m.mps"
    p.write_text(_TEXT)
    res = CliRunner().invoke(app, ["solve", str(p), "--json"])
    assert res.exit_code == 0, res.output
