"""``copter report``: one self-contained HTML page of a state's rounds (and, optionally, the charts as PNG).

Reads the round log through :func:`solver.rounds.history` (the live branch, failed rounds included,
compare results joined), draws the charts of :mod:`solver.rounds.report.charts` with matplotlib (the
optional extra ``plot``) and writes the page of :mod:`solver.rounds.report.page`: inline CSS and SVG, no
script, nothing fetched, so it opens offline and can be mailed as one file.
"""

from __future__ import annotations

import time
from pathlib import Path

from solver.extras import install_hint
from solver.model.errors import MissingDependencyError, UsageError
from solver.rounds.config import state_dir_or_default


def require_matplotlib() -> None:
    """Import matplotlib with the non-interactive Agg backend.

    Raises:
        MissingDependencyError: matplotlib is not installed (the message names the ``pip install`` of the extra ``plot``, :func:`solver.extras.install_hint`).
    """
    try:
        import matplotlib
    except ImportError as err:
        raise MissingDependencyError(f"copter report draws its charts with matplotlib, which is not installed; "
                                     f"install it: {install_hint('plot', 'matplotlib')}", package="matplotlib") from err
    matplotlib.use("Agg", force=True)


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".svg", ".pdf", ".gif", ".webp")  #: ``-o`` names refused (not HTML)


def _check_paths(output: Path, png_dir: Path | None) -> None:
    """Usage errors before any work: ``-o`` is a folder or in a missing folder, or names an image
    (:data:`IMAGE_SUFFIXES`: the page would be HTML under that name); ``--png`` is a file; either is ``-``
    (standard output is not written) or lies inside a copter state directory (``solver.rounds.inside_state``)."""
    from solver.rounds.inside_state import refuse_inside_state

    for option, path in (("-o", output), ("--png", png_dir)):
        if path is not None and str(path) == "-":  # no copter -o writes to standard output
            raise UsageError(f"{option} -: copter report writes its page (and --png its charts) to named files, "
                             f"not to standard output; give a file name (e.g. -o report.html)")
    if output.suffix.lower() in IMAGE_SUFFIXES:  # the page is HTML whatever the name says
        raise UsageError(f"-o {output}: copter report writes an HTML page, not a {output.suffix} image; name it "
                         f"{output.with_suffix('.html').name} (the charts as PNG files: --png FOLDER)")
    refuse_inside_state(output, "-o")
    if png_dir is not None:
        refuse_inside_state(png_dir, "--png")
    if output.is_dir():
        raise UsageError(f"-o {output} is a folder; give the HTML file to write")
    from solver.rounds.outputs import refuse_special

    refuse_special(output, "-o")  # /dev/null: the page's rename would replace the device
    if not output.parent.is_dir():
        what = "is a file, not a folder" if output.parent.exists() else "does not exist"
        raise UsageError(f"-o {output}: folder {output.parent} {what}")
    if png_dir is not None and png_dir.exists() and not png_dir.is_dir():
        raise UsageError(f"--png {png_dir} is a file; give a folder for the chart images")
    if png_dir is not None:  # the folder --png makes: not the page, nor under it or under another file (hunt 37b:
        page = output.resolve()  # each was an exit-1 FileExistsError / NotADirectoryError after the page was written)
        for folder in (png_dir, *png_dir.parents):
            if folder.resolve() == page:
                raise UsageError(f"--png {png_dir}: {'is' if folder == png_dir else 'lies under'} the -o page "
                                 f"{output}; give another folder for the chart images")
            if folder.exists():
                if not folder.is_dir():
                    raise UsageError(f"--png {png_dir}: {folder} is a file, not a folder")
                break
    if png_dir is not None:  # the files --png writes: one a chart (charts loads matplotlib only to draw)
        from solver.rounds.report.charts import CHARTS

        for name in CHARTS:
            refuse_special(png_dir / f"{name}.png", "--png")
            if (png_dir / f"{name}.png").is_dir():  # helper-213: exit 1 after the page and 3 charts were written
                raise UsageError(f"--png {png_dir}: {png_dir / f'{name}.png'} is a folder, where the {name} chart "
                                 "goes: remove it or choose another folder")


def _write_atomic(path: Path, data: bytes) -> None:
    """Replace ``path`` by ``data`` (``formats.atomic.replacing``: a link there is replaced, not followed; an
    environment fault is exit 7 naming the path)."""
    from formats import undo
    from formats.atomic import replacing
    from formats.faults import environment_faults

    with environment_faults(path, destination=True), replacing(path) as tmp:
        tmp.write_bytes(data)
    undo.wrote(str(path))  # an interrupt after it says so (it used to say "nothing was changed")


def newest_rounds(rows: list[dict], last: int | None) -> list[dict]:
    """The rows (history order) of the newest ``last`` round numbers, every attempt of each (None: all). A round that
    failed twice is two rows of one round: ``--last 2`` took those two rows alone and left the current round off the
    page (helper-241)."""
    if last is None:
        return rows
    kept = sorted({r["round"] for r in rows})[-last:]
    return [r for r in rows if r["round"] >= kept[0]] if kept else rows


def write_report(state_dir=None, output="report.html", png_dir=None, last: int | None = None) -> dict:
    """Write the HTML report of a state directory's rounds (and the charts as PNG files).

    Args:
        state_dir: the state directory (default ``$COPTER_STATE`` or ``./copter-state``).
        output: the HTML file to write (replaced atomically).
        png_dir: optional folder (created when missing) that receives ``round-time.png``, ``objective.png``,
            ``iterations.png`` and ``churn.png``.
        last: only the newest ``last`` round numbers, every row of each (:func:`newest_rounds`; None: all the log
            holds).
    Returns:
        {"output": HTML path, "png": [PNG paths], "rounds": round numbers shown, "rows": rows shown (a round that
        failed and was stepped again is two), "failed": failed rows,
        "seconds": wall seconds of the whole report}, plus ``warnings`` (as ``copter history``'s, also shown on
        the page) when CURRENT was unusable and the rows are the newest complete generation's lineage.
    Raises:
        MissingDependencyError: matplotlib is not installed. UsageError: ``output``/``png_dir`` unusable, or
        ``last`` < 1. StateError: the state is not initialised.
    """
    t0 = time.perf_counter()
    from solver.rounds.outputs import refuse_folder_text

    refuse_folder_text(output, "-o")
    output = Path(output)
    png_dir = None if png_dir is None else Path(png_dir)
    if last is not None and last < 1:
        raise UsageError(f"--last must be at least 1, got {last}")
    _check_paths(output, png_dir)
    from solver.rounds import history

    state = state_dir_or_default(state_dir)
    warnings: list[str] = []  # CURRENT unusable: the rows are those of the newest complete generation
    rows = history(state, None, warnings)  # before matplotlib: no state is exit 3 with or without it
    require_matplotlib()
    from solver.rounds.log_history import current_round, is_undone
    from solver.rounds.report import charts, page

    # the current round and the undone ones are known from every row, also when --last leaves them out: with
    # --last 2 after a rollback the page called an undone round current (helper-195)
    cur = current_round(rows)
    current = next((r for r in rows if r.get("current")), None)
    for r in rows:
        r["undone"] = is_undone(r, cur)
    rows = newest_rounds(rows, last)

    figs = {name: build(rows) for name, build in charts.CHARTS.items()}
    svgs = {name: charts.render(fig, "svg").decode("utf-8") for name, fig in figs.items()}
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    # every chart is rendered before the first file is written: the writes follow one another (an interrupt
    # between them left 1-3 of the 4 PNGs beside a new page; what was written is now named in its message)
    images = {png_dir / f"{name}.png": charts.render(fig, "png") for name, fig in figs.items()} if png_dir else {}
    made = []
    if png_dir is not None:  # before the page: a folder that cannot be made leaves nothing written (helper-213)
        from solver.rounds.outputs import make_folder

        made = make_folder(png_dir, "--png")
    try:
        _write_atomic(output, page.page(rows, svgs, str(state), stamp, warnings, current).encode("utf-8"))
    except BaseException:  # the page cannot be written: the --png folder made for it goes too (hunt 56)
        from solver.rounds.outputs import remove_made_folders

        remove_made_folders(made)
        raise
    pngs = []
    if png_dir is not None:
        for path, data in images.items():
            pngs.append(str(path))
            _write_atomic(path, data)
    failed = sum(1 for r in rows if r["kind"] == "failed" or r["status"] not in ("OPTIMAL", "FEASIBLE"))
    return {"output": str(output), "png": pngs, "rounds": len({r["round"] for r in rows}), "rows": len(rows),
            "failed": failed,
            "seconds": time.perf_counter() - t0, **({"warnings": warnings} if warnings else {})}


__all__ = ["require_matplotlib", "write_report"]
