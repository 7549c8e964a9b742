"""Write a shard load-balancing stream (POP's benchmark): base.parquet + delta_0001.parquet ...

    python examples/lb/generate.py --out /tmp/lb --rounds 10 --scale 1024x128

No public shard-load trace exists; POP's benchmark draws new Zipf-like loads every round, which is what
solver.workloads.lb does. Offline streams simulate each round's placement (see that module).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from copter_cli.cmd_demo import write_stream  # noqa: E402
from solver.workloads.common import parse_scale  # noqa: E402
from solver.workloads.lb import LBScenario  # noqa: E402


def build(args) -> LBScenario:
    """The scenario described by the command-line arguments."""
    n, s = LBScenario.parse_scale(parse_scale(args.scale, (1024, 128)))
    return LBScenario(shards=n, servers=s, mem_cap=args.mem, seed=args.seed)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="output folder")
    ap.add_argument("--rounds", type=int, default=10, help="number of deltas")
    ap.add_argument("--scale", default="1024x128", help="SHARDSxSERVERS")
    ap.add_argument("--mem", type=int, default=None, help="memory per server (default 2 x shards/servers)")
    ap.add_argument("--mps", action="store_true", help="write base.mps instead of base.parquet")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    t = time.perf_counter()
    paths = write_stream(build(args), args.out, args.rounds, "base.mps" if args.mps else "base.parquet")
    print(f"wrote {len(paths)} files to {args.out} in {time.perf_counter() - t:.2f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
