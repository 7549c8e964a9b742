"""Partition options checked before any work: an unknown ``--executor`` is exit 2 naming the option also on a
monolithic state (``copter step`` used to ignore it there and exit 0), and init refuses it before writing."""

from __future__ import annotations

import shlex

import pytest

from formats.io import write_delta
from solver import rounds
from solver.workloads import make_scenario
from tests.helpers import run_main, snapshot


def test_unknown_executor_is_a_usage_error_on_a_monolithic_state(tmp_path, capsys):
    sc = make_scenario("te", 16, seed=4)
    state = tmp_path / "st"
    rounds.init(sc.base(), state)
    delta = tmp_path / "d1.parquet"
    write_delta(sc.next_delta(1), delta)
    before = snapshot(state)
    code, _, err = run_main(capsys, "step", delta, "--state", state, "--executor", "foo")
    assert code == 2 and "--executor" in err and "foo" in err
    assert snapshot(state) == before


def test_unknown_executor_at_init_writes_nothing(tmp_path, capsys):
    base = tmp_path / "base.parquet"
    from formats.io import write_problem

    write_problem(make_scenario("te", 16, seed=4).base(), base)
    code, _, err = run_main(capsys, "init", base, "--state", tmp_path / "st", "--executor", "foo")
    assert code == 2 and "--executor" in err
    assert not (tmp_path / "st").exists()


def test_no_clients_is_a_usage_error_before_any_compilation(tmp_path, capsys, monkeypatch):
    """A fresh install (no current kernel stamp) compiled every kernel before round 0 found that afiro's names
    give no client: the usage error came after the compilation. Now it comes first, and nothing is written."""
    import copter_cli.cmd_prepare as cmd_prepare
    import solver.prepare
    from tests.helpers import require_data

    def compile_all():
        raise AssertionError("compiled before the client check")

    monkeypatch.setattr(solver.prepare, "is_prepared", lambda: False)
    monkeypatch.setattr(cmd_prepare, "ensure_prepared", compile_all)
    mps = require_data("mps") / "afiro.mps"
    code, _, err = run_main(capsys, "init", mps, "--partitions", "2", "--state", tmp_path / "st")
    assert code == 2 and "--client-regex" in err and "no clients" in err
    assert not (tmp_path / "st").exists()
    code, _, err = run_main(capsys, "init", mps, "--partitions", "2", "--client-regex", r"^Z(?P<client>\d)",
                            "--state", tmp_path / "st")
    assert code == 2 and "matches no variable name" in err


def test_partition_passes_out_of_range_is_refused_before_any_compilation(tmp_path, capsys, monkeypatch):
    """--partition-passes above its bound was checked when round 0 began: on a fresh install after minutes
    of kernel compilation. It is refused first, and nothing is written."""
    import copter_cli.cmd_prepare as cmd_prepare
    import solver.prepare
    from solver.partition.round import MAX_PASSES

    def compile_all():
        raise AssertionError("compiled before the option check")

    monkeypatch.setattr(solver.prepare, "is_prepared", lambda: False)
    monkeypatch.setattr(cmd_prepare, "ensure_prepared", compile_all)
    base = tmp_path / "base.parquet"
    from formats.io import write_problem
    from solver.workloads import make_scenario

    write_problem(make_scenario("sia", 32, seed=0).base(), base)
    code, _, err = run_main(capsys, "init", base, "--partitions", "2", "--partition-passes", MAX_PASSES + 1,
                            "--state", tmp_path / "st")
    assert code == 2 and "--partition-passes" in err
    assert not (tmp_path / "st").exists()


def _client_base(tmp_path, monkeypatch, prepared: bool):
    """A client-named base problem file; with ``prepared`` False the kernels count as not compiled and
    compiling fails the test (a check must refuse the regex before any compilation)."""
    import copter_cli.cmd_prepare as cmd_prepare
    import solver.prepare
    from formats.io import write_problem
    from tests.helpers import client_allocation

    if not prepared:
        def compile_all():
            raise AssertionError("compiled before the regex check")

        monkeypatch.setattr(solver.prepare, "is_prepared", lambda: False)
        monkeypatch.setattr(cmd_prepare, "ensure_prepared", compile_all)
    base = tmp_path / "base.parquet"
    write_problem(client_allocation(6), base)
    return base


@pytest.mark.parametrize("prepared", [True, False])
@pytest.mark.parametrize(("option", "regex"), [("--client-regex", r"c(\d)"), ("--shared-rows-regex", "(?=cap)")])
def test_a_regex_re2_refuses_names_the_option_given(tmp_path, capsys, monkeypatch, prepared, option, regex):
    """``init --partitions 2 --client-regex 'c(\\d)'`` said ``invalid --pop-client-regex``: the grouping code,
    shared with compare's POP, named POP's option. A regex Python compiles but RE2 refuses (an unnamed group,
    a lookahead) now names the option the user gave, on a fresh install (checked before compiling) and after."""
    base = _client_base(tmp_path, monkeypatch, prepared)
    code, _, err = run_main(capsys, "init", base, "--partitions", "2", option, regex, "--state", tmp_path / "st")
    # the regex as the user typed it, quoted for the shell (repr doubled its backslashes: helper-182)
    assert code == 2 and f"invalid {option} {shlex.quote(regex)}" in err and "--pop-" not in err, err
    assert not (tmp_path / "st").exists()


def test_compare_names_its_own_pop_option(tmp_path, capsys):
    from tests.helpers import client_allocation

    st = tmp_path / "st"
    rounds.init(client_allocation(6), st)
    code, _, err = run_main(capsys, "compare", "--state", st, "-b", "pop-2", "--pop-client-regex", r"c(\d)")
    assert code == 2 and r"invalid --pop-client-regex 'c(\d)'" in err and "(?:...)" in err, err


@pytest.mark.parametrize("prepared", [True, False])
@pytest.mark.parametrize(("regex", "which"), [("(?P<client>)", "every variable name"),
                                              (r"^c1/(?P<client>)", "2 of 12 variable names")])
def test_a_client_regex_that_captures_only_empty_clients_says_so(tmp_path, capsys, monkeypatch, prepared, regex,
                                                                 which):
    """``--client-regex '(?P<client>)'`` matches every name but its client is empty (no client since 2531fb5):
    it was refused saying it "matches no variable name"."""
    base = _client_base(tmp_path, monkeypatch, prepared)
    code, _, err = run_main(capsys, "init", base, "--partitions", "2", "--client-regex", regex, "--state",
                            tmp_path / "st")
    assert code == 2 and f"--client-regex {regex!r} matches {which} but captures an empty client" in err, err
    assert "matches no variable name" not in err
    assert not (tmp_path / "st").exists()


@pytest.mark.parametrize(("regex", "clients"), [("(?P<client>c)", "1 client"), (r"^(?P<client>c[01])/", "2 clients")])
def test_more_partitions_than_clients_counts_them_in_words(tmp_path, capsys, regex, clients):
    """``--partitions 3`` over one client said "the 1 clients"."""
    from formats.io import write_problem
    from tests.helpers import client_allocation

    base = tmp_path / "base.parquet"
    write_problem(client_allocation(6), base)
    code, _, err = run_main(capsys, "init", base, "--partitions", "3", "--client-regex", regex, "--state",
                            tmp_path / "st")
    assert code == 2 and f"--partitions 3 is more than the {clients} of the base problem" in err, err


def test_a_regex_that_does_not_compile_is_quoted_as_typed(tmp_path, capsys, monkeypatch):
    """Python's own refusal (an unterminated group): the message quotes the regex as the user typed it, so the
    position it gives counts in the quoted text and the quoted text can be pasted back (repr doubled every
    backslash: ``'^(?P<client>d\\\\d+)('``, position 17 of the single-backslash text; helper-182)."""
    base = _client_base(tmp_path, monkeypatch, True)
    regex = r"^(?P<client>c\d+)("
    code, _, err = run_main(capsys, "init", base, "--partitions", "2", "--client-regex", regex,
                            "--state", tmp_path / "st")
    assert code == 2 and f"invalid --client-regex '{regex}'" in err and "position 17" in err, err
    assert regex[17] == "("
    assert not (tmp_path / "st").exists()
