"""An error about unknown names in a delta names the distinct names (the first few, with their first rows, and
how many): 200k coef rows naming 200k different unknown variables said "unknown variable 'ghost0' at delta
rows 0, 1, 2, 3, 4, ... (200000 rows)", as if every row named ghost0 (fresh-install hunter, session 13)."""

from __future__ import annotations

import pytest

from solver.differential import apply_delta
from solver.model.delta import Delta
from solver.model.errors import ValidationError
from solver.model.problem import Problem


def _problem() -> Problem:
    return Problem.from_arrays(cost=[1.0], col_lower=[0.0], col_upper=[1.0], row_lower=[0.0], row_upper=[1.0],
                               matrix=[[1.0]], col_names=["x"], row_names=["r"])


def test_many_distinct_unknown_variables_are_counted_and_the_first_ones_named():
    n = 200_000
    d = Delta.coefs([f"ghost{i}" for i in range(n)], ["r"] * n, [1.0] * n)
    with pytest.raises(ValidationError) as e:
        apply_delta(_problem(), d)
    msg = str(e.value)
    assert "'ghost0' (row 0), 'ghost1' (row 1), 'ghost2' (row 2), ..." in msg
    assert f"({n} distinct names)" in msg and f"({n} rows)" in msg and e.value.entity == "ghost0"


def test_repeated_unknown_names_are_named_once_with_their_first_row():
    d = Delta.concat([Delta.coefs(["g1", "g1", "x", "g2", "g1"], ["r", "nope", "r", "r", "r"], [1.0] * 5)])
    with pytest.raises(ValidationError) as e:
        apply_delta(_problem(), d)
    assert "unknown variables 'g1' (row 0), 'g2' (row 3) (2 distinct names) at delta rows 0, 1, 3, 4" in str(e.value)


def test_one_unknown_name_keeps_the_short_message():
    with pytest.raises(ValidationError, match="coef names unknown variable 'g' at delta rows 0, 1"):
        apply_delta(_problem(), Delta.coefs(["g", "g"], ["r", "r"], [1.0, 2.0]))


def test_dropping_several_unknown_constraints_names_them():
    with pytest.raises(ValidationError, match=r"cannot drop unknown constraints 'a' \(row 0\), 'b' \(row 1\) "
                                              r"\(2 distinct names\)"):
        apply_delta(_problem(), Delta.drop_cons(["a", "b"]))
