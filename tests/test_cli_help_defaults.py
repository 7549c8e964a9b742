"""Each command's help states the default that really applies. ``solve`` and ``init`` use ``Settings``'s;
``step`` uses the options init stored in the state (``init --tol 1e-6`` makes a later plain ``step`` solve to
1e-6), so its help must say "the state's", never promise ``Settings``'s value as if fixed. The same for
step's ``--executor``/``--ray-address`` (stored by init) and compare's ``--feasibility-tol`` (the state's
tol)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest

from copter_cli.solver_options import OPTIONS
from solver.model.settings import Settings
from tests.helpers import run_main

STATED = {"none": math.inf, "never": math.inf, "--tol": None}  #: words a help uses for a Settings default


def _help(capsys, command: str) -> str:
    code, out, _ = run_main(capsys, command, "--help")
    assert code == 0
    return " ".join(out.split())


def test_each_stated_default_is_the_settings_default():
    for o in OPTIONS:
        if not o.default:
            continue
        value = getattr(Settings(), o.field)
        stated = STATED.get(o.default, o.default)
        if isinstance(value, (int, float)) and not isinstance(value, bool) and stated is not None \
                and stated is not math.inf:
            stated = float(str(stated).replace(",", ""))
        assert stated == value, (o.flag, o.default, value)


@pytest.mark.parametrize("command", ["solve", "init"])
def test_solve_and_init_state_the_settings_defaults(capsys, command):
    text = _help(capsys, command)
    for o in OPTIONS:
        if o.default:
            assert f"default: {o.default}" in text, (command, o.flag)
    assert "default: the state's" not in text


def test_step_says_its_defaults_are_the_states(capsys):
    text = _help(capsys, "step")
    for o in OPTIONS:
        if not o.default:
            continue
        assert f"default: the state's, set by init; {o.default} unless init was given another" in text, o.flag
        assert f"(default: {o.default}" not in text and f"(default {o.default}" not in text, o.flag
    assert "inline (one after another in this process) (default: the state's, set by init; process" in text
    assert "--ray-address <str> Ray cluster to join with --executor ray (default: the state's, set by init" in text
    assert "Print the solver's iteration log on stderr." in text  # per invocation: nothing stored


def test_compare_feasibility_tol_default_is_the_states(capsys):
    text = _help(capsys, "compare")
    assert "(default: the state's --tol, set by init; 1e-4 unless init was given another)" in text


def test_a_plain_step_uses_the_tolerance_init_stored(tmp_path, capsys, monkeypatch):
    """What step's help says, checked: after init --tol 1e-6 a step without --tol solves to 1e-6."""
    from formats.checkpoint import StateStore
    from formats.io import write_delta, write_problem
    from solver import api
    from solver.model.delta import Delta
    from tests.helpers import small_lp

    write_problem(small_lp(), tmp_path / "base.parquet")
    st = tmp_path / "st"
    assert run_main(capsys, "init", tmp_path / "base.parquet", "--state", st, "--tol", "1e-6")[0] == 0
    assert StateStore(st).config()["settings"]["tol"] == 1e-6
    write_delta(Delta.concat([Delta.vars(["x3"], cost=[5.0])], base_round=0), tmp_path / "d1.parquet")
    tols, real = [], api.solve_problem
    monkeypatch.setattr(api, "solve_problem", lambda p, s, *a, **k: (tols.append(s.tol), real(p, s, *a, **k))[1])
    assert run_main(capsys, "step", tmp_path / "d1.parquet", "--state", st)[0] == 0
    assert tols == [1e-6]


#: a range check whose message names the flag: `UsageError(f"--keep must be at least 1, ...")`,
#: `check_range("--wait", ...)`, `UsageError(f"--time-limit must be positive seconds, ...")`; "must be an integer"
#: (the kind) is not a range. The solver options' table (copter_cli.solver_options.OPTIONS) words its rows'
#: complaints without the flag ("must be positive, got 0"): its numeric rows with a check count too.
_ENFORCED = re.compile(r'''(?:UsageError\(f?["'](--[a-z][a-z-]*) must be (?:at least|>=|between|a finite number >=|positive))'''
                       r'''|(?:check_range\(["'](--[a-z][a-z-]*)["'])''')
#: solver_options.range_help's (and click's) forms: [x>=1], [1<=x<=50], and with a bound excluded [x>0], [0<x<1]
_STATED = re.compile(r"\[x>=?[^\]]+\]|\[[^\]]+<=?x<=?[^\]]+\]")
#: a range that excludes 0 (what "must be positive" enforces): [x>0], [0<x<1], [0<x<inf], or from a positive floor
#: ([1e-10<=x<1]: a relative tolerance, solver_options.MIN_RELATIVE_TOL)
_POSITIVE = re.compile(r"\[x>0\]|\[0<x<[^\]]+\]|\[[1-9][0-9.]*(?:e-?[0-9]+)?<=?x<=?[^\]]+\]")


def _enforced_flags() -> tuple[set[str], set[str]]:
    """(every flag whose range a command enforces, those of them refused as "must be positive")."""
    from copter_cli.solver_options import OPTIONS

    root = Path(__file__).resolve().parents[1]
    flags, positives = set(), set()
    for path in [*(root / "copter_cli").rglob("*.py"), *(root / "solver").rglob("*.py")]:
        for m in _ENFORCED.finditer(path.read_text(encoding="utf-8")):
            flags.add(m.group(1) or m.group(2))
            if m.group(0).endswith("positive"):
                positives.add(m.group(1))
    for o in OPTIONS:  # a numeric row's check, found by its complaint about -1 (every numeric row refuses it)
        if o.type in (int, float) and o.check is not None and o.check(-1) is not None:
            flags.add(o.flag)
            if o.check(0) is not None and o.check(0).startswith("must be positive"):
                positives.add(o.flag)
    return flags, positives


def _options(command, prefix=()):
    """(command path, click option) of every option of ``command`` and its subcommands."""
    for name, sub in getattr(command, "commands", {}).items():
        yield from _options(sub, (*prefix, name))
    for param in command.params:
        if param.opts and param.opts[0].startswith("--"):
            yield " ".join(prefix), param


def test_an_option_with_an_enforced_range_states_it_in_its_help():
    """README: `--help` states each range. Every option whose range a command enforces (found in the source by
    its error message) says it in its help, as [x>=1] or [1<=x<=50] (--keep, --last, --top, --k... did not)."""
    import typer

    from copter_cli.app import build

    enforced, positives = _enforced_flags()
    assert {"--keep", "--last", "--top", "--entries", "--k", "--seed", "--threads", "--pop-workers", "--rounds",
            "--wait", "--partition-passes", "--zero-tol"} <= enforced
    # refused as "must be positive", which click's [x>=a] cannot say: their help said no range at all
    assert {"--tol", "--time-limit", "--integer-fallback-seconds", "--relaxation-tol",
            "--feasibility-tol"} <= positives
    assert {"--iteration-limit", "--submip-seconds", "--submip-gap", "--mip-gap"} <= enforced
    missing, seen = [], set()
    for where, param in _options(typer.main.get_command(build())):
        flags = enforced.intersection(param.opts)
        if not flags:
            continue
        seen |= flags
        stated = _STATED.search(param.help or "")
        ranged = type(param.type).__name__ in ("IntRange", "FloatRange") or stated
        if not ranged or (positives.intersection(param.opts) and not _POSITIVE.search(param.help or "")):
            missing.append(f"{where} {param.opts[0]}: {stated.group(0) if stated else 'no range'}")
    assert not missing, missing
    assert seen == enforced, enforced - seen  # each enforced flag is an option somewhere
