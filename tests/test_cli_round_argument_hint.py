"""``copter rollback 2`` (the round as an argument) names the option it meant (helper-184: click's "Got unexpected
extra argument(s) (2)" alone); other extra arguments keep click's message."""

from __future__ import annotations

import pytest

from tests.helpers import run_main


@pytest.mark.parametrize("argv,hint", [(["rollback", "2"], "copter rollback --to 2"),
                                       (["show", "1"], "copter show --round 1"),
                                       (["export", "3"], "copter export --round 3")])
def test_a_round_given_as_an_argument_names_its_option(tmp_path, capsys, argv, hint):
    code, out, err = run_main(capsys, *argv, "--state", str(tmp_path / "none"))
    assert code == 2
    assert f"(the round is an option: {hint})" in err, err
    assert not (tmp_path / "none").exists()


@pytest.mark.parametrize("argv", [["history", "3"], ["rollback", "2", "3"], ["rollback", "two"]])
def test_other_extra_arguments_keep_click_s_message(tmp_path, capsys, argv):
    code, out, err = run_main(capsys, *argv, "--state", str(tmp_path / "none"))
    assert code == 2
    assert "unexpected extra argument" in err and "the round is an option" not in err, err
