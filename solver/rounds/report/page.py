"""The report's HTML: one self-contained page (inline CSS and SVG charts, no script, nothing fetched).

The rounds table carries every number as a ``data-*`` attribute in full precision (``repr`` of the float)
next to the rounded text, so a test or a scraper reads the log's values back exactly.
"""

from __future__ import annotations

import html
import math
import re
import statistics

from formats.round_log import PHASES
from solver.rounds.log_history import current_round, is_undone

CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:24px auto;max-width:1180px;
color:#222;padding:0 16px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 6px;border-bottom:1px solid #ddd;padding-bottom:3px}
.meta{color:#555;margin:0 0 12px}.warning{color:#8a5300;margin:0 0 12px}.cards{display:flex;flex-wrap:wrap;gap:10px;margin:12px 0}
.card{border:1px solid #ddd;border-radius:6px;padding:6px 10px;min-width:100px}
.card b{display:block;font-size:18px}.card span{color:#666;font-size:12px}
figure{margin:8px 0 18px}figure svg{width:100%;height:auto}figcaption{color:#555;font-size:12.5px}
table{border-collapse:collapse;font-size:12px;width:100%}th,td{padding:3px 4px;border-bottom:1px solid #eee;
text-align:right;white-space:nowrap}th{background:#f6f6f6;position:sticky;top:0;white-space:normal;vertical-align:bottom}td.l,th.l{text-align:left}
tr.failed td{background:#fdecea;color:#a21b12}tr.current td{font-weight:600}tr.undone td{color:#777;font-style:italic}td.msg{white-space:normal;
text-align:left;padding-left:24px}.scroll{max-height:560px;overflow:auto;border:1px solid #ddd}
"""

CAPTIONS = {
    "round-time": "Wall seconds of each round split by phase (stacked); diamonds: the same round's problem solved "
                  "by a baseline in <code>copter compare</code> (lower is better). Red bands and the red marks "
                  "above the plot: failed rounds with their status. A bar far above the others (typically the "
                  "cold round 0) is cut at the top; its full seconds are written above the plot (\u2191).",
    "objective": "Objective of the allocation and the solver's bound: a proven one for a MILP round (its LP "
                 "bound) and a partitioned round (its Lagrangian bound), where the band between them is the gap still "
                 "possible; for a monolithic LP round the dual objective of the solver's point, an estimate within the "
                 "round's tolerance and not a proven bound (it may lie on either side of the optimum, and of the "
                 "objective). Bottom: the round's relative gap (its <code>gap_rel</code>), log scale (lower is better): "
                 "for a MILP round the gap to its LP bound, |objective - bound| / |objective| (HiGHS's MIP gap; 0 once "
                 "within 1e-6 absolute), for an LP round |objective - bound| / (1 + |objective| + |bound|). Grey hatched: rounds a rollback undid (after the current round).",
    "iterations": "Solver work per round; green rounds started warm from the previous round's iterate, grey "
                  "ones cold (round 0, or a warm start that was refused). The engines count different things, "
                  "so each has its own panel and axis: PDHG iterations (each about one product with the "
                  "matrix and one with its transpose) and ALM outer steps (each a Newton solve of many such "
                  "products); a small MILP's rounds that HiGHS solved first (engine highs, whose own "
                  "iterations are not counted) and rounds whose "
                  "engine the log does not hold (logs written before copter recorded it) have a panel of their "
                  "own; a partitioned round counts the part with the most iterations, in that part's engine.",
    "churn": "Variables whose value changed from the previous round (added, removed, or moved: |new - old| > "
             "tol x max(1, |old|, |new|), tol the round's --tol; an integer variable: any change); triangles: "
             "variables and constraints the delta added or removed.",
}

COLUMNS = [  # (header, key, format, data attribute)
    ("round", "round", "d", "round"), ("status", "status", "s", "status"),
    ("objective", "objective", ".10g", "objective"), ("bound", "lp_bound", ".10g", "lp-bound"),
    ("gap", "gap_rel", ".2e", "gap-rel"), ("iters", "iterations", "d", "iterations"),
    ("warm", "warm_started", "b", "warm-started"), ("engine", "engine", "s", "engine"),
    *[(p if p != "integerize" else "integ.", ("seconds", p), ".3f", f"seconds-{p}") for p in PHASES],
    ("changed", "changed_variables", "d", "changed-variables"),
    ("+vars", "vars_added", "d", "vars-added"), ("-vars", "vars_removed", "d", "vars-removed"),
    ("+cons", "cons_added", "d", "cons-added"), ("-cons", "cons_removed", "d", "cons-removed"),
    ("stored (UTC)", "utc", "t", "utc"),
]
ALWAYS = ("round", "status", "objective", ("seconds", "total"))  # shown even when empty or zero


def _get(row: dict, key):
    return row[key[0]].get(key[1]) if isinstance(key, tuple) else row.get(key)


def _fmt(v, spec: str) -> str:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return "-"
    if spec == "b":
        return "warm" if v else "cold"
    if spec == "s":
        return str(v)
    if spec == "t":  # ISO time: the date and seconds are in the tooltip
        return str(v)[11:19]
    if spec == "d":
        return str(int(v))
    return format(float(v), spec)


def _tip(v, spec: str) -> str:
    """A cell's tooltip: the whole ISO time of a time cell (the cell shows the time of day only)."""
    return f' title="{html.escape(str(v), quote=True)}"' if spec == "t" and v else ""


def _attr(v) -> str:
    """A data attribute value: floats in full precision (repr), booleans as true/false, None as empty."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    return html.escape(str(v), quote=True)


def rounds_table(rows: list[dict]) -> str:
    """The ``<table id="rounds">`` with one ``<tr data-...>`` per history row (every column's value as a
    data attribute; a column that is empty or zero in every row, e.g. ``engine`` and ``integerize`` for LP
    rounds, is not shown). A row's
    message is its tooltip; a failed round's message is also printed in a row of its own below it."""
    shown = [c for c in COLUMNS if c[1] in ALWAYS or any(_get(r, c[1]) not in (None, 0, 0.0) for r in rows)]
    head = "".join(f'<th class="{"l" if f in "st" else ""}">{html.escape(h)}</th>' for h, _, f, _ in shown)
    out = [f'<table id="rounds"><thead><tr>{head}</tr></thead><tbody>']
    cur = current_round(rows)
    for r in rows:
        failed = r["kind"] == "failed" or r["status"] not in ("OPTIMAL", "FEASIBLE")
        undone = is_undone(r, cur)
        cls = " ".join(c for c, on in (("failed", failed), ("current", r.get("current")), ("undone", undone)) if on)
        attrs = " ".join(f'data-{a}="{_attr(_get(r, k))}"' for _, k, _, a in COLUMNS)
        cells = "".join(f'<td class="{"l" if f in "st" else ""}"{_tip(_get(r, k), f)}>'
                        f'{html.escape(_fmt(_get(r, k), f))}{" (undone)" if undone and k == "status" else ""}</td>'
                        for _, k, f, _ in shown)
        msg = str(r.get("message") or "")
        out.append(f'<tr class="{cls}" data-kind="{r["kind"]}" {attrs} title="{html.escape(msg, quote=True)}">'
                   f'{cells}</tr>')
        if failed and msg:
            out.append(f'<tr class="failed msg-row"><td class="msg" colspan="{len(shown)}">{html.escape(msg)}</td></tr>')
    out.append("</tbody></table>")
    return "\n".join(out)


def compare_table(rows: list[dict]) -> str:
    """``<table id="compare">``: one row per (round, method) where ``copter compare`` ran ("" when none)."""
    lines = []
    for r in rows:
        for m, c in r.get("compare", {}).items():
            sec, ratio, diff = c.get("seconds"), c.get("time_ratio"), c.get("objective_diff_rel")
            status = str(c.get("status")) + (" (violates tol)" if c.get("violates_tol") else "")
            lines.append(
                f'<tr data-round="{r["round"]}" data-method="{html.escape(m)}" data-seconds="{_attr(sec)}" '
                f'data-time-ratio="{_attr(ratio)}" data-objective="{_attr(c.get("objective"))}">'
                f'<td>{r["round"]}</td><td class="l">{html.escape(m)}</td><td class="l">{html.escape(status)}</td>'
                f'<td>{_fmt(c.get("objective"), ".10g")}</td><td>{_fmt(diff, ".2e")}</td><td>{_fmt(sec, ".3f")}</td>'
                f'<td>{_fmt(ratio, ".2f")}</td></tr>')
    if not lines:
        return ""
    head = ('<tr><th>round</th><th class="l">method</th><th class="l">status</th><th>objective</th>'
            '<th>objective vs best (rel.)</th><th>seconds</th><th>time / copter</th></tr>')
    return (f'<h2>copter vs baselines</h2><p class="meta">Each <code>copter compare</code> run: the round\'s '
            f'problem solved by each method on this machine; time / copter above 1 means copter was faster, '
            f'objective vs best 0 means the best objective among the methods shown (the newest compare run of each) whose '
            f'points meet the tolerance ("violates '
            f'tol": the point breaks a row or bound by more, relative to max(1, |bound|)).</p>'
            f'<table id="compare"><thead>{head}</thead><tbody>{"".join(lines)}</tbody></table>')


def _cards(rows: list[dict], current: dict | None = None) -> str:
    ok = [r for r in rows if r["kind"] != "failed" and r["status"] in ("OPTIMAL", "FEASIBLE")]
    totals = [r["seconds"]["total"] for r in rows if r["seconds"].get("total") is not None]
    warm = [r for r in rows if r["warm_started"]]
    # the current round's row, also when --last left it out; not the newest row shown (an undone one, helper-195)
    cur = current or next((r for r in rows if r.get("current")), None)
    undone = [r for r in rows if is_undone(r, current_round(rows))]
    cards = [("rounds", str(len(rows))), ("failed", str(len(rows) - len(ok))),
             *([("undone by a rollback", ", ".join(str(r["round"]) for r in undone))] if undone else []),
             ("current round", str(cur["round"]) if cur else "-"),
             ("median round seconds", _fmt(statistics.median(totals), ".3f") if totals else "-"),
             ("warm-started", f"{len(warm)}/{len(rows)}"),
             ("current objective", _fmt(cur["objective"], ".8g") if cur else "-"),
             ("current gap", _fmt(cur["gap_rel"], ".1e") if cur else "-")]
    return '<div class="cards">' + "".join(f'<div class="card"><b>{html.escape(v)}</b><span>{html.escape(k)}'
                                          f'</span></div>' for k, v in cards) + "</div>"


_TAG = re.compile(r"<[^<>]*>")  # matplotlib escapes < and > inside attribute values: a tag ends at its first >
_ID = re.compile(r"""(\sid=)(["'])(.*?)\2""")
_REF = re.compile(r"""(url\(#)([^)]*)(\))|(href=["']#)([^"']*)(["'])""")


def scoped_ids(svg: str, prefix: str) -> str:
    """``svg`` with every id attribute given ``prefix`` (attribute-safe: no quote, ``&``, ``<`` or ``>``) and every ``url(#id)``, ``href="#id"`` and
    ``xlink:href="#id"`` of one of its ids rewritten to match; an id the SVG repeats (two notes of one slot) gets
    ``-2``, ``-3``... after its first.

    Why: each inline chart numbers its elements from 1 (``figure_1``, ``patch_1``) and hashes its clip paths'
    geometry into their ids, so charts repeated ids: invalid HTML, and a browser resolves ``url(#id)`` to the first
    element of the page with that id, possibly another chart's. Only tags are rewritten, never text."""
    new: dict[str, str] = {}
    used: set[str] = set()

    def rename(m: re.Match) -> str:
        old = m.group(3)
        cand, k = prefix + old, 1
        while cand in used:  # a repeated id: the references keep naming its first element
            k += 1
            cand = f"{prefix}{old}-{k}"
        used.add(cand)
        new.setdefault(old, cand)
        return f"{m.group(1)}{m.group(2)}{cand}{m.group(2)}"

    def retarget(m: re.Match) -> str:
        head, ref, tail = m.group(1, 2, 3) if m.group(1) else m.group(4, 5, 6)
        return f"{head}{new[ref]}{tail}" if ref in new else m.group(0)  # not an id of this SVG: kept

    svg = _TAG.sub(lambda t: _ID.sub(rename, t.group(0)), svg)
    return _TAG.sub(lambda t: _REF.sub(retarget, t.group(0)), svg)


def page(rows: list[dict], svgs: dict[str, str], state: str, generated_utc: str,
         warnings: list[str] | tuple[str, ...] = (), current: dict | None = None) -> str:
    """The whole HTML document.

    Args:
        rows: ``solver.rounds.history`` rows, oldest first.
        svgs: chart name -> inline SVG text (``charts.render(fig, "svg")``); its ids are prefixed with the
            figure's id (:func:`scoped_ids`), so the page holds each id once.
        state: the state directory, as shown in the title. generated_utc: ISO time of the report.
        warnings: texts shown below the title, one paragraph each (a damaged CURRENT: whose rows these are).
        current: the current round's history row (default: the row of ``rows`` marked current, if any).
    """
    first = rows[0]["utc"] if rows else "-"
    last = rows[-1]["utc"] if rows else "-"
    figs = "\n".join(f'<figure id="chart-{name}">{scoped_ids(svg, f"chart-{name}-")}'
                     f'<figcaption>{CAPTIONS[name]}</figcaption></figure>' for name, svg in svgs.items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>copter report: {html.escape(state)}</title><style>{CSS}</style></head>
<body>
<h1>copter rounds report</h1>
<p class="meta">State <code>{html.escape(state)}</code>: rounds stored from {html.escape(str(first))} to
{html.escape(str(last))} (UTC) on the live branch; report generated {html.escape(generated_utc)}.</p>
{"".join(f'<p class="warning">warning: {html.escape(w)}</p>' for w in warnings)}
{_cards(rows, current)}
<h2>Charts</h2>
{figs}
{compare_table(rows)}
<h2>Rounds</h2>
<p class="meta">One row per round of the round log (failed rounds in red with their message below, the
current round in bold; hover a row for its message); seconds are wall seconds per phase, +/- vars and cons
what the round's delta added or removed.</p>
<div class="scroll">{rounds_table(rows)}</div>
</body></html>
"""


__all__ = ["CAPTIONS", "COLUMNS", "compare_table", "page", "rounds_table", "scoped_ids"]
