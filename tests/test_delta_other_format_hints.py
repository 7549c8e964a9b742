"""A delta that is another table format gets a hint saying what it is (session 21's delta hunt).

A gzip-compressed Parquet file was told "it looks like an MPS model" (gzip's magic bytes); an Arrow IPC/Feather
file, a CSV behind a byte-order mark (UTF-8 or UTF-16) got no hint; a JSON table was told to use
``pandas.read_csv``; a Parquet file made from a BOM CSV read without ``encoding='utf-8-sig'`` (first column
``'\\ufeffkind'``) got no "did you mean 'kind'". All stay exit 3 with the state untouched.
"""

from __future__ import annotations

import gzip
import io
import json

import pyarrow as pa
import pyarrow.feather as feather
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.exit_codes import BAD_INPUT
from formats import parquet
from tests.helpers import small_lp_state, snapshot

_TABLE = pa.table({"kind": ["var"], "var": ["x3"], "value": [5.0]})


def _parquet_bytes() -> bytes:
    buf = io.BytesIO()
    pq.write_table(_TABLE, buf)
    return buf.getvalue()


def _feather_bytes() -> bytes:
    buf = io.BytesIO()
    feather.write_feather(_TABLE, buf)
    return buf.getvalue()


_CASES = [
    ("d.parquet.gz", lambda: gzip.compress(_parquet_bytes()), "gzip-compressed Parquet file"),
    ("d.feather", _feather_bytes, "Arrow IPC (Feather) file"),
    ("d.dat", lambda: b"\xef\xbb\xbfkind,var,value\r\nvar,x3,\"5\"\r\n", "encoding='utf-8-sig'"),
    ("d.csv", lambda: b"\xef\xbb\xbfkind,var,value\r\nvar,x3,5\r\n", "encoding='utf-8-sig'"),
    ("d.dat", lambda: "kind,var,value\r\nvar,x3,5\r\n".encode("utf-16"), "encoding='utf-16'"),
    ("d.json", lambda: b'[{"kind": "var", "var": "x3", "value": 5}]', "pandas.read_json(FILE)"),
    ("d.dat", lambda: b'{"kind": "var", "var": "x3", "value": 5}\n', "pandas.read_json(FILE, lines=True)"),
    # a Parquet file cut short: only pyarrow's "magic bytes not found in footer" before (a user's trial, session 52);
    # one whose footer is there but damaged is not called cut short (helper-206)
    ("d.parquet", lambda: _parquet_bytes()[:-9], "it starts as a Parquet file but its end is missing"),
    ("d.parquet", lambda: (lambda b: b[:-48] + bytes(v ^ 0x5A for v in b[-48:-8]) + b[-8:])(_parquet_bytes()),
     "a Parquet file whose footer (its schema and the index of its pages) is damaged"),
]


@pytest.mark.parametrize("name,data,hint", _CASES)
def test_step_names_the_format(tmp_path, name, data, hint):
    st, _ = small_lp_state(tmp_path)
    path = tmp_path / name
    path.write_bytes(data())
    before = snapshot(st)
    res = CliRunner().invoke(app, ["step", str(path), "--state", str(st), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT and "not a readable Parquet file" in err["message"], res.output
    assert hint in err["message"] and "MPS" not in err["message"], err["message"]
    assert snapshot(st) == before


@pytest.mark.parametrize("data,hint", [(gzip.compress(_parquet_bytes()), "gzip-compressed Parquet"),
                                       (b"\xef\xbb\xbfkind,var,value\nvar,x3,5\n", "utf-8-sig")])
def test_stdin_gets_the_hint_too(tmp_path, monkeypatch, data, hint):
    st, _ = small_lp_state(tmp_path)
    monkeypatch.setattr(parquet, "_STDIN_BYTES", [data])
    res = CliRunner().invoke(app, ["step", "-", "--state", str(st), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT and hint in err["message"], err["message"]


def test_a_gzip_mps_model_keeps_the_mps_hint(tmp_path):
    st, _ = small_lp_state(tmp_path)
    path = tmp_path / "base.mps.gz"
    path.write_bytes(gzip.compress(b"NAME t\nROWS\n N obj\nCOLUMNS\nRHS\nENDATA\n"))
    res = CliRunner().invoke(app, ["step", str(path), "--state", str(st), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT and "it looks like an MPS model" in err["message"], err["message"]


def test_a_bom_in_the_first_column_name_gets_did_you_mean(tmp_path):
    st, _ = small_lp_state(tmp_path)
    path = tmp_path / "d.parquet"
    pq.write_table(_TABLE.rename_columns(["\ufeffkind", "var", "value"]), path)
    res = CliRunner().invoke(app, ["step", str(path), "--state", str(st), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT and "did you mean 'kind'?" in err["message"], err["message"]
    assert "utf-8-sig" in err["message"]


def test_a_parquet_model_named_mps_is_called_parquet(tmp_path, capsys):
    """A Parquet model copied to ``base.mps`` read as an MPS file with an "unknown section 'PAR1...'" (a user's trial,
    session 52): it is now named a Parquet file, exit 3."""
    from formats.io import write_problem
    from tests.helpers import run_main, small_lp

    path = tmp_path / "base.mps"
    write_problem(small_lp(), tmp_path / "base.parquet")
    path.write_bytes((tmp_path / "base.parquet").read_bytes())
    code, out, _ = run_main(capsys, "solve", path, "--json")
    err = json.loads(out)["error"]
    assert code == BAD_INPUT and "it is a Parquet file" in err["message"] and "PAR1" in err["message"], err
    gz = tmp_path / "base.mps.gz"  # gzip of the same bytes: decompress it first, then .parquet (helper-206)
    gz.write_bytes(gzip.compress(path.read_bytes()))
    code, out, _ = run_main(capsys, "solve", gz, "--json")
    err = json.loads(out)["error"]
    assert code == BAD_INPUT and "gzip-compressed Parquet file" in err["message"], err
    assert "decompress it (gunzip) and name it .parquet" in err["message"], err
