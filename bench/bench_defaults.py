"""What a user gets with DEFAULT options, through the CLI: one ``copter`` process per round, next to HiGHS.

A scenario stream of ``solver.workloads`` (``--domain sia|te|lb``, ``--scale``, a held-out ``--seed``) is written
to files (base problem + one delta per round, the simulated allocations of ``copter demo``'s ``write_stream``);
then

- copter: ``copter init base.parquet`` and one ``copter step delta_000k.parquet`` per round, each a fresh
  process (as cron runs it), with the options of ``--copter-args`` only (default: none = default options).
  ``copter_s`` is the wall time of the whole process (start-up, imports, state load/save included);
  ``solve_s`` is the report's ``seconds.total`` (the round inside the process);
- HiGHS: the same round's problem (rebuilt in this process from the same files) solved cold by HiGHS
  (``solver.baselines.highs``: MIP for a MILP, its default LP solver otherwise), single-threaded, in this
  process (``highs_s`` = hand-over + solve, no process start-up).

Per round: copter's wall and solve time, HiGHS's time, ``ratio`` = highs_s / copter_s (> 1 = copter faster),
``gap`` = copter's objective relative to HiGHS's optimum (sense * (copter - highs) / max(1, |highs|), > 0 =
copter worse), copter's status and proven ``gap_rel`` (MILP), and ``exact``: copter's saved point
(``solution.parquet``) re-checked on the round's problem (MILP: bounds, integrality and rows to 1e-9
relative, ``solver.integer.check``; LP: the max row violation relative to max(1, |bound|)). The last lines
print the medians, and the bar of issue #15 for MILP streams.

Usage (the timings of a shared machine are noisy: ratios come from one run; run the key ones twice)::

    python bench/bench_defaults.py --domain sia --scale 10240 --rounds 5 --seed 9101 --highs-every 2
    python bench/bench_defaults.py --domain sia --scale 1024 --rounds 10 --seed 9102
    python bench/bench_defaults.py --domain te --scale 24 --rounds 5 --seed 9103
    python bench/bench_defaults.py --domain lb --scale 256x32 --rounds 5 --seed 9104 --highs-limit 120
    python bench/bench_defaults.py --domain sia --scale 1024 --rounds 10 --seed 9102 --copter-args "--mip-gap 1e-4"
    python bench/bench_defaults.py --domain sia --scale 1024 --rounds 10 --seed 9102 --worker   # copter worker start

``--worker`` runs the commands through a long-running worker (``copter worker start`` in the run's own folder;
the ``where`` column says where each command ran: a worker that found the sources edited meanwhile exits and
the command runs in its own process); without it every command is its own process (``COPTER_WORKER=off``).
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.common import header  # noqa: E402


def run_this_checkout() -> None:
    """The copter processes import this checkout (``PYTHONPATH``, unless it is set already), as the in-process side
    does: the console script beside this Python imported the installed tree, so a clone or worktree was timed with
    another tree's copter (helper-238, session 59)."""
    import os

    os.environ.setdefault("PYTHONPATH", str(REPO))


def copter_command() -> list[str]:
    """The installed ``copter`` script next to this Python, else ``python -m copter_cli``."""
    script = Path(sys.executable).with_name("copter")
    return [str(script)] if script.exists() else [sys.executable, "-m", "copter_cli"]


ENV: dict = {}  #: the copter processes' environment (main sets it: worker on or off)


def run_copter(args: list[str]) -> tuple[dict, float, int]:
    """Run one copter command with ``--json``; returns (its JSON report or {}, wall seconds, exit code).
    ``report["_where"]`` says whether it ran in the worker ("worker") or in its own process ("process")."""
    t = time.perf_counter()
    proc = subprocess.run([*copter_command(), *args, "--json"], capture_output=True, text=True, env=ENV or None)
    wall = time.perf_counter() - t
    try:
        report = json.loads(proc.stdout) if proc.stdout.strip() else {}
    except json.JSONDecodeError:
        report = {}
    report["_where"] = "worker" if "copter worker: running in the worker" in proc.stderr else "process"
    if proc.returncode != 0:
        why = report.get("error") or report.get("message") or proc.stderr.strip()[-400:]
        print(f"  copter {args[0]} exited {proc.returncode}: {why}", flush=True)
    return report, wall, proc.returncode


def saved_point(state: Path, report: dict, problem) -> np.ndarray | None:
    """copter's saved (n,) point aligned to ``problem`` by name (None when missing)."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    rel = report.get("solution_path")
    if not rel:
        return None
    t = pq.read_table(state / rel, columns=["name", "value"])
    pos = pc.index_in(pa.array(problem.col_names, type=pa.string()), value_set=t.column("name"))
    if pos.null_count:
        return None
    return t.column("value").to_numpy()[pos.to_numpy()]


def exactness(problem, x: np.ndarray | None):
    """MILP: the exact check (True/False); LP: the max row violation relative to max(1, |bound|)."""
    if x is None:
        return "-"
    if problem.integrality.any():
        from solver.integer.check import check_point

        return bool(check_point(problem, x)["ok"])
    act = problem.row_activity(x)
    lo, hi = problem.row_lower, problem.row_upper
    with np.errstate(invalid="ignore"):
        v_lo = np.where(np.isfinite(lo), (lo - act) / np.maximum(1.0, np.abs(lo)), 0.0)
        v_hi = np.where(np.isfinite(hi), (act - hi) / np.maximum(1.0, np.abs(hi)), 0.0)
    return float(max(0.0, np.max(v_lo, initial=0.0), np.max(v_hi, initial=0.0)))


def _fmt(v) -> str:
    if isinstance(v, bool) or v is None:
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.4g}"
    return str(v)


def main(argv: list[str] | None = None) -> None:
    run_this_checkout()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--domain", choices=("sia", "te", "lb"), default="sia", help="(default: %(default)s)")
    ap.add_argument("--scale", default="1024",
                    help="Sia GPUs, TE ring nodes, LB SHARDSxSERVERS (solver.workloads). "
                         "(default: %(default)s)")
    ap.add_argument("--rounds", type=int, default=5, help="rounds after round 0 (init) (default 5).")
    ap.add_argument("--seed", type=int, default=9101,
                    help="scenario seed; pick one the tests do not use. (default: %(default)s)")
    ap.add_argument("--highs-limit", type=float, default=math.inf, help="HiGHS time limit per round, s (default none).")
    ap.add_argument("--highs-every", type=int, default=1,
                    help="run HiGHS on every k-th round only (and the last), when it is too slow for all (default 1).")
    ap.add_argument("--copter-args", default="",
                    help='extra copter options for init (e.g. "--mip-gap 1e-4"). (default: %(default)s)')
    ap.add_argument("--keep", default=None, help="folder for the stream and the state (default: a temp folder).")
    ap.add_argument("--worker", action="store_true",
                    help="run the copter commands through a long-running worker (copter worker start, in its own "
                         "folder; stopped at the end); default: COPTER_WORKER=off, every command its own process.")
    args = ap.parse_args(argv)
    header(sys.argv if argv is None else ["bench/bench_defaults.py", *argv])

    from copter_cli.cmd_demo import write_stream
    from formats.io import read_delta, read_problem
    from solver.baselines.highs import solve_highs
    from solver.differential import apply_delta
    from solver.workloads import make_scenario

    root = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="copter-bench-defaults-"))
    rows: list[dict] = []
    # the worker this run started is stopped and its temporary folder removed however the run ends (Ctrl-C, an
    # error): they were left behind, a worker idling 900 s on its socket (helper-238, session 59)
    try:
        paths = write_stream(make_scenario(args.domain, args.scale, seed=args.seed), root / "stream", args.rounds)
        state = root / "state"
        if state.exists():
            shutil.rmtree(state)
        extra = shlex.split(args.copter_args)
        import os

        ENV.update(os.environ, COPTER_WORKER_DEBUG="1", COPTER_WORKER_DIR=str(root / "worker"))
        ENV["COPTER_WORKER"] = "on" if args.worker else "off"
        if args.worker:
            t = time.perf_counter()
            start = subprocess.run([*copter_command(), "worker", "start"], capture_output=True, text=True, env=ENV)
            print(f"# worker start: exit {start.returncode} in {time.perf_counter() - t:.1f} s "
                  f"{start.stderr.strip()[-200:]}", flush=True)
        print(f"# stream: {root / 'stream'}; copter options: {args.copter_args or '(defaults)'}; "
              f"{'through a long-running worker' if args.worker else 'one process per command'}", flush=True)
        cols = ["round", "cols", "copter_s", "solve_s", "where", "status", "gap_rel", "highs_s", "highs_status", "ratio",
                "gap", "exact"]
        print("| " + " | ".join(cols) + " |\n|" + "|".join("---" for _ in cols) + "|", flush=True)
        problem = None
        for r, path in enumerate(paths):
            problem = read_problem(path) if r == 0 else apply_delta(problem, read_delta(path))[0]
            cmd = (["init", str(path), *extra] if r == 0 else ["step", str(path)]) + ["--state", str(state)]
            rep, wall, code = run_copter(cmd)
            limit = {} if math.isinf(args.highs_limit) else {"time_limit_seconds": args.highs_limit}
            b = None
            if r % args.highs_every == 0 or r == len(paths) - 1:
                b = solve_highs(problem, solver="mip" if problem.integrality.any() else "choose", threads=1, **limit)
            obj = rep.get("objective")
            good = rep.get("status") in ("OPTIMAL", "FEASIBLE") and obj is not None
            gap = (problem.sense * (obj - b.objective) / max(1.0, abs(b.objective))
                   if b is not None and good and math.isfinite(b.objective) else math.nan)
            row = {"round": r, "cols": problem.n_cols, "copter_s": wall,
                   "solve_s": float(rep.get("seconds", {}).get("total", math.nan)), "where": rep["_where"],
                   "status": rep.get("status", f"exit {code}"),
                   "gap_rel": rep.get("gap_rel", "-"), "highs_s": b.seconds if b else math.nan,
                   "highs_status": b.extra.get("highs_status", b.status.name) if b else "-",
                   "ratio": b.seconds / wall if b else math.nan, "gap": gap,
                   "exact": exactness(problem, saved_point(state, rep, problem)) if good else "-"}
            rows.append(row)
            print("| " + " | ".join(_fmt(row[c]) for c in cols) + " |", flush=True)
        _summary(rows, args.domain)
    finally:
        if args.worker and ENV:  # ENV is set before the worker starts
            subprocess.run([*copter_command(), "worker", "stop"], capture_output=True, text=True, env=ENV)
            print(f"# commands run in the worker: {sum(r['where'] == 'worker' for r in rows)} of {len(rows)}")
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


def _summary(rows: list[dict], domain: str) -> None:
    """Medians over the rounds, and the bar of issue #15 for MILP streams."""
    med = {k: float(np.nanmedian([r[k] for r in rows])) for k in ("copter_s", "solve_s", "highs_s", "ratio", "gap")}
    steps = [r for r in rows if r["round"] > 0]
    med_step = float(np.median([r["copter_s"] for r in steps])) if steps else math.nan
    med_highs_step = float(np.nanmedian([r["highs_s"] for r in steps])) if steps else math.nan
    print(f"\n# median over {len(rows)} rounds: copter wall {med['copter_s']:.3f} s (in-process round "
          f"{med['solve_s']:.3f} s), HiGHS {med['highs_s']:.3f} s, ratio HiGHS/copter {med['ratio']:.2f}, "
          f"gap to HiGHS {med['gap']:.3e}")
    print(f"# steps only (rounds 1..): median copter step wall {med_step:.3f} s, HiGHS {med_highs_step:.3f} s, "
          f"ratio of medians {med_highs_step / med_step:.2f}")
    ex = [r["exact"] for r in rows]
    if domain != "te":
        print(f"# every round integer-feasible exactly: {all(e is True for e in ex)}; "
              f"worst gap to HiGHS {np.nanmax([r['gap'] for r in rows]):.3e}; "
              f"statuses {sorted({r['status'] for r in rows})}")
    else:
        print(f"# worst relative row violation {max(e for e in ex if isinstance(e, float)):.3e}")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:  # the worker stopped and the folder removed (main's finally): one line, no traceback
        print("# interrupted", file=sys.stderr)
        raise SystemExit(130) from None
