"""``copter demo``: the README's main job. Generates a built-in scenario (no data files) and runs the
continual loop on it: ``init`` on the base problem, then one ``step`` per round, each round's delta
computed from the previous round's returned allocation (Sia's job progress, the load balancer's
previous placement). The answer, on stdout: the per-round table with its legend, the total and where to look
next (``--json``: ``{"rounds": [report, ...]}`` instead). Progress, on stderr as for every command: the
scenario line, one line per finished round and the live solve line.

The generators live in ``solver.workloads`` (installed with the package); ``examples/`` only adds the
loaders for real data. :func:`write_stream` is shared with ``examples/*/generate.py``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import time
from pathlib import Path

import typer

from copter_cli.output import answer, answering, print_json, run, say
from copter_cli.solver_options import check_range, range_help

DEMO_ROUNDS = 5
LEGEND = (  # printed under the per-round table
    "round 0 solves the base problem from scratch (cold); every later round applies one delta and re-solves "
    "warm from the previous round's iterate",
    "changes: rows of the round's delta file; objective: the value of the round's allocation (minimised or "
    "maximised, as the scenario states)",
    "seconds: the round's wall time (load + apply + solve + integerize + save), lower is better",
    "engine / iterations: the LP engine that ran and its count (pdhg: PDHG iterations; alm: ALM outer "
    "steps; a MILP: its relaxation's, run in fixed PDHG stages of --relaxation-round-iterations, so equal "
    "counts say nothing; highs: a small MILP that HiGHS solved first, whose own iterations are not counted, "
    "0) - counts of different engines do not compare",
    "solve s: the warm round's solve + integerize seconds; cold s: the same round's problem solved again "
    "from scratch (engine in brackets when it differs); vs cold = solve s / cold s, below 1.00x the warm "
    "start saved time",
)


def write_stream(scenario, out_dir, rounds: int, base_name: str = "base.parquet") -> list[Path]:
    """Write ``scenario``'s base problem and ``rounds`` deltas (simulated allocations) to ``out_dir``.

    Files: ``base.parquet`` (or ``.mps`` via ``base_name``), ``delta_0001.parquet`` ... in the format of
    docs/DESIGN.md "Delta and problem files" (``copter.base_round`` set). Returns the paths written, base first.
    """
    from formats.io import write_delta, write_problem

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / base_name]
    write_problem(scenario.base(), paths[0])
    for r in range(1, rounds + 1):
        p = out / f"delta_{r:04d}.parquet"
        write_delta(scenario.next_delta(r), p)
        paths.append(p)
    return paths


def _previous_solution(state_dir: Path, report: dict):
    """The last accepted round's solution as a (name, value) table, or None (scenario simulates)."""
    import pyarrow.parquet as pq

    rel = report.get("solution_path")
    if not rel or report.get("accepted") is False:
        return None
    try:
        return pq.read_table(state_dir / rel, columns=["name", "value"])
    except (OSError, ValueError):
        return None


def run_round(state_dir: Path, path: Path, round_: int) -> dict:
    """The one place the demo calls the round loop (``solver.rounds``): init for round 0, step afterwards;
    a round that runs longer than two seconds shows the live progress line on a terminal
    (``copter_cli.progress``)."""
    from copter_cli.progress import SolveProgress
    from solver import rounds

    with SolveProgress():
        if round_ == 0:
            return rounds.init(path, state_dir=state_dir)
        return rounds.step(path, state_dir=state_dir)


def demo(domain: str, rounds: int, scale: str | None, directory: str | Path | None, seed: int,
         json_out: bool) -> int:
    """Generate and run the demo; return the exit code of the worst round (0 when all succeeded)."""
    from copter_cli.exit_codes import for_report
    from formats import undo
    from solver.model.errors import UsageError
    from solver.workloads import make_scenario

    if rounds < 0:
        raise UsageError(f"--rounds must be >= 0, got {rounds}")
    check_range("--seed", seed, 0)  # numpy's generators refuse a negative seed (exit 1 deep in the scenario)
    if directory is not None:  # its files would damage a state it lies in: exit 2 before any work
        from solver.rounds.inside_state import refuse_inside_state

        refuse_inside_state(directory, "--dir")
    from copter_cli.cmd_prepare import ensure_prepared

    prep = ensure_prepared()  # every kernel compiled before round 0 (solver.prepare): no round compiles
    t0 = time.perf_counter()  # after the kernels were compiled (or found compiled)
    scenario = make_scenario(domain, scale_text(domain, scale), seed=seed)  # the demo's own size by default
    tmp = directory is None
    if not tmp:  # the user's folder: checked (and made) before any work
        root = Path(directory)
        if root.exists() and not root.is_dir():
            raise UsageError(f"--dir {root} is a file, not a folder", file=str(root))
        from solver.rounds.outputs import make_folder

        make_folder(root, "--dir")
        kept = root / "state"
        if kept.exists() and any(kept.iterdir()):
            raise UsageError(f"{kept} already holds a state; pass an empty --dir", file=str(kept))
        # the stream's files: a user's own base.parquet there was replaced without a word (hunt 37b)
        mine = [p for p in (root / "base.parquet", *(root / f"delta_{r:04d}.parquet" for r in range(1, rounds + 1)))
                if os.path.lexists(p)]
        if mine:
            more = f" (and {len(mine) - 1} more)" if len(mine) > 1 else ""
            raise UsageError(f"--dir already holds {mine[0].name}{more}, which the demo would replace (it writes "
                             "base.parquet, delta_NNNN.parquet and state/); pass an empty --dir", file=str(root))
    base = scenario.base()  # before a temporary folder exists: building a large base takes seconds
    if not json_out:
        where = "a temporary folder, removed at the end (--dir keeps them)" if tmp else str(root)
        say(f"copter demo: {domain} ({base.name}), {base.n_rows:,} rows x {base.n_cols:,} columns, "
            f"{base.nnz:,} nonzeros, {'MILP' if base.is_mip else 'LP'}; files in {where}")
    reports: list[dict] = []  # filled round by round (a failing round's error still ends the command)
    with contextlib.ExitStack() as removal:
        if tmp:  # an interrupt ends the process at once outside a region: its undo action removes the folder
            root = Path(tempfile.mkdtemp(prefix="copter-demo-"))
            removal.enter_context(undo.on_interrupt(lambda: _remove_temporary(root)))
        state_dir = root / "state"
        try:
            _rounds(scenario, base, root, state_dir, rounds, json_out, reports)
        finally:  # an error, or a KeyboardInterrupt raised in a region, unwinds through here
            if tmp:
                _remove_temporary(root)
    code = next((c for c in map(for_report, reports) if c), 0)
    if json_out:
        print_json({"domain": domain, "scale": scale_text(domain, scale), "seed": seed,
                    "dir": None if tmp else str(root), "rounds": reports})
    else:
        _table(reports, time.perf_counter() - t0, prep, scenario=f"{domain} ({base.name})")
        _next_steps(None if tmp else state_dir)
    return code


def _rounds(scenario, base, root: Path, state_dir: Path, rounds: int, json_out: bool, reports: list[dict]) -> None:
    """Write ``base`` and run round 0, then write each round's delta (from the previous round's allocation)
    and step, appending every round's report to ``reports``; stops early when a round was not accepted."""
    from formats.io import write_delta, write_problem

    base_path = root / "base.parquet"
    write_problem(base, base_path)
    rep = run_round(state_dir, base_path, 0)
    rep["delta_rows"] = 0
    reports.append(rep)
    _log(rep, json_out)
    for r in range(1, rounds + 1):
        if reports[-1].get("accepted") is False:
            break  # the state did not advance: later deltas would not match its round
        previous = _previous_solution(state_dir, reports[-1])
        delta = scenario.next_delta(r, previous)
        path = root / f"delta_{r:04d}.parquet"
        write_delta(delta, path)
        rep = run_round(state_dir, path, r)
        rep["delta_rows"] = len(delta)
        rep["delta_from"] = "simulated allocation" if previous is None else f"round {r - 1} solution"
        rep["cold_solve"] = cold_solve(state_dir, rep)
        reports.append(rep)
        _log(rep, json_out)


def _remove_temporary(root: Path) -> None:
    """Remove the demo's temporary folder (its files and state) and say so should an interrupt end the demo
    now or later (``formats.undo.done``: the interrupted error names what is left, here nothing), instead of
    "round N is stored and current" of a state that no longer exists."""
    from formats import undo

    shutil.rmtree(root, ignore_errors=True)
    undo.done(f"the demo's temporary folder {root} is removed (--dir keeps its files)")


def cold_solve(state_dir: Path, rep: dict) -> dict | None:
    """The stored problem of the round ``rep`` reports solved again from scratch (no warm start) with the
    state's settings: ``{"seconds" (wall, s), "iterations", "engine", "status"}``, the yardstick of the
    demo's "vs cold" column; None for a round that was not stored."""
    from formats.checkpoint import StateStore
    from solver.api import solve_problem
    from solver.rounds.config import settings_from_json

    if rep.get("accepted") is False or rep.get("round") is None:
        return None
    store = StateStore(state_dir)
    problem = store.load(rep["round"], with_state=False).problem
    t = time.perf_counter()
    res = solve_problem(problem, settings_from_json(store.config().get("settings")), None)
    return {"seconds": time.perf_counter() - t, "iterations": int(res.iterations),
            "engine": getattr(res, "engine", "") or None, "status": res.status.name}


def vs_cold(rep: dict) -> tuple[float | None, float | None, float | None]:
    """(warm solve seconds, cold solve seconds, their ratio) of a demo round; None where unknown."""
    sec = rep.get("seconds") or {}
    warm = None if sec.get("solve") is None else sec["solve"] + (sec.get("integerize") or 0.0)
    cold = (rep.get("cold_solve") or {}).get("seconds")
    return warm, cold, (warm / cold if warm is not None and cold else None)


def _next_steps(state_dir: Path | None) -> None:
    """The last line: where to look next (the report page and the allocation of the last round). The report page
    needs the plot extra: without matplotlib the hint says how to install it (``copter report`` exits 8)."""
    import importlib.util

    folder = "DIR/state" if state_dir is None else str(state_dir)
    report = f"`copter report --state {folder} -o report.html` (charts per round"
    if importlib.util.find_spec("matplotlib"):
        report += ")"
    else:
        from solver.extras import install_command, install_note

        # only the command in backticks: pasted into a shell, the note's brackets were a syntax error
        report += f"; needs `{install_command('plot', 'matplotlib')}`, {install_note('plot')})"
    show = f"`copter show --solution --changes --state {folder}` (who got what, and what moved)"
    if state_dir is None:
        answer(f"look closer: rerun with --dir DIR to keep the state, then {report} and {show}",
               markup=False, highlight=False)
        return
    answer(f"look closer: {report} and {show}", markup=False, highlight=False)


def _fmt(v, spec: str = ".6g") -> str:
    return "-" if v is None else format(v, spec) if isinstance(v, (int, float)) else str(v)


def _log(rep: dict, json_out: bool) -> None:
    """One progress line on stderr per finished round (none with ``--json``); the table is the answer."""
    if not json_out:
        say(f"  round {rep.get('round')}: {rep.get('status')} objective {_fmt(rep.get('objective'))} "
            f"in {_fmt((rep.get('seconds') or {}).get('total'), '.3f')} s")


def scale_text(domain: str, scale: str | None) -> str:
    """The scenario's scale as ``--scale`` writes it (the domain's demo size when none was given,
    ``solver.workloads.DEMO_SCALES``: Sia ``1024``, TE ``24``, LB ``128x16``).

    Raises:
        UsageError: an unknown domain or a malformed scale (as ``make_scenario``)."""
    from solver.workloads import DEMO_SCALES, check_domain
    from solver.workloads.common import parse_scale

    check_domain(domain)
    v = parse_scale(scale, DEMO_SCALES[domain])
    if domain == "lb":
        from solver.workloads.lb import LBScenario

        v = LBScenario.parse_scale(v)
    return "x".join(map(str, v)) if isinstance(v, tuple) else str(v)


#: the demo table's columns: (header, justify, priority); 0 = essential, higher = dropped first when the
#: terminal is too narrow (copter_cli.table_fit, as history and compare)
DEMO_COLUMNS = (("round", "right", 0), ("changes", "right", 5), ("status", "left", 0), ("objective", "right", 0),
                ("seconds", "right", 0), ("engine", "left", 3), ("iterations", "right", 6), ("solve s", "right", 4),
                ("cold s", "right", 2), ("vs cold", "right", 1))


def _compiled_note(prep: dict | None) -> str:
    """What the total excludes: the kernel warm-up before round 0, as it happened in this run."""
    if not prep or prep.get("skipped"):
        return "the kernels were compiled before, by `copter prepare` or an earlier run, and are not included"
    if prep.get("compiled"):
        return (f"this run compiled the kernels first ({prep['compiled']} compilation(s), "
                f"{prep.get('seconds', 0.0):.0f} s, once per install), not included")
    return f"this run loaded the kernels first ({prep.get('seconds', 0.0):.1f} s of warm-up), not included"


def _table(reports: list[dict], seconds: float, prep: dict | None = None, scenario: str = "") -> None:
    """The demo's answer on stdout: the per-round table (titled with ``scenario``, e.g. ``te (te-ring5-...)``,
    so a piped answer says what ran), its legend and the total seconds."""
    from rich import box

    from copter_cli.table_fit import Column, print_fitted

    rows = []
    for rep in reports:
        it = rep.get("iterations")
        warm, cold, ratio = vs_cold(rep)
        cs = rep.get("cold_solve") or {}
        cold_txt = "-" if cold is None else f"{cold:.3f}" + (
            f" ({cs['engine']})" if cs.get("engine") and cs.get("engine") != rep.get("engine") else "")
        rows.append([str(rep.get("round")), f"{rep.get('delta_rows', 0):,}", str(rep.get("status")),
                     _fmt(rep.get("objective"), ".8g"), _fmt((rep.get("seconds") or {}).get("total"), ".3f"),
                     _fmt(rep.get("engine")), _fmt(it, "d") if isinstance(it, int) else _fmt(it),
                     _fmt(warm, ".3f"), cold_txt if rep.get("round") != 0 else "(this)",
                     "cold" if rep.get("round") == 0 else ("-" if ratio is None else f"{ratio:.2f}x")])
    # on a terminal the least important columns are dropped with a note rather than a value cut; a log or a
    # pipe gets every column at its natural width
    with answering():
        print_fitted([Column(*c) for c in DEMO_COLUMNS], rows, more="--json",
                     title=f"copter demo: {scenario + ' ' if scenario else ''}rounds",
                     title_justify="left", box=box.HEAVY_HEAD)
    for line in LEGEND:
        answer(line, markup=False, highlight=False)
    answer(f"total {seconds:.2f} s (generation, rounds and the cold re-solves; {_compiled_note(prep)})",
                  markup=False, highlight=False)


def demo_cmd(
    domain: str = typer.Option("sia", "--domain", help="sia (GPU scheduling), te (traffic engineering) "
                               "or lb (shard load balancing)."),
    rounds: int = typer.Option(DEMO_ROUNDS, "--rounds", help="Number of rounds after round 0." + range_help(0)),
    scale: str = typer.Option(None, "--scale", help="sia: GPUs (1024); te: ring nodes (24); "
                              "lb: SHARDSxSERVERS, both numbers (128x16)."),
    directory: Path | None = typer.Option(None, "--dir", help="Keep the files and state here (default: a "
                                          "temporary folder, removed afterwards)."),
    seed: int = typer.Option(0, "--seed", help="Random seed of the scenario." + range_help(0)),
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object on stdout: domain, scale, "
                                  "seed, dir and rounds (the round reports)."),
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks."),
) -> None:
    """Run a built-in scenario (default: Sia GPU scheduling).

    Runs init on a generated base problem, then N warm-started steps; the per-round table on stdout,
    progress on stderr."""
    run(json_out, debug, lambda: demo(domain, rounds, scale, directory, seed, json_out))


def register(app: typer.Typer) -> None:
    """Add ``copter demo`` to the app."""
    app.command("demo")(demo_cmd)
