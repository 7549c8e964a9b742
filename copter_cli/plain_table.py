"""The tables of ``copter show`` and ``copter history`` off a terminal (a pipe, a file, cron's log) without
importing rich (issue #15: rich's console and table are 0.07-0.10 s of CPU of a command whose target is 0.3 s).

Off a terminal rich prints no colour or style, so its table is plain text: :func:`render` writes the same
characters for the two layouts copter prints (``box=None`` without a header: ``show``; ``box.SIMPLE_HEAD``
with a header: ``history``), and ``tests/test_plain_table.py`` compares both with rich's output on random
tables. It renders only what needs no decision from rich: printable ASCII cells (one column per character),
a table no wider than :data:`MAX_WIDTH` (every console these tables go to is at least that wide, so rich
neither wraps nor shrinks it) and a title no wider than the table. Anything else, a terminal, a rich console
already built, or an environment variable that changes rich's idea of a terminal, returns None / False, and
the caller prints through rich as before.
"""

from __future__ import annotations

import os
import re
import sys

MAX_WIDTH = 160  #: the narrowest console these tables are printed on off a terminal (``table_console(160)``)
_PLAIN = re.compile(r"[\x20-\x7e]*")
_RICH_TERMINAL_VARIABLES = ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE")


def render(columns: list[tuple[str, str]], rows: list[list[str]], title: str | None = None,
           header: bool = True, simple_head: bool = True) -> str | None:
    """The text rich prints off a terminal for ``Table(title, box=SIMPLE_HEAD if simple_head else None,
    show_header=header)`` with these columns (header, ``"left"`` or ``"right"``) and rows, or None when
    :mod:`this module <copter_cli.plain_table>` does not render it (see there)."""
    n = len(columns)
    if not n or not (rows or header) or any(len(r) != n for r in rows) or \
            any(j not in ("left", "right") for _, j in columns):
        return None
    texts = [[h for h, _ in columns]] if header else []
    texts += rows
    if not all(_PLAIN.fullmatch(c) for r in texts for c in r) or (title and not _PLAIN.fullmatch(title)):
        return None
    widths = [max([len(r[i]) for r in texts] + [0]) for i in range(n)]

    def line(cells: list[str]) -> str:
        parts = [" " + (c.rjust(w) if j == "right" else c.ljust(w)) + " "
                 for c, w, (_, j) in zip(cells, widths, columns, strict=True)]
        return " " + " ".join(parts) + " " if simple_head else "".join(parts)

    total = sum(w + 2 for w in widths) + (n + 1 if simple_head else 0)
    if total > MAX_WIDTH or (title and len(title) > total):
        return None
    out = []
    if title:
        left = (total - len(title)) // 2
        out.append(" " * left + title + " " * (total - len(title) - left))
    if simple_head:
        out.append(" " * total)
    if header:
        out.append(line([h for h, _ in columns]))
        if simple_head:
            out.append(" " + "\u2500" * (total - 2) + " ")
    out += [line(r) for r in rows]
    if simple_head:
        out.append(" " * total)
    return "\n".join(out) + "\n"


def off_terminal() -> bool:
    """True when the shared console prints where rich would see no terminal and has not been built (rich not
    needed): its stream (stdout while answering, else stderr) is not a TTY and none of rich's variables that
    force a terminal is set."""
    from copter_cli.output import _ANSWER, console

    if console.built or any(v in os.environ for v in _RICH_TERMINAL_VARIABLES):
        return False
    stream = sys.stdout if _ANSWER[0] else sys.stderr
    try:
        return not stream.isatty()
    except (AttributeError, ValueError):
        return False


def print_plain(columns: list[tuple[str, str]], rows: list[list[str]], title: str | None = None,
                header: bool = True, simple_head: bool = True) -> bool:
    """Print the table as rich would off a terminal, on the shared console's stream, without rich; False
    (nothing printed) when it is a terminal or :func:`render` does not render this table."""
    if not off_terminal():
        return False
    text = render(columns, rows, title, header, simple_head)
    if text is None:
        return False
    from copter_cli.output import _ANSWER, write_answer

    if _ANSWER[0]:
        write_answer(text)
    else:
        sys.stderr.write(text)
        sys.stderr.flush()
    return True


__all__ = ["MAX_WIDTH", "off_terminal", "print_plain", "render"]
