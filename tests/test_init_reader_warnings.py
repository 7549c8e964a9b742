"""What the MPS reader warns about while `copter init` reads the base is part of round 0's warnings.

A negative UP bound read as lower -inf, matrix values HiGHS takes for 0 and an IMPORTANCES trailer ignored change
(or describe) the model round 0 solves, but the reader printed them on stderr only: `init --json` had
`"warnings": null` and `copter show` never said so, where a base name holding a space (also a fact of how the base
was read) is stored in round 0's warnings. They are now in the report, the JSON and `show`, and printed once."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from copter_cli.app import app

_TEXT = ("NAME t\nROWS\n N  obj\n L  c1\nCOLUMNS\n    x  obj  1  c1  1\n    y  obj  -1  c1  1\nRHS\n    rhs  c1  4\n"
         "BOUNDS\n UP bnd  x  -2\n LO bnd  x  -9\n UP bnd  y  3\nENDATA\n")


def test_round_0_keeps_the_readers_warning(tmp_path):
    base = tmp_path / "base.mps"
    base.write_text(_TEXT.replace(" LO bnd  x  -9\n", ""))  # x <= -2 without a lower bound: lower -inf
    st = tmp_path / "st"
    res = CliRunner().invoke(app, ["init", str(base), "--state", str(st), "--json"])
    assert res.exit_code == 4, res.output  # x -> -inf: unbounded
    res = CliRunner().invoke(app, ["init", str(base), "--state", str(st), "--json", "--accept-failed"])
    rep = json.loads(res.stdout)
    words = "1 column(s) with a negative UP bound and no lower bound get lower bound -inf (e.g. 'x')"
    assert any(words in w for w in rep["warnings"]), rep["warnings"]
    assert res.stderr.count(words) == 1, res.stderr  # printed once, as the round's warning
    shown = json.loads(CliRunner().invoke(app, ["show", "--state", str(st), "--json"]).stdout)
    assert any(words in w for w in shown["warnings"]), shown


def test_a_failed_round_0_keeps_it_too(tmp_path):
    base = tmp_path / "base.mps"
    base.write_text(_TEXT.replace(" LO bnd  x  -9\n", ""))
    res = CliRunner().invoke(app, ["init", str(base), "--state", str(tmp_path / "st"), "--json"])
    rep = json.loads(res.stdout)
    assert res.exit_code == 4 and rep["accepted"] is False
    assert any("negative UP bound" in w for w in rep["warnings"]), rep


def test_a_base_read_without_conventions_gets_no_warning(tmp_path):
    base = tmp_path / "base.mps"
    base.write_text(_TEXT)  # LO given: the bound stays
    res = CliRunner().invoke(app, ["init", str(base), "--state", str(tmp_path / "st"), "--json"])
    assert res.exit_code == 0, res.output
    assert not json.loads(res.stdout).get("warnings") and "warning" not in res.stderr
