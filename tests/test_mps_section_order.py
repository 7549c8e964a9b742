"""A COLUMNS section before ROWS is refused naming both lines; HiGHS's message was `not a valid MPS file (Row name
"x obj -1 c" with spaces exceeds fixed format name length of 8)`: its free parser, meeting entries on rows not yet
defined, fell back to the fixed-format parser, whose failure named neither the cause nor a line."""

from __future__ import annotations

import pytest

from formats.mps import read_mps
from solver.model.errors import FormatError


def test_columns_before_rows_is_named(tmp_path):
    p = tmp_path / "m.mps"
    p.write_text("NAME t\nCOLUMNS\n    x obj -1 c1 1\nROWS\n N obj\n L c1\nRHS\n    rhs c1 4\nENDATA\n")
    with pytest.raises(FormatError) as e:
        read_mps(p)
    assert e.value.line == 2 and "COLUMNS comes before ROWS (line 4)" in str(e.value), str(e.value)
