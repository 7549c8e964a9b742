"""copter_cli.plain_table prints the show and history tables off a terminal as rich prints them (issue #15:
without importing rich), and declines what it does not render."""

from __future__ import annotations

import io
import random

import pytest
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from copter_cli.plain_table import MAX_WIDTH, render


def _rich(columns, rows, title, header, simple_head, width=MAX_WIDTH) -> str:
    t = Table(title=title, box=box.SIMPLE_HEAD if simple_head else None, show_header=header)
    for h, j in columns:
        t.add_column(h, justify=j, no_wrap=True, overflow="fold")
    for r in rows:
        t.add_row(*(Text(c) for c in r))
    buf = io.StringIO()
    Console(file=buf, width=width, highlight=False, soft_wrap=False, emoji=False).print(t)
    return buf.getvalue()


def _cell(rng: random.Random) -> str:
    return rng.choice(["", "-", "OPTIMAL", "*", "0.000264894", "156.256", "gen-000000/solution.parquet",
                       "a b", "[bold]x[/]", "x" * rng.randint(0, 12), str(rng.randint(0, 10**6))])


@pytest.mark.parametrize("seed", range(40))
def test_render_is_richs_text_off_a_terminal(seed):
    rng = random.Random(seed)
    simple_head = seed % 2 == 0
    header = simple_head or rng.random() < 0.3
    columns = [(rng.choice(["", "round", "objective", "compare (time / copter)", "x"]), rng.choice(["left", "right"]))
               for _ in range(rng.randint(1, 12 if simple_head else 3))]
    rows = [[_cell(rng) for _ in columns] for _ in range(rng.choice([0, 1, 3, 20]))]
    title = rng.choice([None, "copter history", "copter round 12", "t"])
    got = render(columns, rows, title, header, simple_head)
    want = _rich(columns, rows, title, header, simple_head)
    if got is None:  # declined: only for a table wider than MAX_WIDTH or a title wider than the table
        wide = _rich(columns, rows, None, header, simple_head, width=10**4)
        table_width = max((len(ln) for ln in wide.splitlines()), default=0)
        assert table_width > MAX_WIDTH or (title and len(title) > table_width) or not (rows or header), wide
    else:
        assert got == want
        assert got == _rich(columns, rows, title, header, simple_head, width=MAX_WIDTH + 77)  # a wider console


def test_what_it_does_not_render_is_left_to_rich():
    cols = [("a", "left"), ("b", "right")]
    assert render(cols, [["x", "é"]]) is None  # not ASCII: rich's cell widths
    assert render(cols, [["x", "a\tb"]]) is None  # a control character
    assert render(cols, [["x", "y" * MAX_WIDTH]]) is None  # rich would wrap it at the console's width
    assert render(cols, [["x", "y"]], title="a title wider than the table") is None  # rich wraps the title
    assert render([("a", "center")], [["x"]]) is None
    assert render(cols, [], header=False) is None  # rich prints nothing at all
    assert render(cols, [["x"]]) is None
    assert render(cols, [["x", "y"]], title="ab") is not None
