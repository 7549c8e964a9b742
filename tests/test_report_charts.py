"""The report's charts as an operator reads them (issue #19 review): a failed round's status never covers a
bar (at 1 to 500 rounds, bars of any height including 0), PDHG iterations and ALM outer steps never share
an axis (each panel and legend names its unit), round ticks read 0, 20, 40 ..., y labels carry no
offset text, the gap panel always has labelled decades, and a panel without data says why.

Geometry is measured on the figures as matplotlib draws them (display boxes of the drawn texts and bars,
``tests/report_helpers.assert_readable``); the HTML page inlines the same figures as SVG."""

from __future__ import annotations

import math

import numpy as np
import pytest

from solver import rounds
from solver.model.delta import Delta
from solver.model.settings import Settings
from tests.helpers import infeasible_delta, small_lp

pytest.importorskip("matplotlib", reason="copter report needs the optional extra plot (matplotlib)")

from solver.rounds.report import charts, layout, page, require_matplotlib, write_report  # noqa: E402
from tests.report_helpers import assert_readable, bar_boxes, drawn, synthetic_rows  # noqa: E402

require_matplotlib()


@pytest.fixture(scope="module")
def stream(tmp_path_factory):
    """Rounds on both engines, a failed round that ran the most PDHG iterations of all (ITERATION_LIMIT at
    1000 at a tolerance out of reach, so its bar is the tallest), and an infeasible one; returns (state, history rows)."""
    st = tmp_path_factory.mktemp("charts") / "st"
    rounds.init(small_lp(), st)
    for i in range(4):
        rounds.step(Delta.vars([f"x{i}"], cost=[3.0 + i]), st, Settings(engine="alm" if i % 2 else "pdhg"))
    limit = rounds.step(Delta.vars(["x7", "x8", "x11"], cost=[3.5, 0.2, 4.0]), st,
                        Settings(engine="pdhg", tol=1e-15, iteration_limit=1000))  # tol out of reach
    assert (limit["status"], limit["accepted"]) == ("ITERATION_LIMIT", False)
    rounds.step(infeasible_delta(), st, Settings(tol=1e-6, iteration_limit=20000), force=True)
    rounds.step(Delta.vars(["x9"], cost=[2.0]), st, Settings(engine="alm"))
    rows = rounds.history(st)
    assert {r["engine"] for r in rows} == {"pdhg", "alm"} and sum(r["kind"] == "failed" for r in rows) == 2
    return st, rows


@pytest.mark.parametrize("name", list(charts.CHARTS))
def test_a_real_streams_failed_rounds_are_named_above_the_plot_never_on_a_bar(stream, name):
    _, rows = stream
    fig = charts.CHARTS[name](rows)
    assert_readable(fig, rows)
    notes = [t.get_text() for t in drawn(fig)[1] if (t.get_gid() or "").startswith("note-")]
    assert any("ITERATION_LIMIT" in t for t in notes) and any("PRIMAL_INFEASIBLE" in t for t in notes)


def test_the_tallest_bar_is_a_failed_rounds_and_its_label_clears_it(stream):
    """The case the review found: the failed round's bar reaches the top of the panel."""
    _, rows = stream
    fig = charts.iterations(rows)
    r, texts = drawn(fig)
    i = next(k for k, row in enumerate(rows) if row["status"] == "ITERATION_LIMIT")
    pdhg = fig.axes[0]
    assert pdhg.get_ylim()[1] <= 1.06 * rows[i]["iterations"]  # its bar is the one that sets the top
    label = next(t for t in texts if "ITERATION_LIMIT" in t.get_text()).get_window_extent(r)
    assert label.y0 >= pdhg.bbox.y1  # above the plot, so above the bar whatever its height
    bar_x = pdhg.transData.transform([(i, 0)])[0][0]
    assert label.x0 - 1 <= bar_x <= label.x1 + 1  # and over its slot


CASES = [(n, fail, height) for n in (1, 2, 16, 120, 500) for fail in ("middle", "edges+every12", "all")
         for height in ("zero", "failed-tallest")]


@pytest.mark.parametrize(("n", "fail", "height"), CASES)
def test_notes_clear_bars_and_each_other_at_any_size(n, fail, height):
    failed = {"middle": {n // 2}, "edges+every12": {0, n - 1, *range(0, n, 12)}, "all": set(range(n))}[fail]
    h = np.zeros(n) if height == "zero" else np.where([i in failed for i in range(n)], 1e4, 3.0)
    if height != "zero" and n > 2:
        h[1] = 5e4  # a cold-round outlier: cut at the top of the round-time axis, its value written above
    rows = synthetic_rows(n, failed, h, [("pdhg", "alm", None)[i % 3] for i in range(n)])
    for name, build in charts.CHARTS.items():
        fig = build(rows)
        assert_readable(fig, rows)
        if height != "zero" and name == "churn":  # the helper sees the bars (the check is not vacuous)
            assert len(bar_boxes(fig.axes[0])) >= min(n, 1)


@pytest.mark.parametrize("n", [1, 2, 3, 7, 15, 16, 40, 99, 150, 299, 300, 450, 500])
def test_note_layout_keeps_every_note_on_its_slot_inside_the_axis_and_apart(n):
    rng = np.random.default_rng(n)
    failed = sorted(set(rng.choice(n, size=max(1, n // 7), replace=False).tolist()) | {0, n - 1})
    notes = [layout.Note(i, f"{i}\u2717 {rng.choice(['PRIMAL_INFEASIBLE', 'TIME_LIMIT', 'NUMERICAL_ERROR'])}")
             for i in failed] + [layout.Note(1 if n > 1 else 0, "1: 12.3 s \u2191", "#222222")]
    width = (layout.RIGHT - layout.LEFT) * layout.FIG_WIDTH * 72
    placed = layout.place_notes(notes, n, width)
    per_pt = (n + 0.2) / width
    boxes: dict = {}
    for note, c, lane in placed:
        half = layout.text_width_pt(note.text) * per_pt / 2
        assert -0.6 - 1e-9 <= c - half and c + half <= n - 0.4 + 1e-9, note  # inside the axis
        assert c - half - 1e-9 <= note.slot <= c + half + 1e-9, note  # spans its slot
        for a, b in boxes.get(lane, []):
            assert c + half + layout.PAD_PT * per_pt <= a + 1e-9 or c - half - layout.PAD_PT * per_pt >= b - 1e-9
        boxes.setdefault(lane, []).append((c - half, c + half))
    assert len(placed) == len(notes) or layout.more_lines(notes, placed)  # the rest are counted
    if len(failed) <= 3:
        assert len(placed) == len(notes)


def test_pdhg_iterations_and_alm_outer_steps_never_share_an_axis(stream):
    """One panel per unit: each panel's bars are exactly its engine's rounds with their iterations, and
    its y label and legend name the unit."""
    _, rows = stream
    fig = charts.iterations(rows)
    drawn(fig)
    assert [ax.get_ylabel() for ax in fig.axes] == ["PDHG iterations", "ALM outer steps"]
    for ax, engine, unit in zip(fig.axes, ("pdhg", "alm"), ("PDHG iterations", "ALM outer steps"), strict=True):
        want = sorted((i, float(r["iterations"])) for i, r in enumerate(rows) if r["engine"] == engine)
        got = []
        for coll in ax.collections:
            if coll.get_transform() != ax.transData:
                continue  # the failed-round bands
            for p in coll.get_paths():
                v = p.vertices[:4]
                got.append((round(float(v[:, 0].mean())), float(v[:, 1].max() - v[:, 1].min())))
        assert sorted(got) == want, engine
        labels = [t.get_text().replace("\n", " ") for t in ax.get_legend().get_texts()]
        assert all(unit in t for t in labels if "start" in t) and any("start" in t for t in labels)
    assert "PDHG iterations" in page.CAPTIONS["iterations"] and "ALM outer steps" in page.CAPTIONS["iterations"]


def test_rounds_without_a_logged_engine_get_their_own_panel():
    """A round whose log row holds no engine (a log written before copter recorded it): not mixed into either
    unit."""
    rows = synthetic_rows(6, set(), [10, 3, 4, 500, 600, 2], ["pdhg", "alm", "alm", None, None, "alm"])
    fig = charts.iterations(rows)
    assert [ax.get_ylabel() for ax in fig.axes] == ["PDHG iterations", "ALM outer steps",
                                                    "iterations\n(engine not logged)"]
    assert fig.axes[2].get_ylim()[1] < 700 and fig.axes[1].get_ylim()[1] < 10  # 500 does not flatten the 4s
    only_alm = charts.iterations(synthetic_rows(3, set(), [1, 2, 3], ["alm"] * 3))
    assert [ax.get_ylabel() for ax in only_alm.axes] == ["ALM outer steps"]
    assert only_alm.axes[0].get_title(loc="left").startswith("ALM outer steps per round")


def test_rounds_highs_solved_first_are_not_called_unlogged():
    """A small MILP's rounds that HiGHS solved first log the engine ``highs`` (history's engine column says so;
    HiGHS's own iterations are not counted: 0): their panel was titled "iterations (engine not logged)"."""
    fig = charts.iterations(synthetic_rows(3, set(), [0, 0, 0], ["highs"] * 3))
    (label,) = [ax.get_ylabel() for ax in fig.axes]
    assert "not logged" not in label and "highs" in label, label
    mixed = charts.iterations(synthetic_rows(3, set(), [0, 40, 7], ["highs", "pdhg", None]))
    assert [ax.get_ylabel().replace("\n", " ") for ax in mixed.axes] == [
        "PDHG iterations", label.replace("\n", " "), "iterations (engine not logged)"]
    assert "highs" in page.CAPTIONS["iterations"]


def test_round_ticks_are_round_numbers_and_y_labels_have_no_offset_text():
    rows = synthetic_rows(300, {37, 74, 111}, np.full(300, 5.0))
    ticks = layout.tick_slots(rows)
    assert [rows[i]["round"] for i in ticks] == list(range(0, 300, 20))
    assert all(rows[i]["kind"] == "generation" for i in ticks)
    for i, r in enumerate(rows):  # objectives 99.41264 .. 99.41265: matplotlib would write "+9.941e1" on top
        r["objective"], r["lp_bound"] = 99.41264 + 1e-5 * i / 300, 99.41266 + 1e-5 * i / 300
    fig = charts.objective(rows)
    drawn(fig)
    top = fig.axes[0]
    assert top.yaxis.get_offset_text().get_text() == ""
    shown = [t.get_text() for t in top.get_yticklabels() if top.get_ylim()[0] <= t.get_position()[1] <= top.get_ylim()[1]]
    assert len(shown) >= 2 and len(set(shown)) == len(shown), shown
    assert all(abs(float(t) - 99.4127) < 1e-3 for t in shown), shown  # the values themselves, no offset


def test_a_gap_inside_one_decade_still_gets_labelled_ticks():
    """A partitioned stream's gaps of 5-8e-2: decade ticks only would leave the gap panel unlabelled."""
    rows = synthetic_rows(8, set(), np.ones(8))
    for i, r in enumerate(rows):
        r["gap_rel"] = 0.05 + 0.004 * i
    fig = charts.objective(rows)
    drawn(fig)
    gap = fig.axes[1]
    lo, hi = gap.get_ylim()
    labelled = [t for t in gap.get_yticklabels() if t.get_text() and lo * 0.999 <= t.get_position()[1] <= hi * 1.001]
    assert gap.get_yscale() == "log" and len(labelled) >= 2


def test_panels_without_data_say_why():
    rows = synthetic_rows(4, {0, 1, 2, 3}, np.zeros(4))
    for r in rows:
        r["iterations"] = r["changed_variables"] = None
    texts = {name: " ".join(t.get_text() for t in drawn(build(rows))[1]) for name, build in charts.CHARTS.items()}
    assert "no round has an objective" in texts["objective"] and "no round recorded a gap" in texts["objective"]
    assert "no round reported an iteration count" in texts["iterations"]
    assert "no round recorded its changed variables" in texts["churn"]
    zero_gap = synthetic_rows(3, set(), np.ones(3))
    for r in zero_gap:
        r["gap_rel"] = 0.0
    assert "gap 0 in every round" in " ".join(t.get_text() for t in drawn(charts.objective(zero_gap))[1])


def test_the_page_inlines_the_notes_and_the_cut_bars_value(stream, tmp_path):
    st, rows = stream
    out = tmp_path / "r.html"
    write_report(st, out)
    html = out.read_text()
    for i, r in enumerate(rows):
        if r["kind"] == "failed":
            assert f'id="chart-round-time-note-{i}"' in html  # the page scopes each chart's ids (page.scoped_ids)
    assert "ITERATION_LIMIT" in html and "PRIMAL_INFEASIBLE" in html
    totals = [r["seconds"]["total"] for r in rows]
    cap = layout.outlier_cap(totals)
    if cap is not None:  # the cold round 0 is usually far above the warm ones
        assert any(f"{t:.3g} s \u2191" in html for t in totals if t > cap)
    assert not math.isnan(sum(totals))


def test_a_baselines_time_above_the_cut_is_written_above_the_plot_and_drawn_at_the_top():
    rows = synthetic_rows(12, set(), [50.0] + [1.0] * 11)  # round 0 far above: the axis is cut
    rows[5]["compare"] = {"copter": {"seconds": 1.0}, "highs": {"seconds": 40.0}}
    fig = charts.round_time(rows)
    ax = fig.axes[0]
    cap = ax.get_ylim()[1]
    assert cap < 40.0
    r, texts = drawn(fig)
    assert any(t.get_text() == "5: highs 40 s \u2191" for t in texts)
    assert any(t.get_text() == "0: 50 s \u2191" for t in texts)
    diamonds = [ln for ln in ax.get_lines() if ln.get_label() == "highs (compare)"]
    assert len(diamonds) == 1 and list(diamonds[0].get_xdata()) == [5] and list(diamonds[0].get_ydata()) == [cap]
    assert_readable(fig, rows)


def test_a_zero_gap_is_marked_on_the_log_panels_floor():
    rows = synthetic_rows(6, set(), np.ones(6))
    for i, r in enumerate(rows):
        r["gap_rel"] = 0.0 if i in (2, 4) else 1e-3 * (i + 1)
    gap = charts.objective(rows).axes[1]
    zero = [ln for ln in gap.get_lines() if ln.get_label() == "gap 0"]
    assert len(zero) == 1 and list(zero[0].get_xdata()) == [2, 4]
    assert list(zero[0].get_ydata()) == [gap.get_ylim()[0]] * 2 and gap.get_legend() is not None


def test_a_failed_row_without_its_round_or_status_still_gets_a_note():
    """A failed record rebuilt from a damaged report can lack both: the charts draw, the note says '?'."""
    rows = synthetic_rows(40, {3, 20}, np.ones(40))
    rows[3]["round"], rows[3]["status"] = None, None
    assert layout.slot_labels(rows)[3] == "?\u2717"
    assert [rows[i]["round"] for i in layout.tick_slots(rows)] == list(range(0, 38, 5))
    for build in charts.CHARTS.values():
        fig = build(rows)
        assert_readable(fig, rows)
        assert any(t.get_text() == "?\u2717 ?" for t in drawn(fig)[1])


@pytest.mark.parametrize(("n", "failed", "lone"), [(1, set(), [0]), (3, {1}, [0, 2]), (4, {1}, [0])])
def test_a_round_without_neighbours_still_shows_its_bound_and_gap_band(n, failed, lone):
    """helper-213: a lone round (a state's round 0 alone, or between failed rounds) showed its objective dot only:
    the bound was a line without markers and the band a fill over one point, neither drawn."""
    from matplotlib.collections import LineCollection

    rows = synthetic_rows(n, failed, np.arange(1, n + 1))
    top = charts.objective(rows).axes[0]
    bound = next(ln for ln in top.get_lines() if ln.get_label().startswith("bound"))
    assert bound.get_marker() not in (None, "None", "", " ")
    bars = [c for c in top.collections if isinstance(c, LineCollection)]
    got = sorted(int(round(seg[0][0])) for c in bars for seg in c.get_segments())
    assert got == lone
    for c in bars:
        for (x0, y0), (_x1, y1) in c.get_segments():
            r = rows[int(round(x0))]
            assert {y0, y1} == {r["objective"], r["lp_bound"]}


@pytest.mark.parametrize("how", ["string", "float"])
def test_a_round_without_a_finite_bound_is_a_hole_not_a_crash(how):
    """hunt 56: a MILP round whose bound is -inf (gap inf) made log10(inf) an OverflowError, so no report of the
    state could be written; its bound and gap are holes now, the other rounds' points drawn as before."""
    rows = synthetic_rows(5, set(), np.ones(5))
    rows[2]["lp_bound"], rows[2]["gap_rel"] = ("-inf", "inf") if how == "string" else (-math.inf, math.inf)
    fig = charts.objective(rows)
    drawn(fig)
    top, gap = fig.axes[0], fig.axes[1]
    assert all(math.isfinite(v) for v in (*top.get_ylim(), *gap.get_ylim()))
    drawn_gap = list(gap.get_lines()[0].get_ydata())
    assert math.isnan(drawn_gap[2]) and sum(math.isfinite(v) for v in drawn_gap) == 4
    for r in rows:  # every round without a finite gap: the panel says why
        r["lp_bound"], r["gap_rel"] = -math.inf, math.inf
    assert "no round has a finite gap" in " ".join(t.get_text() for t in drawn(charts.objective(rows))[1])
