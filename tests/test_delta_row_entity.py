"""Every per-row delta error names the entity of its row (its ``var``/``con`` names), in the message and in
the error's ``entity`` (the ``--json`` error's ``entity`` field), as the unknown-name errors always did.

NaN values, an infinite cost or coefficient, a column a kind needs or must leave null, an unknown kind and
an ``integer`` flag other than 0/1 named only the row (``nan.parquet:0: value is NaN ... at delta row 0``).
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.exit_codes import BAD_INPUT
from formats.io import read_delta, write_delta, write_problem
from solver.differential import apply_delta
from solver.model.delta import Delta
from solver.model.errors import ValidationError
from tests.helpers import small_lp, snapshot

NAN, INF = float("nan"), float("inf")

CASES = [  # (delta, entity, text in the message)
    (Delta.vars(["x1"], cost=[NAN]), "x1", "variable 'x1'"),
    (Delta.vars(["x1"], lower=[NAN]), "x1", "variable 'x1'"),
    (Delta.cons(["cap1"], upper=[NAN]), "cap1", "constraint 'cap1'"),
    (Delta.coefs(["x1"], ["cap1"], [NAN]), "cap1/x1", "coefficient ('cap1', 'x1')"),
    (Delta.vars(["x1"], cost=[INF]), "x1", "variable 'x1'"),
    (Delta.coefs(["x1"], ["cap1"], [INF]), "cap1/x1", "coefficient ('cap1', 'x1')"),
    (Delta.coefs(["x1"], ["cap1"], [-1e31]), "cap1/x1", "coefficient ('cap1', 'x1')"),
    (Delta.from_columns(["coef"], var=["x1"], con=["cap1"]), "cap1/x1", "coefficient ('cap1', 'x1')"),
    (Delta.from_columns(["drop_var"], var=["x1"], value=[1.0]), "x1", "variable 'x1'"),
    (Delta.from_columns(["con"], con=["cap1"], integer=[True]), "cap1", "constraint 'cap1'"),
    (Delta.from_columns(["vra"], var=["x1"]), "x1", "variable 'x1'"),
]
IDS = ["nan-cost", "nan-var-lower", "nan-con-upper", "nan-coef", "inf-cost", "inf-coef", "big-coef",
       "coef-without-value", "drop-with-value", "con-with-integer", "unknown-kind"]


def _at_row_1(d: Delta) -> Delta:
    """``d`` after one valid row, so the culprit is delta row 1."""
    return Delta.concat([Delta.vars(["x2"], cost=[1.0]), d], base_round=0)


@pytest.mark.parametrize("delta,entity,text", CASES, ids=IDS)
def test_a_per_row_error_names_the_entity(delta, entity, text):
    with pytest.raises(ValidationError) as e:
        apply_delta(small_lp(), _at_row_1(delta))
    assert e.value.entity == entity and e.value.row == 1
    # the row and the entity said once: "row 1: variable 'x1': ...", not "row 1: 'x1': variable 'x1': ... at
    # delta row 1" (user trial, session 18)
    assert text in e.value.message and "row 1" not in e.value.message and str(e.value).startswith("row 1: ")
    # a coefficient is named by its label alone ('cap1/x1' was added after "coefficient ('cap1', 'x1')")
    assert str(e.value).count(text) == 1 and str(e.value).count(repr(entity)) == (repr(entity) in text)


def test_a_row_without_names_has_no_entity():
    with pytest.raises(ValidationError, match="needs a non-null 'var'") as e:
        apply_delta(small_lp(), Delta.from_columns(["var"], value=[1.0]))
    assert e.value.entity is None and e.value.row == 0


def test_an_integer_flag_other_than_0_or_1_names_the_variable(tmp_path):
    t = Delta.vars(["x1", "x2"], cost=[1.0, 2.0]).table
    t = t.set_column(6, "integer", pa.array([0, 2], pa.int64()))
    pq.write_table(t, tmp_path / "i.parquet")
    with pytest.raises(ValidationError, match="variable 'x2'") as e:
        read_delta(tmp_path / "i.parquet")
    assert e.value.entity == "x2" and e.value.row == 1


@pytest.mark.parametrize("delta,entity,text", [CASES[0], CASES[5]], ids=["nan-cost", "inf-coef"])
def test_step_error_json_names_the_entity_and_keeps_the_state(tmp_path, delta, entity, text):
    write_problem(small_lp(), tmp_path / "base.parquet")
    state = tmp_path / "S"
    assert CliRunner().invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", str(state)]).exit_code == 0
    path = tmp_path / "bad.parquet"
    write_delta(_at_row_1(delta), path)
    before = snapshot(state)
    res = CliRunner().invoke(app, ["step", str(path), "--state", str(state), "--json"])
    assert "Traceback" not in res.output
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT == err["code"] and err["kind"] == "validation"
    assert err["entity"] == entity and err["row"] == 1 and text in err["message"]
    assert snapshot(state) == before


@pytest.mark.parametrize("json_out", [False, True])
def test_a_parquet_row_is_reported_as_the_0_based_row_index_never_as_a_line(tmp_path, json_out):
    """A delta's row is the 0-based row index (as pyarrow and pandas count), labelled ``row`` in the text
    (``bad.parquet: row 0: ...``) and in the JSON error (``"row": 0``); it was ``bad.parquet:0:`` and
    ``"line": 0``, read as a line of a text file (which has no line 0)."""
    write_problem(small_lp(), tmp_path / "base.parquet")
    state = tmp_path / "S"
    assert CliRunner().invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", str(state)]).exit_code == 0
    path = tmp_path / "bad.parquet"
    write_delta(Delta.concat([Delta.vars(["x1"], cost=[NAN])], base_round=0), path)
    res = CliRunner().invoke(app, ["step", str(path), "--state", str(state), *(["--json"] if json_out else [])])
    assert res.exit_code == BAD_INPUT
    assert f"{path}: row 0: variable 'x1': value is NaN" in res.stderr and f"{path}:0" not in res.output
    assert "at delta row" not in res.stderr and res.stderr.count("'x1'") == 1
    if json_out:
        err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
        assert err["row"] == 0 and "line" not in err and err["entity"] == "x1"
