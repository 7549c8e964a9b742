"""Threads for the LP engines' kernels on the largest TE LP: seconds per PDHG iteration with the serial
kernels (``Settings.threads = 1``) and the parallel ones on 2 threads, and the ALM's sparse product (serial),
with the memory traffic each implies.

Workload: TE on a Topology Zoo graph (default Kdl: 754 nodes, ~570k rows, ~1.06M columns, ~31M nonzeros;
``--topology Cogentco`` for a smaller one). PDHG runs ``--iterations`` iterations without presolve (so the
iterate phase is the kernels; ``seconds["iterate"] / iterations``), once per thread count, alternating
``--repeat`` times (the machine is shared: take the fastest of each). The ALM's kernels are serial (its CG
products ``alm_kernels.csc_matvec`` / ``csr_matvec``), timed over ``--products`` products.

Memory traffic per PDHG iteration: A x and A' y read the CSC and CSR copies of the matrix (12 bytes per
nonzero each: float64 value + int32 index) plus the vectors; the printed GB/s is that traffic over the
measured time, to compare with the machine's bandwidth (a 2-core cloud VM: ~10-20 GB/s; one core streams
~5-10 GB/s). A kernel is bandwidth-bound when more threads stop helping once that figure reaches the
socket's bandwidth: on a 16-core server (~100-200 GB/s) a 31M-nonzero iteration moving ~0.75 GB can go
~8-12x faster than one core, not 16x.

Run: ``.venv/bin/python bench/bench_threads.py [--topology Kdl] [--iterations 192] [--repeat 2]``
(set NUMBA_NUM_THREADS before starting to cap the pool; default = cores).
"""

from __future__ import annotations

import argparse
import os
import platform
import shlex
import sys
import time
from importlib.metadata import version
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from copter_cli.entry import console_environment  # noqa: E402

console_environment()  # the console script's library settings (copter_cli.entry), before numpy loads

import numpy as np  # noqa: E402

from solver.lp.dispatch import solve  # noqa: E402
from solver.model.settings import Settings  # noqa: E402


def build(topology: str):
    """The TE LP of round 0 on the named Topology Zoo graph (POP's GraphML)."""
    from examples.te.loader import read_topology
    from solver.workloads.te import TEScenario

    data = Path(os.environ.get("COPTER_DATA") or REPO.parent / "shared" / "data")
    return TEScenario(topology=read_topology(data / "topologies" / f"pop_{topology}.graphml"), seed=0).base()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--topology", default="Kdl", help="(default: %(default)s)")
    ap.add_argument("--iterations", type=int, default=192, help="(default: %(default)s)")
    ap.add_argument("--repeat", type=int, default=2, help="(default: %(default)s)")
    ap.add_argument("--products", type=int, default=20, help="(default: %(default)s)")
    args = ap.parse_args()
    import numba

    print("command:", shlex.join([Path(sys.executable).name, *sys.argv]))  # pastes back (an empty argument quoted)
    print("versions:", ", ".join(f"{k} {version(k)}" for k in ("copter", "numba", "numpy")),
          f"python {platform.python_version()}, {os.cpu_count()} cpus, NUMBA_NUM_THREADS "
          f"{numba.config.NUMBA_NUM_THREADS}, load average {os.getloadavg()[0]:.1f}")
    t = time.perf_counter()
    p = build(args.topology)
    print(f"TE {args.topology}: {p.n_rows} rows, {p.n_cols} columns, {p.nnz} nonzeros; built in "
          f"{time.perf_counter() - t:.1f} s", flush=True)
    traffic = 2 * 12 * p.nnz + 8 * (4 * p.n_cols + 4 * p.n_rows)  # bytes per iteration (module docstring)
    best: dict[int, float] = {}
    threads = [1, 2] if numba.config.NUMBA_NUM_THREADS >= 2 else [1]
    for _ in range(args.repeat):
        for th in threads:
            s = Settings(presolve="off", iteration_limit=args.iterations, threads=th, parallel_min_nnz=1,
                         engine="pdhg", check_every=64)
            res = solve(p, s)
            per = res.seconds["iterate"] / max(res.iterations, 1)
            best[th] = min(best.get(th, np.inf), per)
            print(f"  pdhg threads {th}: {res.iterations} iterations, setup {res.seconds.get('setup', 0):.1f} s, "
                  f"{per * 1e3:.1f} ms per iteration ({traffic / per / 1e9:.1f} GB/s)", flush=True)
    from solver.lp.alm_kernels import csc_matvec

    x = np.ones(p.n_cols)
    out = np.empty(p.n_rows)
    csc_matvec(p.a_indptr, p.a_indices, p.a_data, x, out)
    t = time.perf_counter()
    for _ in range(args.products):
        csc_matvec(p.a_indptr, p.a_indices, p.a_data, x, out)
    per_prod = (time.perf_counter() - t) / args.products
    print(f"  alm csc_matvec (serial): {per_prod * 1e3:.1f} ms per product "
          f"({(12 * p.nnz + 8 * (p.n_cols + p.n_rows)) / per_prod / 1e9:.1f} GB/s)")
    print("\nsummary: ms per PDHG iteration, fastest of the repeats: "
          + ", ".join(f"{th} thread(s) {v * 1e3:.1f}" for th, v in best.items())
          + (f"; speed-up 2 vs 1: {best[1] / best[2]:.2f}x" if 2 in best else ""))


if __name__ == "__main__":
    main()
