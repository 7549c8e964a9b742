"""Sizes and generation times of the workload scenarios at the paper's scales.

    .venv/bin/python bench/bench_generate.py [--rounds 3] [--only sia,te,lb] [--skip-kdl] [--write]

Per scenario: rows, columns, nonzeros of the base problem; seconds to build the scenario and its base
problem (for TE this includes finding the edge-disjoint paths; numba compilation is done beforehand on
a tiny graph and reported separately); mean seconds and rows per delta over ``--rounds`` rounds with
simulated allocations; with ``--write``, seconds to write the base and one delta as Parquet.
TE topologies come from the shared data (``$COPTER_DATA`` or ../shared/data); missing files are skipped.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from copter_cli.entry import console_environment  # noqa: E402

console_environment()  # the console script's library settings (copter_cli.entry), before numpy loads

from solver.workloads.lb import LBScenario  # noqa: E402
from solver.workloads.paths import disjoint_paths  # noqa: E402
from solver.workloads.sia import SiaScenario, fine_configs  # noqa: E402
from solver.workloads.te import TEScenario, ring_with_chords  # noqa: E402


def _data() -> Path:
    import os

    env = os.environ.get("COPTER_DATA")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "data"


def cases(only: set, skip_kdl: bool):
    """(domain, label, factory) for every scale in the issue."""
    out = []
    if "sia" in only:
        for g in (64, 1024, 10240, 25600):
            out.append(("sia", f"{g} GPUs", lambda g=g: SiaScenario(total_gpus=g, seed=0)))
        out.append(("sia", "25600 GPUs, fine configs (1..8, nodes to 512)",
                    lambda: SiaScenario(total_gpus=25600, seed=0, config_gpus=fine_configs(512))))
    if "te" in only:
        out.append(("te", "ring 24 (demo)", lambda: TEScenario(nodes=24, seed=0)))
        topo = _data() / "topologies"
        names = ["Cogentco"] + ([] if skip_kdl else ["Kdl"])
        for name in names:
            f = topo / f"pop_{name}.graphml"
            if f.exists():
                def make(f=f):
                    from examples.te.loader import read_graphml

                    return TEScenario(topology=read_graphml(f), seed=0)

                out.append(("te", name, make))
            else:
                print(f"# skipped TE {name}: {f} not found", file=sys.stderr)
    if "lb" in only:
        for n, s in ((256, 32), (1024, 128)):
            out.append(("lb", f"{n}x{s}", lambda n=n, s=s: LBScenario(n, s, seed=0)))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3, help="(default: %(default)s)")
    ap.add_argument("--only", default="sia,te,lb", help="(default: %(default)s)")
    ap.add_argument("--skip-kdl", action="store_true")
    ap.add_argument("--write", action="store_true", help="also time writing base + one delta as Parquet")
    args = ap.parse_args(argv)
    print(f"# command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(f"# python {platform.python_version()}, numpy {version('numpy')}, scipy {version('scipy')}, "
          f"numba {version('numba')}, pyarrow {version('pyarrow')}, machine {platform.machine()}")
    t = time.perf_counter()
    topo = ring_with_chords(6)
    disjoint_paths(topo.n, topo.src, topo.dst, [0], [3])
    print(f"# numba path-kernel compile/load: {time.perf_counter() - t:.2f} s")
    header = ["domain", "scale", "rows", "columns", "nonzeros", "build s", "delta s", "delta rows"]
    if args.write:
        header += ["write base s", "write delta s"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for domain, label, make in cases(set(args.only.split(",")), args.skip_kdl):
        t = time.perf_counter()
        sc = make()
        p = sc.base()
        build = time.perf_counter() - t
        times, rows, first = [], [], None
        for r in range(1, args.rounds + 1):
            t = time.perf_counter()
            d = sc.next_delta(r)
            times.append(time.perf_counter() - t)
            rows.append(len(d))
            first = first or d
        row = [domain, label, f"{p.n_rows:,}", f"{p.n_cols:,}", f"{p.nnz:,}", f"{build:.2f}",
               f"{sum(times) / max(len(times), 1):.3f}", f"{int(sum(rows) / max(len(rows), 1)):,}"]
        if args.write:
            from formats.io import write_delta, write_problem

            with tempfile.TemporaryDirectory() as tmp:
                t = time.perf_counter()
                write_problem(p, Path(tmp) / "base.parquet")
                wb = time.perf_counter() - t
                t = time.perf_counter()
                if first is not None:
                    write_delta(first, Path(tmp) / "delta_0001.parquet")
                wd = time.perf_counter() - t
            row += [f"{wb:.2f}", f"{wd:.3f}"]
        print("| " + " | ".join(row) + " |", flush=True)
        del sc, p
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
