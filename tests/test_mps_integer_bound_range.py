"""LI/UI bounds beyond HiGHS's 32-bit integrality test (session 15 adversary): ``UI x 3e9`` is an integer column
with upper bound 3e9, ``UI x 1e20``/``1e30``/``inf`` one without an upper bound (the 1e20 rule), while a
fractional ``UI x 2.5`` stays a FormatError naming the column and its line (HiGHS keeps 2.5 and warns)."""

import math

import numpy as np
import pytest

from formats.mps import read_mps
from solver.model.errors import FormatError

_MPS = """NAME
ROWS
 N  Obj
 L  r0
COLUMNS
    MARK0000  'MARKER'                 'INTORG'
    x0        Obj       -1
    x0        r0        1
    MARK0001  'MARKER'                 'INTEND'
    x1        r0        -1
    x1        Obj       0
RHS
    RHS_V     r0        0.5
BOUNDS
 {kind} BOUND     x0        {value}
ENDATA
"""


def _write(tmp_path, value, kind="UI"):
    p = tmp_path / "ui.mps"
    p.write_text(_MPS.format(kind=kind, value=value))
    return p


@pytest.mark.parametrize("value,upper", [("3e9", 3e9), ("1e15", 1e15), ("1e18", 1e18), ("1000", 1000.0),
                                         ("1e20", math.inf), ("1e30", math.inf), ("inf", math.inf)])
def test_integral_or_infinite_ui_reads(tmp_path, value, upper):
    prob = read_mps(_write(tmp_path, value))
    assert prob.col_upper[0] == upper and prob.col_lower[0] == 0.0
    assert bool(np.asarray(prob.integrality)[0])


def test_large_negative_li_reads(tmp_path):
    prob = read_mps(_write(tmp_path, "-3e9", kind="LI"))
    assert prob.col_lower[0] == -3e9


@pytest.mark.parametrize("value", ["2.5", "3000000000.5"])
def test_fractional_ui_is_refused_with_line(tmp_path, value):
    with pytest.raises(FormatError) as e:
        read_mps(_write(tmp_path, value))
    assert e.value.line == 15 and e.value.entity == "x0" and "not an integer" in str(e.value)
