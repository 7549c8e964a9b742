"""A numeric option given a value that is not its kind of number (``--k 1e20``, ``--seed 1.5``, ``--partitions 1e3``,
``--tol abc``) is copter's one-line usage error naming the option, exit 2 (JSON with ``--json``), like an out-of-range
value (tests/test_cli_option_ranges.py), not click's "Usage: ... Invalid value for '--k': '1e20' is not a valid int."
box. Every integer and float option of every command is found by walking the app's click tree, so an option added
later is covered without a new case."""

from __future__ import annotations

import hashlib
import json

import pytest
import typer
from typer.testing import CliRunner

from copter_cli.app import app, build
from formats.number_text import PLAIN_ONLY
from tests.helpers import run_main, small_lp_state, snapshot


def _numeric_options() -> list[tuple[tuple[str, ...], str, str, bool]]:
    """(command path, flag, kind name, has --json) of every integer or float option in the whole app."""
    found = []

    def walk(cmd, path):
        for name, sub in sorted(getattr(cmd, "commands", {}).items()):
            walk(sub, (*path, name))
        has_json = any("--json" in p.opts for p in cmd.params)
        for p in cmd.params:
            if p.type.name in ("int", "float") and p.opts[0].startswith("-"):
                found.append((path, max(p.opts, key=len), p.type.name, has_json))

    walk(typer.main.get_command(build()), ())
    return found


OPTIONS = _numeric_options()
BAD = {"int": ("1e20", "1.5", "1e3", "ten"), "float": ("abc", "1,5")}
CASES = [(path, flag, bad, has_json) for path, flag, kind, has_json in OPTIONS for bad in BAD[kind]]


def test_the_walk_finds_the_options_of_the_reports():
    """The options the bad-input hunter reported are among those walked (the walk can fail)."""
    flags = {(" ".join(path), flag, kind) for path, flag, kind, _ in OPTIONS}
    assert {("compare", "--k", "int"), ("compare", "--seed", "int"), ("init", "--partitions", "int"),
            ("init", "--share-update-every", "int"), ("step", "--tol", "float"),
            ("worker start", "--timeout", "float")} <= flags
    assert len(OPTIONS) > 40


@pytest.mark.parametrize("json_out", [False, True], ids=["text", "json"])
@pytest.mark.parametrize("path,flag,bad,has_json", CASES, ids=[f"{' '.join(c[0])} {c[1]} {c[2]}" for c in CASES])
def test_a_value_of_the_wrong_kind_is_copters_usage_error(capsys, path, flag, bad, has_json, json_out):
    if json_out and not has_json:
        pytest.skip("the command has no --json")
    code, out, err = run_main(capsys, *path, flag, bad, *(["--json"] if json_out else []))
    assert code == 2, (code, out, err)
    assert "Invalid value" not in err and "Usage:" not in err, err
    line = err.strip()
    kind = "an integer" if any(flag == f for p, f, k, _ in OPTIONS if p == path and k == "int") else "a number"
    assert line == f"error (usage, exit 2): {flag} must be {kind}, got {bad!r}", err
    if json_out:
        assert json.loads(out)["error"] == {"code": 2, "kind": "usage", "message": line.split(": ", 1)[1]}
    else:
        assert out == ""


@pytest.mark.parametrize("flag,value", [("--k", "+3"), ("--k", "007"), ("--time-limit", ".5"),
                                        ("--time-limit", "5."), ("--time-limit", "Infinity"),
                                        ("--feasibility-tol", "1E-3")])
def test_a_plain_value_still_parses(capsys, flag, value):
    """The check refuses only what is not a number of the option's kind written in ASCII: a sign, leading zeros,
    an exponent and float()'s ``inf`` words pass it and reach the command (here: the missing state)."""
    code, _, err = run_main(capsys, "compare", "-b", "pop", flag, value, "--state", "/nonexistent/copter-state")
    assert "must be an integer" not in err and "must be a number" not in err, err
    assert code == 3, (code, err)


# Python's int() and float() take these; no user means them, and another reader of the same text refuses them
SPELLINGS = ("1_000", "\uff11\uff10", " 5", "5 ", "\u0663")  # underscore, fullwidth 10, spaces, Arabic-Indic 3
SPELLING_CASES = [(path, flag, kind, bad) for path, flag, kind, _ in OPTIONS for bad in SPELLINGS]


@pytest.mark.parametrize("path,flag,kind,bad", SPELLING_CASES,
                         ids=[f"{' '.join(c[0])} {c[1]} {c[3]!r}" for c in SPELLING_CASES])
def test_a_number_python_reads_but_no_user_writes_is_refused(capsys, path, flag, kind, bad):
    """``--time-limit 1_000`` ran with 1000 s and ``--top １０`` showed 10 rows: every numeric option of every
    command now refuses a value not written in ASCII digits, as the delta files' metadata do
    (formats.number_text), naming the option and the value."""
    code, out, err = run_main(capsys, *path, flag, bad)
    assert code == 2, (code, out, err)
    said = "an integer" if kind == "int" else "a number"
    assert err.strip() == f"error (usage, exit 2): {flag} must be {said} {PLAIN_ONLY}, got {bad!r}", err
    assert out == ""


def _digests(root) -> dict[str, str]:
    """Every file under ``root`` with the sha256 of its bytes."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("args", [
    ("step", "{delta}", "--state", "{st}", "--time-limit", "1_000"),
    ("step", "{delta}", "--state", "{st}", "--iteration-limit", "\uff11\uff10"),
    ("step", "{delta}", "--state", "{st}", "--tol", " 1e-6"),
    ("rollback", "--state", "{st}", "--to", "\u0660"),
    ("init", "{base}", "--state", "{new}", "--partitions", "\uff12"),
    ("show", "--state", "{st}", "--top", "1_0"),
    ("export", "--state", "{st}", "-o", "{new}.mps", "--round", "\uff10"),
])
def test_a_refused_spelling_leaves_the_state_untouched(tmp_path, args):
    st, delta = small_lp_state(tmp_path)
    before = _digests(st)
    argv = [a.format(base=tmp_path / "base.parquet", new=tmp_path / "new", st=st, delta=delta) for a in args]
    res = CliRunner().invoke(app, [*argv, "--json"])
    assert res.exit_code == 2, res.output
    flag, bad = argv[-2:]
    said = "a number" if flag in ("--tol", "--time-limit") else "an integer"
    assert json.loads(res.stdout)["error"]["message"] == f"{flag} must be {said} {PLAIN_ONLY}, got {bad!r}"
    assert _digests(st) == before
    assert not (tmp_path / "new").exists() and not (tmp_path / "new.mps").exists()


@pytest.mark.parametrize("args", [
    ("init", "{base}", "--state", "{new}", "--share-update-every", "1e20", "--partitions", "2"),
    ("step", "{delta}", "--state", "{st}", "--iteration-limit", "1e6"),
    ("rollback", "--state", "{st}", "--to", "0.5"),
])
def test_the_state_is_untouched(tmp_path, capsys, args):
    st, delta = small_lp_state(tmp_path)
    before = snapshot(st)
    argv = [a.format(base=tmp_path / "base.parquet", new=tmp_path / "new", st=st, delta=delta) for a in args]
    code, _, err = run_main(capsys, *argv, "--json")
    assert code == 2 and "must be an integer" in err, err
    assert snapshot(st) == before
    assert not (tmp_path / "new").exists()


def test_in_process_callers_get_the_same_error():
    """typer's CliRunner (an in-process caller of ``copter_cli.app.app``) gets the same exit and message."""
    from typer.testing import CliRunner

    from copter_cli.app import app

    res = CliRunner().invoke(app, ["compare", "--k", "1e20", "--json"])
    assert res.exit_code == 2, res.output
    assert json.loads(res.stdout)["error"]["message"] == "--k must be an integer, got '1e20'"
