"""Parquet input found by the bad-input hunt (session 10): a 5000-digit ``copter.base_round`` (an
``int()`` ValueError -> exit 1), decimal ``value`` columns (read one ulp off: ``-0.70`` as
-0.7000000000000001) and a file with no columns at all (applied as an empty round, exit 0)."""

from __future__ import annotations

import decimal
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.exit_codes import BAD_INPUT
from formats.io import read_delta
from solver import rounds
from solver.model.errors import FormatError
from tests.helpers import small_lp, snapshot


def _delta_table(value=pa.array([5.0])) -> pa.Table:
    return pa.table({"kind": ["var"], "var": ["x3"], "value": value})


def _write(t: pa.Table, path, meta) -> None:
    pq.write_table(t.replace_schema_metadata(meta), path)


def _step_refused(tmp_path, path) -> dict:
    st = tmp_path / "st"
    if not st.exists():
        rounds.init(small_lp(), st)
    before = snapshot(st)
    res = CliRunner().invoke(app, ["step", str(path), "--state", str(st), "--json"])
    assert res.exit_code == BAD_INPUT, res.output
    assert "Traceback" not in res.output
    assert snapshot(st) == before
    return json.loads(res.stdout.strip().splitlines()[-1])["error"]


@pytest.mark.parametrize("value", ["9" * 5000, "1" * 19, "0" * 4000 + "1" * 19])
def test_a_base_round_too_long_for_a_round_number_is_exit_3_naming_the_key(tmp_path, value):
    path = tmp_path / "d.parquet"
    _write(_delta_table(), path, {"copter.format": "delta", "copter.version": "1", "copter.base_round": value})
    with pytest.raises(FormatError, match="significant digits") as e:
        read_delta(path)
    assert e.value.entity == "copter.base_round" and len(str(e.value)) < 400
    err = _step_refused(tmp_path, path)
    assert err["entity"] == "copter.base_round" and err["file"] == str(path)


def test_a_base_round_with_many_leading_zeros_still_reads(tmp_path):
    path = tmp_path / "d.parquet"
    _write(_delta_table(), path, {"copter.format": "delta", "copter.version": "1",
                                  "copter.base_round": "0" * 5000 + "123456789012345678"})
    assert read_delta(path).base_round == 123456789012345678


@pytest.mark.parametrize("typ", [pa.decimal128(12, 2), pa.decimal128(38, 20), pa.decimal256(60, 30)])
@pytest.mark.parametrize("column", ["value", "lower", "upper"])
def test_decimal_columns_read_as_the_nearest_float64(tmp_path, typ, column):
    texts = ["-0.70", "0.10", "1.23", "0.30", "-12345.67", "0.00", "9.99", "0.07"]
    t = pa.table({"kind": ["var"] * len(texts), "var": [f"x{i}" for i in range(len(texts))],
                  column: pa.array([decimal.Decimal(x) for x in texts], typ)})
    path = tmp_path / "d.parquet"
    _write(t, path, {"copter.format": "delta", "copter.version": "1"})
    got = read_delta(path).table.column(column).to_pylist()
    assert got == [float(x) for x in texts]  # float("-0.70") is the correctly rounded double


def test_decimal_nulls_stay_null(tmp_path):
    t = pa.table({"kind": ["var"] * 3, "var": ["a", "b", "c"],
                  "value": pa.array([decimal.Decimal("-0.70"), None, decimal.Decimal("1200")],
                                    pa.decimal128(6, 2))})
    path = tmp_path / "d.parquet"
    _write(t, path, {"copter.format": "delta", "copter.version": "1"})
    assert read_delta(path).table.column("value").to_pylist() == [-0.7, None, 1200.0]


@pytest.mark.parametrize("meta", [True, False])
def test_a_file_with_no_columns_is_not_a_delta(tmp_path, meta):
    path = tmp_path / "none.parquet"
    _write(pa.table({}), path, {"copter.format": "delta", "copter.version": "1", "copter.base_round": "0"}
           if meta else {})
    with pytest.raises(FormatError, match="no 'kind' column"):
        read_delta(path)
    err = _step_refused(tmp_path, path)
    assert err["file"] == str(path) and err["entity"] == "kind"


def test_a_zero_row_delta_with_its_columns_is_still_a_no_change_round(tmp_path):
    path = tmp_path / "empty.parquet"
    t = pa.table({"kind": pa.array([], pa.string()), "var": pa.array([], pa.string())})
    _write(t, path, {"copter.format": "delta", "copter.version": "1", "copter.base_round": "0"})
    assert read_delta(path).table.num_rows == 0
    st = tmp_path / "st"
    rounds.init(small_lp(), st)
    res = CliRunner().invoke(app, ["step", str(path), "--state", str(st), "--json"])
    assert res.exit_code == 0, res.output


@pytest.mark.parametrize("column", ["value", "lower", "upper"])
@pytest.mark.parametrize("dictionary", [False, True])
def test_a_float16_column_is_refused_naming_it(tmp_path, column, dictionary):
    """Half precision holds about 3 significant digits and nothing above 65504: a writer's 0.1 arrives as
    0.0999755859375 and a capacity of 70000 as infinity (no capacity at all). Refused (exit 3, the state
    untouched), not read as stored (session 23's bad-input hunt)."""
    import numpy as np

    with np.errstate(over="ignore"):  # the overflow is the point
        vals = pa.array(np.array([0.1, 70000.0], dtype=np.float16))
    assert vals.type == pa.float16() and vals.to_pylist()[1] == float("inf")
    if dictionary:
        vals = vals.dictionary_encode()
    t = pa.table({"kind": ["var", "var"], "var": ["x3", "x4"], column: vals})
    path = tmp_path / "d.parquet"
    _write(t, path, {"copter.format": "delta", "copter.version": "1"})
    with pytest.raises(FormatError, match="float16") as e:
        read_delta(path)
    assert e.value.entity == column
    err = _step_refused(tmp_path, path)
    assert err["entity"] == column and "float16" in err["message"]
