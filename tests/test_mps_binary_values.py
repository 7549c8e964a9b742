"""A ``BV`` bound line with a value other than 0 or 1 is refused naming its line (free and fixed format).

``BV BND x 5`` read as a binary column, the 5 dropped without a word (the MPS convention ignores a ``BV`` value;
the writer meant another bound). ``formats/mps_binary_values.py`` says why.
"""

from __future__ import annotations

import json

import pytest

from formats.mps import read_mps
from solver.model.errors import FormatError
from tests.helpers import cli_json

FREE = """NAME t
ROWS
 N obj
 L c1
COLUMNS
    x obj -1 c1 1
    y obj -1 c1 1
RHS
    rhs c1 4
BOUNDS
{bound}
ENDATA
"""
# fixed format (a name holds a space): type in columns 2-3, set name 5-12, column 15-22, value from 25
FIXED = """NAME          t
ROWS
 N  obj
 L  c1
COLUMNS
    x a       obj       -1             c1        1
    y         obj       -1             c1        1
RHS
    rhs       c1        4
BOUNDS
{bound}
ENDATA
"""


def _read(tmp_path, template: str, bound: str):
    path = tmp_path / "m.mps"
    path.write_text(template.format(bound=bound))
    return read_mps(path)


@pytest.mark.parametrize("bound", [" BV BND x 5", " BV BND x 0.5", " BV BND x -1", " BV BND x 1e30",
                                   " BV x 5", "\tBV\tBND\tx\t2\t", " BV x abc"])
def test_free_format_value_other_than_0_or_1_is_refused_with_its_line(tmp_path, bound):
    with pytest.raises(FormatError, match="BV takes no value") as err:
        _read(tmp_path, FREE, bound)
    assert err.value.line == 11 and err.value.entity == "x"


@pytest.mark.parametrize("value", ["5", "0.5", "abc", "2e0"])
def test_fixed_format_value_other_than_0_or_1_is_refused_with_its_line(tmp_path, value):
    with pytest.raises(FormatError, match="BV takes no value") as err:
        _read(tmp_path, FIXED, " BV BND       x a       " + value)
    assert err.value.line == 11 and err.value.entity == "x a"


@pytest.mark.parametrize("bound", [" BV BND x", " BV BND x 1", " BV BND x 0", " BV BND x 1.0", " BV BND x 1e0",
                                   " BV BND x -0", " BV x 1", " BV x"])
def test_free_format_blank_0_or_1_reads_binary(tmp_path, bound):
    p = _read(tmp_path, FREE, bound)
    assert p.integrality.tolist() == [True, False]
    assert p.col_lower.tolist() == [0.0, 0.0] and p.col_upper.tolist() == [1.0, float("inf")]


@pytest.mark.parametrize("bound", [" BV BND       x a", " BV BND       x a       1", " BV BND       x a       0."])
def test_fixed_format_blank_0_or_1_reads_binary(tmp_path, bound):
    p = _read(tmp_path, FIXED, bound)
    assert p.col_names.tolist() == ["x a", "y"] and p.integrality.tolist() == [True, False]
    assert p.col_upper.tolist() == [1.0, float("inf")]


def test_init_exits_3_naming_the_line(tmp_path):
    base = tmp_path / "b.mps"
    base.write_text(FREE.format(bound=" BV BND x 5"))
    code, out = cli_json("init", base, "--state", tmp_path / "st", "--json")
    err = json.loads(out)["error"]
    assert code == 3 and err["line"] == 11 and err["entity"] == "x" and "BV" in err["message"]
    assert not (tmp_path / "st" / "CURRENT").exists()


@pytest.mark.parametrize("bound", [" FR x 5", " MI x -3", " PL x 7"])
def test_free_format_three_field_valueless_type_with_a_value_is_refused(tmp_path, bound):
    """``FR x 5`` (no set name) read x free and dropped the 5 without a word; the 4-field form was refused."""
    with pytest.raises(FormatError, match=f"bound type {bound.split()[0]} takes no value") as err:
        _read(tmp_path, FREE, bound)
    assert err.value.line == 11


@pytest.mark.parametrize("bound", [" FR BND x", " MI x", " PL BND x"])
def test_free_format_valueless_types_without_a_value_still_read(tmp_path, bound):
    assert _read(tmp_path, FREE, bound).n_cols == 2
