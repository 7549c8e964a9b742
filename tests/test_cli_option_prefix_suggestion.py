"""An unknown option that begins one of the command's options is answered with that option: click's similarity
match offered ``--exec (Possible options: --executor, --keep)`` (a user's trial, session 35)."""

from __future__ import annotations

import json

import pytest

from tests.helpers import run_main


@pytest.mark.parametrize("args, said", [
    (["init", "b.parquet", "--exec", "ray"], "No such option: --exec Did you mean --executor?"),
    (["step", "d.parquet", "--time", "3"], "No such option: --time Did you mean --time-limit?"),
    (["compare", "--pop", "x"], "No such option: --pop (Possible options: --pop-client-regex, --pop-scaling, "
                                "--pop-shared-rows-regex, --pop-workers)"),
    (["step", "d.parquet", "--tl", "3"], "No such option: --tl Did you mean --tol?"),
    (["step", "d.parquet", "--wiat", "3"], "No such option: --wiat Did you mean --wait?"),
    (["step", "d.parquet", "--bogus"], "No such option: --bogus"),  # click said "(Possible options: --out, --verbose)"
])
def test_an_option_prefix_names_the_options_it_begins(capsys, args, said):
    code, out, err = run_main(capsys, *args, "--json")
    assert code == 2
    assert err == f"error (usage, exit 2): {said}\n"
    assert json.loads(out)["error"]["message"] == said


@pytest.mark.parametrize("args, said", [
    (["step", "d.parquet", "--partitions", "2"], "No such option: --partitions (an option of copter init, not of "
                                                 "copter step)"),
    (["show", "--executor", "process"], "No such option: --executor (an option of copter init and copter step, "
                                        "not of copter show)"),
    (["step", "d.parquet", "--bogus-thing", "2"], "No such option: --bogus-thing"),  # no command has it
])
def test_an_option_of_another_command_names_that_command(capsys, args, said):
    """``step --partitions 2`` said only "No such option: --partitions"; the number of parts is set by ``init``
    (a new user's trial, helper-183)."""
    code, out, err = run_main(capsys, *args, "--json")
    assert code == 2
    assert err == f"error (usage, exit 2): {said}\n"
    assert json.loads(out)["error"]["message"] == said


def test_an_option_of_another_command_changes_no_state(tmp_path, capsys):
    from tests.helpers import small_lp_state, snapshot

    st, delta = small_lp_state(tmp_path)
    before = snapshot(st)
    code, _, err = run_main(capsys, "step", delta, "--state", st, "--partitions", "2")
    assert code == 2 and "(an option of copter init, not of copter step)" in err, err
    assert snapshot(st) == before
