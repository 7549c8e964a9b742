"""An empty ``--state`` is copter's usage error (exit 2 naming ``--state``), for every command that takes it.

``Path('')`` is the working directory, so ``copter init base.parquet --state ''`` wrote CURRENT, config.json,
gen-000000 and log among the user's files. By the time a command runs, ``''`` and ``.`` are the same Path:
:func:`refuse_empty_state` (called by ``copter_cli.option_values.CopterGroup`` when the app is built) gives
every ``--state`` option a path type that refuses the empty text itself while the command line is parsed, so
nothing has run. An empty ``COPTER_STATE=`` is not seen here: click treats an empty environment variable as
unset, so it falls back to ``./copter-state`` as an unset one does.
"""

from __future__ import annotations

import copy
from typing import Any

from copter_cli.option_values import ParseUsageError, all_params

OPTION = "--state"
#: the help of every command's ``--state`` (it used to say "State directory, not empty", read as "must not be
#: empty": a state directory holds files by nature; what is refused is the empty text)
STATE_HELP = ("State directory (default: $COPTER_STATE, or ./copter-state when that is unset or empty; "
              "--state '' is refused).")


class EmptyStateError(ParseUsageError):
    """``--state ''``: raised while the command line is parsed, printed as copter's usage error."""


_TYPES: dict[type, type] = {}  #: the option's path type class -> its twin that refuses ''


def _refusing_type(path_type: type) -> type:
    """A subclass of ``path_type`` whose conversion of the empty text raises :class:`EmptyStateError`."""
    if path_type not in _TYPES:
        class StatePath(path_type):
            def convert(self, value: Any, param, ctx):
                if isinstance(value, str) and value == "":
                    raise EmptyStateError(f"{OPTION} is empty, which would put the state's files in the working "
                                          f"directory; give a folder (or leave {OPTION} out for $COPTER_STATE, "
                                          "else ./copter-state)")
                return super().convert(value, param, ctx)

        _TYPES[path_type] = StatePath
    return _TYPES[path_type]


def refuse_empty_state(command) -> None:
    """Give the ``--state`` option of ``command`` and of its subcommands, at any depth, a copy of its path
    type (same settings, help and metavar) that refuses the empty text (:class:`EmptyStateError`)."""
    for param in all_params(command):
        if OPTION in getattr(param, "opts", ()) and not isinstance(param.type, tuple(_TYPES.values())):
            twin = copy.copy(param.type)
            twin.__class__ = _refusing_type(type(param.type))
            param.type = twin
