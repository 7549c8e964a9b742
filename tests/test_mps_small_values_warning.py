"""An MPS matrix value that HiGHS's reader drops as zero (|value| <= 1e-9) is reported on stderr, with its line.

copter accepts HiGHS's reading (netlib's gas11 holds 12 such entries), but the model is another one: `min -x - 2y`,
`1e-12 x + y <= 10` has its optimum at x = 1e13, and the model read, without the entry, is unbounded; `copter
solve` said DUAL_INFEASIBLE with no word that an entry was gone, where a delta refuses the same coefficient."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from copter_cli.app import app
from formats.mps import read_mps
from tests.helpers import require_data

_TEXT = ("NAME t\nROWS\n N  obj\n L  c1\n G  c2\nCOLUMNS\n    x  obj  -1  c1  1e-12\n    x  c2  1\n"
         "    y  obj  -2  c1  1\n    y  c2  1\nRHS\n    rhs  c1  10  c2  1\nENDATA\n")


def test_the_dropped_entry_is_named_with_its_line(tmp_path, capsys):
    p = tmp_path / "m.mps"
    p.write_text(_TEXT)
    problem = read_mps(p)
    assert problem.nnz == 3  # HiGHS's reading stands
    err = capsys.readouterr().err
    assert "warning:" in err and "1 matrix value(s) of magnitude 1e-12 dropped, e.g. line 7" in err, err


def test_a_file_without_such_values_gets_no_warning(tmp_path, capsys):
    p = tmp_path / "m.mps"
    p.write_text(_TEXT.replace("1e-12", "1e-8"))
    assert read_mps(p).nnz == 4
    assert "dropped" not in capsys.readouterr().err


def test_solve_says_so_on_stderr(tmp_path):
    p = tmp_path / "m.mps"
    p.write_text(_TEXT)
    res = CliRunner().invoke(app, ["solve", str(p)])
    assert res.exit_code == 4 and "matrix value(s) of magnitude 1e-12 dropped" in res.stderr, res.stderr


def test_gas11_names_its_first_dropped_value(capsys):
    read_mps(require_data("mps") / "gas11.mps")
    assert "12 matrix value(s) of magnitude 1e-09 dropped, e.g. line 593" in capsys.readouterr().err


def test_solve_json_carries_the_warning(tmp_path):
    p = tmp_path / "m.mps"
    p.write_text(_TEXT)
    res = CliRunner().invoke(app, ["solve", str(p), "--json"])
    rep = json.loads(res.stdout)
    assert any("matrix value(s) of magnitude 1e-12 dropped" in w for w in rep["warnings"]), rep
    assert res.stderr.count("dropped") == 1, res.stderr


def test_convert_and_diff_json_carry_the_warning(tmp_path):
    p = tmp_path / "m.mps"
    p.write_text(_TEXT)
    res = CliRunner().invoke(app, ["convert", str(p), str(tmp_path / "m.parquet"), "--json"])
    assert res.exit_code == 0 and any("dropped" in w for w in json.loads(res.stdout)["warnings"]), res.output
    res = CliRunner().invoke(app, ["diff", str(tmp_path / "m.parquet"), str(p), "-o", str(tmp_path / "d.parquet"),
                                   "--json"])
    assert res.exit_code == 0 and any("dropped" in w for w in json.loads(res.stdout)["warnings"]), res.output
