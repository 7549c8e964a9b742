"""Geometry shared by the report's charts: the figure frame, the round axis, bars, failed-round bands and the
note strip above the plot that carries the failed rounds' statuses and the values of bars cut off at the top.

Why a strip: a status written inside the plot overlaps any bar that reaches it (a failed partitioned round
that ran 3,405 iterations, a tall cold round); above the axes nothing is drawn, so a note there can never
cover a bar, a line or another note. Notes are laid out in :data:`LANES` lanes, greedily left to right, with
their widths measured from the font's glyph outlines (``matplotlib.textpath.TextPath``, no draw needed); a
note that finds no free lane is counted right of the strip ("+k failed rounds not labelled (see the table)").
Every slot still gets its marker in the strip, so a failed round is findable at any number of rounds.

All sizes are in inches (figure) or points (text), the figure is 10 inches wide at 100 dpi, or wider where its
texts need more room left or right of the plots (:func:`fit_width`; the plots keep their size).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from solver.rounds.log_history import current_round, is_undone  # the report marks what history marks

FAILED = "#d62728"
FIG_WIDTH = 10.0  # inches
LEFT, RIGHT = 0.09, 0.80  # axes left and right edge, figure fraction (the legend lives right of RIGHT)
TOP_IN, BOTTOM_IN, GAP_IN = 0.34, 0.42, 0.14  # title room, tick labels + x label room, space between panels
NOTE_SIZE = 7.0  # points
LANES = 3
LANE_PT = NOTE_SIZE + 3.5  # one lane's height, points
MARKER_PT = 8.0  # the strip's bottom band that holds the slot markers, points
WIDTH_SLACK = 1.12  # a browser may draw the SVG's text in a slightly wider fallback font
PAD_PT = 6.0  # horizontal space kept between two notes of one lane, points
EDGE_IN = 0.05  # space kept between the figure's edge and its outermost text, inches
_ADVANCE: dict[str, float] = {}  # character -> advance width at 1 point, points (text_width_pt's cache)


@dataclass
class Note:
    """One note of the strip: ``text`` about slot ``slot`` (0-based position on the round axis)."""

    slot: int
    text: str
    color: str = FAILED


def is_failed(row: dict) -> bool:
    """A failed round: not stored (``kind == "failed"``) or stored with a status other than OPTIMAL/FEASIBLE."""
    return row["kind"] == "failed" or row["status"] not in ("OPTIMAL", "FEASIBLE")


def slot_labels(rows: list[dict]) -> list[str]:
    """The x label of each slot: the round number (``?`` when the row has none), and for a failed round
    (not stored) ``N✗`` with the attempt's number when several failed attempts at round N sit side by side (``4✗1``, ``4✗2``)."""
    failed = [is_failed(r) and r.get("kind") == "failed" for r in rows]
    per_round: dict = {}
    for r, f in zip(rows, failed, strict=True):
        if f:
            per_round[r["round"]] = per_round.get(r["round"], 0) + 1
    seen: dict = {}
    out = []
    for r, f in zip(rows, failed, strict=True):
        num = "?" if r["round"] is None else str(r["round"])
        if not f:
            out.append(num)
            continue
        seen[r["round"]] = seen.get(r["round"], 0) + 1
        out.append(f"{num}\u2717" + (str(seen[r["round"]]) if per_round[r["round"]] > 1 else ""))
    return out


def tick_slots(rows: list[dict], max_ticks: int = 15) -> list[int]:
    """Slots that get an x tick: every slot when there are at most ``max_ticks``; else the stored rounds
    whose number is a multiple of a round step (1, 2, 5, 10, 20, 25, 50, ...) giving at most ``max_ticks``
    ticks, so the labels read 0, 20, 40 ... rather than the slot positions' 0, 20, 39, 59 (failed rounds
    take slots of their own)."""
    n = len(rows)
    if n <= max_ticks:
        return list(range(n))
    nums = [r["round"] for r in rows if r["round"] is not None]  # None: a failed row without its round
    if not nums:
        return [0, n - 1]
    lo, hi = min(nums), max(nums)
    steps = sorted({int(m * 10 ** k) for k in range(12) for m in (1, 2, 2.5, 5) if (m * 10 ** k) % 1 == 0})
    step = next(s for s in steps if hi // s - (lo + s - 1) // s + 1 <= max_ticks)
    first: dict = {}
    for i, r in enumerate(rows):  # the stored round of a number (a failed attempt only when none is)
        if r["round"] is not None and r["round"] % step == 0 and (r["round"] not in first or rows[first[r["round"]]]["kind"] == "failed"):
            first[r["round"]] = i
    ticks = sorted(first.values())
    return ticks or [0, n - 1]


def text_width_pt(text: str, size: float = NOTE_SIZE, slack: float = WIDTH_SLACK) -> float:
    """Width of ``text`` in points at ``size`` points in matplotlib's default font, times
    ``slack`` (default :data:`WIDTH_SLACK`): the sum of the characters' advance widths (measured once per character, no
    renderer; within 2% of what Agg draws for the notes' texts, kerning aside)."""
    from matplotlib.font_manager import FontProperties
    from matplotlib.textpath import text_to_path

    w = 0.0
    for ch in text:
        if ch not in _ADVANCE:
            _ADVANCE[ch] = text_to_path.get_text_width_height_descent(ch, FontProperties(size=10.0),
                                                                      ismath=False)[0] / 10.0
        w += _ADVANCE[ch]
    return w * size * slack


def place_notes(notes: list[Note], n_slots: int, axes_width_pt: float) -> list[tuple[Note, float, int]]:
    """Greedy lane layout: (note, x centre in slot units, lane) of each note that fits. Failed rounds' notes
    first, then the others, each left to right; a note goes to the lowest lane where it overlaps no placed
    note (``PAD_PT`` apart): centred on its slot if there is room, else moved sideways as little as needed
    while the text still spans its slot; never past an end of the axis (x range -0.6 .. n - 0.4)."""
    lo, hi = -0.6, n_slots - 0.4
    per_pt = (hi - lo) / axes_width_pt
    pad = PAD_PT * per_pt
    lanes: list[list[tuple[float, float]]] = [[] for _ in range(LANES)]
    out = []
    for note in sorted(notes, key=lambda x: (x.color != FAILED, x.slot)):
        half = text_width_pt(note.text) * per_pt / 2
        c_min, c_max = max(lo + half, note.slot - half), min(hi - half, note.slot + half)
        for k, lane in enumerate(lanes):
            blocked = [(a - pad - half, b + pad + half) for a, b in lane]  # centres that would overlap
            cands = [min(max(float(note.slot), c_min), c_max), *(e for iv in blocked for e in iv)]
            ok = [c for c in cands if c_min - 1e-9 <= c <= c_max + 1e-9
                  and not any(a + 1e-9 < c < b - 1e-9 for a, b in blocked)]
            if ok:
                c = min(ok, key=lambda c: abs(c - note.slot))
                lane.append((c - half, c + half))
                out.append((note, c, k))
                break
    return out


def frame(rows: list[dict], heights: list[float], title: str, notes: list[Note] | None = None):
    """A figure of ``len(heights)`` panels stacked on one round axis (``heights`` in inches, all
    ``FIG_WIDTH`` wide) with room above the top panel for the notes' strip, drawn there. Returns (figure,
    [panel axes]); only the bottom panel shows the round tick labels; the title sits above the strip."""
    from matplotlib.figure import Figure

    notes = notes or []
    placed = place_notes(notes, len(rows), (RIGHT - LEFT) * FIG_WIDTH * 72.0)
    lanes = max([k + 1 for _, _, k in placed] + [len(more_lines(notes, placed)), 1])
    strip_pt = strip_height_pt(lanes) if notes else 0.0
    total = TOP_IN + strip_pt / 72.0 + sum(heights) + GAP_IN * (len(heights) - 1) + BOTTOM_IN
    fig = Figure(figsize=(FIG_WIDTH, total), dpi=100)
    y = total - TOP_IN - strip_pt / 72.0
    axes = []
    for h in heights:
        axes.append(fig.add_axes((LEFT, (y - h) / total, RIGHT - LEFT, h / total),
                                 sharex=axes[0] if axes else None))
        y -= h + GAP_IN
    for k, ax in enumerate(axes):
        round_axis(ax, rows, labels=k == len(axes) - 1)
    axes[0].set_title(title, fontsize=11, loc="left", pad=strip_pt + 6.0)
    if notes:
        draw_notes(axes[0], notes, placed)
    return fig, axes


def tick_text(values: list[float]) -> list[str]:
    """Y tick labels without an offset or a multiplier written above the axis (matplotlib's "+9.94e1" /
    "1e9" sits where the notes go and is easily missed): each label is the value itself with just enough
    significant digits that neighbouring ticks differ (3 to 12, and all the digits of a whole number below
    a million), e.g. 99.4126, 99.4128, 5400 or 1.2e+09."""
    vals = [float(v) for v in values]
    steps = [abs(b - a) for a, b in zip(vals, vals[1:], strict=False) if b != a]
    big = max((abs(v) for v in vals), default=1.0) or 1.0
    digits = 3 if not steps else min(12, max(3, math.ceil(math.log10(big / min(steps))) + 1))
    if big < 1e6:  # whole numbers below a million in full (5400, not 5.4e+03)
        digits = max(digits, math.floor(math.log10(big)) + 1)
    return [f"{v:.{digits}g}" if abs(v) > 1e-12 * big else "0" for v in vals]


def compact_formatter():
    """A matplotlib ``Formatter`` writing :func:`tick_text` labels and no offset text."""
    from matplotlib.ticker import Formatter

    class Compact(Formatter):
        def __call__(self, x, pos=None):
            return tick_text([x])[0]

        def format_ticks(self, values):
            return tick_text(list(values))

        def get_offset(self):
            return ""

    return Compact()


def count_axis(ax, values) -> None:
    """A y axis of counts (iterations, variables): integer ticks from 0 (0 to 1 when every value is 0 or
    missing, instead of matplotlib's -0.04 .. 0.04)."""
    from matplotlib.ticker import MaxNLocator

    finite = [v for v in values if v is not None and not math.isnan(v)]
    ax.yaxis.set_major_locator(MaxNLocator(nbins="auto", integer=True))
    ax.set_ylim(0, max(finite) * 1.05 if finite and max(finite) > 0 else 1)


def round_axis(ax, rows: list[dict], labels: bool = True, ylabel: str = "") -> None:
    """Slots 0..n-1 labelled with the round numbers (:func:`tick_slots`), light y grid."""
    from matplotlib.ticker import FixedLocator

    n = len(rows)
    ticks = tick_slots(rows)
    names = slot_labels(rows)
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.set_xticklabels([names[i] for i in ticks], fontsize=8)
    ax.set_xlim(-0.6, n - 0.4)
    ax.tick_params(axis="x", labelbottom=labels)
    if labels:
        ax.set_xlabel("round", fontsize=9)
    if ylabel:
        ax.set_ylabel(ylabel, fontsize=9)
    ax.tick_params(axis="y", labelsize=8)
    ax.yaxis.set_major_formatter(compact_formatter())
    ax.grid(axis="y", color="#e5e5e5", linewidth=0.6)
    ax.set_axisbelow(True)


def wrap_pt(text: str, size: float, width_pt: float) -> str:
    """``text`` broken at its spaces into lines of at most ``width_pt`` points at ``size`` points as Agg draws
    them (:func:`text_width_pt` without slack); its own line breaks are kept, a word wider than that stays whole."""
    out = []
    for line in text.split("\n"):
        words: list[str] = []
        for word in line.split(" "):
            if words and text_width_pt(f"{words[-1]} {word}", size, slack=1.0) <= width_pt:
                words[-1] += f" {word}"
            else:
                words.append(word)
        out += words
    return "\n".join(out)


def fit_ylabel(ax, text: str, size: float = 9.0) -> None:
    """Set ``text`` as the y label of panel ``ax``, wrapped (:func:`wrap_pt`) to the panel's height plus one
    :data:`GAP_IN`: the label is centred on its panel, so it then reaches neither the next panel's label nor the
    figure's top or bottom edge (an iterations panel's unit, "iterations (engine presolve: HiGHS presolve
    settled the LP, 0)", was longer than its panel and ran over both). Only line breaks change."""
    height_in = ax.get_position().height * ax.get_figure().get_figheight()
    ax.set_ylabel(wrap_pt(text, size, (height_in + GAP_IN) * 72.0), fontsize=size)


def fit_width(fig) -> None:
    """Widen ``fig`` on the side where its texts (tick labels, y labels, legends, notes) would reach past
    :data:`EDGE_IN` from its edge when a browser draws them :data:`WIDTH_SLACK` wider than Agg, moving the axes so
    that each keeps its size in inches (the plots, and the notes laid out on their width, are unchanged).

    Why: the axes start at a fixed :data:`LEFT`, and a long tick label (1234567.89, -98765432.1234) with its y
    label, or a wrapped unit label, needs more room than that: it was cut off at the figure's left edge. The room
    is measured with matplotlib's renderer once everything is drawn on the figure; a figure whose texts fit is
    left as it is."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    renderer = FigureCanvasAgg(fig).get_renderer()
    width = fig.get_figwidth()
    box = fig.get_tightbbox(renderer)  # inches, every artist drawn (texts outside the axes included)
    left = min(ax.get_position().x0 for ax in fig.axes) * width
    right = max(ax.get_position().x1 for ax in fig.axes) * width
    grow_left = max(0.0, (left - box.x0) * WIDTH_SLACK + EDGE_IN - left)
    grow_right = max(0.0, (box.x1 - right) * WIDTH_SLACK + EDGE_IN - (width - right))
    if grow_left == grow_right == 0.0:
        return
    new = width + grow_left + grow_right
    for ax in fig.axes:
        pos = ax.get_position()
        ax.set_position((((pos.x0 * width) + grow_left) / new, pos.y0, pos.width * width / new, pos.height))
    fig.set_size_inches(new, fig.get_figheight(), forward=False)


def strip_height_pt(lanes: int) -> float:
    """Height of a note strip with ``lanes`` lanes of text above the marker band, points."""
    return MARKER_PT + lanes * LANE_PT + 3.0


def draw_notes(ax, notes: list[Note], placed: list[tuple[Note, float, int]]) -> None:
    """The strip above panel ``ax`` (x in slots, y in points above the top of the axes, nothing clipped):
    a marker at every note's slot, the ``placed`` texts (:func:`place_notes`) in their lanes, and the count
    of the notes left out right of the strip. Note texts carry the gid ``note-<slot>``."""
    from matplotlib.transforms import offset_copy

    top = ax.get_xaxis_transform()  # x: slots, y: 0 bottom / 1 top of the axes
    fig = ax.get_figure()
    for color in {n.color for n in notes}:
        xs = [n.slot for n in notes if n.color == color]
        ax.plot(xs, [1.0] * len(xs), linestyle="none", marker="v", markersize=5, color=color, clip_on=False,
                transform=offset_copy(top, fig=fig, y=MARKER_PT / 2, units="points"))
    for note, c, lane in placed:
        ax.annotate(note.text, (c, 1.0), xycoords=top, xytext=(0, MARKER_PT + lane * LANE_PT),
                    textcoords="offset points", ha="center", va="bottom", fontsize=NOTE_SIZE, color=note.color,
                    annotation_clip=False, gid=f"note-{note.slot}")
    lines = more_lines(notes, placed)
    if lines:
        ax.annotate("\n".join(lines), (1.0, 1.0), xycoords="axes fraction", xytext=(6, MARKER_PT),
                    textcoords="offset points", ha="left", va="bottom", fontsize=NOTE_SIZE, color="#444444",
                    annotation_clip=False, gid="note-more")


def more_lines(notes: list[Note], placed: list[tuple[Note, float, int]]) -> list[str]:
    """The lines of the note right of the strip that counts the notes :func:`place_notes` left out
    (failed rounds and cut bars separately); [] when all fit."""
    shown = {id(n) for n, _, _ in placed}
    failed = sum(1 for n in notes if id(n) not in shown and n.color == FAILED)
    other = sum(1 for n in notes if id(n) not in shown and n.color != FAILED)
    lines = ([f"+{failed} failed rounds"] if failed else []) + ([f"+{other} cut bars"] if other else [])
    return [*lines, "not labelled (see the table)"] if lines else []


def failed_notes(rows: list[dict]) -> list[Note]:
    """A note per failed round: ``<slot label> <status>``."""
    names = slot_labels(rows)
    return [Note(i, f"{names[i]} {r['status'] or '?'}") for i, r in enumerate(rows) if is_failed(r)]


def bands(ax, rows: list[dict], legend: bool = True) -> None:
    """A red band over the whole height behind each failed round's slot, and a grey hatched one behind each round a
    rollback undid (after the current round), at least 3 pixels wide (0.9 slot, or more when there are hundreds of
    rounds); one PolyCollection for each kind (an axvspan each costs ~2 ms)."""
    from matplotlib.collections import PolyCollection

    n = len(rows)
    width_px = (RIGHT - LEFT) * FIG_WIDTH * 100
    half = max(0.45, 1.5 * (n + 0.2) / width_px)
    cur = current_round(rows)
    for slots, color, hatch, label in (
            ([i for i, r in enumerate(rows) if is_failed(r)], FAILED, None, "failed round"),
            # a rollback undid them: drawn like the live rounds, they read as the newest state (helper-193)
            ([i for i, r in enumerate(rows) if is_undone(r, cur) and not is_failed(r)], "#7f7f7f", "//",
             "undone (rolled back)")):
        if not slots:
            continue
        verts = [[(i - half, 0.0), (i - half, 1.0), (i + half, 1.0), (i + half, 0.0)] for i in slots]
        ax.add_collection(PolyCollection(verts, facecolors=color, alpha=0.13, edgecolors="none", zorder=0.5,
                                         hatch=hatch, transform=ax.get_xaxis_transform(),
                                         label=label if legend else None), autolim=False)


def bars(ax, x, heights, color: str, label: str | None, bottom=None, width: float = 0.8) -> None:
    """Bars as one PolyCollection (one artist instead of a Rectangle per bar: matplotlib draws hundreds of
    rounds' bars ~50x faster); NaN heights are drawn as 0."""
    import numpy as np
    from matplotlib.collections import PolyCollection

    x = np.asarray(x, dtype=float)
    h = np.nan_to_num(np.asarray(heights, dtype=float))
    b = np.zeros_like(h) if bottom is None else np.asarray(bottom, dtype=float)
    if not len(x):
        return
    left, right = x - width / 2, x + width / 2
    verts = np.stack([np.column_stack([left, b]), np.column_stack([left, b + h]),
                      np.column_stack([right, b + h]), np.column_stack([right, b])], axis=1)
    ax.add_collection(PolyCollection(verts, facecolors=color, edgecolors="none", label=label))
    ax.update_datalim(np.concatenate([verts.reshape(-1, 2), [[x.min(), 0.0]]]))
    ax.autoscale_view()


def legend(ax) -> None:
    """The legend right of the plot (never over the bars or the notes)."""
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, frameon=False)


def empty(ax, text: str) -> None:
    """A panel without data says why, centred in the panel."""
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=9, color="#666666")
    ax.set_yticks([])


def outlier_cap(totals: list[float]) -> float | None:
    """The y limit that keeps the other rounds readable when one (typically the cold round 0) is over 8x
    the median: 2.5x the 90th percentile of the rest; None when no bar needs cutting."""
    vals = sorted(t for t in totals if not math.isnan(t))
    if len(vals) < 3 or vals[-1] <= 8 * max(vals[len(vals) // 2], 1e-9):
        return None
    rest = vals[:-max(1, len(vals) // 20)]
    cap = 2.5 * rest[min(len(rest) - 1, int(0.9 * len(rest)))]
    return cap if 0 < cap < vals[-1] else None


__all__ = ["FAILED", "compact_formatter", "Note", "bands", "bars", "count_axis", "draw_notes", "empty", "failed_notes", "fit_width", "fit_ylabel", "frame", "is_failed",
           "legend", "more_lines", "outlier_cap", "place_notes", "round_axis", "slot_labels", "text_width_pt", "tick_slots",
           "tick_text", "wrap_pt"]
