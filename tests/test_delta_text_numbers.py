"""A delta whose numeric or ``integer`` column holds text (a CSV's quoted numbers) says so and how to convert it.

``value`` written as strings (``'-3'``) was refused as "has type string, expected float64" without saying why a
user's numbers became text; exit 3 and the state untouched as before (session 21's delta hunt).
"""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.exit_codes import BAD_INPUT
from tests.helpers import small_lp_state, snapshot


@pytest.mark.parametrize("column,values,shown,fix", [
    ("value", [None, "-3"], "'-3'", "pandas.to_numeric(df['value'])"),
    ("upper", pa.array(["4.5", None], pa.large_string()), "'4.5'", "pandas.to_numeric(df['upper'])"),
    ("integer", ["true", "false"], "'true'", "df['integer'].map("),
])
def test_text_in_a_number_column_is_named_with_the_conversion(tmp_path, column, values, shown, fix):
    st, _ = small_lp_state(tmp_path)
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"kind": ["var", "var"], "var": ["x1", "x2"], column: values}), path)
    before = snapshot(st)
    res = CliRunner().invoke(app, ["step", str(path), "--state", str(st), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT and err["entity"] == column, res.output
    assert f"holds text such as {shown}" in err["message"] and fix in err["message"], err["message"]
    assert snapshot(st) == before
