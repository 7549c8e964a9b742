"""Names holding line separators or control characters (U+2028, U+2029, NEL U+0085, the C1 CSI U+009B) are valid;
JSON escapes them, and the human tables of ``show --solution`` now write them as Python escapes
(``ls\\u2028sep``) instead of raw, which split a table row over lines for line-based tools (fresh-install
hunter, session 13). JSON keeps the exact names."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from copter_cli.printable import printable
from formats.io import write_delta
from solver.model.delta import Delta

ODD = ["ls\u2028sep/x", "para\u2029/x", "nel\u0085/x", "csi\u009b31m/x", "plain/x"]  # C0 controls are refused


@pytest.mark.parametrize("raw,shown", [("ls\u2028sep", "ls\\u2028sep"), ("nel\u0085", "nel\\x85"),
                                       ("a\tb\nc", "a\\tb\\nc"), ("nb\u00a0sp", "nb\u00a0sp"), ("a\\b", "a\\b")])
def test_printable_escapes_controls_and_separators_only(raw, shown):
    assert printable(raw) == shown


@pytest.fixture(scope="module")
def state(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("odd")
    d = Delta.concat([Delta.vars(ODD, cost=[-1.0 - i for i in range(len(ODD))], upper=[1.0] * len(ODD)),
                      Delta.cons(["cap"], upper=[10.0]), Delta.coefs(ODD, ["cap"] * len(ODD), [1.0] * len(ODD))])
    d.format = "problem"
    write_delta(d, tmp / "p.parquet")
    st = tmp / "S"
    assert CliRunner().invoke(app, ["init", str(tmp / "p.parquet"), "--state", str(st)]).exit_code == 0
    return st


def test_show_solution_tables_escape_separators_in_names(state):
    res = CliRunner().invoke(app, ["show", "--solution", "--state", str(state), "--changes"])
    assert res.exit_code == 0, res.output
    out = res.output
    for ch in ("\u2028", "\u2029", "\u0085", "\u009b"):
        assert ch not in out
    for shown in ("ls\\u2028sep/x", "para\\u2029/x", "nel\\x85/x", "csi\\x9b31m/x"):
        assert shown in out
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("ls\\u2028sep "))
    assert "ls\\u2028sep/x 1" in line  # the client and its entry on one row


def test_show_solution_json_keeps_the_exact_names(state):
    res = CliRunner().invoke(app, ["show", "--solution", "--state", str(state), "--json"])
    names = {e["name"] for c in json.loads(res.stdout)["clients"] for e in c["top"]}
    assert set(ODD) <= names
