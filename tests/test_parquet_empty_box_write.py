"""``convert`` and ``export`` to Parquet refuse a model with an empty box (lower > upper), which copter's Parquet
reader refuses: they wrote the file, exit 0, and ``solve``/``diff`` of it then failed with exit 3 (hunt 50,
helper-194). MPS holds such a model (an infeasible one) and is still written."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from copter_cli.app import app
from formats.io import read_problem

runner = CliRunner()

EMPTY_BOX = ("NAME t\nROWS\n N obj\n L r1\nCOLUMNS\n x obj -1 r1 1\n y obj -1 r1 1\nRHS\n rhs r1 4\n"
             "BOUNDS\n LO bnd x 5\n UP bnd x 3\nENDATA\n")


def cli(*args):
    res = runner.invoke(app, [str(a) for a in args])
    return res.exit_code, res.stdout, res.stderr


def test_convert_to_parquet_refuses_an_empty_box_and_writes_nothing(tmp_path):
    src = tmp_path / "e.mps"
    src.write_text(EMPTY_BOX)
    out = tmp_path / "e.parquet"
    code, so, se = cli("convert", src, out, "--json")
    assert code == 3, so + se
    err = json.loads(so)["error"]
    assert err["kind"] == "validation" and err["entity"] == "x"
    assert "variable 'x' has lower bound 5.0 > upper bound 3.0" in err["message"] and "write MPS instead" in err["message"]
    assert not out.exists() and not list(tmp_path.glob(".*"))  # no file, no temporary left
    code, so, se = cli("convert", src, tmp_path / "e2.mps")  # MPS holds it
    assert code == 0, so + se
    back = read_problem(tmp_path / "e2.mps")
    assert back.col_lower[0] == 5.0 and back.col_upper[0] == 3.0


def test_export_of_a_stored_infeasible_round_to_parquet_is_refused_and_to_mps_written(tmp_path):
    src = tmp_path / "e.mps"
    src.write_text(EMPTY_BOX)
    state = tmp_path / "st"
    code, so, se = cli("init", src, "--state", state, "--accept-failed", "--json")
    assert code == 4 and json.loads(so)["status"] == "PRIMAL_INFEASIBLE", so + se
    code, so, se = cli("export", "-o", tmp_path / "x.parquet", "--state", state, "--json")
    assert code == 3 and json.loads(so)["error"]["entity"] == "x", so + se
    assert not (tmp_path / "x.parquet").exists()
    code, so, se = cli("export", "-o", tmp_path / "x.mps", "--state", state)
    assert code == 0 and (tmp_path / "x.mps").exists(), so + se
