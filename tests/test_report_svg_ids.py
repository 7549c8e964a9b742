"""The report page inlines several matplotlib SVG charts; each one numbers its elements from 1 ("figure_1",
"axes_1", "patch_1", ...) and names its clip paths and markers by a hash of their geometry, so two charts used
to repeat ids: invalid HTML, and a ``url(#id)`` of one chart could resolve into another chart's clip path.

The page must hold every id once, and every internal reference of a chart (``url(#id)``, ``href="#id"``,
``xlink:href="#id"``) must name an id of that same chart."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="copter report needs the optional extra plot (matplotlib)")

from solver.rounds.report import charts, page, require_matplotlib  # noqa: E402
from tests.report_helpers import synthetic_rows  # noqa: E402

require_matplotlib()

REF = re.compile(r"""url\(\s*#([^)\s]+)\s*\)|^#(.+)$""")


class Ids(HTMLParser):
    """Every id attribute of the page in order, and the references of each ``<figure>`` with the ids it holds."""

    def __init__(self):
        super().__init__()
        self.ids: list[str] = []
        self.figures: list[dict] = []  # {"id": figure id, "ids": set, "refs": list}
        self.depth = 0  # <figure> nesting: the charts are not nested, but a stray figure would be counted right

    def handle_starttag(self, tag, attrs):
        if tag == "figure":
            self.depth += 1
            self.figures.append({"id": dict(attrs).get("id"), "ids": set(), "refs": []})
        for name, value in attrs:
            if value is None:
                continue
            if name == "id":
                self.ids.append(value)
                if self.depth:
                    self.figures[-1]["ids"].add(value)
            elif self.depth:
                self.figures[-1]["refs"] += [a or b for a, b in REF.findall(value) if name.endswith("href")
                                             or "url(" in value]

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag == "figure":
            self.handle_endtag(tag)

    def handle_endtag(self, tag):
        if tag == "figure":
            self.depth -= 1


def parsed(html_text: str) -> Ids:
    p = Ids()
    p.feed(html_text)
    return p


def rows_with_every_kind_of_id() -> list[dict]:
    """Rows whose charts hold clip paths, markers, a hatch pattern (an undone round) and notes, including two
    notes of one slot in one chart (a failed round whose seconds are also cut at the top of the axis)."""
    h = np.array([2.0, 300.0, 3.0, 4.0, 5.0, 3.0, 4.0, 2.0, 3.0, 4.0])
    rows = synthetic_rows(len(h), {1}, h, ["pdhg", "alm", "pdhg", "highs", None, "pdhg", "pdhg", "alm", "pdhg", "pdhg"])
    rows[5]["current"] = True
    rows[4]["compare"] = {"copter": {"seconds": 4.0}, "highs": {"seconds": 9.0}}
    return rows


def a_page(rows: list[dict]) -> str:
    """The page of ``rows`` with a fixed ``svg.hashsalt`` (as a matplotlibrc for reproducible output sets it):
    then two charts' clip rectangles of the same geometry get the same hashed id, as a random salt may by chance."""
    import matplotlib

    with matplotlib.rc_context({"svg.hashsalt": "copter"}):
        svgs = {name: charts.render(build(rows), "svg").decode("utf-8") for name, build in charts.CHARTS.items()}
    return page.page(rows, svgs, "/tmp/st", "2026-01-01T00:00:00Z")


def test_every_id_of_the_page_is_unique():
    ids = parsed(a_page(rows_with_every_kind_of_id())).ids
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    assert len(ids) > 100 and not repeated, repeated[:10]


def test_every_reference_of_a_chart_resolves_inside_that_chart():
    """A browser resolves ``url(#id)`` to the first element of the page with that id: it must be in the same chart."""
    p = parsed(a_page(rows_with_every_kind_of_id()))
    figures = p.figures
    assert [f["id"] for f in figures] == [f"chart-{n}" for n in charts.CHARTS]
    first = {}
    for k, fig in enumerate(figures):
        for i in fig["ids"]:
            first.setdefault(i, k)
    kinds = set()
    for k, fig in enumerate(figures):
        assert fig["refs"], fig["id"]  # clip paths at least: the check is not vacuous
        elsewhere = [r for r in fig["refs"] if first.get(r) != k]
        assert not elsewhere, (fig["id"], [(r, first.get(r)) for r in elsewhere[:5]])
        kinds |= {r.split("-")[-1][0] for r in fig["refs"]}
    assert {"p", "m", "h"} <= kinds  # clip paths, markers and the undone rounds' hatch were all checked


def test_a_chart_renders_the_same_elements_with_its_ids_scoped():
    """Only the ids and the references to them change: the SVG without them is the chart matplotlib wrote."""
    rows = rows_with_every_kind_of_id()
    svg = charts.render(charts.round_time(rows), "svg").decode("utf-8").rstrip()
    text = a_page(rows)
    inlined = text[text.index('<figure id="chart-round-time">'):]
    inlined = inlined[inlined.index("<svg"):inlined.index("</svg>") + 6]
    strip = re.compile(r"""\sid="[^"]*"|url\(#[^)]*\)|href="#[^"]*\"""")
    assert strip.sub("", inlined) == strip.sub("", svg)
    assert inlined != svg
