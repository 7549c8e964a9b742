"""Tables that fit the terminal without cutting a number or a status in half (``copter history``,
``copter compare``).

rich shrinks every column of a table wider than the console and cuts its cells with an ellipsis, so at
80 columns a 15-column table showed ``O…`` for OPTIMAL and ``1.5e-…`` for a gap. Here every column is
``no_wrap``; on a terminal the least important columns are dropped (lowest priority first) until the table
fits its width, and one ``note:`` line on stderr names them and points at ``--json`` or a wider terminal.
Essential columns are never dropped; when even they do not fit, the table is printed at its natural width
(the terminal wraps the lines, no cell is cut). Off a terminal (a log, a pipe) nothing is dropped: the
table is printed at its natural width, at least ``min_width`` columns. An optional column whose cells are
all blank is left out everywhere without a note.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from copter_cli.printable import printable

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table


@dataclass(frozen=True)
class Column:
    """One column: its header, justification, and priority (0 = essential, never dropped; a higher number
    is dropped earlier when the terminal is too narrow)."""

    header: str
    justify: str = "right"
    priority: int = 0


def _build(columns: list[Column], rows: list[list[str]], keep: list[int], table_kw: dict) -> Table:
    from rich.table import Table

    t = Table(**table_kw)
    for i in keep:
        c = columns[i]
        # min_width: an essential cell is never cut, even if rich were to shrink the table
        widest = max([len(c.header), *(len(r[i]) for r in rows)])
        t.add_column(c.header, justify=c.justify, no_wrap=True, overflow="fold",
                     min_width=widest if c.priority == 0 else None)
    for r in rows:  # names and paths in a cell through copter_cli.printable: one row, one line
        t.add_row(*(printable(r[i]) for i in keep))
    return t


def _non_empty(columns: list[Column], rows: list[list[str]]) -> list[int]:
    """Indices of the columns to consider: every essential one, and the others with a non-blank cell (an
    optional column with nothing to show, e.g. compare before any ``copter compare``, takes no room)."""
    return [i for i, c in enumerate(columns) if c.priority == 0 or any(r[i].strip() for r in rows)]


def _widest(rows: list[list[str]]) -> list[list[str]]:
    """One row holding each column's widest cell (terminal cells of its printable form), or no row: a table of it
    has the natural width of the whole table (every column is ``no_wrap``), and measuring it costs one row, where
    measuring 3,000 rounds' history took 10 s (helper-233, session 58)."""
    from rich.cells import cell_len

    if not rows:
        return []
    return [[max((r[i] for r in rows), key=lambda cell: cell_len(printable(cell))) for i in range(len(rows[0]))]]


def natural_width(table: Table, console: Console) -> int:
    """Columns the table needs to show every cell whole (its widest unwrapped rendering)."""
    from rich.measure import Measurement

    return Measurement.get(console, console.options.update_width(10**6), table).maximum


def minimum_width(table: Table, console: Console) -> int:
    """Columns the table needs with every foldable cell folded as far as it goes (its narrowest rendering)."""
    from rich.measure import Measurement

    return Measurement.get(console, console.options.update_width(10**6), table).minimum


def fit(columns: list[Column], rows: list[list[str]], width: int, console: Console, *,
        widest: list[list[str]] | None = None, **table_kw) -> tuple[list[int], list[str], int]:
    """The most important columns whose table's natural width fits ``width``.

    Args:
        columns: the columns, in display order (the order is kept; only priorities decide the drops).
        rows: cell texts, one list per row, ``len(columns)`` each.
        width: the terminal's columns.
        console: used to measure.
        widest: :func:`_widest` of ``rows`` when the caller has it (a pass over every cell).
        table_kw: passed to ``rich.table.Table`` (title, box, ...).
    Returns:
        (the indices of the columns kept, headers of the dropped columns in display order, the table's natural
        width), the width possibly above ``width`` when the essential columns alone do not fit.
    """
    keep = _non_empty(columns, rows)
    widest = _widest(rows) if widest is None else widest
    while True:
        need = natural_width(_build(columns, widest, keep, table_kw), console)
        droppable = [i for i in keep if columns[i].priority > 0]
        if need <= width or not droppable:
            dropped = [columns[i].header or "(mark)" for i in _non_empty(columns, rows) if i not in keep]
            return keep, dropped, need
        keep.remove(max(droppable, key=lambda i: (columns[i].priority, i)))


#: from this many rows on, :func:`_print` lays out the body rows itself (rich took 1-1.6 ms a row: ``copter history``
#: of 3,000 rounds 3-5 s, of a month of five-minute rounds 9-14 s; helper-233, session 58, measured in session 59)
FAST_ROWS = 200


def _row_line(cells: list[str], widths: list[int], justify: list[str]) -> str:
    """One body line as rich draws it in a table whose vertical edges are spaces (``box.SIMPLE_HEAD``): each cell
    padded to its column's width and one space either side, the cells apart by one space, a space at each edge."""
    from rich.cells import cell_len

    out = []
    for cell, w, j in zip(cells, widths, justify, strict=True):
        pad = " " * (w - cell_len(cell))
        out.append(f" {pad}{cell} " if j == "right" else f" {cell}{pad} ")
    return " " + " ".join(out) + " "


def _print(out: Console, columns: list[Column], rows: list[list[str]], widest: list[list[str]], keep: list[int],
           table_kw: dict) -> None:
    """Print the table of ``rows`` on ``out``, as rich prints it. From :data:`FAST_ROWS` rows on, rich draws the
    title, the header and one row of every column's widest cell, and the other rows are laid out here in the same
    columns; the layout is checked against rich's line for that widest row, and rich draws the whole table whenever
    they differ (another box, a style in a cell, a column rich would not size by its widest cell)."""
    # the body goes to the console's file: not where a recording or capturing console would keep it (rich's own
    # buffer depth; a console without one is taken for one that buffers)
    buffering = out.record or getattr(out, "_buffer_index", 1) > 0
    if len(rows) < FAST_ROWS or buffering or table_kw.get("box") is None or table_kw["box"].mid_vertical != " ":
        out.print(_build(columns, rows, keep, table_kw))
        return
    from rich.cells import cell_len

    cells = [printable(widest[0][i]) for i in keep]
    widths = [max(cell_len(columns[i].header), cell_len(c)) for i, c in zip(keep, cells, strict=True)]
    justify = [columns[i].justify for i in keep]
    with out.capture() as cap:
        out.print(_build(columns, widest, keep, table_kw))
    frame = cap.get().split("\n")
    mine = _row_line(cells, widths, justify)
    at = [k for k, line in enumerate(frame) if line == mine or line == mine.rstrip(" ")]
    if len(at) != 1:  # rich's line is not this layout's: rich draws the whole table
        out.print(_build(columns, rows, keep, table_kw))
        return
    trim = frame[at[0]] != mine  # a TrimmedLines file (off a terminal) drops the trailing spaces
    body = (_row_line([printable(r[i]) for i in keep], widths, justify) for r in rows)
    lines = [*frame[:at[0]], *((b.rstrip(" ") for b in body) if trim else body), *frame[at[0] + 1:]]
    out.file.write("\n".join(lines))
    out.file.flush()


def print_fitted(columns: list[Column], rows: list[list[str]], *, console: Console | None = None,
                 terminal: bool | None = None, min_width: int = 160, more: str = "--json",
                 **table_kw) -> list[str]:
    """Print the table on stderr fitted to the terminal (see the module); return the dropped headers.

    Args:
        console: where to print (default: the shared stderr console ``copter_cli.output.console``).
        terminal: whether it is a terminal, whose width is respected (default: the console's own answer).
        min_width: off a terminal, print at least this wide.
        more: what the note points at to see every column (``--json``, ``--json or --csv``).
    """
    from copter_cli.output import console as shared
    from copter_cli.output import wide_console

    out = console if console is not None else shared.get()
    is_tty = out.is_terminal if terminal is None else terminal
    widest = _widest(rows)  # once: it measures every cell
    if not is_tty:
        keep = _non_empty(columns, rows)
        need = natural_width(_build(columns, widest, keep, table_kw), out)
        _print(wide_console(max(min_width, need), out), columns, rows, widest, keep, table_kw)
        return []
    keep, dropped, need = fit(columns, rows, out.width, out, widest=widest, **table_kw)
    # the essentials alone wider than the terminal: printed whole, the terminal wraps the lines
    _print(wide_console(need, out, force_terminal=True) if need > out.width else out, columns, rows, widest, keep,
           table_kw)
    if dropped:
        from rich.text import Text

        out.print(Text(f"note: column(s) {', '.join(dropped)} not shown at {out.width} columns; "
                       f"widen the terminal or use {more} for every field"), soft_wrap=True)
    return dropped
