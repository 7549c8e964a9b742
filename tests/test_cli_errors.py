"""User mistakes on the command line end with a usage/bad-input exit code and a message naming the culprit,
never exit 1 (internal), and leave the state directory byte-identical; with --json the error is one JSON
object on stdout."""

from __future__ import annotations

import json

import pytest

from copter_cli.app import main


def run_main(capsys, *args: str) -> tuple[int, str, str]:
    """copter_cli.app.main (the console-script entry point) in-process: (exit code, stdout, stderr)."""
    with pytest.raises(SystemExit) as ex:
        main([str(a) for a in args])
    out, err = capsys.readouterr()
    return ex.value.code if isinstance(ex.value.code, int) else 0, out, err


@pytest.mark.parametrize(("args", "needle"), [
    (("step", "--json"), "Missing argument"),
    (("solve", "--json"), "Missing argument"),
    (("bogus", "--json"), "No such command 'bogus'"),
    (("step", "x.parquet", "--bogus", "--json"), "No such option: --bogus"),
    (("rollback", "--to", "abc", "--json"), "'--to'"),
    (("--json",), "No such option: --json"),
])
def test_usage_error_with_json_prints_one_json_error_and_exits_2(capsys, args, needle):
    code, out, _ = run_main(capsys, *args)
    assert code == 2
    err = json.loads(out)["error"]
    assert err["code"] == 2 and err["kind"] == "usage" and needle in err["message"]
    assert len(out.strip().splitlines()) == 1


def test_usage_error_without_json_keeps_human_output_on_stderr(capsys):
    code, out, err = run_main(capsys, "step")
    assert code == 2 and out == "" and "Missing argument" in err


def test_help_with_json_still_prints_help_and_exits_0(capsys):
    code, out, _ = run_main(capsys, "step", "--help", "--json")
    assert code == 0 and "Usage" in out


def test_command_exit_code_passes_through_json_entry_point(capsys, tmp_path):
    code, out, _ = run_main(capsys, "show", "--state", tmp_path / "missing", "--json")
    assert code == 3 and json.loads(out)["error"]["kind"] == "state"
    assert not (tmp_path / "missing").exists()
