"""MPS input mistakes that used to leak as internal errors (H7 finding F4): a gzip file that does not
decompress, names that are not UTF-8. Exit 3 naming the file (and line), no traceback."""

from __future__ import annotations

import gzip
import json

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.exit_codes import BAD_INPUT
from formats.mps import read_mps
from solver.model.errors import FormatError


def test_gzip_with_a_valid_magic_but_garbage_content_is_a_format_error(tmp_path):
    bad = tmp_path / "g.mps.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03garbage garbage garbage garbage")
    with pytest.raises(FormatError, match="not a readable gzip file"):
        read_mps(bad)
    res = CliRunner().invoke(app, ["solve", str(bad), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT == err["code"] and err["kind"] == "format" and err["file"] == str(bad)
    assert "Traceback" not in res.output


LATIN1 = b"NAME t\nROWS\n N obj\n L c\xe9\nCOLUMNS\n    x obj 1 c\xe9 1\nRHS\n    rhs c\xe9 4\nENDATA\n"


@pytest.mark.parametrize("gz", [False, True])
def test_non_utf8_name_is_rejected_naming_the_line_not_an_internal_error(tmp_path, gz):
    path = tmp_path / ("l.mps.gz" if gz else "l.mps")
    path.write_bytes(gzip.compress(LATIN1) if gz else LATIN1)
    with pytest.raises(FormatError, match="not valid UTF-8") as e:
        read_mps(path)
    assert e.value.line == 4 and e.value.entity == "c\xe9"
    res = CliRunner().invoke(app, ["convert", str(path), str(tmp_path / "o.parquet"), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT == err["code"] and err["line"] == 4 and "iconv" in err["message"]
    assert "Traceback" not in res.output


def test_non_utf8_bytes_in_a_comment_line_are_fine(tmp_path):
    path = tmp_path / "c.mps"
    path.write_bytes(LATIN1.replace(b"c\xe9", b"c1").replace(b"ROWS\n", b"ROWS\n* caf\xe9\n"))
    assert read_mps(path).row_names.tolist() == ["c1"]


@pytest.mark.parametrize("names,bad", [(["x", "my var"], "my var"), (["x", ""], ""), (["", "a b"], ""),
                                       (["a\tb", "c"], "a\tb"), (["a", "b", "c\nd"], "c\nd")])
def test_writing_a_name_mps_cannot_hold_is_refused_instead_of_renamed(tmp_path, names, bad):
    from formats.io import write_problem
    from formats.mps import write_mps
    from solver.model.errors import ValidationError
    from solver.model.problem import Problem

    p = Problem.from_arrays(cost=[1.0] * len(names), col_lower=[0.0] * len(names), col_upper=[1.0] * len(names),
                            row_lower=[0.0], row_upper=[1.0], matrix=[[1.0] * len(names)], col_names=names,
                            row_names=["r"])
    with pytest.raises(ValidationError, match="MPS cannot hold") as e:
        write_mps(p, tmp_path / "o.mps")
    assert e.value.entity == bad and not (tmp_path / "o.mps").exists()
    write_problem(p, tmp_path / "p.parquet")  # Parquet keeps it
    res = CliRunner().invoke(app, ["convert", str(tmp_path / "p.parquet"), str(tmp_path / "o.mps"), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT == err["code"] and err["entity"] == bad and "Traceback" not in res.output
    assert not (tmp_path / "o.mps").exists()


@pytest.mark.parametrize("where", ["RHS\n    rhs c1 4\nFOOBAR\n    a b c\n", "FOOBAR\nRHS\n    rhs c1 4\n"])
def test_unknown_section_is_named_with_its_line_instead_of_highs_follow_up_message(tmp_path, where):
    path = tmp_path / "u.mps"
    path.write_text("NAME t\nROWS\n N obj\n L c1\nCOLUMNS\n    x obj 1 c1 1\n" + where + "ENDATA\n")
    res = CliRunner().invoke(app, ["solve", str(path), "--json"])
    err = json.loads(res.stdout.strip().splitlines()[-1])["error"]
    assert res.exit_code == BAD_INPUT == err["code"] and "unknown section 'FOOBAR'" in err["message"]
    assert err["line"] == where.split("\n").index("FOOBAR") + 7 and "Traceback" not in res.output


@pytest.mark.parametrize("cost", ["1e30", "1e300", "-2e31", "1" + "0" * 30])
def test_a_cost_of_1e30_or_more_names_its_line_and_token(tmp_path, cost):
    """Magnitudes >= 1e30 mean infinity; a finite token such as 1e300 used to be refused as "infinite (inf)" with
    no line, the reader looking only for tokens that overflow (fresh-install hunter). (A coefficient that large
    is refused by HiGHS's reader itself, above 1e15.)"""
    from solver.model.errors import ValidationError

    path = tmp_path / "big.mps"
    path.write_text("NAME T\nROWS\n N COST\n L R1\nCOLUMNS\n"
                    f"    X1 COST {cost} R1 1.0\n    X2 COST 1.0 R1 1.0\nRHS\n    RHS R1 4.0\nENDATA\n")
    with pytest.raises(ValidationError) as e:
        read_mps(path)
    assert e.value.line == 6 and e.value.entity == "X1" and f"({cost}:" in e.value.message
