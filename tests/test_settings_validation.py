"""``Settings`` validates itself (issue #16): a library user gets the CLI's checks as a typed error naming the
field, while the budgets the library builds itself (a spent time limit <= 0) stay valid."""

from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
import pytest
from typer.testing import CliRunner

from copter_cli.app import app
from solver.model.errors import SettingsError, UsageError
from solver.model.settings import Settings
from tests.helpers import require_data

NAN, INF = math.nan, math.inf


@pytest.mark.parametrize(("field", "value", "needle"), [
    ("tol", -1.0, "positive and finite"), ("tol", 0.0, "positive"), ("tol", NAN, "nan"), ("tol", INF, "finite"),
    ("tol", "1e-4", "number"), ("relaxation_tol", -1e-3, "positive"), ("infeasibility_tol", 0.0, "positive"),
    ("mip_gap_tol", -1e-4, ">= 0"), ("mip_gap_tol", INF, "finite"), ("mip_gap_tol", NAN, "nan"),
    ("integer_fallback_gap", -1.0, ">= 0"), ("integer_submip_gap", NAN, "nan"),
    ("time_limit_seconds", NAN, "nan"), ("integer_fallback_seconds", NAN, "nan"),
    ("integer_submip_seconds", NAN, "nan"), ("iteration_limit", NAN, "nan"), ("iteration_limit", 2.5, "whole"),
    # negative limits used to be taken as a spent budget without a word
    ("time_limit_seconds", -1.0, ">= 0"), ("time_limit_seconds", -INF, ">= 0"),
    ("integer_fallback_seconds", -3.0, ">= 0"),
    ("integer_submip_seconds", -1.0, ">= 0"), ("iis_seconds", -0.5, ">= 0"), ("iteration_limit", -5, ">= 0"),
    ("integer_dive_max", -1, ">= 0"), ("relaxation_round_iterations", -64, ">= 0"), ("power_iterations", -1, ">= 0"),
    ("ruiz_iterations", -2, ">= 0"), ("integer_dual_ascent_steps", -1, ">= 0"),
    ("integer_improve_max_integers", -1, ">= 0"), ("parallel_min_nnz", -1, ">= 0"),
    ("check_every", 0, "at least 1"), ("threads", 0, "at least 1"), ("presolve", "yes", "auto, on, off"),
    ("integer_fallback", "gurobi", "highs, none"), ("warm_primal_weight", "old", "fresh, reuse"),
    ("step_safety", 0.0, "positive"), ("reflection", NAN, "nan"), ("primal_weight_min", 0.0, "positive"),
    ("verbose", "no", "True or False"), ("tol", None, "must be set"),
    # a relative tolerance of 1 or more accepts any point (hunt 37: config.json's tol 5 stored an infeasible
    # round as OPTIMAL while --tol 5 was refused)
    ("tol", 1.0, "below 1"), ("tol", 5, "below 1"), ("infeasibility_tol", 2.0, "below 1"),
    ("relaxation_tol", 1e9, "below 1"),
])
def test_a_bad_value_raises_a_typed_error_naming_the_field(field, value, needle):
    with pytest.raises(SettingsError) as e:
        Settings(**{field: value})
    assert e.value.field == field and f"Settings.{field} " in str(e.value) and needle in str(e.value)
    assert isinstance(e.value, UsageError) and isinstance(e.value, ValueError)
    assert e.value.to_dict()["field"] == field and e.value.to_dict()["kind"] == "settings"


def test_replace_validates_too():
    with pytest.raises(SettingsError, match="Settings.tol"):
        dataclasses.replace(Settings(), tol=-1.0)


def test_values_the_library_builds_itself_stay_valid():
    # an exhausted budget (solver.clock, solver/integer, presolve) is a limit of 0: the solve ends at its limit
    s = Settings(time_limit_seconds=0.0, integer_fallback_seconds=0.0, integer_submip_seconds=0.0,
                 iteration_limit=0, iis_seconds=0.0)
    assert s.time_limit_seconds == 0.0
    Settings(relaxation_tol=INF)  # no looser first relaxation stage (solver.integer.stages)
    Settings(iteration_limit=INF, integer_fallback_gap=INF, integer_submip_gap=INF, relaxation_tol=None,
             pock_chambolle_alpha=None, threads=None, mip_gap_tol=0.0)
    Settings(tol=np.float64(1e-6), threads=np.int64(2), check_every=np.int64(32))  # numpy scalars are numbers
    Settings(presolve="off", integer_fallback="none", warm_primal_weight="reuse")


def test_a_spent_budget_still_solves_to_a_limit_status():
    from solver.api import solve_problem
    from tests.helpers import small_lp

    res = solve_problem(small_lp(), Settings(time_limit_seconds=0.0))
    assert res.status.name in ("TIME_LIMIT", "OPTIMAL")


def test_a_spent_command_budget_reaches_the_solver_as_zero():
    """``solver.clock.budgeted`` (a command whose --time-limit is spent before the solve) clamps at 0 instead
    of building a negative limit, which Settings now refuses."""
    import time

    from solver import clock

    saved = clock.command_start()
    clock.start_command(time.monotonic() - 5.0)
    try:
        assert clock.budgeted(Settings(time_limit_seconds=1.0)).time_limit_seconds == 0.0
    finally:
        clock.start_command(saved)


def test_cli_keeps_its_flag_naming_messages():
    path = require_data("mps/afiro.mps")
    runner = CliRunner()
    for flag, value in (("--tol", "-1"), ("--tol", "nan"), ("--mip-gap", "-1"), ("--presolve", "maybe")):
        res = runner.invoke(app, ["solve", str(path), flag, value, "--json"])
        assert res.exit_code == 2, res.output
        msg = json.loads(res.stdout)["error"]["message"]
        assert msg.startswith(flag) and "Settings." not in msg


def test_the_fast_path_accepts_only_what_settings_complaint_accepts():
    # __post_init__ skips settings_complaint for a value its field's fast predicate accepts: each predicate
    # must never accept a value settings_complaint refuses (and should accept every default, or it is no help)
    from solver.model.settings import _FAST_ACCEPT, settings_complaint

    values = [None, True, False, 0, 1, 2, -1, 10**6, 0.0, -0.0, 0.5, 1.0, 1.5, 2.0, -1.0, 1e-10, 1e10, INF, -INF,
              NAN, "auto", "on", "off", "fresh", "reuse", "pdhg", "alm", "highs", "none", "x", "1e-4",
              np.float64(1.0), np.int64(2), np.float64(NAN), [1]]
    defaults = Settings()
    for name, fast in _FAST_ACCEPT:
        assert fast(getattr(defaults, name)), name
        for v in values:
            if fast(v):
                assert settings_complaint(name, v) is None, (name, v)
