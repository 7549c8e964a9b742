"""Human view of ``copter show --solution`` (``solver.rounds.show_solution``): the allocation by client and,
with ``--changes``, the biggest moves, as rich tables on the command's answer stream (stdout); names through
``copter_cli.printable`` (a line separator in a name no longer splits a row). Off a terminal (a file, a pipe) the
tables print as wide as their cells need: folded to rich's 80 columns, a long name was split over two lines
(``grep NAME alloc.txt`` found nothing). rich is imported only when the tables are
printed (``--json`` output never imports it)."""

from __future__ import annotations

from copter_cli.output import console, say, say_warnings
from copter_cli.printable import name_cell

NO_CLIENT = "(no client)"  #: the table's label of the group of names without a client


def _num(v, spec: str = ".6g") -> str:
    return "-" if v is None else format(v + 0.0, spec)  # + 0.0: -0.0 prints as 0


def _print_table(t) -> None:
    """On a terminal: fitted to its width (names fold), or, when even its unfolded cells (numbers, kinds) and its
    names' header words do not fit, at the width they need (the terminal wraps the lines: rich dropped the name column
    of a move table at 40 columns). Elsewhere: as wide as the cells need, no cell folded."""
    from copter_cli.output import table_console, wide_console
    from copter_cli.table_fit import minimum_width, natural_width

    out = console.get()
    if out.is_terminal:
        need = minimum_width(t, out)
        if need > out.width:
            wide_console(need, out, force_terminal=True).print(t)
            return
    table_console(natural_width(t, out)).print(t)


def _add_columns(t, columns: tuple, rows: list) -> None:
    """Add ``columns`` ((header, justify), ...) to ``t``: a number, a count, a share (right-justified) and a move's
    kind are never folded, each as wide as its widest cell; names fold on a narrow terminal. At 40 columns the sums
    were cut across two lines ("130.6" over "6": helper-236, session 59)."""
    for i, (col, just) in enumerate(columns):
        if just == "right" or col == "kind":
            t.add_column(col, justify=just, no_wrap=True,
                         min_width=max([len(col), *(len(str(r[i])) for r in rows)]))
        else:  # folds, but never narrower than its header word
            t.add_column(col, justify=just, overflow="fold", min_width=max(len(w) for w in col.split()))


def print_allocation(res: dict) -> None:
    """Print the result of ``solver.rounds.show_solution`` (stdout): a header line, one row per client
    (variables, sum, share of the total, largest entries), the omitted count, then the moves."""
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    say_warnings(res)
    say(f"round {res['round']} ({res.get('status')}, objective {_num(res.get('objective'))}): "
        f"{res['n_nonzero']:,} nonzero of {res['n_variables']:,} variables (|value| > {res['zero_tol']:g}), "
        f"sum {_num(res['sum'])}, {res['n_clients']:,} client group(s)")
    t = Table(box=box.SIMPLE_HEAD, title_justify="left")
    rows = []
    for c in res["clients"]:
        share = "-" if c["share"] is None else f"{100 * c['share']:.1f}%"
        top = ", ".join(f"{name_cell(e['name'], ', ')} {_num(e['value'])}" for e in c["top"])
        rows.append((escape(NO_CLIENT if c["client"] is None else name_cell(c["client"], reserved=(NO_CLIENT,))),
                     f"{c['nonzero']:,}", _num(c["sum"]), share, escape(top)))
    _add_columns(t, (("client", "left"), ("nonzero", "right"), ("sum", "right"), ("share", "right"),
                     ("largest entries", "left")), rows)
    for row in rows:
        t.add_row(*row)
    _print_table(t)
    if res["clients_omitted"]:
        say(f"... and {res['clients_omitted']:,} more client group(s) (--top N shows more)")
    if "changes" in res:
        _print_moves(res["round"], res["changes"])


def _print_moves(round_: int, ch: dict) -> None:
    from rich import box
    from rich.markup import escape
    from rich.table import Table

    prev = ch.get("previous_round")
    since = "round 0 has no previous round: every variable is new" if prev is None and round_ == 0 else (
        f"since round {prev}" if prev is not None else "since the previous round")
    say(f"changes {since}: {ch['changed_variables']:,} changed variables (the report's changed_variables) = "
        f"+{ch['vars_added']:,} added, -{ch['vars_removed']:,} removed, {ch['vars_moved']:,} moved; "
        f"constraints +{ch['cons_added']:,} added, -{ch['cons_removed']:,} removed")
    zero = ch.get("zero_moves") or 0
    at_zero = f"{zero:,} variable(s) added or removed at value 0 (no move)"
    if not ch["moves"]:
        say("no allocation moved" + (f"; {at_zero}" if zero else ""))
        return
    title = "biggest moves (delta = new - old; a missing side counts as 0)"
    t = Table(title=title, box=box.SIMPLE_HEAD, title_justify="left", min_width=len(title))  # never wrapped mid-phrase
    rows = [(escape(name_cell(m["name"])), m["kind"], _num(m["old"]), _num(m["new"]), _num(m["delta"], "+.6g"))
            for m in ch["moves"]]
    _add_columns(t, tuple((col, "left" if col in ("name", "kind") else "right")
                          for col in ("name", "kind", "old", "new", "delta")), rows)
    for row in rows:
        t.add_row(*row)
    _print_table(t)
    if ch["moves_omitted"]:
        say(f"... and {ch['moves_omitted']:,} more move(s), none larger")  # equal ones are left out too
    if zero:  # counted above, listed nowhere: +1,440 added beside 534 moves did not add up (helper-187)
        say(f"not listed: {at_zero}")
