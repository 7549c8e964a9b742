"""The report's charts (matplotlib, the optional extra ``plot``), drawn from ``copter history`` rows.

Every chart puts one slot per history row on the x axis (so a failed round and the stored round of the same
number sit side by side), labelled with round numbers, and marks failed rounds (status not OPTIMAL /
FEASIBLE) with a red band and, in a strip above the plot, a marker and their status
(:mod:`solver.rounds.report.layout`: a note there never covers a bar). Figures are built with
``matplotlib.figure.Figure`` (no pyplot global state) and rendered to SVG text or PNG bytes by :func:`render`.
"""

from __future__ import annotations

import io
import math
import textwrap

from formats.round_log import PHASES
from solver.rounds.report.layout import (
    Note,
    bands,
    bars,
    count_axis,
    empty,
    failed_notes,
    fit_width,
    fit_ylabel,
    frame,
    is_failed,
    legend,
    outlier_cap,
    slot_labels,
)

PHASE_COLORS = {"wait": "#e8c07a", "load": "#9e9e9e", "apply": "#8e6bbf", "kernels": "#c7c7c7", "solve": "#1f77b4",
                "integerize": "#17becf",
                "save": "#ff7f0e"}
BASELINE_COLORS = ["#2ca02c", "#d62728", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f"]
PANEL_IN = 2.55  # height of a chart's one panel, inches

ITERATION_UNITS = (("pdhg", "PDHG iterations"), ("alm", "ALM outer steps"),
                   ("highs", "iterations (engine highs: HiGHS's not counted)"),
                   ("presolve", "iterations (engine presolve: HiGHS presolve settled the LP, 0)"),
                   (None, "iterations (engine not logged)"))
"""The iterations chart's panels: a round's ``iterations`` counts PDHG iterations when its engine is
``pdhg``, ALM outer steps (each a Newton solve of many matrix products) when ``alm`` (a partitioned round:
the count and engine of the part with the most iterations); a small MILP's round that HiGHS solved first
(``highs``) counts none of HiGHS's own (0), nor does an LP round that HiGHS presolve settled alone (``presolve``:
proved infeasible, or reduced to nothing); a round without an engine in the log (a log written before copter
recorded it) gets a panel of its own. Different units never share an axis."""


def _num(v) -> float:
    try:
        return math.nan if v is None else float(v)
    except (TypeError, ValueError):
        return math.nan


def _finite(v) -> float:
    """:func:`_num`, with an infinite value (a MILP round's ``lp_bound`` of -inf and its ``gap_rel`` of inf,
    when no finite bound was proven) as NaN: a hole in a chart, as the table shows "inf" (hunt 56: the gap
    panel's log10(inf) was an OverflowError, and no report of the state could be written)."""
    x = _num(v)
    return x if math.isfinite(x) else math.nan


def round_time(rows: list[dict]):
    """Stacked bars of each round's seconds per phase (wait for the lock, load, apply, solve, integerize, save;
    the rest of ``total`` as "other"), with each compared baseline's seconds as markers where ``copter
    compare`` ran. A round over 8x the median (typically the cold round 0) is cut at the top of the axis
    (:func:`layout.outlier_cap`) and its full seconds written in the strip above the plot; so is a
    baseline's diamond above the cut (drawn at the top)."""
    totals = [_num(r["seconds"].get("total")) for r in rows]
    cap = outlier_cap(totals)
    names = slot_labels(rows)
    methods = sorted({m for r in rows for m in r.get("compare", {}) if m != "copter"})
    base = {m: [(i, s) for i, r in enumerate(rows) if m in r.get("compare", {})
                and not math.isnan(s := _num(r["compare"][m].get("seconds")))] for m in methods}
    notes = failed_notes(rows) + [Note(i, f"{names[i]}: {t:.3g} s \u2191", "#222222")
                                  for i, t in enumerate(totals) if cap is not None and t > cap]
    notes += [Note(i, f"{names[i]}: {m} {t:.3g} s \u2191", "#222222") for m in methods for i, t in base[m]
              if cap is not None and t > cap]  # a baseline's diamond above the cut would be lost
    fig, (ax,) = frame(rows, [PANEL_IN], "Round time by phase (seconds)", notes)
    fit_ylabel(ax, "seconds")
    x = list(range(len(rows)))
    bottom = [0.0] * len(rows)
    for p in PHASES[:-1]:
        v = [0.0 if math.isnan(s := _num(r["seconds"].get(p))) else s for r in rows]
        bars(ax, x, v, PHASE_COLORS[p], p, bottom=bottom)
        bottom = [b + s for b, s in zip(bottom, v, strict=True)]
    other = [max(0.0, t - b) if not math.isnan(t) else 0.0 for t, b in zip(totals, bottom, strict=True)]
    if any(o > 1e-3 for o in other):
        bars(ax, x, other, "#dddddd", "other", bottom=bottom)
    for k, m in enumerate(methods):
        pts = [(i, min(s, cap) if cap is not None else s) for i, s in base[m]]  # above the cut: at its top
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="D", markersize=8, linestyle="none",
                    color=BASELINE_COLORS[k % len(BASELINE_COLORS)], markeredgecolor="black",
                    markeredgewidth=0.8, zorder=5, label=f"{m} (compare)")
    if cap is not None:
        ax.set_ylim(0, cap)
    bands(ax, rows)
    legend(ax)
    fit_width(fig)
    return fig


def _decades(ax, values: list[float]) -> None:
    """Log y axis over whole decades (at least one), labelled at the decades only (at most 4 labels):
    minor-tick labels (6x10^-5, 4x10^-5, ...) overlap in a short panel, and a range inside one decade would
    otherwise get no label at all."""
    from matplotlib.ticker import LogLocator, NullFormatter

    lo, hi = math.floor(math.log10(min(values))), math.ceil(math.log10(max(values)))
    ax.set_yscale("log")
    ax.set_ylim(10.0 ** lo, 10.0 ** max(hi, lo + 1))
    ax.yaxis.set_major_locator(LogLocator(base=10, numticks=4))
    ax.yaxis.set_minor_formatter(NullFormatter())


def objective(rows: list[dict]):
    """Objective and bound per round with the band between them (top) and the relative gap on a log scale
    (bottom; a gap of exactly 0 as a triangle on the panel's floor); rounds without an objective (failed)
    leave a hole and are marked."""
    fig, (top, bottom) = frame(rows, [2.3, 1.05], "Objective and bound (band: the gap between them)",
                                  failed_notes(rows))
    x = list(range(len(rows)))
    obj = [_finite(r["objective"]) for r in rows]
    bnd = [_finite(r["lp_bound"]) if not is_failed(r) else math.nan for r in rows]
    fit_ylabel(top, "objective")
    if all(math.isnan(v) for v in obj + bnd):
        empty(top, "no round has an objective or a bound (every round shown failed)")
    else:
        top.fill_between(x, obj, bnd, color="#1f77b4", alpha=0.18, linewidth=0, label="gap band")
        # a round with both values but no neighbour that has them: fill_between draws nothing over one point and a
        # line without markers nothing at all, so its band is a bar and the bound a tick (helper-213: a lone round 0
        # showed its objective only)
        both = [not (math.isnan(o) or math.isnan(b)) for o, b in zip(obj, bnd, strict=True)]
        lone = [i for i in x if both[i] and not (i > 0 and both[i - 1]) and not (i + 1 < len(x) and both[i + 1])]
        if lone:
            top.vlines(lone, [min(obj[i], bnd[i]) for i in lone], [max(obj[i], bnd[i]) for i in lone],
                       color="#1f77b4", alpha=0.35, linewidth=6)
        top.plot(x, obj, marker="o", markersize=3, color="#1f77b4", linewidth=1.2, label="objective")
        top.plot(x, bnd, linestyle="--", marker="_", markersize=8, color="#555555", linewidth=1,
                 label="bound (LP: dual objective)")
    bands(top, rows)
    legend(top)
    fit_ylabel(bottom, "rel. gap")
    gap = [_num(r["gap_rel"]) if not is_failed(r) else math.nan for r in rows]
    unbounded = any(math.isinf(g) for g in gap)
    gap = [g if math.isfinite(g) else math.nan for g in gap]
    pos = [g if g > 0 else math.nan for g in gap]
    if any(not math.isnan(g) for g in pos):
        _decades(bottom, [g for g in pos if not math.isnan(g)])
        bottom.plot(x, pos, marker=".", color="#444444", linewidth=0.8)
        zero = [i for i, g in enumerate(gap) if g == 0]
        if zero:  # a proven optimum has no place on a log scale: a mark on the panel's floor instead
            bottom.plot(zero, [bottom.get_ylim()[0]] * len(zero), linestyle="none", marker="^", markersize=6,
                        color="#2ca02c", clip_on=False, zorder=5, label="gap 0")
            legend(bottom)
    elif any(g == 0 for g in gap):
        empty(bottom, "gap 0 in every round that has one (nothing to draw on a log scale)")
    elif unbounded:
        empty(bottom, "no round has a finite gap (no finite bound was proven: the table shows inf)")
    else:
        empty(bottom, "no round recorded a gap")
    bands(bottom, rows, legend=False)
    fit_width(fig)
    return fig


def iteration_groups(rows: list[dict]) -> list[tuple[str, list[int]]]:
    """(unit, slots) of each :data:`ITERATION_UNITS` entry with at least one round that reported iterations,
    in that order; a slot is in the group of its round's ``engine``."""
    known = {e for e, _ in ITERATION_UNITS if e is not None}
    out = []
    for engine, unit in ITERATION_UNITS:
        slots = [i for i, r in enumerate(rows) if r.get("iterations") is not None
                 and (r.get("engine") == engine if engine is not None else r.get("engine") not in known)]
        if slots:
            out.append((unit, slots))
    return out


def iterations(rows: list[dict]):
    """Solver work per round, one panel per unit (:data:`ITERATION_UNITS`: PDHG iterations, ALM outer
    steps, rounds HiGHS solved first, iterations of rounds whose engine is not logged), warm-started rounds and cold ones in two
    colours; each panel's y label and legend name its unit."""
    groups = iteration_groups(rows)
    heights = [PANEL_IN] if len(groups) <= 1 else [max(1.2, 3.2 / len(groups))] * len(groups)
    unit = groups[0][0] if groups else "iterations"
    title = (f"{unit[0].upper()}{unit[1:]} per round: warm vs cold starts"
             if len(groups) <= 1 else
             "Solver work per round, warm vs cold starts (one panel per unit: the engines count differently)")
    fig, axes = frame(rows, heights, title, failed_notes(rows))
    if not groups:
        fit_ylabel(axes[0], "iterations")
        empty(axes[0], "no round reported an iteration count")
    for k, (ax, (unit, slots)) in enumerate(zip(axes, groups, strict=False)):
        fit_ylabel(ax, unit.replace(" (", "\n("))
        for warm, color, label in ((True, "#2ca02c", "warm start"), (False, "#7f7f7f", "cold start")):
            pts = [i for i in slots if bool(rows[i]["warm_started"]) == warm]
            if pts:
                vals = [_num(rows[i]["iterations"]) for i in pts]
                bars(ax, pts, vals, color, textwrap.fill(f"{label} ({unit})", 22))
                if len(rows) > 60 and len(slots) < 0.3 * len(rows):  # bars 1-2 pixels wide: a dot on top
                    # keeps a lone round of a sparse panel visible
                    ax.plot(pts, vals, linestyle="none", marker="o", markersize=2.5, color=color)
        count_axis(ax, [_num(rows[i]["iterations"]) for i in slots])
        bands(ax, rows, legend=k == 0)
        legend(ax)
    fit_width(fig)
    return fig


def churn(rows: list[dict]):
    """Changed variables per round (added, removed or moved: |new - old| > tol x max(1, |old|, |new|)), with the
    entities the delta added/removed as markers."""
    fig, (ax,) = frame(rows, [PANEL_IN], "Churn: variables whose value changed per round", failed_notes(rows))
    fit_ylabel(ax, "variables")
    x = list(range(len(rows)))
    changed = [_num(r["changed_variables"]) for r in rows]
    if all(math.isnan(c) for c in changed):
        empty(ax, "no round recorded its changed variables")
    bars(ax, x, changed, "#9467bd", "changed variables")
    ent = [(i, sum(int(r.get(k) or 0) for k in ("vars_added", "vars_removed", "cons_added", "cons_removed")))
           for i, r in enumerate(rows)]
    ent = [(i, e) for i, e in ent if e > 0]  # only rounds whose delta added or removed something
    if ent:
        ax.plot([i for i, _ in ent], [e for _, e in ent], marker="^", linestyle="none", color="#ff7f0e",
                markersize=5, label="entities added +\nremoved by the delta")
    count_axis(ax, changed + [float(e) for _, e in ent])
    bands(ax, rows)
    legend(ax)
    fit_width(fig)
    return fig


CHARTS = {"round-time": round_time, "objective": objective, "iterations": iterations, "churn": churn}
"""Chart name -> builder; the name is also the PNG file's stem."""


def render(fig, fmt: str) -> bytes:
    """The figure as ``svg`` (UTF-8 text without the XML prolog, to inline in HTML) or ``png`` bytes."""
    import matplotlib

    buf = io.BytesIO()
    # SVG text stays text (the browser draws it; glyphs as paths cost a third of the render and the size)
    with matplotlib.rc_context({"svg.fonttype": "none"}):
        fig.savefig(buf, format=fmt, metadata={"Date": None} if fmt == "svg" else None)
    data = buf.getvalue()
    if fmt == "svg":
        text = data.decode("utf-8")
        data = text[text.index("<svg"):].encode("utf-8")
    return data


__all__ = ["CHARTS", "ITERATION_UNITS", "churn", "iteration_groups", "iterations", "objective", "render",
           "round_time", "slot_labels"]
