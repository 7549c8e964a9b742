"""``copter solve``, ``init`` and ``step`` take the same solver options with the same checks; ``init`` stores
them in config.json (where ``step`` takes its settings), ``step`` overrides them for one round."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from formats.checkpoint import StateStore
from formats.io import write_delta, write_problem
from solver import rounds
from solver.model.delta import Delta
from tests.helpers import small_lp

runner = CliRunner()
SOLVER_OPTIONS = {"--tol", "--time-limit", "--iteration-limit", "--integer-fallback", "--integer-fallback-seconds",
                  "--integer-fallback-gap", "--relaxation-tol", "--relaxation-round-iterations", "--mip-gap",
                  "--presolve", "--submip-seconds", "--submip-gap", "--engine", "--iis-seconds", "--verbose"}


def _options(command: str) -> set[str]:
    import typer.main

    cmd = typer.main.get_command(app).commands[command]
    return {o for p in cmd.params for o in p.opts if o.startswith("--")}


@pytest.mark.parametrize("command", ["solve", "init", "step"])
def test_solve_init_and_step_offer_the_same_solver_options(command):
    assert SOLVER_OPTIONS <= _options(command)


def test_init_stores_the_given_solver_options_for_later_steps(tmp_path):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    res = runner.invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", str(st), "--iteration-limit",
                              "5000", "--integer-fallback-seconds", "7", "--tol", "1e-6", "--presolve", "off",
                              "--mip-gap", "0.01", "--relaxation-round-iterations", "128", "--submip-seconds", "0",
                              "--submip-gap", "inf", "--verbose"])
    assert res.exit_code == 0, res.output
    stored = rounds.settings_from_json(StateStore(st).config()["settings"])
    assert (stored.iteration_limit, stored.integer_fallback_seconds, stored.tol, stored.presolve) == \
        (5000, 7.0, 1e-6, "off")
    assert (stored.mip_gap_tol, stored.relaxation_round_iterations, stored.integer_submip_seconds) == (0.01, 128, 0.0)
    assert stored.integer_submip_gap == float("inf")
    assert stored.verbose is False  # per invocation, never stored


def test_step_iteration_limit_applies_to_that_round_only(tmp_path):
    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    assert runner.invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", str(st)]).exit_code == 0
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), tmp_path / "d1.parquet")
    res = runner.invoke(app, ["step", str(tmp_path / "d1.parquet"), "--state", str(st), "--tol", "1e-9",
                              "--iteration-limit", "1", "--accept-failed", "--json"])
    rep = json.loads(res.stdout)
    assert rep["status"] == "ITERATION_LIMIT" and res.exit_code == 5
    assert rounds.settings_from_json(StateStore(st).config()["settings"]).iteration_limit == 1_000_000


@pytest.mark.parametrize(("args", "needle"), [
    (["--tol", "0"], "--tol must be positive"),
    (["--tol", "1e-17"], "--tol must be at least 1e-10"),  # helper-190: ran to the iteration limit, exit 5
    (["--tol", "5e-324"], "--tol must be at least 1e-10"),
    (["--relaxation-tol", "1e-11"], "--relaxation-tol must be at least 1e-10"),
    (["--time-limit", "-1"], "--time-limit must be positive"),
    (["--iteration-limit", "-5"], "--iteration-limit must be >= 0"),
    (["--integer-fallback", "cplex"], "--integer-fallback must be"),
    (["--integer-fallback-seconds", "0"], "--integer-fallback-seconds must be positive"),
    (["--integer-fallback-gap", "-0.1"], "--integer-fallback-gap must be >= 0"),
    (["--presolve", "maybe"], "--presolve must be one of"),
    (["--mip-gap", "-1"], "--mip-gap must be >= 0"),
    (["--mip-gap", "inf"], "--mip-gap must be >= 0 and finite"),  # was Settings' own message (settings kind)
    (["--submip-seconds", "-1"], "--submip-seconds must be >= 0"),
    (["--submip-gap", "nan"], "--submip-gap must be >= 0"),
    (["--relaxation-round-iterations", "-1"], "--relaxation-round-iterations must be >= 0"),
])
@pytest.mark.parametrize("command", ["solve", "init"])
def test_a_bad_solver_option_is_a_usage_error_naming_it(tmp_path, command, args, needle):
    write_problem(small_lp(), tmp_path / "base.parquet")
    extra = ["--state", str(tmp_path / "st")] if command == "init" else []
    res = runner.invoke(app, [command, str(tmp_path / "base.parquet"), *extra, *args, "--json"])
    err = json.loads(res.stdout)["error"]
    assert res.exit_code == 2 and err["kind"] == "usage" and needle in err["message"]
    assert not (tmp_path / "st").exists()


@pytest.mark.parametrize(("args", "needle"), [
    (["--submip-seconds", "-1"], "--submip-seconds must be >= 0"),
    (["--submip-gap", "-0.5"], "--submip-gap must be >= 0"),
    (["--tol", "2"], "--tol must be below 1"),
    (["--tol", "1e-17"], "--tol must be at least 1e-10"),
])
def test_a_bad_solver_option_on_step_is_a_usage_error_and_leaves_the_state_untouched(tmp_path, args, needle):
    from tests.helpers import snapshot

    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    assert runner.invoke(app, ["init", str(tmp_path / "base.parquet"), "--state", str(st)]).exit_code == 0
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), tmp_path / "d1.parquet")
    before = snapshot(st)
    res = runner.invoke(app, ["step", str(tmp_path / "d1.parquet"), "--state", str(st), *args, "--json"])
    err = json.loads(res.stdout)["error"]
    assert res.exit_code == 2 and err["kind"] == "usage" and needle in err["message"]
    assert snapshot(st) == before


# --- the table (copter_cli.solver_options.OPTIONS) is the one declaration ---------------------------------------

PARTITION_INIT = {"--partitions", "--client-regex", "--shared-rows-regex", "--partition-passes",
                  "--share-update-every", "--whole-below-nnz", "--executor",
                  "--ray-address"}  # stored by init, not solver options
OWN_OPTIONS = {"solve": {"--output", "--json", "--debug", "--help"},
               "init": {"--state", "--keep", "--out", "--wait", "--accept-failed", "--json", "--debug", "--help"}
               | PARTITION_INIT,
               "step": {"--state", "--force", "--accept-failed", "--out", "--wait", "--executor", "--ray-address",
                        "--json", "--debug", "--help"}}


def test_the_table_declares_the_documented_solver_options():
    from copter_cli.solver_options import OPTIONS

    assert {o.flag for o in OPTIONS} == SOLVER_OPTIONS
    assert len(OPTIONS) == len(SOLVER_OPTIONS)  # no flag twice


@pytest.mark.parametrize("command", ["solve", "init", "step"])
def test_solve_init_and_step_expose_exactly_the_tables_solver_options(command):
    from copter_cli.solver_options import OPTIONS

    assert _options(command) - OWN_OPTIONS[command] == {o.flag for o in OPTIONS}


def test_init_stores_exactly_the_rows_marked_stored():
    from dataclasses import fields

    from copter_cli.solver_options import OPTIONS
    from solver.model.settings import Settings

    known = {f.name for f in fields(Settings)}
    stored = rounds.settings_to_json(Settings())
    for o in OPTIONS:
        assert o.field in known, o.flag
        assert (o.field in stored) == o.stored, o.flag


def _bad_values(option) -> list[str]:
    """Values the row's check must refuse: negative and nan for numbers, an unknown word for choices."""
    return {float: ["-1", "nan"], int: ["-1"], str: ["bogus"]}[option.type]


BAD = [(o.flag, v) for o in __import__("copter_cli.solver_options", fromlist=["OPTIONS"]).OPTIONS
       if o.check is not None for v in _bad_values(o)]


@pytest.fixture(scope="module")
def initialized(tmp_path_factory):
    """A state after init (round 0) and a delta for step; step with a bad option must leave it untouched."""
    d = tmp_path_factory.mktemp("table")
    write_problem(small_lp(), d / "base.parquet")
    assert runner.invoke(app, ["init", str(d / "base.parquet"), "--state", str(d / "st")]).exit_code == 0
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), d / "d1.parquet")
    return d


@pytest.mark.parametrize(("flag", "value"), BAD)
@pytest.mark.parametrize("command", ["solve", "init", "step"])
def test_a_bad_value_of_every_table_row_exits_2_naming_the_option(initialized, tmp_path, command, flag, value):
    from tests.helpers import snapshot

    st = initialized / "st"
    before = snapshot(st)
    args = {"solve": ["solve", str(initialized / "base.parquet")],
            "init": ["init", str(initialized / "base.parquet"), "--state", str(tmp_path / "new")],
            "step": ["step", str(initialized / "d1.parquet"), "--state", str(st)]}[command]
    res = runner.invoke(app, [*args, flag, value, "--json"])
    err = json.loads(res.stdout)["error"]
    assert res.exit_code == 2 and err["kind"] == "usage", res.output
    assert err["message"].startswith(f"{flag} must be"), err["message"]
    assert not (tmp_path / "new").exists() and snapshot(st) == before


def test_zero_is_a_given_value_not_an_absent_one():
    from copter_cli.solver_options import OPTIONS, GivenOptions

    values = {o.param: None for o in OPTIONS} | {"verbose": False, "submip_seconds": 0.0, "iteration_limit": 0}
    s = GivenOptions(values).settings()
    assert (s.integer_submip_seconds, s.iteration_limit, s.verbose) == (0.0, 0, False)
