"""Write a traffic-engineering stream: base.parquet + delta_0001.parquet ... (format: docs/formats.md "Deltas and problems").

Synthetic ring (no data):   python examples/te/generate.py --out /tmp/te --rounds 10 --scale 24
Topology Zoo + gravity:     python examples/te/generate.py --out /tmp/te --topology pop_Cogentco.graphml
B4 with its 36 real TMs:    python examples/te/generate.py --out /tmp/te --topology teal_B4.json --tm teal_B4_real
(topology/TM paths are relative to $COPTER_DATA/topologies and $COPTER_DATA/topologies/tm, or absolute;
--tm names a CSV, or a folder of CSVs played in order as the rounds' matrices.)
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from copter_cli.entry import console_environment  # noqa: E402

console_environment()  # the console script's library settings, before numpy loads (a Kdl stream: 19.4 -> 9.5 s)

from examples.data import count, generator_main, require  # noqa: E402
from examples.te.loader import read_tm, read_topology, tm_for_topology, tm_sequence  # noqa: E402
from solver.workloads.te import TEScenario  # noqa: E402


def _path(p: str, sub: str) -> Path:
    q = Path(p)
    return q if q.is_absolute() or q.exists() else require(sub) / q


def build(args) -> TEScenario:
    """The scenario described by the command-line arguments."""
    kw = dict(objective=args.objective, seed=args.seed, paths=args.paths)
    if not args.topology:
        return TEScenario(nodes=args.scale, **kw)
    topo = read_topology(_path(args.topology, "topologies"))
    demands = None
    if args.tm:
        tm = _path(args.tm, "topologies/tm")
        files = tm_sequence(tm) if tm.is_dir() else [tm]
        demands = [tm_for_topology(read_tm(f), topo) for f in files]
    return TEScenario(topology=topo, demands=demands, **kw)


def add_arguments(ap) -> None:
    """This domain's options."""
    ap.add_argument("--scale", type=int, default=24, help="synthetic ring nodes (when no --topology; default 24)")
    ap.add_argument("--topology", default=None, help="GraphML or JSON topology file")
    ap.add_argument("--tm", default=None, help="traffic-matrix CSV or folder of CSVs (default: gravity)")
    ap.add_argument("--objective", choices=("total", "concurrent"), default="total",
                    help="total flow or the concurrent-flow fraction (default total)")
    ap.add_argument("--paths", type=count(1), default=4, help="edge-disjoint paths per commodity (default 4)")


def main(argv=None) -> int:
    return generator_main(__doc__, add_arguments, build, argv)


if __name__ == "__main__":
    raise SystemExit(main())
