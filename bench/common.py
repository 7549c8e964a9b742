"""Shared machinery of the domain benchmarks (bench_sia.py, bench_te.py, bench_lb.py).

One run = one scenario stream (``solver.workloads``: ``base()`` then ``next_delta(r, previous_solution)``)
of R rounds; every round's problem is solved by each method:

- ``copter-warm``: ``solver.api.solve_problem`` warm-started from the previous round's state mapped by
  ``solver.differential.map_state`` (seconds = apply the delta + map the state + solve);
- ``copter-cold``: the same solver from scratch (seconds = solve);
- ``highs``: HiGHS cold, fresh instance (``solver.baselines.highs``; seconds include handing the model over);
- ``highs-warm``: LP: one HiGHS instance kept across rounds, edited by the round's changes, re-solved by
  simplex from the kept basis (hot start); its round 0 is solved by ``--warm-cold-solver`` (default IPM
  with crossover, which leaves a basis: cold simplex can take minutes on TE/LB). MILP: HiGHS MIP in a
  fresh child process started from the previous round's incumbent mapped by name (HiGHS's MIP presolve
  overruns its time limit, so MILP baselines run under a hard wall limit, see solver/baselines/guard.py);
- ``pop-4``, ``pop-16``: POP with k parts on ``--executor`` (the executor of partitioned rounds,
  ``solver.partition.executor``: a process pool kept across rounds by default, ``ray`` tasks, ``inline``);
  ``seconds`` is the wall time on this machine, ``pop_seconds`` POP's own measure (setup + slowest part =
  time on k cores), whatever the executor.

Every baseline (highs, highs-warm, pop-<k> and the HiGHS solver variants highs-simplex/ipm/pdlp) is run
through ``solver.baselines.registry``, the same table ``copter compare`` uses.

Quality per method and round: objective gap to HiGHS's optimum of the round
(``sense * (objective - reference) / max(1, |reference|)``, > 0 = worse), max absolute/relative row
violation recomputed from the data, integrality violation, churn = surviving variables whose value
moved by more than 1e-6 * max(1, |previous value|) since the method's own previous round.
Each method gets a per-round time limit; a method that hits it ``--skip-after`` times is skipped for the
remaining rounds (reported). The header prints the exact command line and versions; results go to
``bench/results/<name>-<UTC timestamp>.parquet`` and ``.csv`` (and a PNG of per-round time by method
when matplotlib happens to be installed).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import shlex
import signal
import sys
import time
from concurrent.futures import BrokenExecutor
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as `python bench/bench_x.py` from a checkout
    sys.path.insert(0, str(REPO))

from copter_cli.entry import console_environment  # noqa: E402

console_environment()  # the console script's library settings (copter_cli.entry), before numpy loads

import numpy as np  # noqa: E402

from solver.extras import needs  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"
METHODS = ("copter-warm", "copter-cold", "highs", "highs-warm", "pop-4", "pop-16")
CHURN_TOL = 1e-6


# ----------------------------------------------------------------------------- header and timing
def versions() -> dict:
    """Versions of copter and the libraries the figures depend on."""
    out = {"python": platform.python_version()}
    for pkg in ("copter", "highspy", "numba", "numpy", "scipy", "pyarrow"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "absent"
    return out


def _commit() -> str:
    """This checkout's commit (``+ edits`` when its tracked files differ), or "unknown" outside git: every results file
    said ``copter 0.1.0`` alone, which no run could be tied to (helper-238, session 59)."""
    import subprocess

    try:
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              timeout=10)
        dirty = subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if head.returncode != 0:
        return "unknown"
    return head.stdout.strip() + (" + edits" if dirty.stdout.strip() else "")


def header(argv: list[str] | None = None) -> dict:
    """Print and return the run header: exact command line, UTC time, machine, versions."""
    argv = sys.argv if argv is None else argv
    info = {"command": " ".join(shlex.quote(a) for a in [Path(sys.executable).name, *argv]),
            "utc": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "cpus": os.cpu_count(),
            "machine": platform.platform(), "commit": _commit(), "load": " ".join(f"{v:.2f}" for v in os.getloadavg()),
            **versions()}
    print(f"# command: {info['command']}")
    print(f"# utc: {info['utc']}  cpus: {info['cpus']}  load: {info['load']}  machine: {info['machine']}")
    print(f"# code: {info['commit']}")
    print("# versions: " + "  ".join(f"{k} {info[k]}" for k in ("copter", "highspy", "numba", "numpy", "python")))
    sys.stdout.flush()
    return info


class Timer:
    """``with Timer() as t: ...`` then ``t.seconds`` (wall, perf_counter)."""

    def __enter__(self) -> Timer:
        self.start = time.perf_counter()
        self.seconds = math.nan
        return self

    def __exit__(self, *exc) -> None:
        self.seconds = time.perf_counter() - self.start


# ----------------------------------------------------------------------------- arguments
def add_executor_args(ap: argparse.ArgumentParser, what: str) -> None:
    """``--executor`` and ``--ray-address``: where ``what`` run (``solver.partition.executor``)."""
    ap.add_argument("--executor", default="process", choices=("process", "ray", "inline"),
                    help=f"where {what} run: local worker processes (default), Ray tasks ({needs('ray', 'Ray')}), "
                         "or one after another in this process")
    ap.add_argument("--ray-address", default=None,
                    help="Ray cluster for --executor ray (default: $RAY_ADDRESS, else a local cluster)")


def check_executor_arg(executor: str) -> None:
    """Exit 2 with the message (naming the ``ray`` extra) when ``executor`` cannot run here."""
    from solver.model.errors import UsageError
    from solver.partition.executor import check_executor

    try:
        check_executor(executor)
    except UsageError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(2) from None


def add_common_args(ap: argparse.ArgumentParser, *, default_highs_solver: str = "choose") -> None:
    """Options every domain bench shares."""
    ap.add_argument("--rounds", type=int, default=10, help="rounds after the base round (default 10)")
    ap.add_argument("--time-limit", type=float, default=120.0,
                    help="per-round time limit per method, s (default: %(default)s)")
    ap.add_argument("--methods", default=",".join(METHODS),
                    help=f"comma list from {','.join(METHODS)} (default: %(default)s)")
    ap.add_argument("--highs-solver", default=default_highs_solver,
                    help="HiGHS solver for highs and POP parts: choose|simplex|ipm|pdlp (MIP if integers)"
                         " (default: %(default)s)")
    ap.add_argument("--warm-cold-solver", default="ipm",
                    help="HiGHS solver of highs-warm's first round (ipm + crossover leaves a basis; default ipm)")
    ap.add_argument("--tol", type=float, default=1e-4,
                    help="copter's relative KKT tolerance (default: %(default)s)")
    ap.add_argument("--threads", type=int, default=None, help="HiGHS threads (default: HiGHS's choice)")
    ap.add_argument("--pop-workers", type=int, default=None, help="POP worker processes (default: CPUs)")
    add_executor_args(ap, "POP's parts")
    ap.add_argument("--pop-scaling", choices=("auto", "uniform"), default="auto",
                    help="POP's share of shared rows (solver/baselines/pop.py) (default: %(default)s)")
    ap.add_argument("--seed", type=int, default=0, help="scenario seed")
    ap.add_argument("--skip-after", type=int, default=2,
                    help="skip a method for the remaining rounds after this many time-limit hits"
                         " (default: %(default)s)")
    ap.add_argument("--no-write", action="store_true", help="do not write bench/results files")
    ap.add_argument("--plot", action="store_true", help="also write a PNG (needs matplotlib)")


# ----------------------------------------------------------------------------- one run
def _warm_up(is_mip: bool) -> None:
    """Compile (a fresh checkout: about a minute, once) and load every copter kernel a round can reach, as ``copter
    prepare`` does, then solve a 2x2 problem, so that no round times JIT compilation. The 2x2 solve alone reached no
    PDHG, ALM or warm-start kernel: on a fresh clone ``bench_te``'s copter-warm round 0 took 4.2 s against its own cold
    re-solve's 0.03 s, and the summary said 159x HiGHS where a second run said 2.1x (helper-238, session 59)."""
    from solver.api import solve_problem
    from solver.model.problem import Problem
    from solver.model.settings import Settings
    from solver.prepare import load_cached, prepare

    prepare(force=False)  # compiles only what the cache lacks (nothing on a prepared install)
    load_cached()  # every cached signature into this process: none is loaded inside a timed round

    p = Problem.from_arrays(cost=[-1.0, -1.0], col_lower=[0, 0], col_upper=[1, 1], row_lower=[-np.inf],
                            row_upper=[1.5], matrix=np.array([[1.0, 1.0]]), col_names=["a/x", "b/x"],
                            row_names=["cap"], integrality=[is_mip, is_mip])
    solve_problem(p, Settings(time_limit_seconds=60.0))


def _churn(x, prev_x, col_map) -> float:
    if x is None or prev_x is None or col_map is None:
        return math.nan
    surv = np.flatnonzero(col_map >= 0)
    old = prev_x[col_map[surv]]
    return float(np.count_nonzero(np.abs(x[surv] - old) > CHURN_TOL * np.maximum(1.0, np.abs(old))))


def _row(r: int, method: str, res, seconds: float, extra: dict | None = None) -> dict:
    """One result row from a BaselineResult-like object."""
    d = {"round": r, "method": method, "status": res.status.name, "objective": res.objective,
         "seconds": seconds, "max_row_violation": res.max_row_violation,
         "max_row_violation_rel": res.max_row_violation_rel, "max_bound_violation": res.max_bound_violation,
         "integrality_violation": res.integrality_violation, "hit_limit": bool(res.hit_limit)}
    d.update(extra or {})
    return d


ROW_EXTRAS = ("edit_seconds", "pop_seconds", "max_part_seconds")  # BaselineResult.extra fields kept in a row


def _check_methods(methods: list[str]) -> None:
    """Exit with the list of choices when a method is neither copter-warm/copter-cold nor a registry name."""
    from solver.baselines import registry
    from solver.model.errors import UsageError

    bad = []
    for m in methods:
        if m not in ("copter-warm", "copter-cold"):
            try:
                registry.get(m)
            except UsageError:
                bad.append(m)
    if bad:
        raise SystemExit(f"unknown method(s) {bad}; choose from {METHODS} or another name of "
                         f"solver/baselines/registry.py ({', '.join(registry.names())}, pop-<k>)")


class _Copter:
    """copter warm (state carried across rounds, mapped by the round's delta) or cold, as a bench method."""

    def __init__(self, settings, warm: bool):
        self.settings, self.warm, self.state = settings, warm, None

    def run(self, name: str, problem, info, r: int, apply_s: float):
        from solver.api import solve_problem
        from solver.baselines.result import make_result
        from solver.differential import map_state

        with Timer() as t:
            start = (map_state(self.state, info, problem) if self.warm and self.state is not None
                     and info is not None else None)
            res = solve_problem(problem, self.settings, start)
        seconds = t.seconds + (apply_s if self.warm and r > 0 else 0.0)
        if self.warm:
            self.state = res.state
        b = make_result(name, problem, res.status, res.x, seconds, hit_limit=res.status.name == "TIME_LIMIT")
        return b, seconds, {"solve_seconds": t.seconds, "iterations": res.iterations,
                            "warm_started": bool(res.warm_started)}


def _next_problem(scenario, r: int, problem, prev_x: dict):
    """Round r's problem from the scenario's delta, driven by copter-warm's allocation (else by the first
    method that returned a point, else simulated by the scenario); returns (problem, info, apply seconds)."""
    from solver.differential import apply_delta

    driver = prev_x.get("copter-warm")
    if driver is None:
        driver = next((v for v in prev_x.values() if v is not None), None)
    delta = scenario.next_delta(r, None if driver is None else (problem.col_names, driver))
    with Timer() as t:
        problem, info = apply_delta(problem, delta)
    return problem, info, t.seconds


def _run_method(m: str, problem, r: int, copters: dict, memory: dict, ctx, info, apply_s: float):
    """One method on round r's problem: (BaselineResult, seconds, extra row fields). A baseline comes from
    ``solver.baselines.registry`` and carries its state across rounds in ``memory[m]``."""
    from solver.baselines import registry

    if m in copters:
        return copters[m].run(m, problem, info, r, apply_s)
    ctx.round, ctx.info, ctx.memory = r, info, memory[m]
    b = registry.get(m).run(problem, ctx)
    return b, b.seconds, {k: b.extra[k] for k in ROW_EXTRAS if k in b.extra}


def run_rounds(scenario, *, rounds: int, methods: list[str], time_limit: float, highs_solver: str = "choose",
               tol: float = 1e-4, threads: int | None = None, pop_workers: int | None = None,
               pop_scaling: str = "auto", warm_cold_solver: str = "ipm", skip_after: int = 2,
               log=print, out: list | None = None, pop_executor: str = "process",
               ray_address: str | None = None) -> list[dict]:
    """Run ``rounds`` + 1 rounds of ``scenario`` through every method; return one dict per (round, method).

    Methods: ``copter-warm``, ``copter-cold`` and any baseline of ``solver.baselines.registry`` (highs,
    highs-warm, pop-<k>, ...). ``out``: a list to append each finished round's rows to (so an interrupted
    run keeps them). The scenario's next round is driven by copter-warm's allocation (else by the first
    method that returned a point, else simulated by the scenario). ``pop_executor``/``ray_address``: where
    POP's parts run (``solver.partition.executor``; its process pool is kept across rounds).
    """
    from solver.baselines import registry
    from solver.model.settings import Settings
    from solver.partition import executor as part_executor

    _check_methods(methods)
    settings = Settings(tol=tol, time_limit_seconds=time_limit)
    with Timer() as t:
        problem = scenario.base()
    log(f"# round 0 built in {t.seconds:.2f} s: {problem.n_rows} rows x {problem.n_cols} cols, "
        f"{problem.nnz} nonzeros, {'MILP' if problem.is_mip else 'LP'}", flush=True)
    _warm_up(problem.is_mip)
    part_executor.check_executor(pop_executor)
    ctx = registry.BaselineContext(time_limit_seconds=time_limit, highs_solver=highs_solver, threads=threads,
                                   pop_scaling=pop_scaling, pop_workers=pop_workers, pop_executor=pop_executor,
                                   ray_address=ray_address, warm_cold_solver=warm_cold_solver)
    copters = {"copter-warm": _Copter(settings, True), "copter-cold": _Copter(settings, False)}
    memory = {m: {} for m in methods if m not in copters}  # what each baseline carries across rounds
    info, apply_s, prev_x, hits = None, 0.0, {}, dict.fromkeys(methods, 0)
    rows: list[dict] = out if out is not None else []
    try:
        for r in range(rounds + 1):
            if r > 0:
                problem, info, apply_s = _next_problem(scenario, r, problem, prev_x)
            round_rows = []
            for m in methods:
                if hits[m] >= skip_after:
                    round_rows.append({"round": r, "method": m, "status": "SKIPPED", "seconds": math.nan,
                                       "hit_limit": False})
                    continue
                b, seconds, extra = _run_method(m, problem, r, copters, memory, ctx, info, apply_s)
                extra["churn"] = _churn(b.x, prev_x.get(m), None if info is None else info.col_map) if r else math.nan
                prev_x[m] = b.x
                hits[m] += int(b.hit_limit)
                round_rows.append(_row(r, m, b, seconds, extra))
                log(f"#   round {r} {m}: {b.status.name} in {seconds:.3f} s", flush=True)
            _add_gaps(round_rows, problem.sense)
            rows.extend(round_rows)
            log(format_round(round_rows), flush=True)
    finally:
        part_executor.shutdown()
    return rows


def _add_gaps(rows: list[dict], sense: int) -> None:
    """Objective gap of each row to the round's HiGHS optimum (highs, else highs-warm, when OPTIMAL), by
    `copter compare`'s rule (:func:`solver.integer.gap.objective_diff_rel`)."""
    from solver.integer.gap import objective_diff_rel

    ref = next((x["objective"] for name in ("highs", "highs-warm") for x in rows
                if x["method"] == name and x.get("status") == "OPTIMAL"), math.nan)
    for x in rows:
        obj = x.get("objective", math.nan)
        x["reference_objective"] = ref
        ok = x.get("status") in ("OPTIMAL", "FEASIBLE")  # as in `copter compare`: no gap for a failed row
        x["gap_rel"] = (objective_diff_rel(sense, obj, ref)
                        if ok and np.isfinite(ref) and obj is not None else math.nan)


# ----------------------------------------------------------------------------- printing
def _f(v, spec: str) -> str:
    if v is None or (isinstance(v, float) and not np.isfinite(v)):
        return "-"
    return format(v, spec)


def format_round(rows: list[dict]) -> str:
    """One round as aligned text lines."""
    lines = []
    for x in rows:
        lim = " LIMIT" if x.get("hit_limit") and x.get("status") != "SKIPPED" else ""
        lines.append(f"round {x['round']:>3}  {x['method']:<12} {x.get('status', '-'):<17} "
                     f"t={_f(x.get('seconds'), '9.3f')} s  obj={_f(x.get('objective'), '.8g'):>14}  "
                     f"gap={_f(x.get('gap_rel'), '+.2e'):>10}  "
                     f"viol={_f(x.get('max_row_violation'), '.1e'):>8} "
                     f"(rel {_f(x.get('max_row_violation_rel'), '.1e')})  churn={_f(x.get('churn'), '.0f')}{lim}")
    return "\n".join(lines)


def _column(rows: list[dict], key: str) -> np.ndarray:
    """(len(rows),) float values of ``key`` (NaN where absent, None or not a number)."""
    out = np.full(len(rows), math.nan)
    for i, r in enumerate(rows):
        v = r.get(key)
        if isinstance(v, int | float) and not isinstance(v, bool) or isinstance(v, np.floating | np.integer):
            out[i] = float(v)
    return out


def _nan_stat(fn, v: np.ndarray) -> float:
    """``fn`` (np.nanmedian, np.nanmax) of ``v``, NaN (no warning) when every value is NaN."""
    return float(fn(v)) if (~np.isnan(v)).any() else math.nan


#: statuses whose seconds say nothing about a method's speed (:func:`summarize`)
_FAILED = frozenset({"SKIPPED", "PRIMAL_INFEASIBLE", "DUAL_INFEASIBLE", "INFEASIBLE_OR_UNBOUNDED", "NUMERICAL_ERROR",
                     "NO_INTEGER_SOLUTION", "ERROR"})


def summarize(rows: list[dict]) -> list[dict]:
    """Per-method medians over rounds >= 1 (steady state), one dict per method in first-seen order, with time
    ratios median(seconds) / median(seconds of highs) and / median(seconds of highs-warm). Plain numpy: the bench
    scripts run from a runtime-only install (pandas is a test extra; it crashed here after every round had run)."""
    steady = [r for r in rows if r["round"] >= 1] or rows
    out = []
    for m in dict.fromkeys(r["method"] for r in steady):
        rs = [r for r in steady if r["method"] == m]
        # a round the method failed (PRIMAL_INFEASIBLE, NUMERICAL_ERROR, ...) has no time to compare: POP-16 infeasible
        # in every round of an LB run still showed x_highs 0.56 (helper-238, session 59); a round at its time limit
        # keeps its seconds (a lower bound of the method's time), counted in limit_hits
        timed = [r for r in rs if r.get("status") not in _FAILED]
        row = {"method": m, "median_s": _nan_stat(np.nanmedian, _column(timed, "seconds")),
               "max_s": _nan_stat(np.nanmax, _column(timed, "seconds")),
               "median_gap_rel": _nan_stat(np.nanmedian, _column(rs, "gap_rel")),
               "max_row_viol": _nan_stat(np.nanmax, _column(rs, "max_row_violation")),
               "max_row_viol_rel": _nan_stat(np.nanmax, _column(rs, "max_row_violation_rel")),
               "median_churn": _nan_stat(np.nanmedian, _column(rs, "churn")),
               "limit_hits": sum(bool(r.get("hit_limit")) for r in rs),
               "skipped": sum(r.get("status") == "SKIPPED" for r in rs),
               "failed": sum(r.get("status") in _FAILED and r.get("status") != "SKIPPED" for r in rs),
               "rounds": len(rs)}
        if any("pop_seconds" in r for r in steady):
            row["median_pop_s"] = _nan_stat(np.nanmedian, _column(rs, "pop_seconds"))
        out.append(row)
    for ref in ("highs", "highs-warm"):
        base = next((r["median_s"] for r in out if r["method"] == ref), math.nan)
        if np.isfinite(base) and base > 0:
            for r in out:
                r[f"x_{ref}"] = r["median_s"] / base
    return out


def _cell(v) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return str(v)


def print_summary(rows: list[dict], title: str) -> None:
    """Print the median table (x_highs < 1 means faster than HiGHS cold)."""
    table = summarize(rows)
    print(f"\n## {title}: medians over rounds 1..{max(x['round'] for x in rows)} "
          "(x_highs / x_highs-warm = median seconds / that baseline's median seconds; < 1 = faster)")
    keys = list(dict.fromkeys(k for r in table for k in r))
    cells = [[_cell(r.get(k, math.nan)) for k in keys] for r in table]
    widths = [max(len(k), *(len(c[i]) for c in cells)) for i, k in enumerate(keys)]
    print("  ".join(k.ljust(w) if i == 0 else k.rjust(w) for i, (k, w) in enumerate(zip(keys, widths, strict=True))))
    for c in cells:
        print("  ".join(v.ljust(w) if i == 0 else v.rjust(w) for i, (v, w) in enumerate(zip(c, widths, strict=True))))
    sys.stdout.flush()


# ----------------------------------------------------------------------------- files
def write_results(name: str, rows: list[dict], info: dict, *, plot: bool = False) -> Path | None:
    """Write ``bench/results/<name>-<timestamp>.parquet`` and ``.csv`` (header as Parquet metadata and as
    ``#`` comment lines of the CSV); optionally a PNG of per-round time by method. Returns the Parquet path.
    pyarrow only (a runtime dependency), as :func:`summarize`."""
    import pyarrow as pa
    import pyarrow.csv as pacsv
    import pyarrow.parquet as pq

    RESULTS.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    base = RESULTS / f"{name}-{stamp}"
    keys = list(dict.fromkeys(k for r in rows for k in r))
    table = pa.Table.from_pylist([{k: r.get(k) for k in keys} for r in rows])
    meta = {f"bench.{k}": str(v) for k, v in info.items()}
    pq.write_table(table.replace_schema_metadata({**(table.schema.metadata or {}), **meta}),
                   base.with_suffix(".parquet"))
    flat = table.select([c for c in table.column_names if not pa.types.is_nested(table.schema.field(c).type)])
    with open(base.with_suffix(".csv"), "wb") as f:
        for k, v in info.items():
            f.write(f"# {k}: {v}\n".encode())
        pacsv.write_csv(flat, f)
    print(f"# results: {base.with_suffix('.parquet')} and .csv")
    if plot:
        try:
            import matplotlib

            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("# --plot: matplotlib is not installed; no PNG written")
        else:
            fig, ax = plt.subplots(figsize=(8, 4.5))
            for m in dict.fromkeys(r["method"] for r in rows):
                part = [r for r in rows if r["method"] == m]
                ax.plot([r["round"] for r in part], _column(part, "seconds"), marker="o", label=m)
            ax.set_yscale("log")
            ax.set_xlabel("round")
            ax.set_ylabel("seconds")
            ax.set_title(name)
            ax.legend()
            fig.tight_layout()
            fig.savefig(base.with_suffix(".png"), dpi=120)
            print(f"# plot: {base.with_suffix('.png')}")
    return base.with_suffix(".parquet")


def one_line_errors(body) -> None:
    """Run ``body()`` (a domain script's scenario and :func:`main`): copter's typed errors (a ring of 2 nodes, 0 GPUs, a
    negative time limit) as one ``error:`` line and copter's exit code, not a traceback (helper-238, session 59)."""
    from copter_cli.exit_codes import for_error
    from solver.model.errors import CopterError

    try:
        body()
    except CopterError as err:
        print(f"error: {err}", file=sys.stderr)
        raise SystemExit(for_error(err)) from None


_SIGNALLED: list[int] = []  #: the signal that interrupted the run (SIGTERM), for its exit code


def _raise_interrupt(signum, frame) -> None:
    _SIGNALLED.append(signum)
    raise KeyboardInterrupt


def main(name: str, scenario, args: argparse.Namespace, title: str) -> list[dict]:
    """Header, run, summary, files: what every domain script's ``__main__`` does."""
    from solver.model.errors import PartWorkerError

    info = header()
    info.update({"scenario": title, "rounds": args.rounds, "time_limit": args.time_limit,
                 "highs_solver": args.highs_solver, "tol": args.tol, "pop_scaling": args.pop_scaling,
                 "pop_executor": args.executor})
    print(f"# scenario: {title}; rounds {args.rounds}; per-round time limit {args.time_limit} s; "
          f"HiGHS solver {args.highs_solver} (highs-warm: {args.warm_cold_solver} at round 0, then simplex "
          f"hot starts); copter tol {args.tol}")
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    if any(m.startswith("pop-") for m in methods):
        check_executor_arg(args.executor)
    rows: list[dict] = []
    signal.signal(signal.SIGTERM, _raise_interrupt)  # `timeout` / kill: still summarise finished rounds
    interrupted = False
    try:
        run_rounds(scenario, rounds=args.rounds, methods=methods, time_limit=args.time_limit,
                   highs_solver=args.highs_solver, tol=args.tol, threads=args.threads,
                   pop_workers=args.pop_workers, pop_scaling=args.pop_scaling,
                   warm_cold_solver=args.warm_cold_solver, skip_after=args.skip_after, out=rows,
                   pop_executor=args.executor, ray_address=args.ray_address)
    except (KeyboardInterrupt, BrokenExecutor, PartWorkerError):
        # a group-wide SIGTERM (`timeout`, `kill -- -PGID`) also kills POP's worker processes: the main process
        # may then see a broken pool (or, after the executor's retry, PartWorkerError) before its own handler
        # runs; either way, summarise the finished rounds
        done = max((x["round"] for x in rows), default=-1)
        print(f"# interrupted: summarising the {done + 1} finished round(s)")
        rows = [x for x in rows if x["round"] <= done and "gap_rel" in x]
        interrupted = True
        # the files say so, and the exit code (130, 143 for SIGTERM) too: an interrupted run's files looked whole
        # (its header "rounds: 6" beside two rounds) and it exited 0 (helper-238, session 59)
        info["interrupted"] = f"after {done + 1} of {args.rounds + 1} round(s)"
    if rows:
        print_summary(rows, title)
        if not args.no_write:
            write_results(name, rows, info, plot=args.plot)
    if interrupted:
        raise SystemExit(128 + (_SIGNALLED[-1] if _SIGNALLED else signal.SIGINT))
    return rows
