"""A numeric option's value that is not its kind of number is copter's usage error, for every option of every command.

click converts an ``int`` or ``float`` option while it parses the command line and, on failure, printed its
"Usage: ... Invalid value for '--k': '1e20' is not a valid int." box (``--k 1e20``, ``--seed 1.5``,
``--partitions 1e3``, ``--tol abc``), where every other bad value is copter's one line naming the option
(``error (usage, exit 2): --wait must be >= 0 ...``, JSON with ``--json``; ``solver_options.check_range``).
:class:`CopterGroup`, the root group's class, walks its whole command tree once when it is built and gives
every integer and float option a type whose failed conversion raises :class:`NumberValueError`, and so does a
value Python converts but copter does not read (``--time-limit 1_000``, ``--top １０``, ``--k " 5"``: the one rule of
:mod:`formats.number_text`, which the delta files' metadata follow too); its
:meth:`CopterGroup.main` prints that as copter's usage error (exit 2), for the console script and for
in-process callers (typer's CliRunner) alike. Nothing has run yet, so no state was touched.
"""

from __future__ import annotations

import sys
from typing import Any

import typer
from typer.core import TyperGroup

from formats.number_text import PLAIN_ONLY, plain_float, plain_integer
from solver.model.errors import UsageError

#: click's type names of the numeric options (``IntParamType.name``, ``FloatParamType.name``) -> the kind said
KINDS = {"int": "an integer", "float": "a number"}
#: the same names -> the spelling a given value must have besides converting (copter's one rule of number text)
_PLAIN = {"int": plain_integer, "float": plain_float}


class ParseUsageError(UsageError):
    """A bad option value found while the command line is parsed, before any command body runs; printed by
    :meth:`CopterGroup.main` as copter's usage error (exit 2)."""


class NumberValueError(ParseUsageError):
    """A numeric option's value that click could not convert (``--k 1e20``); raised while the command line is
    parsed, printed by :meth:`CopterGroup.main`."""


_TYPES: dict[type, type] = {}  #: click's numeric type class -> its copter twin (:func:`_copter_type`)


def _copter_type(click_type: type) -> type:
    """A subclass of ``click_type`` (click's ``IntParamType`` or ``FloatParamType``) whose failed conversion raises
    :class:`NumberValueError` naming the option and its kind, instead of click's ``BadParameter``."""
    if click_type not in _TYPES:
        class CopterNumber(click_type):
            def convert(self, value: Any, param, ctx):
                flag = max(param.opts, key=len) if param is not None else "the option"
                try:
                    number = super().convert(value, param, ctx)
                except typer.BadParameter as err:
                    raise NumberValueError(f"{flag} must be {KINDS[self.name]}, got {value!r}") from err
                # int()/float() also took "1_000", " 5 " and "１０" (formats.number_text); a default is no text
                if isinstance(value, str) and not _PLAIN[self.name](value):
                    raise NumberValueError(f"{flag} must be {KINDS[self.name]} {PLAIN_ONLY}, got {value!r}")
                return number

        _TYPES[click_type] = CopterNumber
    return _TYPES[click_type]


def all_params(command):
    """Every parameter of ``command`` and of its subcommands, at any depth (a click group's tree)."""
    for sub in getattr(command, "commands", {}).values():
        yield from all_params(sub)
    yield from command.params


def copter_numbers(command) -> None:
    """Give every integer and float option of ``command`` and of its subcommands, at any depth, the type of
    :func:`_copter_type` (the same name, metavar and help; only a failed conversion differs). Range types
    (click's ``IntRange``, typer's ``min=``) are left alone: their failure is not about the kind."""
    for param in all_params(command):
        if type(param.type).__name__ in ("IntParamType", "FloatParamType") and param.type.name in KINDS:
            param.type = _copter_type(type(param.type))()


class CopterGroup(TyperGroup):
    """The ``copter`` root group: its commands' numeric options are converted by :func:`copter_numbers`, and a
    value that is not a number of the option's kind ends as copter's usage error, and so does an empty
    ``--state`` (:mod:`copter_cli.state_option`)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        from copter_cli.state_option import refuse_empty_state

        super().__init__(*args, **kwargs)
        copter_numbers(self)
        refuse_empty_state(self)

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra: Any):
        """click's ``main``; a :class:`ParseUsageError` while parsing prints ``error (usage, exit 2): --k must
        be an integer, got '1e20'`` on stderr (and the JSON error on stdout when ``--json`` is among ``args``),
        then exits 2 (returns 2 when not ``standalone_mode``, as click returns an exit code)."""
        args = sys.argv[1:] if args is None else list(args)
        try:
            return super().main(args, prog_name, complete_var, standalone_mode, **extra)
        except ParseUsageError as err:
            from copter_cli import output

            try:
                output.fail_with(err, "--json" in args)
            except typer.Exit as ex:
                if standalone_mode:
                    sys.exit(ex.exit_code)
                return ex.exit_code
