"""A string column holding bytes that are not UTF-8 is bad input naming column and row, not an internal error.

Parquet writers can store any bytes in a string column (an encoding mix-up, a C or Java writer); pyarrow reads them
without a check. ``copter step`` on such a delta ended exit 1 ("internal error: ArrowException: Unknown error:
Wrapping ... failed" for a ``var`` name, a UnicodeDecodeError for a ``kind``); found by session 21's delta hunt.
"""

from __future__ import annotations

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.exit_codes import BAD_INPUT
from formats.io import read_delta
from solver.model.errors import ValidationError
from tests.helpers import small_lp_state, snapshot


def _strings(values: list[bytes], typ=pa.string()) -> pa.Array:
    """A string array over raw bytes, unvalidated (as a foreign writer's column reads back)."""
    offsets = np.concatenate(([0], np.cumsum([len(v) for v in values]))).astype(
        np.int64 if typ == pa.large_string() else np.int32)
    return pa.Array.from_buffers(typ, len(values), [None, pa.py_buffer(offsets.tobytes()),
                                                    pa.py_buffer(b"".join(values))])


def _delta(tmp_path, **cols) -> str:
    base = {"kind": pa.array(["var", "var", "var"]), "var": pa.array(["x1", "x2", "x3"]),
            "value": pa.array([1.0, 2.0, 3.0])}
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({**base, **cols}), path)
    return str(path)


@pytest.mark.parametrize("column,values,typ,row", [
    ("var", [b"x1", b"x2", b"x\xff3"], pa.string(), 2),
    ("var", [b"\xe9t\xe9", b"x2", b"x3"], pa.large_string(), 0),
    ("kind", [b"var", b"va\xff", b"var"], pa.string(), 1),
])
def test_step_refuses_a_non_utf8_name_naming_column_and_row(tmp_path, column, values, typ, row):
    st, _ = small_lp_state(tmp_path)
    path = _delta(tmp_path, **{column: _strings(values, typ)})
    before = snapshot(st)
    res = CliRunner().invoke(app, ["step", path, "--state", str(st), "--json"])
    assert res.exit_code == BAD_INPUT, res.output
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert err["row"] == row and "not UTF-8" in err["message"] and repr(column) in err["message"]
    assert snapshot(st) == before


def test_dictionary_names_point_at_the_first_row_using_the_bad_entry(tmp_path):
    names = pa.DictionaryArray.from_arrays(pa.array([0, 0, 1], pa.int32()), _strings([b"x1", b"x\xff"]))
    with pytest.raises(ValidationError, match="not UTF-8") as err:
        read_delta(_delta(tmp_path, var=names))
    assert err.value.row == 2 and err.value.entity == "x\\xff"


def test_valid_utf8_names_still_read(tmp_path):
    d = read_delta(_delta(tmp_path, var=pa.array(["x1", "é", "\U0001F600"])))
    assert d.table.column("var").to_pylist() == ["x1", "é", "\U0001F600"]
