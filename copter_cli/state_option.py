"""An empty ``--state`` is copter's usage error (exit 2 naming ``--state``), for every command that takes it; so
are an empty ``--dir``/``--png``/``--out``, an ``-o`` that is empty or ends in /, and any path that is not UTF-8.

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


#: the other path options whose empty text is refused the same way (helper-213: ``demo --dir ''`` wrote base.parquet
#: and state/ among the user's files; ``report -o ''`` said "-o . is a folder"), each with what it names
FOLDERS = {"--dir": "the demo's folder", "--png": "the charts' folder", "--out": "the outputs' folder"}
FILES = {"-o": "the file to write"}  #: ... and, for these output files, a name ending in / too (``-o r.html/`` wrote r.html)

_TYPES: dict[tuple[type, str], type] = {}  #: (the option's path type class, option) -> its twin that refuses ''


def _message(option: str, value: str) -> str | None:
    """Why ``option``'s text ``value`` is refused, or None."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # bytes the file system gave that are not UTF-8 (Python's surrogate escapes): such a
        # state read, but report, compare and init failed on it, one as an internal error, one calling a sound file
        # damaged (helper-213)
        return (f"{option} {value!r}: the path is not valid UTF-8 text, and copter's Parquet reader and writer "
                "(pyarrow) take UTF-8 paths only: rename it")
    if option == OPTION and value == "":
        return (f"{OPTION} is empty, which would put the state's files in the working directory; give a folder (or "
                f"leave {OPTION} out for $COPTER_STATE, else ./copter-state)")
    if option in FOLDERS and value == "":
        return f"{option} is empty, which is the working directory; give {FOLDERS[option]} (e.g. {option} out)"
    if option in FILES and (value == "" or value.endswith("/")):
        what = "is empty" if value == "" else f"{value!r} ends in / (a folder's name)"
        return f"{option} {what}; give {FILES[option]}"
    return None


def _refusing_type(path_type: type, option: str) -> type:
    """A subclass of ``path_type`` whose conversion of a text :func:`_message` refuses raises
    :class:`EmptyStateError`."""
    if (path_type, option) not in _TYPES:
        class RefusingPath(path_type):
            def convert(self, value: Any, param, ctx):
                if isinstance(value, str) and (why := _message(option, value)):
                    raise EmptyStateError(why)
                return super().convert(value, param, ctx)

        _TYPES[(path_type, option)] = RefusingPath
    return _TYPES[(path_type, option)]


def refuse_empty_state(command) -> None:
    """Give every path parameter of ``command`` and of its subcommands, at any depth, a copy of its path type (same
    settings, help and metavar) that refuses, while the command line is parsed (:class:`EmptyStateError`): a path
    that is not UTF-8 text; the empty text for ``--state`` and :data:`FOLDERS`; for :data:`FILES` the empty text
    and a name ending in /."""
    from typer.models import TyperPath  # typer's path type (its own click's Path), every Path parameter's

    for param in all_params(command):
        opts = getattr(param, "opts", ())
        if not isinstance(param.type, TyperPath) or isinstance(param.type, tuple(_TYPES.values())):
            continue
        named = next((o for o in (OPTION, *FOLDERS, *FILES) if o in opts), None)
        is_option = getattr(param, "param_type_name", "") == "option"
        option = named or (opts[0] if is_option and opts else (param.name or "PATH").upper())
        twin = copy.copy(param.type)
        twin.__class__ = _refusing_type(type(param.type), option)
        param.type = twin


def refuse_absent_state(st) -> None:
    """Refuse a ``--state`` with nothing at its path (exit 3, the library's own "not an initialised" error) before a
    command compiles the kernels: ``step`` on a mistyped state compiled for 76 s first (helper-234). A file, a link
    loop or an empty folder is left to the library, whose words name it."""
    import os

    if not os.path.lexists(st):
        from formats.checkpoint import StateStore

        raise StateStore(st).not_initialised()
