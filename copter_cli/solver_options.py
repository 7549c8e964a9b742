"""The solver options shared by ``copter solve``, ``init`` and ``step``: ONE table, one validation.

:data:`OPTIONS` declares every solver option once (flag, :class:`solver.model.settings.Settings` field, type,
help, check, whether ``init`` stores it). :func:`with_solver_options` turns the table into the Typer
parameters of a command and hands the command a :class:`GivenOptions`; adding an option is one table row
(plus its ``Settings`` field).

Every option defaults to None, meaning "not given": ``solve`` and ``init`` then use the default of
``Settings``, ``step`` the settings ``init`` stored in the state's ``config.json``; each command's help
says which (:meth:`SolverOption.help_text`: ``init --tol 1e-6`` makes 1e-6 the default of every later
``step``, so step's help must not promise ``Settings``'s 1e-4). ``init`` stores the options whose row has ``stored=True`` (``--verbose`` is per
invocation); ``step`` applies the options it was given to that one round only.

Why the checks live here and not in ``Settings.__post_init__``: the library itself builds settings the CLI
refuses (an exhausted time budget is ``time_limit_seconds=0``, see ``solver/integer`` and
``solver/lp/presolve.py``; ``Settings`` refuses only negative limits), and the messages name the command-line
flag, not the field.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import math
import typing
from collections.abc import Callable
from typing import Any

import typer

from solver.model.errors import UsageError
from solver.model.settings import MIN_RELATIVE_TOL, Settings

FALLBACKS = ("highs", "none")
PRESOLVE = ("auto", "on", "off")
ENGINES = ("auto", "pdhg", "alm")  #: Settings.engine (solver.lp.engine_choice)

Check = Callable[[Any], "str | None"]  # the complaint about a value ("must be positive, got 0"), None = fine


def _bound(x: float) -> str:
    """A range bound as said: an integer in all its digits (``999999999999999999``, not ``1e+18``), a float
    as ``:g``."""
    return str(x) if isinstance(x, int) else f"{x:g}"


def range_help(low: float, high: float | None = None, *, low_open: bool = False, high_open: bool = False) -> str:
    """The range an option's help states, in click's forms (``[x>=1]``, ``[1<=x<=50]``, which ``min=``/``max=``
    added) and, for a bound the value may not take (``low_open``, ``high_open``), the same forms with ``<`` /
    ``>``: ``[x>0]`` (positive), ``[0<x<1]`` (a relative tolerance), ``[0<=x<inf]`` (finite)."""
    if high is None:
        return f" [x{'>' if low_open else '>='}{_bound(low)}]"
    return f" [{_bound(low)}{'<' if low_open else '<='}x{'<' if high_open else '<='}{_bound(high)}]"


@dataclasses.dataclass(frozen=True)
class Ranged:
    """A numeric option's check (``complain(v)``: the complaint, None = fine) and the range its help states
    (``shown``, :func:`range_help`'s form), declared together so the help cannot say another range."""

    complain: Callable[[Any], str | None]
    shown: str

    def __call__(self, v) -> str | None:
        return self.complain(v)


def _positive(v) -> str | None:
    """Refuse v <= 0 and nan."""
    return None if v > 0 else f"must be positive, got {v}"




def _relative_tolerance(v) -> str | None:
    """A relative KKT tolerance: in [:data:`MIN_RELATIVE_TOL`, 1) (a tolerance of 1 or more accepts any point);
    refuses nan."""
    if not v > 0:
        return f"must be positive, got {v}"
    if v < MIN_RELATIVE_TOL:
        return (f"must be at least {MIN_RELATIVE_TOL:g} (the residuals of a double-precision solve cannot meet a "
                f"smaller relative tolerance: it would run to its iteration limit), got {v}")
    return None if v < 1.0 else f"must be below 1 (a relative KKT tolerance), got {v}"


def _nonnegative(v) -> str | None:
    """Refuse v < 0 and nan."""
    return None if v >= 0 else f"must be >= 0, got {v}"


def _nonnegative_finite(v) -> str | None:
    """Refuse v < 0, inf and nan (a relative gap: ``--mip-gap inf`` would prove any point)."""
    return None if 0 <= v < math.inf else f"must be >= 0 and finite, got {v}"


positive = Ranged(_positive, range_help(0, low_open=True))  #: [x>0]
relative_tolerance = Ranged(_relative_tolerance, range_help(MIN_RELATIVE_TOL, 1, high_open=True))  #: [1e-10<=x<1]
nonnegative = Ranged(_nonnegative, range_help(0))  #: [x>=0]
nonnegative_finite = Ranged(_nonnegative_finite, range_help(0, math.inf, high_open=True))  #: [0<=x<inf]


def check_range(flag: str, value, low: float, high: float | None = None, what: str = "") -> None:
    """The range check of a numeric option that is not a solver option (``--wait``, ``--partition-passes``,
    ``--whole-below-nnz``, the worker's ``--idle-timeout``...), run first in the command's body so a bad value
    is copter's usage error (exit 2, one line ``error (usage, exit 2): --wait must be >= 0 ...``, JSON with
    ``--json``) like a negative ``--time-limit``, not click's "Invalid value" box, which typer's ``min=``
    printed. Their help states the range (:func:`range_help`).

    Raises:
        UsageError: ``value`` is NaN, below ``low`` or above ``high``.
    """
    if value != value or value < low or (high is not None and value > high):
        span = f">= {_bound(low)}" if high is None else f"between {_bound(low)} and {_bound(high)}"
        raise UsageError(f"{flag} must be {span}{what}, got {value}")


SECONDS_WHAT = " (seconds, or inf)"  #: :func:`check_range`'s ``what`` for a seconds option


def one_of(choices: tuple[str, ...], wording: str) -> Check:
    """Refuse a value outside ``choices``; ``wording`` is the message's "must be ..." part."""
    return lambda v: None if v in choices else f"must be {wording}, got {v!r}"


@dataclasses.dataclass(frozen=True)
class SolverOption:
    """One row of :data:`OPTIONS`.

    flag: the command-line option (``--tol``); the command parameter is its name with ``_`` (``tol``).
    field: the :class:`Settings` field it sets.
    type: the value's type (``bool`` = a flag, given when set).
    help: the help text; its ``{default}`` is replaced by the sentence about the default
        (:meth:`help_text`), so the default is stated once per command kind.
    default: the default of ``Settings`` as said in the help (``1e-4``, ``none``); ``""`` for a flag.
    check: the complaint about a bad value, or None when fine (None = no check).
    stored: ``init`` stores it in ``config.json`` for later steps (False = per invocation).
    """

    flag: str
    field: str
    type: type
    help: str
    default: str = ""
    check: Check | None = None
    stored: bool = True

    @property
    def param(self) -> str:
        """The command parameter's name."""
        return self.flag[2:].replace("-", "_")

    def help_text(self, from_state: bool = False) -> str:
        """The help text with its default stated: ``default: 1e-4`` (``solve``, ``init``: ``Settings``'s), or,
        ``from_state`` (``step``: a command that reads the options ``init`` stored), the state's, which is
        ``Settings``'s only unless init was given another value; a per-invocation option (``--verbose``)
        is the same in both."""
        shown = getattr(self.check, "shown", "")  # a numeric row's range (Ranged), stated as the other options'
        if not self.default:
            return self.help + shown
        if from_state and self.stored:
            said = f"default: the state's, set by init; {self.default} unless init was given another"
        else:
            said = f"default: {self.default}"
        return self.help.replace("{default}", said) + shown

    def parameter(self, from_state: bool = False) -> inspect.Parameter:
        """The Typer parameter of this option (default None = not given; a bool flag defaults to False);
        ``from_state``: its help states the state's default (:meth:`help_text`)."""
        text = self.help_text(from_state)
        if self.type is bool:
            default, annotation = typer.Option(False, self.flag, help=text), bool
        else:
            default, annotation = typer.Option(None, self.flag, help=text), typing.Optional[self.type]  # noqa: UP045
        return inspect.Parameter(self.param, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default,
                                 annotation=annotation)


OPTIONS: tuple[SolverOption, ...] = (
    SolverOption("--tol", "tol", float,
                 "Relative KKT tolerance: primal/dual residual and gap ({default}).", "1e-4", relative_tolerance),
    SolverOption("--time-limit", "time_limit_seconds", float,
                 "Wall-time limit of the whole command from process start, seconds (start-up, loading and "
                 "applying count; the solve gets what is left; {default}).", "none",
                 positive),
    SolverOption("--iteration-limit", "iteration_limit", int, "Maximum PDHG iterations ({default}).", "1,000,000",
                 nonnegative),
    SolverOption("--integer-fallback", "integer_fallback", str,
                 "MILP: when the integerization heuristics find no integer point, or a point above --mip-gap on "
                 "a model with at most 4,096 integer columns, 'highs' runs HiGHS MIP (time-limited, seeded with "
                 "the point) or 'none' does not ({default}).", "highs", one_of(FALLBACKS, "'highs' or 'none'")),
    SolverOption("--integer-fallback-seconds", "integer_fallback_seconds", float,
                 "MILP: time limit of the round's HiGHS MIP steps together (HiGHS first, the fallback, the "
                 "improvement), seconds ({default}).", "60", positive),
    SolverOption("--integer-fallback-gap", "integer_fallback_gap", float,
                 "MILP: also run the HiGHS fallback, seeded with the heuristic point, when its relative gap to the "
                 "LP bound exceeds this ({default}).", "never", nonnegative),
    SolverOption("--submip-seconds", "integer_submip_seconds", float,
                 "MILP: time for RENS, HiGHS on the sub-MIP of the LP point's roundings, when rounding finds no "
                 "point or one whose gap is above --submip-gap, seconds ({default}; 0 = off).", "30", nonnegative),
    SolverOption("--submip-gap", "integer_submip_gap", float,
                 "MILP: also run RENS on a rounded point whose relative gap to the LP bound is above this, for at "
                 "most as long as the relaxation took ({default}; inf = never).", "0.01", nonnegative),
    SolverOption("--relaxation-tol", "relaxation_tol", float,
                 "MILP: tolerance of the first LP relaxation stage, tightened warm towards --tol only while the "
                 "rounded point's gap needs it ({default}).", "--tol", relative_tolerance),
    SolverOption("--relaxation-round-iterations", "relaxation_round_iterations", int,
                 "MILP: also round the relaxation iterate after this many PDHG iterations, doubling (128, 256, "
                 "...), and stop at the first point within --mip-gap of the bound ({default}; 0: only at each "
                 "stage's tolerance).", "128", nonnegative),
    SolverOption("--mip-gap", "mip_gap_tol", float,
                 "MILP: the round's target: it stops at the first integer point proven within this relative gap "
                 "of the bound, reported OPTIMAL (as HiGHS's mip_rel_gap); above it, FEASIBLE ({default}; "
                 "1e-4 = tight).", "5e-3", nonnegative_finite),
    SolverOption("--presolve", "presolve", str,
                 "HiGHS presolve around PDHG: auto (cold solves, not a MILP round's budgeted relaxation stages), on, off ({default}).", "auto",
                 one_of(PRESOLVE, "one of " + ", ".join(PRESOLVE))),
    SolverOption("--engine", "engine", str,
                 "LP engine: auto (PDHG for cold solves and far warm starts, the proximal ALM for a warm start much "
                 "closer than a cold one; the report's engine/engine_reason say which ran and why; a MILP of at most "
                 "3,000 nonzeros goes to HiGHS first), pdhg, alm (pinned: MILP relaxations too) ({default}).", "auto", one_of(ENGINES, "one of " + ", ".join(ENGINES))),
    SolverOption("--iis-seconds", "iis_seconds", float,
                 "An infeasible round: time for HiGHS's search of a conflicting set of rows and bounds (an IIS) "
                 "that the error names, seconds, given to its LP solve and to its search each ({default}; 0 = off: "
                 "the round fails at once).", "10",
                 nonnegative),
    SolverOption("--verbose", "verbose", bool, "Print the solver's iteration log on stderr.", stored=False),
)


class GivenOptions:
    """The solver options given on one command line (a bool flag counts as given when set)."""

    def __init__(self, values: dict[str, Any]):
        """``values``: command parameter name -> value, for every row of :data:`OPTIONS` (None = not given)."""
        # `is`, not `in (None, False)`: 0 == False, and `--submip-seconds 0` is given
        self.given = {o: values[o.param] for o in OPTIONS
                      if values[o.param] is not None and values[o.param] is not False}

    def __bool__(self) -> bool:
        return bool(self.given)

    def milp_only(self) -> list[str]:
        """The flags given that only a MILP reads (their help starts with ``MILP:``), in the table's order."""
        return [o.flag for o in self.given if o.help.startswith("MILP:")]

    @property
    def verbose(self) -> bool:
        """``--verbose`` was given."""
        return bool(self.given.get(_BY_FIELD["verbose"]))

    def settings(self, base: Settings | None = None) -> Settings:
        """A copy of ``base`` (default ``Settings()``) with the options that were given.

        Raises:
            UsageError: a value its row's check refuses (a non-positive tolerance or time limit, a negative
                iteration count or gap, nan, an unknown ``--integer-fallback`` or ``--presolve``); the
                message names the option.
        """
        for option, value in self.given.items():
            complaint = option.check(value) if option.check is not None else None
            if complaint is not None:
                raise UsageError(f"{option.flag} {complaint}")
        return dataclasses.replace(base or Settings(), **{o.field: v for o, v in self.given.items()})


_BY_FIELD = {o.field: o for o in OPTIONS}


def with_solver_options(command: Callable | None = None, *, from_state: bool = False) -> Callable:
    """Give a Typer command the table's solver options (``@with_solver_options``, or
    ``@with_solver_options(from_state=True)`` for a command whose unset options are the ones ``init``
    stored: their help then states the state's default, :meth:`SolverOption.help_text`).

    The command declares a parameter ``solver: GivenOptions``; in the signature Typer sees, that parameter
    is replaced, at its place, by one option per row of :data:`OPTIONS`, and the command is called with
    ``solver=GivenOptions(...)`` built from them. Validation happens when the command calls
    :meth:`GivenOptions.settings` (inside its error mapping, so a bad value exits 2 naming the option).
    """
    if command is None:
        return functools.partial(with_solver_options, from_state=from_state)
    signature = inspect.signature(command)
    hints = typing.get_type_hints(command)
    params = []
    for p in signature.parameters.values():
        if p.name == "solver":
            params.extend(o.parameter(from_state) for o in OPTIONS)
        else:
            params.append(p.replace(annotation=hints.get(p.name, p.annotation)))
    if len(params) != len(signature.parameters) + len(OPTIONS) - 1:
        raise TypeError(f"{command.__name__} must declare one parameter named 'solver'")
    names = {o.param for o in OPTIONS}

    @functools.wraps(command)
    def wrapper(**kwargs):
        values = {k: kwargs.pop(k) for k in names}
        return command(**kwargs, solver=GivenOptions(values))

    wrapper.__signature__ = signature.replace(parameters=params, return_annotation=None)
    wrapper.__annotations__ = {p.name: p.annotation for p in params}
    del wrapper.__wrapped__  # typer must read the signature above, not the command's
    return wrapper
