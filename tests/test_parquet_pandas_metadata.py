"""Malformed ``pandas`` schema metadata beside an unknown column: the column is refused by name (exit 3).

``_pandas_index_columns`` iterated ``index_columns`` without checking it was a list, so a file from another writer
with ``{"index_columns": null}`` (or a number) and an extra column ended exit 1 (TypeError); found by session 21's
delta hunt.
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


@pytest.mark.parametrize("pandas_meta", [b'{"index_columns": null}', b'{"index_columns": 5}', b"[1, 2]", b"\xff{"])
def test_an_extra_column_is_refused_by_name_whatever_the_pandas_metadata(tmp_path, pandas_meta):
    st, _ = small_lp_state(tmp_path)
    t = pa.table({"kind": ["var"], "var": ["x3"], "value": [5.0], "idx": [0]})
    path = tmp_path / "d.parquet"
    pq.write_table(t.replace_schema_metadata({b"pandas": pandas_meta}), path)
    before = snapshot(st)
    res = CliRunner().invoke(app, ["step", str(path), "--state", str(st), "--json"])
    assert res.exit_code == BAD_INPUT, res.output
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert err["entity"] == "idx" and "unknown column" in err["message"]
    assert snapshot(st) == before
