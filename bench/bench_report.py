"""Report benchmark (issue #19): ``copter report`` on a 100-round state, and the round log's share of the
rounds' save time.

1. Builds a state of ``--rounds`` real rounds through ``solver.rounds`` (``init`` then ``step``; a packing
   LP with ``--cols`` columns, each delta moving a few costs and capacities; every ``--fail-every``-th round
   an infeasible delta, stored as a failed round; ``copter compare --baseline highs`` every
   ``--compare-every`` rounds), timing every round-log append (``solver.rounds.log.log_round`` /
   ``log_failure``) against the round's own save seconds.
2. Times ``copter report -o ... --png DIR`` as a user runs it (a fresh process: imports included), best and
   median of ``--repeat``, and the library call's stages in-process (history read, charts built, SVG/PNG
   rendered, page written).

The machine is shared: the load average and the CPU seconds are printed next to the wall seconds.

Usage: ``.venv/bin/python bench/bench_report.py [--rounds 100] [--cols 400] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from copter_cli.entry import console_environment  # noqa: E402

console_environment()  # the console script's library settings (copter_cli.entry), before numpy loads

import numpy as np  # noqa: E402

from solver import rounds  # noqa: E402
from solver.model.delta import Delta  # noqa: E402
from solver.model.problem import Problem  # noqa: E402
from solver.model.settings import Settings  # noqa: E402


def packing(n: int, seed: int = 0) -> Problem:
    """max c x s.t. A x <= b, 0 <= x <= 1: n columns, n/4 capacity rows, 4 entries per column."""
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    m = max(n // 4, 4)
    rows = rng.integers(0, m, size=(n, 4))
    a = sp.csc_matrix((rng.uniform(0.5, 1.5, 4 * n), (rows.ravel(), np.repeat(np.arange(n), 4))), shape=(m, n))
    return Problem.from_arrays(cost=rng.uniform(1, 2, n), col_lower=np.zeros(n), col_upper=np.ones(n),
                               row_lower=np.full(m, -np.inf), row_upper=np.full(m, 0.4 * 4 * n / m), matrix=a,
                               sense=-1, col_names=[f"job{j}/x" for j in range(n)],
                               row_names=[f"cap{i}" for i in range(m)])


def delta(p: Problem, r: int, rng) -> Delta:
    """A few new costs and capacities (a normal round)."""
    cols = rng.choice(p.n_cols, size=max(1, p.n_cols // 50), replace=False)
    caps = rng.choice(p.n_rows, size=max(1, p.n_rows // 20), replace=False)
    return Delta.concat([Delta.vars(p.col_names[cols], cost=rng.uniform(1, 2, len(cols))),
                         Delta.cons(p.row_names[caps], upper=rng.uniform(1.0, 2.0, len(caps)) * 1.6)],
                        base_round=r)


def infeasible(p: Problem, r: int) -> Delta:
    """Forces job0/x >= 5 against its bound 1: the round fails (PRIMAL_INFEASIBLE) and is not stored."""
    return Delta.concat([Delta.cons(["force"], lower=[5.0], upper=[np.inf]),
                         Delta.coefs(var=[p.col_names[0]], con=["force"], value=[1.0])], base_round=r)


def build_state(root: Path, args) -> dict:
    """The ``--rounds``-round state; returns log append seconds and save seconds per round."""
    from solver.rounds import log as round_log

    log_s: list[float] = []
    for name in ("log_round", "log_failure"):
        real = getattr(round_log, name)

        def timed(*a, _real=real, **k):
            t = time.perf_counter()
            try:
                return _real(*a, **k)
            finally:
                log_s.append(time.perf_counter() - t)

        setattr(round_log, name, timed)
    rng = np.random.default_rng(1)
    p = packing(args.cols)
    settings = Settings(tol=1e-4)
    t = time.perf_counter()
    reps = [rounds.init(p, root, settings)]
    n_fail = n_cmp = 0
    cur = 0  # the names never change (the failed rounds' extra row is not stored): deltas are built on p
    for i in range(1, args.rounds):
        if args.fail_every and i % args.fail_every == 0:
            reps.append(rounds.step(infeasible(p, cur), root, Settings(tol=1e-6, iteration_limit=20000)))
            n_fail += 1
        else:
            reps.append(rounds.step(delta(p, cur, rng), root))
            cur += 1
        if args.compare_every and i % args.compare_every == 0:
            rounds.compare(root, ["highs"])
            n_cmp += 1
    build_s = time.perf_counter() - t
    save = [r["seconds"]["save"] for r in reps]
    return {"build_s": build_s, "log_s": log_s, "save_s": save, "failed": n_fail, "compares": n_cmp,
            "n_cols": p.n_cols, "n_rows": p.n_rows, "nnz": p.nnz}


def time_cli(root: Path, out: Path, png: Path, repeat: int) -> list[tuple[float, float]]:
    """(wall, CPU) seconds of ``copter report -o out --png png`` in fresh processes."""
    env = dict(os.environ, PYTHONPATH=str(REPO))
    res = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.perf_counter()
        proc = subprocess.run([sys.executable, "-m", "copter_cli", "report", "--state", str(root), "-o", str(out),
                               "--png", str(png)], env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0:
            raise SystemExit(f"copter report failed ({proc.returncode}): {proc.stderr}")
        res.append((wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)))
    return res


def stages(root: Path, out: Path) -> dict:
    """Seconds of the library call's stages in this process (matplotlib already imported)."""
    from solver.rounds.report import charts, page, require_matplotlib

    t = time.perf_counter()
    require_matplotlib()
    s = {"import matplotlib": time.perf_counter() - t}
    t = time.perf_counter()
    rows = rounds.history(root)
    s["history (log read)"] = time.perf_counter() - t
    t = time.perf_counter()
    figs = {n: b(rows) for n, b in charts.CHARTS.items()}
    s["charts built"] = time.perf_counter() - t
    t = time.perf_counter()
    svgs = {n: charts.render(f, "svg").decode() for n, f in figs.items()}
    s["SVG rendered"] = time.perf_counter() - t
    t = time.perf_counter()
    for f in figs.values():
        charts.render(f, "png")
    s["PNG rendered"] = time.perf_counter() - t
    t = time.perf_counter()
    out.write_text(page.page(rows, svgs, str(root), "now"))
    s["page written"] = time.perf_counter() - t
    s["(rows)"] = len(rows)
    return s


def refuse_kept_state(path: str | None) -> None:
    """Exit 2 (one line) before anything is built when ``--keep-state`` names a file, a link or a folder that holds
    something (copying the built state into it merged its rounds into another state's generations, helper-238), is
    empty, or lies under a file (it failed after the whole build, helper-242)."""
    if path is None:
        return
    p = Path(path)
    why = None
    if path == "":
        why = "is empty; name a new folder"
    elif p.is_symlink() or (p.exists() and not (p.is_dir() and not any(p.iterdir()))):
        why = "exists and is not an empty folder; name a new folder"
    else:
        up = p.parent  # the nearest existing folder above it must be a folder (a path under a file failed at the end)
        while not up.exists() and up != up.parent:
            up = up.parent
        if not up.is_dir():
            why = f"cannot be made: {up} is not a folder"
    if why is not None:
        print(f"error: --keep-state {path}: {why} (nothing was built)", file=sys.stderr)
        raise SystemExit(2)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=100, help="rounds of the state (default 100)")
    ap.add_argument("--cols", type=int, default=400, help="columns of the packing LP (default 400)")
    ap.add_argument("--fail-every", type=int, default=23, help="every N-th round fails (default 23)")
    ap.add_argument("--compare-every", type=int, default=25, help="a HiGHS compare every N rounds (default 25)")
    ap.add_argument("--repeat", type=int, default=3, help="copter report processes timed (default 3)")
    ap.add_argument("--keep-state", help="copy the built state to this new (or empty) folder, to look at the report")
    args = ap.parse_args()
    refuse_kept_state(args.keep_state)
    print("command: " + " ".join([Path(sys.executable).name, *sys.argv]))
    print("versions: python " + platform.python_version() + ", " + ", ".join(
        f"{k} {version(k)}" for k in ("copter", "matplotlib", "pyarrow", "numpy")))
    print(f"machine: {os.cpu_count()} cpus; load average {os.getloadavg()[0]:.1f} (shared machine)")
    tmp = Path(tempfile.mkdtemp(prefix="bench-report-", dir=os.environ.get("BENCH_TMP")))
    try:
        root = tmp / "st"
        b = build_state(root, args)
        print(f"\nstate: {args.rounds} rounds ({b['failed']} failed, {b['compares']} compares) of a "
              f"{b['n_cols']}-column LP built in {b['build_s']:.1f} s")
        log_ms = np.array(b["log_s"]) * 1e3
        save = np.array(b["save_s"])
        print(f"round log append: median {np.median(log_ms):.2f} ms, p90 {np.percentile(log_ms, 90):.2f} ms, "
              f"max {log_ms.max():.2f} ms over {len(log_ms)} appends (one compaction per 64)")
        print(f"round's save (generation: problem, state, outputs, commit): median {np.median(save) * 1e3:.1f} ms; "
              f"log share of save + log: median {100 * np.median(log_ms / (save * 1e3 + log_ms)):.1f} %, "
              f"total {100 * log_ms.sum() / (save.sum() * 1e3 + log_ms.sum()):.1f} %")
        out, png = tmp / "report.html", tmp / "png"
        cli = time_cli(root, out, png, args.repeat)
        walls = [w for w, _ in cli]
        print(f"\ncopter report -o report.html --png DIR on {args.rounds} rounds (fresh process, {args.repeat} runs): "
              f"best {min(walls):.2f} s, median {statistics.median(walls):.2f} s wall; CPU {min(c for _, c in cli):.2f} s; "
              f"page {out.stat().st_size / 1e3:.0f} kB, PNGs {sum(f.stat().st_size for f in png.iterdir()) / 1e3:.0f} kB")
        print("in-process stages (seconds):")
        for k, v in stages(root, tmp / "again.html").items():
            print(f"  {k:22s} {v:.3f}" if isinstance(v, float) else f"  {k:22s} {v}")
        print(f"load average now {os.getloadavg()[0]:.1f}")
        if args.keep_state:
            shutil.copytree(root, args.keep_state, dirs_exist_ok=True)  # new or empty: refuse_kept_state
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
