"""The report charts' y labels and tick labels stay inside the figure whatever their width (tester's report: an
objective of 1,234,567.89 written in full, and the long unit labels of the iterations chart's ``highs`` and
``presolve`` panels, ran past the figure's left edge and over one another).

Measured with matplotlib's Agg renderer on the figures the chart builders return; the axes keep their size in
inches (the plots themselves are unchanged, only the margins around them grow)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="copter report needs the optional extra plot (matplotlib)")

from solver.rounds.report import charts, layout, require_matplotlib  # noqa: E402
from tests.report_helpers import drawn, overlap, synthetic_rows  # noqa: E402

require_matplotlib()

ENGINES = ["pdhg", "highs", "presolve", None, "alm", "highs", "presolve", "pdhg"]


def wide_rows(objective: float, step: float, count: float) -> list[dict]:
    """Rows whose objectives are ``objective + k * step`` (tick labels of many digits), whose iterations,
    changed variables and seconds reach ``count``, on every engine (five iteration panels), one failed."""
    h = np.array([count, 3.0, 4.0, 5.0, count / 2, 2.0, 7.0, 6.0])
    rows = synthetic_rows(len(h), {3}, h, ENGINES)
    for k, r in enumerate(rows):
        if r["objective"] is not None:
            r["objective"], r["lp_bound"] = objective + k * step, objective + k * step * 0.7
    return rows


CASES = [(1234567.89, 0.01, 3e6), (-98765432.1234, 1e-4, 123456789.0), (1.5e15, 3e11, 999999.0),
         (27500.0, 10.0, 950.0)]


def text_boxes(fig):
    """(renderer, [(text artist, its display box)]) of the texts drawn in ``fig``."""
    r, texts = drawn(fig)
    return r, [(t, t.get_window_extent(r)) for t in texts]


def assert_inside(fig) -> None:
    """Every drawn text lies inside the figure; the room left and right of the plots also holds the texts there
    when a browser draws the SVG's text up to ``layout.WIDTH_SLACK`` wider than Agg."""
    r, boxes = text_boxes(fig)
    page = fig.bbox
    for t, b in boxes:
        assert page.x0 - 0.5 <= b.x0 and b.x1 <= page.x1 + 0.5 and page.y0 - 0.5 <= b.y0 and b.y1 <= page.y1 + 0.5, \
            f"{t.get_text()!r} runs out of the figure: {b} vs {page}"
    left = min(ax.bbox.x0 for ax in fig.axes)
    right = max(ax.bbox.x1 for ax in fig.axes)
    for t, b in boxes:
        assert (left - b.x0) * layout.WIDTH_SLACK <= left - page.x0 + 0.5, t.get_text()
        assert (b.x1 - right) * layout.WIDTH_SLACK <= page.x1 - right + 0.5, t.get_text()


def assert_labels_apart(fig) -> None:
    """No panel's y label overlaps another's, nor any tick label."""
    r, boxes = text_boxes(fig)
    ylabels = [ax.yaxis.label for ax in fig.axes if ax.get_ylabel()]
    ticks = [b for t, b in boxes if t not in ylabels and t.get_text() and t.get_rotation() == 0]
    ybox = [t.get_window_extent(r) for t in ylabels]
    for i, b in enumerate(ybox):
        for b2 in ybox[i + 1:]:
            assert not overlap(b, b2), (ylabels[i].get_text(), b, b2)
        for tb in ticks:
            assert not overlap(b, tb), (ylabels[i].get_text(), b, tb)


@pytest.mark.parametrize(("objective", "step", "count"), CASES)
@pytest.mark.parametrize("name", list(charts.CHARTS))
def test_wide_tick_labels_and_long_unit_labels_stay_inside_the_figure(name, objective, step, count):
    fig = charts.CHARTS[name](wide_rows(objective, step, count))
    assert_inside(fig)
    assert_labels_apart(fig)


@pytest.mark.parametrize("engine", ["highs", "presolve", None, "pdhg"])
def test_a_single_iteration_panels_unit_label_fits_its_panel(engine):
    """One panel (2.55 in): the presolve unit label, longer than the panel, ran past the figure's top and bottom."""
    rows = synthetic_rows(4, set(), [12345678.0, 3.0, 4.0, 5.0], [engine] * 4)
    fig = charts.iterations(rows)
    assert len(fig.axes) == 1
    assert_inside(fig)
    assert_labels_apart(fig)


def test_the_unit_labels_words_are_kept_and_the_plots_keep_their_size():
    """The fix widens the margins only: each panel is as many inches wide and tall as before, and a wrapped
    label has the same words."""
    rows = wide_rows(1234567.89, 0.01, 3e6)
    fig = charts.iterations(rows)
    drawn(fig)
    want = [u for _, u in charts.ITERATION_UNITS]
    assert [" ".join(ax.get_ylabel().split()) for ax in fig.axes] == want
    for ax in fig.axes:
        assert ax.bbox.width == pytest.approx((layout.RIGHT - layout.LEFT) * layout.FIG_WIDTH * fig.dpi)
        assert ax.bbox.height == pytest.approx(max(1.2, 3.2 / len(want)) * fig.dpi)
    plain = charts.churn(synthetic_rows(4, set(), [1.0, 2.0, 3.0, 4.0]))
    assert tuple(plain.get_size_inches())[0] == layout.FIG_WIDTH  # a chart whose labels fit is not widened
