"""Helpers of the report tests (tests/test_report*.py): read the data attributes of a report page's tables
and check them against ``solver.rounds.history`` rows."""

from __future__ import annotations

from html.parser import HTMLParser


class RowAttrs(HTMLParser):
    """Collects the data-* attributes of every <tr> of a given table id."""

    def __init__(self, table_id: str):
        super().__init__()
        self.table_id, self.inside, self.rows = table_id, False, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.inside = a.get("id") == self.table_id
        elif tag == "tr" and self.inside and "data-round" in a:
            self.rows.append({k[5:]: v for k, v in a.items() if k.startswith("data-")})

    def handle_endtag(self, tag):
        if tag == "table":
            self.inside = False


def table_rows(html_text: str, table_id: str = "rounds") -> list[dict]:
    p = RowAttrs(table_id)
    p.feed(html_text)
    return p.rows


def _value(row: dict, key: str):
    return row["seconds"][key[8:]] if key.startswith("seconds-") else row[key.replace("-", "_")]


def assert_page_numbers_are_the_logs(rows_in_page: list[dict], history: list[dict]) -> None:
    """Every data attribute of the rounds table equals the history row's value exactly (floats by repr)."""
    assert len(rows_in_page) == len(history)
    for got, want in zip(rows_in_page, history, strict=True):
        assert got["kind"] == want["kind"]
        for key, text in got.items():
            if key == "kind":
                continue
            v = _value(want, key)
            if v is None:
                assert text == "", (key, text)
            elif isinstance(v, bool):
                assert text == ("true" if v else "false"), key
            elif isinstance(v, float):
                assert float(text) == v, (key, text, v)
            else:
                assert text == str(v), (key, text, v)


# ------------------------------------------------------------------------------------------ chart geometry


def synthetic_rows(n: int, failed: set[int], heights, engines=None) -> list[dict]:
    """``n`` history-like rows (as ``solver.rounds.history`` returns them) for chart-geometry tests: slot i
    is a failed attempt (``kind == "failed"``, status PRIMAL_INFEASIBLE) when i is in ``failed``, its
    seconds, iterations and changed variables are ``heights[i]`` (a failed attempt keeps the round number
    of the stored round after it), its engine ``engines[i]`` (default ``"pdhg"``)."""
    rows, r = [], 0
    for i in range(n):
        bad = i in failed
        h = float(heights[i])
        rows.append({
            "round": r, "kind": "failed" if bad else "generation", "current": False,
            "status": "PRIMAL_INFEASIBLE" if bad else "OPTIMAL", "objective": None if bad else 10.0 + h,
            "lp_bound": None if bad else 10.0 + h + 1e-3, "gap_rel": None if bad else 1e-4 + 1e-6 * i,
            "iterations": int(h), "warm_started": i > 0, "engine": (engines or ["pdhg"] * n)[i],
            "seconds": {"wait": 0.0, "load": h / 10, "apply": h / 10, "solve": h / 2, "integerize": 0.0,
                        "save": h / 10, "total": h},
            "changed_variables": int(h), "vars_added": 0, "vars_removed": 0, "cons_added": 0,
            "cons_removed": 0, "compare": {}, "message": "", "utc": "2026-01-01T00:00:00.000Z"})
        r += 0 if bad else 1
    return rows


def drawn(fig) -> tuple:
    """Draw ``fig`` with the Agg renderer; returns (renderer, the non-empty Text artists drawn: tick labels
    out of view, or of a hidden axis, are not among them). ``Text.draw`` is wrapped for the one draw."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    canvas = FigureCanvasAgg(fig)
    texts = []
    real = Text.draw

    def spy(self, renderer):
        if self.get_visible() and self.get_text().strip():
            texts.append(self)
        return real(self, renderer)

    Text.draw = spy
    try:
        canvas.draw()
    finally:
        Text.draw = real
    return canvas.get_renderer(), list(dict.fromkeys(texts))


def bar_boxes(ax):
    """(k, 4) array of the display-space boxes (x0, y0, x1, y1) of the bars (PolyCollections) of ``ax`` as
    drawn, i.e. clipped to the axes (bars entirely outside, or clipped to nothing, are dropped)."""
    import numpy as np
    from matplotlib.collections import PolyCollection

    out = [np.zeros((0, 4))]
    box = ax.bbox
    for coll in ax.collections:
        if type(coll) is not PolyCollection or coll.get_transform() != ax.transData:
            continue
        verts = np.array([p.vertices[:4] for p in coll.get_paths()])  # (k, 4, 2): the bars are quads
        if not len(verts):
            continue
        xy = ax.transData.transform(verts.reshape(-1, 2)).reshape(verts.shape)
        b = np.column_stack([xy[..., 0].min(1), xy[..., 1].min(1), xy[..., 0].max(1), xy[..., 1].max(1)])
        b = np.column_stack([np.maximum(b[:, 0], box.x0), np.maximum(b[:, 1], box.y0),
                             np.minimum(b[:, 2], box.x1), np.minimum(b[:, 3], box.y1)])
        out.append(b[(b[:, 2] > b[:, 0]) & (b[:, 3] > b[:, 1])])
    return np.concatenate(out)


def overlap(a, b, tol: float = 0.5) -> bool:
    """True when display boxes ``a`` and ``b`` share more than ``tol`` pixels in both directions."""
    return min(a.x1, b.x1) - max(a.x0, b.x0) > tol and min(a.y1, b.y1) - max(a.y0, b.y0) > tol


def assert_readable(fig, rows: list[dict]) -> None:
    """The report chart ``fig`` of history ``rows`` draws every text inside the figure; every failed round is
    either named by a note carrying its status or counted in the "+k failed rounds not labelled" note; the notes (any
    text naming a failed round's status, and the cut bars' values) cover no bar, no plot area, no tick
    label, no legend, no title and no other note."""
    import re

    import numpy as np

    r, texts = drawn(fig)
    failed = [x for x in rows if x["kind"] == "failed" or x["status"] not in ("OPTIMAL", "FEASIBLE")]
    statuses = {str(x["status"]) for x in failed if x["status"]}
    named = [t for t in texts if any(st in t.get_text() for st in statuses)
             or (any(not x["status"] for x in failed) and t.get_text().endswith(" ?"))]  # status unknown
    more = [int(m.group(1)) for t in texts if (m := re.match(r"\+(\d+) failed rounds", t.get_text()))]
    assert len(named) + sum(more) == len(failed), (len(named), more, len(failed))
    page = fig.bbox
    for t in texts:
        b = t.get_window_extent(r)
        assert b.x0 >= page.x0 - 0.5 and b.x1 <= page.x1 + 0.5 and b.y0 >= page.y0 - 0.5 and \
            b.y1 <= page.y1 + 0.5, f"text {t.get_text()!r} runs out of the figure: {b} vs {page}"
    panels = fig.axes
    notes = list(dict.fromkeys(named + [t for t in texts if (t.get_gid() or "").startswith("note-")]))
    others = [t for t in texts if t not in notes]
    boxes = [t.get_window_extent(r) for t in notes]
    for i, (t, b) in enumerate(zip(notes, boxes, strict=True)):
        for ax in panels:
            assert not overlap(b, ax.bbox, 0.0), f"note {t.get_text()!r} lies on a plot area"
            bars = bar_boxes(ax)
            hit = (np.minimum(b.x1, bars[:, 2]) > np.maximum(b.x0, bars[:, 0])) & \
                  (np.minimum(b.y1, bars[:, 3]) > np.maximum(b.y0, bars[:, 1]))
            assert not hit.any(), f"note {t.get_text()!r} covers a bar"
        for o in others:
            assert not overlap(b, o.get_window_extent(r)), f"note {t.get_text()!r} overlaps {o.get_text()!r}"
        for ax in panels:
            if ax.get_legend() is not None:
                assert not overlap(b, ax.get_legend().get_window_extent(r)), f"note {t.get_text()!r} on the legend"
        for t2, b2 in zip(notes[i + 1:], boxes[i + 1:], strict=True):
            assert not overlap(b, b2), f"notes {t.get_text()!r} and {t2.get_text()!r} overlap"
