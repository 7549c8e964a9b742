"""Write a shard load-balancing stream (POP's benchmark): base.parquet + delta_0001.parquet ...

    python examples/lb/generate.py --out /tmp/lb --rounds 10                     # 256x32: seconds a round
    python examples/lb/generate.py --out /tmp/lb --rounds 10 --scale 1024x128    # POP's full size: minutes

No public shard-load trace exists; POP's benchmark draws new Zipf-like loads every round, which is what
solver.workloads.lb does. Offline streams simulate each round's placement (see that module).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from copter_cli.entry import console_environment  # noqa: E402

console_environment()  # the console script's library settings, before numpy loads (a Kdl stream: 19.4 -> 9.5 s)

from examples.data import count, generator_main  # noqa: E402
from solver.workloads.common import parse_scale  # noqa: E402
from solver.workloads.lb import LBScenario  # noqa: E402


def build(args) -> LBScenario:
    """The scenario described by the command-line arguments."""
    n, s = LBScenario.parse_scale(parse_scale(args.scale, (256, 32)))
    return LBScenario(shards=n, servers=s, mem_cap=args.mem, seed=args.seed)


def add_arguments(ap) -> None:
    """This domain's options."""
    ap.add_argument("--scale", default="256x32",
                    help="SHARDSxSERVERS, both numbers (default 256x32; POP's full size is 1024x128)")
    ap.add_argument("--mem", type=count(1), default=None, help="memory per server (default 2 x shards/servers)")


def main(argv=None) -> int:
    return generator_main(__doc__, add_arguments, build, argv)


if __name__ == "__main__":
    raise SystemExit(main())
