"""A coef or drop row naming an unknown entity suggests the closest existing name, as a new entity does.

`{kind: coef, var: 'x0 ', con: 'cap0'}` (a trailing space from a pipeline's padding) said `coef names unknown
variable 'x0 '` and `{kind: drop_con, con: 'CAP0'}` `cannot drop unknown constraint 'CAP0'`, where a `var` row with
the same name already said `did you mean 'x0'?`."""

from __future__ import annotations

import pytest

from solver.differential import apply_delta
from solver.model.delta import Delta
from solver.model.errors import ValidationError
from tests.helpers import small_lp


@pytest.mark.parametrize(("delta", "words"), [
    (Delta.coefs(["x0 "], ["cap0"], [1.0]), "coef names unknown variable 'x0 '; did you mean 'x0'"),
    (Delta.coefs(["x0"], ["Cap0"], [1.0]), "coef names unknown constraint 'Cap0'; did you mean 'cap0'"),
    (Delta.drop_cons(["CAP0"]), "cannot drop unknown constraint 'CAP0'; did you mean 'cap0'"),
    (Delta.drop_vars(["x9999"]), "cannot drop unknown variable 'x9999'"),
], ids=["coef-var", "coef-con", "drop-con", "drop-var-nothing-close"])
def test_the_error_suggests_the_closest_name(delta, words):
    problem = small_lp()
    with pytest.raises(ValidationError) as e:
        apply_delta(problem, delta)
    assert words in str(e.value), str(e.value)


@pytest.mark.parametrize("is_col", [True, False], ids=["var", "con"])
def test_a_dropped_entity_re_added_empty_is_said_to_be_dropped_not_misspelled(is_col):
    # {drop_var x3} + {var x3, value 1} said "new variable 'x3' ... did you mean 'x3' or 'x13' ...?": the name
    # it suggested was the very name given, which this delta drops (drops apply before upserts)
    problem = small_lp()
    name, what = ("x3", "variable") if is_col else ("cap3", "constraint")
    parts = [Delta.drop_vars([name]), Delta.vars([name], cost=[1.0])] if is_col else \
        [Delta.drop_cons([name]), Delta.cons([name], upper=[5.0])]
    with pytest.raises(ValidationError) as e:
        apply_delta(problem, Delta.concat(parts))
    msg = str(e.value)
    assert f"new {what} {name!r}" in msg and "did you mean" not in msg, msg
    assert f"this delta drops {what} {name!r}" in msg, msg
