"""HiGHS's MPS writer names its vector sets ``RHS_V`` (RHS), ``RANGE`` (RANGES) and ``BOUND`` (BOUNDS) whatever
the model holds, so a model with a row named ``RHS_V`` or ``RANGE``, or a column named ``BOUND``, was written
(``copter export``/``convert``/``solve -o`` exit 0) as a file whose set name is also an entity name: HiGHS read
it back as another model without a word (every right-hand side 0: ``RHS_V RHS_V 10`` is a line without a set
name to its free parser; ``UP BOUND BOUND 3`` bounds nothing) and copter refused its own file (exit 3, "RHS set
name 'RHS_V' is also a row name"). The writer now renames such a set (``RHS_V_1``, ...)."""

from __future__ import annotations

import numpy as np
import pytest

from formats.mps import read_mps, write_mps

TEXT = """NAME clash
ROWS
 N cost
 L RHS_V
 E RANGE
 L RHS_V_1
 L c2
COLUMNS
    BOUND   cost   1   RHS_V   1
    BOUND   RANGE  1   RHS_V_1  2
    y   cost   1   c2   1
    y   RHS_V_1   1
RHS
    rhs RHS_V 10   RANGE 4
    rhs c2 5   RHS_V_1 7
    rhs cost -2.5
RANGES
    rng RANGE 2
BOUNDS
 UP bnd BOUND 3
 LO bnd y -1
 UP bnd y 2
ENDATA
"""


def _same(a, b) -> None:
    assert list(a.col_names) == list(b.col_names) and list(a.row_names) == list(b.row_names)
    for f in ("col_lower", "col_upper", "row_lower", "row_upper", "cost"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f), err_msg=f)
    assert a.offset == b.offset and a.sense == b.sense
    np.testing.assert_array_equal(a.a_data, b.a_data)


@pytest.mark.parametrize("suffix", [".mps", ".mps.gz"])
def test_set_names_that_are_entity_names_are_renamed_on_write(tmp_path, suffix):
    src = tmp_path / "clash.mps"
    src.write_text(TEXT)
    problem = read_mps(src)
    out = tmp_path / f"out{suffix}"
    write_mps(problem, out)
    _same(problem, read_mps(out))  # copter refused it: "RHS set name 'RHS_V' is also a row name"


def test_highs_reads_the_written_file_as_the_model(tmp_path):
    import highspy

    src = tmp_path / "clash.mps"
    src.write_text(TEXT)
    problem = read_mps(src)
    out = tmp_path / "out.mps"
    write_mps(problem, out)
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.readModel(str(out))
    lp = h.getLp()
    np.testing.assert_array_equal(lp.row_upper_, problem.row_upper)  # was all 0: RHS_V read as a row
    np.testing.assert_array_equal(lp.row_lower_, problem.row_lower)
    np.testing.assert_array_equal(lp.col_upper_, problem.col_upper)
    np.testing.assert_array_equal(lp.col_lower_, problem.col_lower)


def test_a_row_named_like_the_marker_keyword_is_refused_on_write(tmp_path):
    # a row named 'MARKER' (quotes included): HiGHS writes "x 'MARKER' 1", which every reader takes for an integer
    # marker line; copter wrote it (exit 0) and refused its own file ("integer marker keyword '1'")
    from solver.model.errors import ValidationError

    src = tmp_path / "m.mps"
    src.write_text(TEXT)
    problem = read_mps(src)
    problem.row_names = problem.row_names.copy()
    problem.row_names[1] = "'MARKER'"
    out = tmp_path / "m_out.mps"
    with pytest.raises(ValidationError) as e:
        write_mps(problem, out)
    assert "'MARKER'" in str(e.value) and ".parquet" in str(e.value) and not out.exists(), str(e.value)
