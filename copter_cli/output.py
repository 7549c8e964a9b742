"""Output helpers shared by every command: the answer on stdout, diagnostics on stderr, error mapping.

``--json`` prints exactly one JSON object on stdout as plain text (never through rich, which wraps long
lines when piped). Without it the command's answer (a report table, ``show``'s allocation, ``history``'s
table, "wrote FILE") goes to stdout too, so ``copter show --solution > file`` keeps it (:func:`answering`:
:func:`emit` prints the human view inside it); errors, ``warning:`` lines and progress go to stderr. Human
output goes through a rich Console, without colour when its stream is not a TTY. rich is imported on the console's first use, and :func:`say` writes text that rich would print
unchanged without it, so a command that prints one plain line (``version``, ``rollback``, ``export``) never
imports rich (issue #15: rich's import is ~40 ms of a 0.3 s start-up).
"""

from __future__ import annotations

import json
import os
import re
import sys
import traceback
from collections.abc import Callable
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import typer

from copter_cli import exit_codes
from solver.model.errors import CopterError

if TYPE_CHECKING:
    from rich.console import Console

#: the console's settings (the long-running worker's child builds the console again with them, for the client's
#: terminal and environment: ``copter_cli.worker_child``)
#: never hard-wrap (one message, one line); no emoji codes: rich turned ``:smile:`` or ``:cd:`` in a path or name
#: into a picture
CONSOLE_OPTIONS = {"stderr": True, "highlight": False, "soft_wrap": True, "emoji": False}


def rich_console(**options):
    """A ``rich.console.Console(**options)`` (rich imported now) whose closed output raises BrokenPipeError,
    which the commands end as exit 141 with nothing more printed (:func:`quiet_broken_pipe`); rich's own
    handler exits 1, as an internal error (``copter solve x.mps --json 2>&1 | head -c 5``)."""
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError(32, "Broken pipe")

        @property
        def size(self):
            """rich's size, except on a terminal named ``TERM=dumb`` (Emacs' shell, some CI logs), for which rich
            assumes 80 columns whatever ``COLUMNS`` or the terminal say (helper-236): the width is read as on any
            terminal (``COLUMNS``, else the size of descriptor 0, 1 or 2)."""
            dims = Console.size.fget(self)
            if not self.is_dumb_terminal or (self._width is not None and self._height is not None):
                return dims
            width = self._width  # a width given, or COLUMNS (rich reads it when the console is made)
            for fd in (0, 1, 2) if width is None else ():
                try:
                    width = os.get_terminal_size(fd).columns
                    break
                except (AttributeError, ValueError, OSError):
                    continue
            return type(dims)(width or dims.width, dims.height)

        @size.setter
        def size(self, new_size) -> None:
            Console.size.fset(self, new_size)

    return _Console(**options)


_ANSWER = [False]  #: True while a command prints its answer (:func:`answering`): the shared console is stdout's


@contextmanager
def answering(on: bool = True):
    """Print the command's answer: inside, :data:`console` and :func:`say` write to stdout (``on`` False: to
    stderr again, for a warning or an error printed in the middle of an answer). stdout is flushed at the end;
    a write the machine refuses (the file-size limit ``ulimit -f``, disk full) is :func:`stdout_refused`."""
    old = _ANSWER[0]
    _ANSWER[0] = on
    try:
        yield
        if on:
            sys.stdout.flush()
    except OSError as err:
        fault = stdout_refused(err) if on else None
        if fault is None:
            raise
        raise fault from err
    finally:
        _ANSWER[0] = old


def stdout_refused(err: OSError):
    """The typed error for a write to stdout that the machine refused (``EFBIG`` over ``ulimit -f``,
    ``ENOSPC``, ``EIO``): an ``EnvironmentFaultError`` (exit 7) naming stdout and the file it is redirected
    to, e.g. ``stdout (/tmp/alloc.txt): cannot write: File too large``. File descriptor 1 is pointed at
    /dev/null first, so the error message and the interpreter's final flush cannot fail again (the error goes
    to stderr; with ``--json`` its object is lost with the rest of stdout). A stdout closed when copter started
    (``>&-``: ``copter_cli.closed_streams``) is the same fault, ``stdout: cannot write: it was closed when
    copter started (>&-)``. Once the command stored its change (``formats.undo.stored``) the message says so
    (``...; round 3 is stored and current``, ``"round_stored": true``), and once it wrote an output file
    (``formats.undo.wrote``: ``...; out.mps is written``, ``"written": [...]``). None for another error (a closed pipe
    is :func:`quiet_broken_pipe`'s)."""
    import os

    from copter_cli.closed_streams import ClosedStreamError
    from formats import undo
    from formats.faults import as_environment_fault, is_environment_fault

    if isinstance(err, BrokenPipeError) or not (is_environment_fault(err) or isinstance(err, ClosedStreamError)):
        return None
    try:
        target = os.readlink(f"/proc/self/fd/{sys.stdout.fileno()}")
    except (OSError, ValueError, AttributeError):
        target = None
    where = f"stdout ({target})" if target and target.startswith("/") else "stdout"
    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, sys.stdout.fileno())
        os.close(fd)
    except (OSError, ValueError, AttributeError):  # no real stream (a test's capture)
        pass
    fault = as_environment_fault(err, where, destination=True)
    stored, written = undo.stored(), undo.written()
    if stored:
        fault.message += f"; {stored}"
        fault.context = {"round_stored": True}
    if written:  # export -o, convert, diff -o, solve -o: the file is complete, only the answer is lost
        fault.message += f"; {written}"
        fault.context = {**(fault.context or {}), "written": undo.written_files()}
    return fault


class LazyConsole:
    """A ``rich.console.Console(**options)`` built (and rich imported) on first attribute use; every attribute
    is the built console's. ``__init__`` again (the worker's child, for its client's stderr and variables)
    drops the built console, so the next use builds it anew with the process's current stderr and
    environment, as ``Console.__init__`` again did."""

    def __init__(self, **options):
        self.__dict__["_options"] = options
        self.__dict__["_console"] = None
        self.__dict__["_answer"] = None  # the shared console's stdout twin (:func:`answering`)

    def _routed(self):
        """This console, or while answering (:func:`answering`) its twin on stdout."""
        if not (_ANSWER[0] and self.__dict__["_options"].get("stderr")):
            return self
        if self.__dict__["_answer"] is None:
            self.__dict__["_answer"] = LazyConsole(**{**self.__dict__["_options"], "stderr": False,
                                                      "file": AnswerFile()})
        return self.__dict__["_answer"]

    def get(self):
        """The rich Console (built now if not yet); stdout's while answering (:func:`answering`)."""
        routed = self._routed()
        if routed is not self:
            return routed.get()
        if self.__dict__["_console"] is None:
            self.__dict__["_console"] = rich_console(**self.__dict__["_options"])
        return self.__dict__["_console"]

    @property
    def built(self) -> bool:
        """Whether the rich Console exists yet (False: rich may not even be imported)."""
        routed = self._routed()
        return routed.built if routed is not self else self.__dict__["_console"] is not None

    def __getattr__(self, name):
        return getattr(self.get(), name)

    def __setattr__(self, name, value):
        setattr(self.get(), name, value)


console = LazyConsole(**CONSOLE_OPTIONS)


class AnswerFile:
    """The file of the console that prints a command's answer (:func:`answering`): stdout, each write taken to
    its descriptor until every byte is written (:func:`write_answer`), so a write the machine cuts short is
    exit 7 naming stdout. Through Python's buffered stdout, rich's table cut by the file-size limit after its
    first 1,024 bytes was dropped at the flush without an error (``show --solution --top 300 > f`` under
    ``ulimit -f 1``: exit 0 with 1,024 of 7,952 bytes). Any other attribute is the current ``sys.stdout``'s
    (``isatty``, ``encoding``, ``fileno``: rich reads them), looked up at each use (the worker's child
    replaces ``sys.stdout``)."""

    def write(self, text: str) -> int:
        """Write ``text`` on stdout in full (:func:`write_answer`); its length."""
        write_answer(text)
        return len(text)

    def flush(self) -> None:
        """Nothing is buffered here; stdout's own buffer is flushed before each write."""
        sys.stdout.flush()

    def __getattr__(self, name):
        return getattr(sys.stdout, name)


def wide_console(width: int, like: Console | None = None, **options) -> Console:
    """A console (rich imported now) that prints where ``like`` prints (default: the shared stderr console
    :data:`console`), with its ``no_color``, ``width`` columns wide, without soft wrap or highlighting: for a
    table that must not be cut to the terminal's width or, off a terminal, to the 80 columns rich assumes.

    Args:
        width: the console's columns.
        like: the console whose file and ``no_color`` it takes.
        options: further ``rich.console.Console`` settings (``force_terminal=True``).
    """
    out = console.get() if like is None else like
    file = out.file if options.get("force_terminal") else TrimmedLines(out.file)
    return rich_console(file=file, width=width, highlight=False, soft_wrap=False, emoji=False,
                        no_color=out.no_color, **options)


class TrimmedLines:
    """A text file that writes each line to ``file`` without its trailing spaces: a table printed off a terminal
    (a log, a pipe) pads every cell of its last column and its centred title to the table's width, which a
    ``diff``, ``grep 'OPTIMAL$'`` or an editor's whitespace check then trips over (a user's trial, session 35).
    Text after the last newline waits for the next one or :meth:`flush`. Everything else (``isatty``,
    ``fileno``, ``encoding``, errors) is the file's."""

    def __init__(self, file):
        self._file, self._tail = file, ""

    def write(self, text: str) -> int:
        lines = (self._tail + text).split("\n")
        self._tail = lines.pop()
        if lines:
            self._file.write("".join(line.rstrip(" ") + "\n" for line in lines))
        return len(text)

    def flush(self) -> None:
        if self._tail:  # a partial line: its text now, its trailing spaces once it goes on (or never, at its end)
            text = self._tail.rstrip(" ")
            self._file.write(text)
            self._tail = self._tail[len(text):]
        self._file.flush()

    def __getattr__(self, name):
        return getattr(self._file, name)


def table_console(min_width: int) -> Console:
    """The console for a table on stderr: the shared console on a terminal (the terminal's width), else (a log,
    a pipe) :func:`wide_console` at least ``min_width`` columns wide."""
    return console.get() if console.is_terminal else wide_console(max(console.width, min_width))


#: what rich's ``print(text, markup=False, highlight=False)`` would change (emoji codes are off: CONSOLE_OPTIONS):
#: a tab (expanded), a control character (stripped), trailing whitespace on a line (stripped beyond the width)
_RICH_WOULD_CHANGE = re.compile(r"[\x00-\x09\x0b-\x1f\x7f]|[ \t]\n|[ \t]$")


def _default(o):
    np = sys.modules.get("numpy")  # not imported here: a process that never imported numpy has no numpy values
    if np is None:
        return o.name if hasattr(o, "name") and hasattr(o, "value") else str(o)
    if isinstance(o, np.integer):
        return int(o)
    if isinstance(o, np.floating):
        return _finite(float(o))
    if isinstance(o, np.ndarray):
        return o.tolist()
    if hasattr(o, "name") and hasattr(o, "value"):  # enums
        return o.name
    return str(o)


def _finite(v: float):
    """JSON has no inf/nan: +-inf become the strings "inf"/"-inf", nan becomes null; -0.0 is 0.0
    (``formats.json_numbers.json_float``, the rule report.json is written with too)."""
    from formats.json_numbers import json_float

    return json_float(v)


def _clean(o):
    if isinstance(o, dict):
        return {str(k): _clean(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_clean(v) for v in o]
    if isinstance(o, float):
        return _finite(o)
    return o


def dumps(obj) -> str:
    """Serialize a report to strict JSON (no NaN/Infinity tokens)."""
    return json.dumps(_clean(obj), default=_default, allow_nan=False)


def say(text: str) -> None:
    """Print user-derived text on stderr (stdout while :func:`answering`) verbatim (no markup parsing, no hard
    wrap).

    Through rich's console once it is built (it may be showing a live status line, which rich keeps below
    the text), for what is not a string, or when rich would change the text (tabs, control characters,
    trailing whitespace); else written as is, which is what rich prints for it (with no style and
    soft wrap: the text and a newline, then a flush), without importing rich."""
    if not isinstance(text, str) or console.built or _RICH_WOULD_CHANGE.search(text):
        console.print(text, markup=False, highlight=False)
        return
    if _ANSWER[0]:
        write_answer(text + "\n")
        return
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def print_json(obj) -> None:
    """Print one JSON object on stdout, plain text, newline-terminated; a closed stdout ends the process
    quietly with exit code 141 (:func:`quiet_broken_pipe`).

    It is the command's one JSON answer: in the console script an interrupt from here on is ignored
    (``copter_cli.entry.ignore_sigint_at_exit``), so a reader never gets the answer followed by a second
    object (the interrupted error) it cannot parse."""
    from copter_cli import entry

    if entry.CONSOLE[0]:
        entry.ignore_sigint_at_exit()
    print_line(dumps(obj))


def answer_bytes(text: str) -> bytes:
    """``text`` as the bytes copter writes on stdout: UTF-8 whatever the locale or ``PYTHONIOENCODING`` says, so a
    name outside ASCII reaches a CSV or a table whole. Through stdout's own encoding, an ASCII one (``LC_ALL=C``
    without Python's UTF-8 coercion, ``PYTHONIOENCODING=ascii``) ended ``show``, ``show --solution`` and
    ``history --csv`` on a name such as ``café/x`` with "internal error: UnicodeEncodeError" (exit 1) after part of
    the answer (helper-236, session 59); Latin-1 wrote such names in another encoding than the state's Parquet
    files. A path's undecodable bytes (``surrogateescape``) are written back as they were; any other character
    UTF-8 cannot carry (a lone surrogate) as a backslash escape, as Python's stderr does."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace")


def _write_all(text: str) -> None:
    """Write ``text`` to stdout's file descriptor until every byte is taken (``os.write`` in a loop), else raise
    the OSError that stopped it. Python's buffered stdout dropped the rest of a write the file-size limit cut
    short, without an error: ``copter show --json > f`` under ``ulimit -f 1`` exited 0 with 1,024 of 1,291
    bytes. A stream without a descriptor (a test's capture) gets ``write`` + ``flush``."""
    import os

    stream = sys.stdout
    try:
        fd = stream.fileno()
    except (AttributeError, ValueError, OSError):  # io.UnsupportedOperation is both
        stream.write(text)
        stream.flush()
        return
    stream.flush()
    rest = memoryview(answer_bytes(text))
    while rest:
        rest = rest[os.write(fd, rest):]


def print_line(text: str) -> None:
    """Print ``text`` and a newline on stdout as plain text, flushed: a command's requested answer (a JSON
    object, ``copter --version``); a closed stdout ends the process quietly with exit code 141
    (:func:`quiet_broken_pipe`), also outside a command body (an eager option while parsing)."""
    write_answer(text + "\n")


def write_answer(text: str) -> None:
    """Write ``text`` on stdout as it is, every byte (:func:`_write_all`): a closed stdout ends the process
    quietly with exit code 141 (:func:`quiet_broken_pipe`); a write the machine refuses or cuts short (the
    file-size limit, a full disk) raises the EnvironmentFaultError of :func:`stdout_refused` (exit 7)."""
    try:
        _write_all(text)
    except BrokenPipeError:
        quiet_broken_pipe()
    except OSError as err:  # ulimit -f, disk full: exit 7 naming stdout (stdout_refused)
        fault = stdout_refused(err)
        if fault is None:
            raise
        raise fault from err


@contextmanager
def command_errors(json_out: bool, debug: bool):
    """Run a command body; map errors to the exit-code table.

    CopterError -> its code with a one-line message naming the culprit (JSON: ``{"error": {...}}``);
    KeyboardInterrupt -> 130 (143 when the CLI's handler raised it for SIGTERM, 129 for SIGHUP); a closed stdout (BrokenPipeError) -> 141 without a word
    (:func:`quiet_broken_pipe`); an OSError of the environment the library did not type (permission,
    read-only file system, disk full) -> 7 naming the path; any other exception -> 1, traceback only with
    ``--debug``. ``typer.Exit`` passes through untouched.
    """
    from formats import undo

    undo.begin_command()
    try:
        from formats.faults import working_directory_fault

        gone = working_directory_fault()
        if gone is not None:
            raise gone
        yield
    except typer.Exit:
        raise
    except KeyboardInterrupt:
        _fail(undo.exit_code(), "interrupted", _interrupted_message(), json_out, {})
    except BrokenPipeError:
        quiet_broken_pipe()
    except CopterError as err:
        if debug:
            traceback.print_exc(file=sys.stderr)
        _fail(exit_codes.for_error(err), err.kind, str(err), json_out, err.to_dict())
    except Exception as err:  # noqa: BLE001 - last-resort mapping to "internal error"
        if debug:
            traceback.print_exc(file=sys.stderr)
        if _interrupt_inside(err):  # a signal inside a C extension's import (highspy): an ImportError from it
            _fail(undo.exit_code(), "interrupted", _interrupted_message(), json_out, {})
        from formats.faults import typed_fault

        typed = typed_fault(err)
        if typed is not None:
            _fail(exit_codes.for_error(typed), typed.kind, str(typed), json_out, typed.to_dict())
        msg = f"internal error: {type(err).__name__}: {err}"
        if not debug:
            msg += " (run with --debug for a traceback)"
        _fail(exit_codes.INTERNAL, "internal", msg, json_out, {})


def _interrupted_message() -> str:
    """The interrupted error's text as the command says it (``copter_cli.entry``'s handler says the same when it
    ends the process at once): ``convert`` interrupted while it wrote said "the state is unchanged" (helper-167)."""
    from copter_cli.entry import as_the_command_says
    from formats import undo

    return as_the_command_says(undo.interrupted_message())


def _interrupt_inside(err: BaseException) -> bool:
    """Whether ``err`` was raised while handling (or because of) a KeyboardInterrupt: a SIGINT/SIGTERM/SIGHUP
    that lands inside a module's initialisation comes out as ``ImportError: initialization failed`` with the
    KeyboardInterrupt as its cause or context (seen with highspy under ``copter export``). Follows
    ``__cause__``/``__context__`` (at most 20 links: a chain can loop)."""
    seen = 0
    link: BaseException | None = err
    while link is not None and seen < 20:
        if isinstance(link, KeyboardInterrupt):
            return True
        link = link.__cause__ or link.__context__
        seen += 1
    return False


ERROR_PRINTED = []  #: non-empty once :func:`_fail` printed an error (``copter_cli.app.main`` reads it)


def quiet_broken_pipe() -> None:
    """stdout's (or stderr's) reader went away (``copter history --json | head -1``, ``... 2>&1 | head``):
    point file descriptors 1 and 2 at /dev/null, so neither a later message nor the interpreter's final flush
    can fail again, and exit 141 (what a shell reports for a writer killed by SIGPIPE) without printing
    anything more.

    Raises:
        typer.Exit: always, with ``exit_codes.BROKEN_PIPE``.
    """
    import os

    try:
        fd = os.open(os.devnull, os.O_WRONLY)
        for stream in (sys.stdout, sys.stderr):
            try:
                os.dup2(fd, stream.fileno())
            except (OSError, ValueError, AttributeError):  # no real stream (a test's capture): nothing to silence
                pass
        os.close(fd)
    except OSError:
        pass
    raise typer.Exit(exit_codes.BROKEN_PIPE)


def fail_with(err: CopterError, json_out: bool) -> None:
    """Print ``err`` as the command's error (:func:`command_errors`' mapping, for an error raised outside a command
    body: ``copter_cli.option_values`` while the command line is parsed) and exit with its code.

    Raises:
        typer.Exit: always, with ``exit_codes.for_error(err)``.
    """
    _fail(exit_codes.for_error(err), err.kind, str(err), json_out, err.to_dict())


def _fail(code: int, kind: str, message: str, json_out: bool, extra: dict) -> None:
    ERROR_PRINTED.append(code)
    if json_out:
        err = {"code": code, "kind": kind, "message": message}
        err.update({k: v for k, v in extra.items() if k not in ("kind", "message")})
        try:
            print_json({"error": err})
        except BrokenPipeError:
            quiet_broken_pipe()
        except CopterError:  # stdout refused the error too (stdout_refused: now /dev/null); stderr says it below
            pass
    # user text (names, paths, HiGHS messages) is never parsed as rich markup, and its line separators and
    # control characters are escaped (copter_cli.printable): one error, one line
    from rich.text import Text

    from copter_cli.printable import printable

    console.print(Text.assemble(("error", "bold red"), f" ({kind}, exit {code}): {printable(message)}"))
    raise typer.Exit(code)


def say_warnings(obj: dict) -> None:
    """``obj``'s ``warnings`` (a list of strings; absent or empty: none) on stderr, one ``warning: TEXT`` line
    each, TEXT as :func:`say` prints it: the label in yellow once rich is imported (a table is or was being
    printed), else plain without importing rich. Every mode shows them: with ``--json`` beside the object's
    ``warnings`` field (:func:`emit`). On stderr inside an answer too (:func:`answering`)."""
    with answering(False):
        _say_warnings(obj)


def answer(*objects, **options) -> None:
    """``console.print(*objects, **options)`` on stdout: part of the command's answer (:func:`answering`)."""
    with answering():
        console.print(*objects, **options)


def say_error(text: str) -> None:
    """An error line (``error (KIND, exit N): ...``) on stderr, inside an answer too (:func:`answering`); names
    in it through ``copter_cli.printable`` (one line whatever they hold)."""
    from copter_cli.printable import printable

    with answering(False):
        say(printable(text))


def _say_warnings(obj: dict) -> None:
    from copter_cli.printable import printable

    err = obj.get("error")
    said = err.get("message") if isinstance(err, dict) else None  # the error line says it (an --out copy's failure)
    for w in obj.get("warnings") or []:
        if said is not None and str(w) == said:
            continue
        w = printable(str(w))  # a name or path with a line separator: still one warning line
        if console.built or "rich.console" in sys.modules:
            from rich.markup import escape

            console.print(f"[yellow]warning[/]: {escape(str(w))}")
        else:
            say(f"warning: {w}")


def emit(obj, json_out: bool, human: Callable[[Any], None], news: list[str] | None = None) -> int:
    """Print ``obj`` as one JSON object on stdout (``--json``; its ``warnings`` also on stderr first,
    :func:`say_warnings`, or only ``news`` when given: a read-only command's warnings about the state now,
    not those a stored round carries), else hand it to ``human``, which prints the answer on stdout
    (:func:`answering`; its warnings and errors on stderr, :func:`say_warnings`, :func:`say_error`); return
    exit code 0."""
    if json_out:
        say_warnings(obj if news is None else {"warnings": news})
        print_json(obj)
    else:
        with answering():
            human(obj)
    return 0


def run(json_out: bool, debug: bool, body: Callable[[], int | None]) -> None:
    """Run ``body`` under :func:`command_errors` and exit with the code it returns (default 0)."""
    with command_errors(json_out, debug):
        code = body()
    raise typer.Exit(code or 0)
