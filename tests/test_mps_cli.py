"""`copter convert` on the shared MPS files: invalid files exit 3 with a message naming the problem."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.exit_codes import BAD_INPUT, USAGE
from tests.helpers import manifest, require_data

INVALID = manifest("mps-invalid")
# words that must appear in the message for each kind of defect (what the problem is, not just "error")
EXPECT = {
    "garbage.mps": "not a valid MPS", "nan0.mps": "NaN", "nan2.mps": "NaN",
    "moi_bad_objective_sense_newline.mps": "OBJSENSE", "moi_bounds_invalid_type2.mps": "PL takes no value",
    "moi_bounds_missing_column.mps": "BOUNDS", "moi_columns_malformed.mps": "COLUMNS line has 4 fields",
    "moi_columns_marker2.mps": "two separate blocks", "moi_malformed_indicator_value.mps": "INDICATORS",
    "moi_malformed_qcmatrix_header.mps": "QCMATRIX", "moi_malformed_qsection.mps": "QSECTION",
    "moi_parse_items_single_1.mps": "not defined", "moi_parse_items_single_3.mps": "not defined",
    "moi_ranges_malformed2.mps": "RANGES", "moi_rows_bad_sense.mps": "ROWS",
    "moi_rows_duplicate_2.mps": "same name", "moi_rows_missing.mps": "not defined",
}


def _run(args):
    return CliRunner().invoke(app, args)


@pytest.mark.data
@pytest.mark.parametrize("row", INVALID, ids=[r["file"] for r in INVALID])
def test_every_invalid_mps_file_is_rejected_with_exit_3_a_reason_and_no_traceback(row, tmp_path):
    path = require_data("mps-invalid") / row["file"]
    res = _run(["convert", str(path), str(tmp_path / "out.parquet")])
    assert res.exit_code == BAD_INPUT, res.output
    assert "Traceback" not in res.output and not (tmp_path / "out.parquet").exists()
    assert res.output.startswith("error (") and "exit 3" in res.output
    res = _run(["convert", str(path), str(tmp_path / "out.parquet"), "--json"])
    assert res.exit_code == BAD_INPUT and "Traceback" not in res.output
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]  # JSON: the message is never wrapped
    assert err["code"] == BAD_INPUT and err["kind"] in ("format", "validation", "unsupported")
    assert err["file"] == str(path) and EXPECT[row["file"]] in err["message"], err


@pytest.mark.data
def test_convert_json_prints_n_rows_n_cols_nnz_and_round_trips(tmp_path):
    mps = require_data("mps")  # skips (or fails under COPTER_REQUIRE_DATA=1) before the manifest is used
    row = next(r for r in manifest("mps") if r["file"] == "afiro.mps")
    res = _run(["convert", str(mps / "afiro.mps"), str(tmp_path / "x.parquet"), "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert (out["n_rows"], out["n_cols"], out["nnz"]) == (int(row["rows"]), int(row["cols"]), int(row["nonzeros"]))
    res = _run(["convert", str(tmp_path / "x.parquet"), str(tmp_path / "x.mps"), "--json"])
    assert res.exit_code == 0 and json.loads(res.stdout)["nnz"] == out["nnz"]


def test_convert_refuses_an_unknown_extension_with_the_usage_code(tmp_path):
    res = _run(["convert", "in.txt", str(tmp_path / "x.parquet")])
    assert res.exit_code == USAGE and "extension" in " ".join(res.output.split())


def test_convert_of_a_missing_or_truncated_parquet_file_is_bad_input(tmp_path):
    res = _run(["convert", str(tmp_path / "missing.parquet"), str(tmp_path / "x.mps")])
    assert res.exit_code == BAD_INPUT and "not found" in " ".join(res.output.split())
    (tmp_path / "t.parquet").write_bytes(b"PAR1\x00\x00")
    res = _run(["convert", str(tmp_path / "t.parquet"), str(tmp_path / "x.mps"), "--json"])
    assert res.exit_code == BAD_INPUT and json.loads(res.stdout)["error"]["kind"] == "format"
    assert "Traceback" not in res.output


@pytest.mark.data
def test_diff_writes_the_delta_between_two_problems_and_reports_counts(tmp_path):
    from formats.io import read_delta, read_problem
    from solver.differential import apply_delta

    a, b = require_data("mps") / "afiro.mps", require_data("mps") / "sc50a.mps.gz"
    res = _run(["diff", str(a), str(b), "-o", str(tmp_path / "d.parquet"), "--base-round", "4", "--json"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    d = read_delta(tmp_path / "d.parquet")
    assert d.base_round == 4 and sum(out["counts"].values()) == out["delta_rows"] == len(d)
    q, _ = apply_delta(read_problem(a), d)
    assert q.equals(read_problem(b))


def test_diff_of_a_sense_or_offset_change_says_so(tmp_path):
    """A delta whose only change is the objective's sense or offset is not "no changes" (fresh-install user)."""
    import dataclasses

    from formats.io import write_problem
    from solver.workloads import make_scenario

    p = make_scenario("te", 8, seed=1).base()
    write_problem(p, tmp_path / "a.parquet")
    write_problem(dataclasses.replace(p, sense=-p.sense, offset=p.offset + 3.0), tmp_path / "b.parquet")
    res = _run(["diff", str(tmp_path / "a.parquet"), str(tmp_path / "b.parquet"), "-o", str(tmp_path / "d.parquet")])
    assert res.exit_code == 0, res.output
    assert "no changes" not in res.stdout
    assert "sense changed" in res.stdout and "objective offset changed" in res.stdout
