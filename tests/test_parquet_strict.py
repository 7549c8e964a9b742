"""Strict Parquet input (issue #16): a duplicated column name, a non-digit ``copter.base_round`` and a
name with a control character are exit 3 naming the culprit (they used to be a KeyError -> exit 1, a
silent ``int(" 2")``, and names an MPS export would cut)."""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.exit_codes import BAD_INPUT
from formats.io import read_delta, read_problem, write_problem
from solver.model.errors import FormatError, ValidationError
from solver.model.problem import Problem


def _problem() -> Problem:
    return Problem.from_arrays(cost=[1.0, 2.0], col_lower=[0, 0], col_upper=[4, 4], row_lower=[1],
                               row_upper=[3], matrix=np.array([[1.0, 1.0]]), col_names=["a", "b"],
                               row_names=["r"])


def _table(var=("a", "b", "a", "b"), con=(None, None, "r", "r")) -> pa.Table:
    return pa.table({"kind": ["var", "var", "coef", "coef"], "var": list(var), "con": list(con),
                     "value": [1.0, 2.0, 1.0, 1.0], "lower": [0.0, 0.0, None, None],
                     "upper": [4.0, 4.0, None, None], "integer": [False, False, None, None]})


def _con_rows(t: pa.Table) -> pa.Table:
    extra = pa.table({"kind": ["con"], "var": pa.array([None], pa.string()), "con": ["r"], "value": [None],
                      "lower": [1.0], "upper": [3.0], "integer": pa.array([None], pa.bool_())})
    return pa.concat_tables([t, extra.cast(t.schema)])


def _write(t: pa.Table, path, meta=None) -> None:
    meta = {"copter.format": "problem", "copter.version": "1", **(meta or {})}
    pq.write_table(t.replace_schema_metadata(meta), path)


def _cli_error(path) -> dict:
    res = CliRunner().invoke(app, ["solve", str(path), "--json"])
    assert res.exit_code == BAD_INPUT, res.output
    assert "Traceback" not in res.output
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert err["code"] == BAD_INPUT and err["file"] == str(path)
    return err


def test_control_table_reads_and_solves(tmp_path):
    path = tmp_path / "ok.parquet"
    _write(_con_rows(_table()), path)
    assert read_problem(path).equals(_problem().replace(name="ok"))
    res = CliRunner().invoke(app, ["solve", str(path), "--json"])
    assert res.exit_code == 0, res.output
    assert abs(json.loads(res.stdout.strip().splitlines()[-1])["objective"] - 1.0) < 1e-6


@pytest.mark.parametrize("dup", ["var", "value", "extra"])
def test_a_duplicated_column_name_is_a_format_error_naming_it(tmp_path, dup):
    t = _con_rows(_table())
    if dup == "extra":
        t = t.append_column("extra", pa.array([0] * t.num_rows))
    t = t.append_column(dup, t.column(dup if dup != "extra" else "extra"))
    path = tmp_path / "dup.parquet"
    _write(t, path)
    with pytest.raises(FormatError, match="appears more than once") as e:
        read_delta(path)
    assert e.value.entity == dup
    err = _cli_error(path)
    assert err["kind"] == "format" and err["entity"] == dup


@pytest.mark.parametrize("value", [" 2", "2 ", "+2", "-1", "2_0", "\u00b2", "\u0662", "２", "", "2.0", "0x2"])
def test_base_round_must_be_ascii_digits(tmp_path, value):
    path = tmp_path / "d.parquet"
    _write(_con_rows(_table()), path, {"copter.format": "delta", "copter.base_round": value})
    with pytest.raises(FormatError, match="ASCII digits") as e:
        read_delta(path)
    assert e.value.entity == "copter.base_round"


@pytest.mark.parametrize("value,expected", [("0", 0), ("02", 2), ("17", 17)])
def test_base_round_digits_are_read(tmp_path, value, expected):
    path = tmp_path / "d.parquet"
    _write(_con_rows(_table()), path, {"copter.format": "delta", "copter.base_round": value})
    assert read_delta(path).base_round == expected


@pytest.mark.parametrize("dictionary", [False, True])
@pytest.mark.parametrize("column,bad", [("var", "a\x00"), ("var", "b\x01c"), ("con", "r\x7f"), ("con", "r\n")])
def test_a_name_with_a_control_character_is_refused_naming_row_and_name(tmp_path, dictionary, column, bad):
    t = _con_rows(_table())
    values = t.column(column).to_pylist()
    row = 3 if column == "var" else 4
    values[row] = bad
    arr = pa.array(values, pa.string())
    t = t.set_column(t.schema.get_field_index(column), column, arr.dictionary_encode() if dictionary else arr)
    path = tmp_path / "c.parquet"
    _write(t, path)
    with pytest.raises(ValidationError, match="control character") as e:
        read_delta(path)
    assert e.value.row == row and e.value.entity == bad
    err = _cli_error(path)
    assert err["row"] == row and err["entity"] == bad


def test_an_unused_dictionary_entry_with_a_control_character_does_not_count(tmp_path):
    t = _con_rows(_table())
    names = t.column("var").to_pylist()
    dictionary = pa.array(["a", "b", "junk\x00"])
    idx = pa.array([None if v is None else ["a", "b"].index(v) for v in names], pa.int32())
    t = t.set_column(1, "var", pa.DictionaryArray.from_arrays(idx, dictionary))
    path = tmp_path / "u.parquet"
    _write(t, path)
    assert read_problem(path).col_names.tolist() == ["a", "b"]


def test_problem_written_by_copter_still_reads(tmp_path):
    path = tmp_path / "p.parquet"
    write_problem(_problem(), path)
    assert read_problem(path).equals(_problem().replace(name="p"))


@pytest.mark.parametrize("name,hint", [("Value", "did you mean 'value'"), ("cost", "columns kind, var"),
                                       ("upper ", "did you mean 'upper'")])
def test_an_unknown_column_is_a_format_error_naming_it_not_a_dropped_update(tmp_path, name, hint):
    t = _con_rows(_table())
    t = t.append_column(name, pa.array([9.0] * t.num_rows))
    path = tmp_path / "x.parquet"
    _write(t, path)
    with pytest.raises(FormatError, match="unknown column") as e:
        read_delta(path)
    assert e.value.entity == name and hint in e.value.message
    err = _cli_error(path)
    assert err["kind"] == "format" and err["entity"] == name


def test_a_misspelled_value_column_in_a_step_delta_is_exit_3_and_changes_nothing(tmp_path):
    state = tmp_path / "s"
    prob = tmp_path / "p.parquet"
    write_problem(_problem(), prob)
    assert CliRunner().invoke(app, ["init", str(prob), "--state", str(state)]).exit_code == 0
    before = sorted((p.relative_to(state), p.read_bytes()) for p in state.rglob("*") if p.is_file())
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"kind": ["var"], "var": ["a"], "Value": [5.0]}), path)
    res = CliRunner().invoke(app, ["step", str(path), "--state", str(state), "--json"])
    assert res.exit_code == BAD_INPUT and "'Value'" in res.output
    assert sorted((p.relative_to(state), p.read_bytes()) for p in state.rglob("*") if p.is_file()) == before


def test_a_pandas_index_column_is_ignored(tmp_path):

    df = _con_rows(_table()).to_pandas()
    df.index = [f"r{i}" for i in range(len(df))]  # a non-range index: written as a column
    path = tmp_path / "pd.parquet"
    df.to_parquet(path)
    assert "__index_level_0__" in pq.read_schema(path).names
    assert read_problem(path).equals(_problem().replace(name="pd"))
    df.index.name = "row_id"  # a named index: its own column name, listed in the pandas metadata
    df.to_parquet(path)
    assert "row_id" in pq.read_schema(path).names and read_problem(path).cost.tolist() == [1.0, 2.0]


@pytest.mark.parametrize("value", ["1_0", " 5 ", "5 ", "\u0661\u0662", "１", "0x10", "", "1e", "inf", "nan",
                                   "1,5", "1e30", "-1e30", "1e300"])
def test_objective_offset_must_be_an_ascii_decimal_number(tmp_path, value):
    path = tmp_path / "d.parquet"
    _write(_con_rows(_table()), path, {"copter.format": "delta", "copter.objective_offset": value})
    with pytest.raises(FormatError, match="objective_offset") as e:
        read_delta(path)
    assert e.value.entity == "copter.objective_offset" or value in ("inf", "nan")


@pytest.mark.parametrize("value,expected", [("10", 10.0), ("-1.5e3", -1500.0), (".5", 0.5), ("5.", 5.0),
                                            ("+2E-1", 0.2), (repr(0.1 + 0.2), 0.1 + 0.2)])
def test_objective_offset_decimal_spellings_are_read_exactly(tmp_path, value, expected):
    path = tmp_path / "d.parquet"
    _write(_con_rows(_table()), path, {"copter.format": "delta", "copter.objective_offset": value})
    assert read_delta(path).offset == expected


@settings(max_examples=40, deadline=None)
@given(x=st.floats(min_value=-1e30, max_value=1e30, exclude_min=True, exclude_max=True))
def test_any_finite_offset_written_by_copter_reads_back_exactly(tmp_path_factory, x):
    from formats.io import write_delta
    from solver.model.delta import Delta

    path = tmp_path_factory.mktemp("o") / "d.parquet"
    write_delta(Delta.from_columns("var", var=["a"], value=[1.0], offset=x), path)
    assert read_delta(path).offset == x


def test_the_byte_prefilter_never_hides_a_control_character_and_passes_clean_names():
    """``_may_hold_control_bytes`` (one numpy pass over the data buffer before the exact RE2 scan): False only when
    no byte is a control byte; a slice whose hidden neighbour holds one, or a null slot, may say True (the exact
    scan then decides); large strings too; other types always go to the exact scan."""
    from formats.parquet import _check_name_bytes, _may_hold_control_bytes

    clean = pa.array(["job-1/a100", "é/ü", None, "x"], pa.string())
    assert not _may_hold_control_bytes(clean) and not _may_hold_control_bytes(clean.cast(pa.large_string()))
    for bad in ("a\x00", "b\x1f", "c\x7f", "d\n"):
        arr = pa.array(["ok", bad], pa.string())
        assert _may_hold_control_bytes(arr) and _may_hold_control_bytes(arr.cast(pa.large_string()))
    sliced = pa.array(["ok", "bad\x01", "fine"], pa.string()).slice(2)
    assert _may_hold_control_bytes(sliced)  # the buffer holds the hidden name: the exact scan decides ...
    _check_name_bytes(sliced, "var", "x.parquet")  # ... and passes the slice's own names
    assert _may_hold_control_bytes(pa.array([1, 2]))
    assert not _may_hold_control_bytes(pa.array([], pa.string()))
