"""Checkpoint benchmark: apply+save cost vs delta size, load vs numpy.load, warm vs cold iterations.

A generated packing LP (maximise c x, A x <= b, 0 <= x <= 1; ``--nnz`` nonzeros, 10 per column):

1. ``copter init`` (solver.rounds.init): round 0 solved cold.
2. One 1%-of-columns delta through ``solver.rounds.step`` (warm solve), then a cold solve of the same
   round-1 problem: iterations and seconds of both.
3. Deltas changing 0.1%, 1% and 10% of the columns (a new cost and one changed coefficient per column),
   applied and saved without solving: apply seconds (the linear pass over the matrix reported apart),
   save seconds of the problem+state arrays (and the comparison pass against the base, apart), bytes
   written, and the round outputs (solution/duals/changes Parquet, O(n) by nature) apart.
   The same absolute delta (1000 columns) on a problem 10x smaller shows cost tracks the delta, not n.
4. Loading the checkpoint (memory-mapped Arrow IPC) vs ``numpy.load`` of the same arrays (``.npy``,
   names as a pickled object array), both from the page cache, lazy and with every page touched.

Usage: ``.venv/bin/python bench/bench_checkpoint.py [--nnz 10000000] [--time-limit 150]``
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from copter_cli.entry import console_environment  # noqa: E402

console_environment()  # the console script's library settings (copter_cli.entry), before numpy loads

import numpy as np  # noqa: E402

from formats import reports  # noqa: E402
from formats.checkpoint import PROBLEM_FIELDS, StateStore  # noqa: E402
from solver import rounds  # noqa: E402
from solver.api import solve_problem  # noqa: E402
from solver.differential import apply_delta, map_state  # noqa: E402
from solver.model.delta import Delta  # noqa: E402
from solver.model.problem import Problem  # noqa: E402
from solver.model.settings import Settings  # noqa: E402
from solver.rounds.log import log_round  # noqa: E402

PER_COL = 10


def packing_lp(nnz: int, seed: int = 0) -> Problem:
    """max c x s.t. A x <= b, 0 <= x <= 1 with nnz/10 columns, 10 distinct rows per column, m = n/20."""
    rng = np.random.default_rng(seed)
    n = nnz // PER_COL
    m = max(n // 20, PER_COL)
    start = rng.integers(0, m, size=n)
    stride = m // PER_COL
    rows = np.sort((start[:, None] + stride * np.arange(PER_COL)[None, :]) % m, axis=1)
    data = rng.uniform(0.5, 1.5, size=(n, PER_COL))
    indptr = np.arange(0, n * PER_COL + 1, PER_COL, dtype=np.int64)
    row_sum = np.bincount(rows.ravel(), weights=data.ravel(), minlength=m)
    return Problem(col_names=np.array([f"x{j}" for j in range(n)], dtype=object),
                   row_names=np.array([f"r{i}" for i in range(m)], dtype=object),
                   cost=rng.uniform(1.0, 2.0, n), col_lower=np.zeros(n), col_upper=np.ones(n),
                   row_lower=np.full(m, -np.inf), row_upper=0.3 * row_sum, integrality=np.zeros(n, dtype=bool),
                   a_indptr=indptr, a_indices=rows.ravel().astype(np.int32), a_data=data.ravel(), sense=-1,
                   name=f"packing-{nnz}")


def column_delta(p: Problem, k: int, base_round: int, rng) -> Delta:
    """k random columns: cost * (1 +- 5%) and their first coefficient * (1 +- 5%)."""
    cols = np.sort(rng.choice(p.n_cols, size=k, replace=False))
    first = p.a_indptr[cols]
    return Delta.concat([
        Delta.vars(p.col_names[cols], cost=p.cost[cols] * (1 + 0.05 * rng.uniform(-1, 1, k))),
        Delta.coefs(var=p.col_names[cols], con=p.row_names[p.a_indices[first]],
                    value=p.a_data[first] * (1 + 0.05 * rng.uniform(-1, 1, k))),
    ], base_round=base_round)


def apply_and_save(store: StateStore, d: Delta, g=None, t_load: float = 0.0) -> dict:
    """One round without the solve: load (unless ``g`` is given), apply, map the state, save
    problem+state, outputs, commit."""
    if g is None:
        t0 = time.perf_counter()
        g = store.load()
        t_load = time.perf_counter() - t0
    t = time.perf_counter()
    p1, info = apply_delta(g.problem, d)
    warm = map_state(g.state, info, p1)
    t_apply = time.perf_counter() - t
    r = g.round + 1
    t = time.perf_counter()
    w = store.begin(r)
    stored = w.save_problem(p1, g, set(info.changed_fields))
    w.save_state(warm)
    t_save = time.perf_counter() - t
    compare = sum(s.seconds for f, s in stored.items() if s.patch and s.written_bytes)
    t = time.perf_counter()
    rc = np.zeros(p1.n_cols)
    reports.write_parquet(w.path("solution.parquet"), reports.solution_table(p1.col_names, warm.x, rc))
    reports.write_parquet(w.path("duals.parquet"), reports.duals_table(p1.row_names, np.zeros(p1.n_rows), warm.y))
    reports.write_parquet(w.path("changes.parquet"), reports.changes_table(
        g.problem.col_names, g.state.x, p1.col_names, warm.x, g.problem.row_names, p1.row_names,
        col_map=info.col_map, row_map=info.row_map))
    t_out = time.perf_counter() - t
    t = time.perf_counter()
    w.commit({"round": r})
    store.set_current(r)
    t_commit = time.perf_counter() - t
    t = time.perf_counter()  # the round log's row, appended after CURRENT as solver.rounds.commit does
    log_round(store, {"round": r, "status": "OPTIMAL", "seconds": {"save": t_save + t_out + t_commit}},
              (store.manifest(r) or {}).get("id"), g.manifest.get("id"), info)
    t_log = time.perf_counter() - t
    prob_bytes = sum(s.written_bytes for s in stored.values())
    return {"log": t_log, "load": t_load, "apply": t_apply, "apply_linear": info.seconds_linear, "save": t_save,
            "save_compare": compare, "problem_mb": prob_bytes / 1e6, "state_mb": (w.written_bytes - prob_bytes) / 1e6,
            "outputs": t_out, "commit": t_commit}


def load_vs_numpy(store: StateStore, folder: Path) -> dict:
    """Checkpoint load vs numpy.load of the same arrays (both from the page cache); read from disk as a
    fresh process would (no in-process reuse)."""
    store = StateStore(store.root, reuse=False)
    g = store.load()
    npy = folder / "npy"
    npy.mkdir()
    for f in PROBLEM_FIELDS:
        np.save(npy / f"{f}.npy", getattr(g.problem, f), allow_pickle=True)
    np.save(npy / "x.npy", g.state.x)
    np.save(npy / "y.npy", g.state.y)

    def ours(touch):
        g2 = store.load()
        if touch:
            for f in PROBLEM_FIELDS:
                a = getattr(g2.problem, f)
                if a.dtype != object:
                    a.view(np.uint8).sum() if a.dtype == np.bool_ else a.sum()
            g2.state.x.sum()
            g2.state.y.sum()

    def theirs(touch):
        arrs = [np.load(npy / f"{f}.npy", allow_pickle=True) for f in PROBLEM_FIELDS]
        arrs += [np.load(npy / "x.npy"), np.load(npy / "y.npy")]
        if touch:
            for a in arrs:
                if a.dtype != object:
                    a.sum()

    def best(fn, touch, reps=3):
        out = []
        for _ in range(reps):
            t = time.perf_counter()
            fn(touch)
            out.append(time.perf_counter() - t)
        return min(out)

    res = {}
    for touch in (False, True):
        res[touch] = (best(ours, touch), best(theirs, touch))
    shutil.rmtree(npy)
    return res


def _args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nnz", type=int, default=10_000_000, help="(default: %(default)s)")
    ap.add_argument("--time-limit", type=float, default=150.0,
                    help="per solve, seconds (default: %(default)s)")
    ap.add_argument("--tol", type=float, default=1e-4, help="(default: %(default)s)")
    ap.add_argument("--solve-nnz", type=int, default=None,
                    help="size of the problem for the warm/cold comparison (default: --nnz); 0 skips it")
    return ap.parse_args()


def _print_header(args: argparse.Namespace) -> None:
    print("command: " + " ".join([Path(sys.executable).name, *sys.argv]))
    print("versions: python " + platform.python_version() + ", " + ", ".join(
        f"{k} {version(k)}" for k in ("copter", "numpy", "pyarrow", "numba", "highspy", "filelock")))
    print(f"machine: {os.cpu_count()} cpus, {platform.machine()}; settings tol={args.tol:g} "
          f"time_limit={args.time_limit:g}s")


def warm_vs_cold(pw: Problem, ws: Path, settings: Settings, rng) -> None:
    """``solver.rounds.init`` then one 1%-of-columns ``solver.rounds.step`` (warm) against a cold solve of
    the same problem; prints iterations and seconds of both."""
    print(f"\nwarm/cold problem: {pw.n_cols} columns, {pw.n_rows} rows, {pw.nnz} nonzeros")
    rep0 = rounds.init(pw, ws, settings)
    print(f"init (round 0, cold): {rep0['status']} {rep0['iterations']} iterations, "
          f"seconds {rep0['seconds']}")
    d = column_delta(pw, pw.n_cols // 100, 0, rng)
    rep1 = rounds.step(d, ws)
    p1 = StateStore(ws).load(with_state=False).problem
    t = time.perf_counter()
    cold = solve_problem(p1, settings, None)
    t_cold = time.perf_counter() - t
    print("\n1%-delta round: warm (copter step) vs cold solve of the same problem")
    print(f"{'':8s} {'status':>10s} {'iterations':>11s} {'solve s':>9s} {'objective':>16s}")
    print(f"{'warm':8s} {rep1['status']:>10s} {rep1['iterations']:>11d} {rep1['seconds']['solve']:>9.2f} "
          f"{rep1['objective']:>16.8g}")
    print(f"{'cold':8s} {cold.status.name:>10s} {cold.iterations:>11d} {t_cold:>9.2f} "
          f"{cold.objective:>16.8g}")
    print(f"cold/warm iterations ratio: {cold.iterations / max(rep1['iterations'], 1):.1f}x; "
          f"step seconds {rep1['seconds']}")


def _save_round0(store: StateStore, p: Problem):
    """Round 0 of ``p`` with a zero state and no outputs (caller holds the lock); returns the writer."""
    from solver.model.state import SolverState

    w = store.begin(0)
    w.save_problem(p)
    w.save_state(SolverState(x=np.zeros(p.n_cols), y=np.zeros(p.n_rows)))
    w.commit({"round": 0})
    store.set_current(0)
    log_round(store, {"round": 0, "status": "OPTIMAL"}, (store.manifest(0) or {}).get("id"), None)  # as init
    return w


def first_save(store: StateStore, p: Problem) -> None:
    """Time the first save of the full problem and the name -> position dicts."""
    with store.lock(create=True):
        t = time.perf_counter()
        w = _save_round0(store, p)
        print(f"\nfirst save of the full problem (round 0 arrays, no outputs): {time.perf_counter() - t:.2f} s, "
              f"{w.written_bytes / 1e6:.0f} MB")
        t = time.perf_counter()
        p.col_index()
        p.row_index()
        print(f"name -> position dicts (built once per process, kept across in-process rounds): "
              f"{time.perf_counter() - t:.2f} s")


def _table_row(nnz: int, label: str, k: int, r: dict) -> str:
    return (f"{nnz:>12d} {label:>7s} {k:>8d} {r['apply']:>8.2f} {r['apply_linear']:>9.2f} "
            f"{r['save']:>7.2f} {r['save_compare']:>9.2f} {r['problem_mb']:>8.2f} {r['state_mb']:>8.1f} "
            f"{r['outputs']:>9.2f} {r['commit']:>8.3f} {r['load']:>7.2f} {r['log'] * 1e3:>7.2f} "
            f"{100 * r['log'] / (r['save'] + r['outputs'] + r['commit'] + r['log']):>6.2f}")


def fixed_delta_rows(store: StateStore, p: Problem, tmp: Path, nnz: int, rng) -> None:
    """A 1000-column delta against round 0 read from disk, on a 10x smaller problem and on ``p``."""
    small = StateStore(tmp / "small")
    ps = packing_lp(max(nnz // 10, 10_000), seed=1)
    ps.col_index()
    ps.row_index()
    with small.lock(create=True):
        _save_round0(small, ps)
        for s_store, pp in ((small, ps), (store, p)):
            t = time.perf_counter()
            g = StateStore(s_store.root, reuse=False).load()  # round 0 from disk
            t_load = time.perf_counter() - t
            g.problem.col_index()  # name dicts: once per process (see above), not per round
            g.problem.row_index()
            d = column_delta(g.problem, 1000, g.round, rng)
            r = apply_and_save(s_store, d, g, t_load)
            del g
            print(_table_row(pp.nnz, "fixed", 1000, r))


def apply_save_table(store: StateStore, p: Problem, tmp: Path, nnz: int, rng) -> None:
    """apply + save without solving for 0.1%, 1% and 10% column deltas in sequence, then fixed-size rows."""
    print("\napply + save without solving (same state, rounds in sequence):")
    hdr = (f"{'problem nnz':>12s} {'delta':>7s} {'cols':>8s} {'apply s':>8s} {'(linear)':>9s} {'save s':>7s} "
           f"{'(compare)':>9s} {'MB prob':>8s} {'MB state':>8s} {'outputs s':>9s} {'commit s':>8s} {'load s':>7s} "
           f"{'log ms':>7s} {'log %':>6s}")
    apply_delta(p, column_delta(p, 10, 0, rng))  # warm-up: numba kernels, lazy imports (not timed)
    reports.changes_table(p.col_names[:10], None, p.col_names[:10], None, None, p.row_names[:10])
    print(hdr)
    with store.lock():
        for frac in (0.001, 0.01, 0.1):
            g = store.load(with_state=False)
            k = max(1, int(frac * g.problem.n_cols))
            d = column_delta(g.problem, k, g.round, rng)
            del g
            r = apply_and_save(store, d)
            print(_table_row(p.nnz, f"{frac * 100:.1f}%", k, r))
        store.set_current(0)  # the fixed-size delta against round 0's base on both sizes (rollback)
        fixed_delta_rows(store, p, tmp, nnz, rng)
    print("(load: in-process reuse of the generation just committed (fixed rows: round 0 read from disk, with a\n"
          " 1000-column delta against it on both sizes);\n"
          " apply: apply_delta + map_state;\n"
          " linear: apply_delta's one pass over the matrix (a_data copy for changed coefficients);\n"
          " save: problem + state arrays; compare: the pass of changed arrays against their base;\n"
          " MB prob / MB state: bytes written (state = x, y: O(n + m), they change every round);\n"
          " outputs: solution/duals/changes Parquet, O(n) by nature;\n"
          " log ms: appending the round's row to the round log (formats/round_log.py: one segment file + rename,\n"
          " a compaction every 64 rows); log %: its share of the round's save = save + outputs + commit + log)")


def main() -> None:
    args = _args()
    _print_header(args)
    tmp = Path(tempfile.mkdtemp(prefix="bench-ckpt-", dir=os.environ.get("BENCH_TMP")))
    rng = np.random.default_rng(7)
    settings = Settings(tol=args.tol, time_limit_seconds=args.time_limit)
    try:
        t = time.perf_counter()
        p = packing_lp(args.nnz)
        print(f"\nproblem: {p.n_cols} columns, {p.n_rows} rows, {p.nnz} nonzeros "
              f"(generated in {time.perf_counter() - t:.1f} s)")
        solve_nnz = args.nnz if args.solve_nnz is None else args.solve_nnz
        if solve_nnz:
            pw = p if solve_nnz == args.nnz else packing_lp(solve_nnz, seed=2)
            warm_vs_cold(pw, tmp / "warmcold", settings, rng)
            del pw
            shutil.rmtree(tmp / "warmcold")
        store = StateStore(tmp / "state")
        first_save(store, p)
        apply_save_table(store, p, tmp, args.nnz, rng)
        res = load_vs_numpy(store, tmp)
        print("\nload: checkpoint (mmap Arrow IPC) vs numpy.load of the same arrays (best of 3, page cache warm)")
        print(f"{'':24s} {'copter s':>9s} {'numpy s':>9s} {'ratio':>6s}")
        for touch, (a, b) in res.items():
            label = "load + touch all pages" if touch else "load (lazy)"
            print(f"{label:24s} {a:>9.3f} {b:>9.3f} {a / b:>6.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
