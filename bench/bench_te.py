"""WAN traffic engineering (LP, path formulation) rounds: copter warm/cold against HiGHS cold/warm and POP.

    .venv/bin/python bench/bench_te.py --topology Cogentco --rounds 10 --time-limit 120
    .venv/bin/python bench/bench_te.py --ring 24 --rounds 5           # built-in synthetic ring, no data

``--topology`` is a Topology Zoo name from the shared data (``$COPTER_DATA/topologies/pop_<name>.graphml``)
or a path to a GraphML/JSON file. See bench/common.py for what is measured.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common import REPO, add_common_args, main


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--topology", default=None, help="Topology Zoo name (e.g. Cogentco) or file path")
    src.add_argument("--ring", type=int, default=None, help="synthetic ring with chords of this many nodes")
    ap.add_argument("--objective", choices=("total", "concurrent"), default="total",
                    help="total flow (default) or max concurrent flow")
    add_common_args(ap, default_highs_solver="ipm")
    return ap.parse_args(argv)


def topology_path(name: str) -> Path:
    """A file path as given, else ``<data>/topologies/pop_<name>.graphml`` (data: $COPTER_DATA or ../shared/data)."""
    import os

    p = Path(name)
    if p.exists():
        return p
    data = Path(os.environ.get("COPTER_DATA") or REPO.parent / "shared" / "data")
    cand = data / "topologies" / f"pop_{name}.graphml"
    if not cand.exists():
        raise SystemExit(f"topology {name!r} not found (looked for {cand})")
    return cand


if __name__ == "__main__":
    args = parse()
    from solver.workloads.te import TEScenario

    if args.ring is not None or args.topology is None:
        sc = TEScenario(nodes=args.ring or 24, objective=args.objective, seed=args.seed)
        label = f"ring{args.ring or 24}"
    else:
        from examples.te.loader import read_topology

        topo = read_topology(topology_path(args.topology))
        sc = TEScenario(topology=topo, objective=args.objective, seed=args.seed)
        label = args.topology
    main(f"te-{label}", sc, args, f"TE {label} ({args.objective} flow), {sc.topo.n} nodes")
