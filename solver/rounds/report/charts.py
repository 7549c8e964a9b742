"""The report's charts (matplotlib, the optional extra ``plot``), drawn from ``copter history`` rows.

Every chart puts one slot per history row on the x axis (so a failed round and the stored round of the same
number sit side by side), labelled with the round number, and marks failed rounds (status not OPTIMAL /
FEASIBLE) with a red band and their status. Figures are built with ``matplotlib.figure.Figure`` (no
pyplot global state) and rendered to SVG text or PNG bytes by :func:`render`.
"""

from __future__ import annotations

import io
import math

from formats.round_log import PHASES

PHASE_COLORS = {"wait": "#e8c07a", "load": "#9e9e9e", "apply": "#8e6bbf", "solve": "#1f77b4", "integerize": "#17becf",
                "save": "#ff7f0e"}
BASELINE_COLORS = ["#2ca02c", "#d62728", "#8c564b", "#e377c2", "#bcbd22", "#7f7f7f"]
FAILED = "#d62728"
MAX_STATUS_LABELS = 30  # beyond this many failed rounds only the bands are drawn (labels would overlap)


def _num(v) -> float:
    try:
        return math.nan if v is None else float(v)
    except (TypeError, ValueError):
        return math.nan


def _failed(row: dict) -> bool:
    return row["kind"] == "failed" or row["status"] not in ("OPTIMAL", "FEASIBLE")


def _axes(fig, rows: list[dict], ax=None, title: str = "", ylabel: str = ""):
    """Common x axis: slots 0..n-1 labelled with the round numbers (at most ~15 labels), failed rounds
    marked by a red band with their status written at the top."""
    from matplotlib.ticker import FixedLocator

    ax = ax or fig.add_subplot(1, 1, 1)
    n = len(rows)
    step = max(1, math.ceil(n / 15))
    ticks = list(range(0, n, step))
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    labels = slot_labels(rows)
    ax.set_xticklabels([labels[i] for i in ticks], fontsize=8)
    ax.set_xlim(-0.6, n - 0.4)
    ax.set_xlabel("round", fontsize=9)
    if title:
        ax.set_title(title, fontsize=11, loc="left")
    if ylabel:
        ax.set_ylabel(ylabel, fontsize=9)
    ax.tick_params(axis="y", labelsize=8)
    ax.grid(axis="y", color="#e5e5e5", linewidth=0.6)
    ax.set_axisbelow(True)
    return ax


def slot_labels(rows: list[dict]) -> list[str]:
    """The x label of each slot: the round number, and for a failed round (not stored) ``N✗`` with the
    attempt's number when several failed attempts at round N sit side by side (``4✗1``, ``4✗2``)."""
    failed = [_failed(r) and r.get("kind") == "failed" for r in rows]
    per_round: dict = {}
    for r, f in zip(rows, failed, strict=True):
        if f:
            per_round[r["round"]] = per_round.get(r["round"], 0) + 1
    seen: dict = {}
    out = []
    for r, f in zip(rows, failed, strict=True):
        if not f:
            out.append(str(r["round"]))
            continue
        seen[r["round"]] = seen.get(r["round"], 0) + 1
        out.append(f"{r['round']}\u2717" + (str(seen[r["round"]]) if per_round[r["round"]] > 1 else ""))
    return out


def _mark_failed(ax, rows: list[dict], label: bool = True) -> None:
    failed = [i for i, r in enumerate(rows) if _failed(r)]
    for k, i in enumerate(failed):
        ax.axvspan(i - 0.45, i + 0.45, color=FAILED, alpha=0.13, linewidth=0,
                   label="failed round" if k == 0 else None)
        if label and len(failed) <= MAX_STATUS_LABELS:
            ax.text(i, 0.97, str(rows[i]["status"] or "?"), transform=ax.get_xaxis_transform(), rotation=90,
                    ha="center", va="top", fontsize=7, color=FAILED)


def _bars(ax, x, heights, color: str, label: str, bottom=None, width: float = 0.8) -> None:
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


def _figure(height: float = 3.3):
    """A 10-inch wide figure with fixed margins (a constrained layout costs a second draw per figure)."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, height), dpi=100)
    fig.subplots_adjust(left=0.075, right=0.80, bottom=0.42 / height, top=1 - 0.32 / height, hspace=0.12)
    return fig


def _legend(ax) -> None:
    """The legend right of the plot (never over the bars or the failed-round labels)."""
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, frameon=False)


def _clip_outliers(ax, totals: list[float]) -> None:
    """When one round (typically the cold round 0) is over 8x the median, cap the y axis at 2.5x the 90th
    percentile of the others and write the clipped bars' values above them, so the other rounds stay
    readable."""
    vals = sorted(t for t in totals if not math.isnan(t))
    if len(vals) < 3 or vals[-1] <= 8 * max(vals[len(vals) // 2], 1e-9):
        return
    rest = vals[:-max(1, len(vals) // 20)]
    cap = 2.5 * rest[min(len(rest) - 1, int(0.9 * len(rest)))]
    if cap <= 0 or cap >= vals[-1]:
        return
    ax.set_ylim(0, cap)
    for i, t in enumerate(totals):
        if t > cap:  # the clipped bar's value beside its top, with an arrow meaning "goes on"
            ax.annotate(f"\u2191 {t:.3g} s", (i, cap), xytext=(5, -3), textcoords="offset points", ha="left",
                        va="top", fontsize=7.5, color="#222222",
                        bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8})


def round_time(rows: list[dict]):
    """Stacked bars of each round's seconds per phase (wait for the lock, load, apply, solve, integerize, save; the rest of
    ``total`` as "other"), with each compared baseline's seconds as markers where ``copter compare`` ran."""
    fig = _figure()
    ax = _axes(fig, rows, title="Round time by phase (seconds)", ylabel="seconds")
    x = list(range(len(rows)))
    bottom = [0.0] * len(rows)
    for p in PHASES[:-1]:
        v = [0.0 if math.isnan(s := _num(r["seconds"].get(p))) else s for r in rows]
        _bars(ax, x, v, PHASE_COLORS[p], p, bottom=bottom)
        bottom = [b + s for b, s in zip(bottom, v, strict=True)]
    other = [max(0.0, _num(r["seconds"].get("total")) - b) if not math.isnan(_num(r["seconds"].get("total"))) else 0.0
             for r, b in zip(rows, bottom, strict=True)]
    if any(o > 1e-3 for o in other):
        _bars(ax, x, other, "#dddddd", "other", bottom=bottom)
    methods = sorted({m for r in rows for m in r.get("compare", {}) if m != "copter"})
    for k, m in enumerate(methods):
        pts = [(i, _num(r["compare"][m].get("seconds"))) for i, r in enumerate(rows) if m in r.get("compare", {})]
        pts = [(i, s) for i, s in pts if not math.isnan(s)]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="D", markersize=8, linestyle="none",
                    color=BASELINE_COLORS[k % len(BASELINE_COLORS)], markeredgecolor="black",
                    markeredgewidth=0.8, zorder=5, label=f"{m} (compare)")
    _clip_outliers(ax, [_num(r["seconds"].get("total")) for r in rows])
    _mark_failed(ax, rows)
    _legend(ax)
    return fig


def objective(rows: list[dict]):
    """Objective and bound per round with the band between them (top) and the relative gap on a log scale
    (bottom); rounds without an objective (failed) leave a hole and are marked."""
    fig = _figure(4.6)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[2.2, 1])
    x = list(range(len(rows)))
    obj = [_num(r["objective"]) for r in rows]
    bnd = [_num(r["lp_bound"]) if not _failed(r) else math.nan for r in rows]
    _axes(fig, rows, top, title="Objective and bound (band: the gap between them)", ylabel="objective")
    top.fill_between(x, obj, bnd, color="#1f77b4", alpha=0.18, linewidth=0, label="gap band")
    top.plot(x, obj, marker="o", markersize=3, color="#1f77b4", linewidth=1.2, label="objective")
    top.plot(x, bnd, linestyle="--", color="#555555", linewidth=1, label="bound (LP dual /\nMILP LP bound)")
    _mark_failed(top, rows)
    _legend(top)
    top.set_xlabel("")
    _axes(fig, rows, bottom, ylabel="rel. gap")
    gap = [_num(r["gap_rel"]) if not _failed(r) else math.nan for r in rows]
    pos = [g if g > 0 else math.nan for g in gap]
    if any(not math.isnan(g) for g in pos):
        from matplotlib.ticker import LogLocator, NullFormatter

        bottom.set_yscale("log")
        # decades only, at most 4 labels: minor-tick labels (6x10^-5, 4x10^-5, ...) overlap in this short
        # panel and widen the tick labels until the y label is clipped
        bottom.yaxis.set_major_locator(LogLocator(base=10, numticks=4))
        bottom.yaxis.set_minor_formatter(NullFormatter())
    bottom.plot(x, pos, marker=".", color="#444444", linewidth=0.8)
    _mark_failed(bottom, rows, label=False)
    return fig


def iterations(rows: list[dict]):
    """Iterations per round, warm-started rounds and cold ones in two colours."""
    fig = _figure()
    ax = _axes(fig, rows, title="Iterations per round: warm vs cold starts", ylabel="iterations")
    for warm, color, label in ((True, "#2ca02c", "warm start"), (False, "#7f7f7f", "cold start")):
        pts = [(i, _num(r["iterations"])) for i, r in enumerate(rows) if bool(r["warm_started"]) == warm]
        if pts:
            _bars(ax, [p[0] for p in pts], [p[1] for p in pts], color, label)
    _mark_failed(ax, rows)
    _legend(ax)
    return fig


def churn(rows: list[dict]):
    """Changed variables per round (added, removed or moved: |new - old| > tol x max(1, |old|, |new|)), with the entities the
    delta added/removed as markers."""
    fig = _figure()
    ax = _axes(fig, rows, title="Churn: variables whose value changed per round", ylabel="variables")
    x = list(range(len(rows)))
    _bars(ax, x, [_num(r["changed_variables"]) for r in rows], "#9467bd", "changed variables")
    ent = [(i, sum(int(r.get(k) or 0) for k in ("vars_added", "vars_removed", "cons_added", "cons_removed")))
           for i, r in enumerate(rows)]
    ent = [(i, e) for i, e in ent if e > 0]  # only rounds whose delta added or removed something
    if ent:
        ax.plot([i for i, _ in ent], [e for _, e in ent], marker="^", linestyle="none", color="#ff7f0e",
                markersize=5, label="entities added +\nremoved by the delta")
    _mark_failed(ax, rows)
    _legend(ax)
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


__all__ = ["CHARTS", "churn", "iterations", "objective", "render", "round_time", "slot_labels"]
