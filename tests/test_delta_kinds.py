"""The one table of delta kinds (solver/differential/kinds.py) drives validation, apply and diff."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from solver.differential import apply_delta
from solver.differential.diff import diff
from solver.differential.kinds import FIELDS, KIND_TABLE, KINDS, PHASES, SCHEMA
from solver.model import delta as delta_module
from solver.model.delta import Delta
from solver.model.errors import ValidationError
from solver.model.problem import Problem

# a value that is valid in each column when the kind allows it
_SAMPLE = {"var": "x", "con": "c", "value": 1.0, "lower": 0.0, "upper": 1.0, "integer": True}


def _base() -> Problem:
    d = Delta.concat([Delta.vars(["x"], cost=[1.0]), Delta.cons(["c"], upper=[2.0]),
                      Delta.coefs(var=["x"], con=["c"], value=[1.0])])
    return apply_delta(Problem.empty(), d)[0]


def _row(kind: str, **cols) -> Delta:
    return Delta.from_columns([kind], **{f: [v] for f, v in cols.items()})


def test_delta_reads_the_table():
    assert delta_module.KINDS is KINDS and delta_module.SCHEMA is SCHEMA
    assert KINDS == tuple(k.name for k in KIND_TABLE)
    assert [k.name for k in PHASES] == ["drop_con", "drop_var", "var", "con", "coef"]


@pytest.mark.parametrize("kind", KIND_TABLE, ids=lambda k: k.name)
def test_each_kind_accepts_its_columns(kind):
    cols = {f: _SAMPLE[f] for f in kind.allowed}
    apply_delta(_base(), _row(kind.name, **cols))  # no error


@pytest.mark.parametrize("kind", KIND_TABLE, ids=lambda k: k.name)
def test_each_kind_requires_and_forbids_per_the_table(kind):
    full = {f: _SAMPLE[f] for f in kind.allowed}
    for f in kind.required:
        with pytest.raises(ValidationError, match=f"needs a non-null '{f}'"):
            apply_delta(_base(), _row(kind.name, **{**full, f: None}))
    for f in FIELDS:
        if f not in kind.allowed:
            with pytest.raises(ValidationError, match=f"must leave '{f}' null"):
                apply_delta(_base(), _row(kind.name, **{**full, f: _SAMPLE[f]}))


@pytest.mark.parametrize("kind", [k for k in KIND_TABLE if k.is_upsert], ids=lambda k: k.name)
def test_new_entity_takes_the_table_defaults(kind):
    documented = {"cost": 0.0, "col_lower": 0.0, "col_upper": np.inf, "integrality": False,
                  "row_lower": -np.inf, "row_upper": np.inf}  # package docstring: [0, +inf), cost 0, ...
    other = {"var": {"con": "c"}, "con": {"var": "x"}}[kind.side]  # a 0: added without coefficients on purpose
    d = Delta.concat([_row(kind.name, **{kind.side: "fresh"}), Delta.coefs(**{kind.side: ["fresh"]},
                                                                          **{k: [v] for k, v in other.items()},
                                                                          value=[0.0])])
    new, _ = apply_delta(_base(), d)
    for t in kind.targets:
        assert getattr(new, t.attr)[-1] == t.default == documented[t.attr], t


def test_diff_rows_come_in_phase_order():
    old = _base()
    d = Delta.concat([Delta.drop_cons(["c"]), Delta.drop_vars(["x"]), Delta.vars(["y"], cost=[3.0]),
                      Delta.cons(["d"], lower=[1.0]), Delta.coefs(var=["y"], con=["d"], value=[2.0])])
    new, _ = apply_delta(old, d)
    kinds = diff(old, new).table.column("kind").to_pylist()
    rank = {k.name: k.phase for k in KIND_TABLE}
    assert kinds and np.all(np.diff([rank[k] for k in kinds]) >= 0)
    assert set(kinds) == set(KINDS)
    again, _ = apply_delta(old, diff(old, new))
    assert list(again.col_names) == list(new.col_names) and np.array_equal(again.a_data, new.a_data)


def test_kind_column_accepts_the_table_names_as_a_dictionary():
    kind = pa.DictionaryArray.from_arrays(pa.array([KINDS.index("var")], pa.int32()), pa.array(KINDS))
    t = pa.table({"kind": kind, "var": ["z"]})
    new, info = apply_delta(_base(), Delta(table=t), strict=False)  # z stays empty
    assert list(info.vars_added) == ["z"] and new.n_cols == 2


def test_a_nan_coefficient_is_not_told_to_use_null():
    # a coef row's NaN said "(use null to mean 'unchanged')", and a null value is refused for a coef row
    # ("kind 'coef' needs a non-null 'value'"): the hint sent the writer from one error to the other
    import numpy as np

    from solver.differential import apply_delta
    from solver.model.delta import Delta
    from solver.model.errors import ValidationError
    from tests.helpers import small_lp

    with pytest.raises(ValidationError) as e:
        apply_delta(small_lp(), Delta.coefs(["x0"], ["cap0"], [np.nan]))
    msg = str(e.value)
    assert "NaN" in msg and "use null" not in msg and "leave the row out" in msg, msg
    with pytest.raises(ValidationError, match="use null to mean 'unchanged'"):
        apply_delta(small_lp(), Delta.vars(["x0"], cost=[np.nan]))
