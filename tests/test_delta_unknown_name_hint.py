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
