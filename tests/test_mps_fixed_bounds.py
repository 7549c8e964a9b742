"""A fixed-format MPS file (a name holds a space) reads the same bounds, integrality and rows as free format.

HiGHS's fixed-format parser tells a bound type by its second letter without checking it, and copter took its
model as read: `BV x` was ignored (continuous, [0, inf)), `LI x 2` and `UI x 3` were read as `MI` (lower -inf, not
integer), `SC` was ignored and `SI` read as `MI`, `XX x 1` was read as `FX`, `up` was ignored, an integer column
of a MARKER block kept its default upper bound 1 under `LO x 2` (the empty box [2, 1]; free format: [2, inf)), and
a row of type `X` or `g` became [0, 0]; all without a word. The same model written in free format (names without
spaces) is the oracle."""

from __future__ import annotations

import numpy as np
import pytest

from formats.mps import read_mps
from solver.model.errors import FormatError, UnsupportedError


def _fixed(name: str, row: str, value: str, row2: str = "", value2: str = "") -> str:
    """A fixed-format data line: name in columns 5-12, row 15-22, value 25-36, row 40-47, value 50-61."""
    line = f"    {name:<8}  {row:<8}  {value:>12}"
    return (line + f"   {row2:<8}  {value2:>12}" if row2 else line) + "\n"


def _bound(kind: str, value: str | None) -> str:
    """A fixed-format BOUNDS line for column 'X 1': type in columns 2-3, set 5-12, column 15-22, value 25-36."""
    return f" {kind:<2} {'BND':<8}  {'X 1':<8}" + (f"  {value:>12}" if value is not None else "") + "\n"


def _model(bounds: list[tuple[str, str | None]], marker: bool, row_type: str = "G") -> str:
    x = _fixed("X 1", "OBJ", "-1", "C 1", "1") + _fixed("X 1", "C2", "1")
    if marker:
        x = "    M1        'MARKER'                 'INTORG'\n" + x + "    M2        'MARKER'                 'INTEND'\n"
    return ("NAME          T\nROWS\n N  OBJ\n L  C 1\n " + f"{row_type:<2}" + " C2\nCOLUMNS\n" + x
            + _fixed("Y", "OBJ", "-2", "C 1", "1") + "RHS\n" + _fixed("RHS", "C 1", "10", "C2", "1")
            + ("BOUNDS\n" + "".join(_bound(k, v) for k, v in bounds) if bounds else "") + "ENDATA\n")


def _both(tmp_path, text: str):
    """(fixed-format read, free-format read of the same model with the spaces taken out of the names)."""
    fixed, free = tmp_path / "fixed.mps", tmp_path / "free.mps"
    fixed.write_text(text)
    free.write_text(text.replace("X 1", "X1  ").replace("C 1", "C1  "))
    return read_mps(fixed), read_mps(free)


BOUNDS = [[], [("LO", "2")], [("MI", None)], [("PL", None)], [("FR", None)], [("UP", "5")], [("UP", "-3")],
          [("FX", "3")], [("LO", "-1"), ("UP", "-3")], [("LO", "0"), ("UP", "-3")], [("BV", None)], [("BV", "1")],
          [("LI", "2")], [("UI", "3")], [("UI", "-3")], [("LI", "-2"), ("UI", "4")], [("UP", "1e30")],
          [("MI", None), ("UP", "7")]]


@pytest.mark.parametrize("marker", [False, True], ids=["continuous", "marker"])
@pytest.mark.parametrize("bounds", BOUNDS, ids=lambda b: "+".join(k + (v or "") for k, v in b) or "none")
def test_bounds_and_integrality_read_as_in_free_format(tmp_path, bounds, marker):
    fixed, free = _both(tmp_path, _model(bounds, marker))
    assert fixed.col_names.tolist() == ["X 1", "Y"]
    assert np.array_equal(fixed.col_lower, free.col_lower) and np.array_equal(fixed.col_upper, free.col_upper), \
        (fixed.col_lower, fixed.col_upper, free.col_lower, free.col_upper)
    assert np.array_equal(fixed.integrality, free.integrality)
    assert np.array_equal(fixed.row_lower, free.row_lower) and np.array_equal(fixed.row_upper, free.row_upper)


@pytest.mark.parametrize(("kind", "value", "error", "words"), [
    ("XX", "1", FormatError, "'XX' is no bound type"),
    ("up", "1", FormatError, "'up' is no bound type"),
    ("SC", "3", UnsupportedError, "semi-continuous"),
    ("SI", "3", UnsupportedError, "semi-continuous"),
    ("LI", "2.5", FormatError, "not an integer"),
])
def test_a_bound_the_fixed_parser_would_misread_is_refused_naming_its_line(tmp_path, kind, value, error, words):
    p = tmp_path / "m.mps"
    p.write_text(_model([(kind, value)], marker=False))
    with pytest.raises(error) as e:
        read_mps(p)
    assert e.value.line == 13 and e.value.entity == "X 1" and words in str(e.value), str(e.value)


@pytest.mark.parametrize("row_type", ["X", "g"])
def test_an_unknown_row_type_is_refused_naming_its_line(tmp_path, row_type):
    p = tmp_path / "m.mps"
    p.write_text(_model([], marker=False, row_type=row_type))
    with pytest.raises(FormatError) as e:
        read_mps(p)
    assert e.value.line == 5 and e.value.entity == "C2" and "is not N, L, G or E" in str(e.value), str(e.value)
