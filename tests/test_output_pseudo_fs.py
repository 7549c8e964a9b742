"""An output in a folder that exists but takes no new file (a pseudo file system: /proc) is an environment fault,
exit 7 naming the destination and its folder. Before, creating the temporary file next to it raised ENOENT, which
no rule mapped: ``internal error (exit 1): FileNotFoundError`` (``copter report -o /proc/x.html``)."""

from __future__ import annotations

import json
import os

import pytest

from tests.helpers import OUTPUT_COMMANDS, output_command_inputs, run_main, small_lp_state, snapshot

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="needs Linux's /proc")


@pytest.mark.parametrize("name, command", OUTPUT_COMMANDS)
def test_an_output_in_proc_is_an_environment_fault(tmp_path, capsys, name, command):
    st, base = output_command_inputs(tmp_path, command)
    dest = f"/proc/copter-test-{os.getpid()}-{name}"
    argv = [a.format(base=base, st=st, dest=dest) for a in command]
    before = snapshot(st)
    code, out, err = run_main(capsys, *argv, "--json")
    error = json.loads(out)["error"]
    assert code == 7 and error["kind"] == "environment", (argv, code, out, err)
    assert dest in error["message"] and "accepts no new file" in error["message"], error
    assert not os.path.exists(dest)
    assert snapshot(st) == before  # the state is as it was


def test_step_out_in_proc_stores_the_round_and_says_so(tmp_path, capsys):
    st, d = small_lp_state(tmp_path)
    code, out, err = run_main(capsys, "step", d, "--state", st, "--out", "/proc", "--json")
    report = json.loads(out)
    assert code == 7 and report["error"]["kind"] == "environment", (code, out, err)
    assert "round 1 is stored and current" in report["error"]["message"] and report["error"]["round_stored"]
    assert report["error"]["file"] == "/proc/solution.parquet" and report["status"] == "OPTIMAL"
    assert (st / "CURRENT").read_text().strip() == "1"


def test_step_out_to_a_new_folder_in_proc_is_an_environment_fault_said_once(tmp_path, capsys):
    """helper-203: ``--out /proc/outx`` (a folder to make there) was exit 2, kind usage, its message on stderr twice
    (a warning line and the error line); making it gives ENOENT in a folder that exists: the machine's, exit 7."""
    st, d = small_lp_state(tmp_path)
    dest = f"/proc/copter-test-out-{os.getpid()}"
    code, out, err = run_main(capsys, "step", d, "--state", st, "--out", dest, "--json")
    report = json.loads(out)
    assert code == 7 and report["error"]["kind"] == "environment", (code, out, err)
    assert "accepts no new entry" in report["error"]["message"] and report["error"]["round_stored"]
    assert err.count("round 1 is stored and current") == 1, err
    assert (st / "CURRENT").read_text().strip() == "1" and not os.path.exists(dest)


def test_a_state_directory_in_proc_is_an_environment_fault(tmp_path, capsys):
    """helper-188: ``init --state /proc/x`` was exit 3 (a StateError, as for a mistyped path), ``/sys/x`` exit 7."""
    from formats.io import write_problem
    from tests.helpers import small_lp

    write_problem(small_lp(), tmp_path / "base.parquet")
    dest = f"/proc/copter-test-state-{os.getpid()}"
    code, out, err = run_main(capsys, "init", tmp_path / "base.parquet", "--state", dest, "--json")
    error = json.loads(out)["error"]
    assert code == 7 and error["kind"] == "environment", (code, out, err)
    assert dest in error["message"] and "accepts no new folder" in error["message"], error
    assert not os.path.exists(dest)
    # a missing parent elsewhere is still created, as before
    code, out, err = run_main(capsys, "init", tmp_path / "base.parquet", "--state", tmp_path / "a" / "b" / "st")
    assert code == 0, (out, err)
