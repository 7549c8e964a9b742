"""Read speed of copter's problem readers against the libraries underneath them.

Generates a sparse LP with ~NNZ nonzeros (vectorised), writes it as a Parquet problem file and as MPS,
then times (best of --repeat runs, seconds):

* ``read_problem(x.parquet)`` (copter: read + normalise + validate + build CSC) vs
  ``pyarrow.parquet.read_table(x.parquet)`` alone  -- goal: ratio <= 3;
* ``read_problem(x.mps)`` (copter: pre-scan + highspy + checks + arrays) vs ``Highs.readModel(x.mps)``
  alone -- goal: ratio <= 2.5.

With ``--apply`` it also times ``solver.differential.apply_delta`` on the generated problem for deltas
touching 0.1%, 1% and 10% of the columns (cost-only, coefficient values, drop + add columns), with the
linear pass over the matrix reported separately.

Usage: ``.venv/bin/python bench/bench_read.py [--nnz 10000000] [--repeat 2] [--dir DIR] [--skip-mps]
[--apply]``
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import sys
import tempfile
import time
from importlib.metadata import version

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from copter_cli.entry import console_environment  # noqa: E402

console_environment()  # the console script's library settings (copter_cli.entry), before numpy loads

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

from formats.io import read_problem, write_problem  # noqa: E402
from solver.model.problem import Problem  # noqa: E402


def generate(nnz: int, per_col: int = 10, seed: int = 0) -> Problem:
    """A feasible-looking LP with n = nnz / per_col columns, m = n / 5 rows, per_col entries per column."""
    rng = np.random.default_rng(seed)
    n = max(nnz // per_col, 1)
    m = max(n // 5, per_col)
    # per_col distinct rows per column: random start + fixed stride (distinct, vectorised)
    start = rng.integers(0, m, n)
    stride = m // per_col
    rows = (start[:, None] + stride * np.arange(per_col)[None, :]) % m
    rows.sort(axis=1)
    indptr = np.arange(0, n * per_col + 1, per_col, dtype=np.int64)
    data = rng.integers(1, 100, n * per_col) / 10.0
    A = sp.csc_array((data, rows.reshape(-1).astype(np.int32), indptr), shape=(m, n))
    names_c = np.char.add("x", np.arange(n).astype(str)).astype(object)
    names_r = np.char.add("r", np.arange(m).astype(str)).astype(object)
    return Problem.from_arrays(cost=rng.normal(size=n).round(3), col_lower=np.zeros(n),
                               col_upper=rng.choice([10.0, np.inf], n), row_lower=np.full(m, -np.inf),
                               row_upper=rng.integers(50, 500, m).astype(float), matrix=A,
                               col_names=names_c, row_names=names_r)


def best(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        gc.collect()
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
        del out
    return min(times)


def apply_table(p: Problem) -> None:
    """Print apply_delta seconds for deltas of growing size on ``p`` (name dicts built first)."""
    from solver.differential import apply_delta
    from solver.model.delta import Delta

    rng = np.random.default_rng(1)
    t = time.perf_counter()
    p.col_index()
    p.row_index()
    print(f"name -> position dicts built once per process: {time.perf_counter() - t:.2f} s")
    A = p.matrix().tocoo()
    # load the numba kernels (compiled once, cached on disk) outside the timed runs
    apply_delta(p, Delta.concat([Delta.coefs(p.col_names[A.col[:1]], p.row_names[A.row[:1]], 2.0),
                                 Delta.drop_vars(p.col_names[-1:])]))
    print("| delta | rows | apply s | of which linear pass s | arrays replaced |")
    print("|---|---|---|---|---|")
    for frac in (0.001, 0.01, 0.1):
        k = max(1, int(frac * p.n_cols))
        cols = rng.choice(p.n_cols, k, replace=False)
        ent = rng.choice(p.nnz, k, replace=False)
        new = np.char.add("new", np.arange(k).astype(str)).astype(object)
        deltas = {
            "cost only": Delta.vars(p.col_names[cols], cost=rng.normal(size=k)),
            "coef values": Delta.coefs(p.col_names[A.col[ent]], p.row_names[A.row[ent]],
                                       rng.integers(1, 9, k) * 1.0),
            "drop+add cols": Delta.concat([Delta.drop_vars(p.col_names[cols]),
                                           Delta.vars(new, cost=1.0, upper=5.0),
                                           Delta.coefs(new, p.row_names[rng.integers(0, p.n_rows, k)], 1.0)]),
        }
        for name, d in deltas.items():
            t = time.perf_counter()
            _, info = apply_delta(p, d)
            el = time.perf_counter() - t
            print(f"| {frac * 100:g}% {name} | {len(d)} | {el:.3f} | {info.seconds_linear:.3f} | "
                  f"{', '.join(sorted(info.changed_fields))} |")
    print()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nnz", type=int, default=10_000_000, help="(default: %(default)s)")
    ap.add_argument("--repeat", type=int, default=2, help="(default: %(default)s)")
    ap.add_argument("--dir", default=None, help="where to write the files (default: a temp folder)")
    ap.add_argument("--skip-mps", action="store_true")
    ap.add_argument("--apply", action="store_true", help="also time apply_delta for small deltas")
    args = ap.parse_args()
    import highspy
    import pyarrow.parquet as pq

    print("command: " + " ".join([os.path.basename(sys.executable)] + sys.argv))
    print(f"python {platform.python_version()}, numpy {np.__version__}, pyarrow {version('pyarrow')}, "
          f"highspy {version('highspy')}, {os.cpu_count()} cpus, {platform.machine()}")
    with tempfile.TemporaryDirectory(dir=args.dir) as tmp:
        t = time.perf_counter()
        p = generate(args.nnz)
        print(f"generated {p.n_rows} rows x {p.n_cols} cols, {p.nnz} nonzeros in {time.perf_counter() - t:.1f} s")
        pq_path, mps_path = os.path.join(tmp, "x.parquet"), os.path.join(tmp, "x.mps")
        t = time.perf_counter()
        write_problem(p, pq_path)
        print(f"wrote Parquet ({os.path.getsize(pq_path) / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s")
        rows = []
        t_ours = best(lambda: read_problem(pq_path), args.repeat)
        t_ref = best(lambda: pq.read_table(pq_path), args.repeat)
        check = read_problem(pq_path)
        assert check.equals(p), "Parquet round trip differs"
        del check
        rows.append(("Parquet", "copter read_problem", t_ours, "pyarrow.parquet.read_table", t_ref, 3.0))
        if args.apply:
            apply_table(p)
        if not args.skip_mps:
            t = time.perf_counter()
            write_problem(p, mps_path)
            print(f"wrote MPS ({os.path.getsize(mps_path) / 1e6:.0f} MB) in {time.perf_counter() - t:.1f} s")
            del p
            gc.collect()

            def highs_only():
                h = highspy.Highs()
                h.setOptionValue("output_flag", False)
                h.readModel(mps_path)
                return h

            t_ref = best(highs_only, args.repeat)
            t_ours = best(lambda: read_problem(mps_path), args.repeat)
            rows.append(("MPS", "copter read_problem", t_ours, "highspy Highs.readModel", t_ref, 2.5))
    print()
    print("| format  | ours                | seconds | reference                  | seconds | ratio | goal  |")
    print("|---------|---------------------|---------|----------------------------|---------|-------|-------|")
    for fmt, a, ta, b, tb, goal in rows:
        ratio = ta / tb
        print(f"| {fmt:<7} | {a:<19} | {ta:7.2f} | {b:<26} | {tb:7.2f} | {ratio:5.2f} | <={goal:<4}|"
              + ("" if ratio <= goal else "  MISSED"))


if __name__ == "__main__":
    main()
