"""WAN traffic engineering (LP, path formulation) rounds: copter warm/cold against HiGHS cold/warm and POP.

    .venv/bin/python bench/bench_te.py --topology Cogentco --rounds 10 --time-limit 120
    .venv/bin/python bench/bench_te.py --ring 24 --rounds 5           # built-in synthetic ring, no data

``--topology`` is a Topology Zoo name from the shared data (``$COPTER_DATA/topologies/pop_<name>.graphml``)
or a path to a GraphML/JSON file. See bench/common.py for what is measured.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from common import REPO, add_common_args, main, one_line_errors


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
    # a Topology Zoo name (Cogentco), a Teal one (B4), or a file name in the data set (pop_Colt.graphml, teal_B4.json)
    cands = [data / "topologies" / f for f in (f"pop_{name}.graphml", f"teal_{name}.json", name)]
    found = next((c for c in cands if c.is_file()), None)
    if found is None:
        raise SystemExit(f"error: topology {name!r} not found (looked for {', '.join(map(str, cands))})")
    return found


def topology_label(name: str) -> str:
    """The results files' label of ``--topology``: a name as given, a path's file name without its folders and
    suffix (a path put its folders into the results file name, whose folder did not exist: the run's results were lost
    after every round had run; helper-238, session 59)."""
    p = Path(name)
    return p.stem if (p.suffix or len(p.parts) > 1) else name


if __name__ == "__main__":
    args = parse()
    from solver.workloads.te import TEScenario

    def run() -> None:
        if args.ring is not None or args.topology is None:
            ring = 24 if args.ring is None else args.ring  # --ring 0 ran a ring of 24
            sc = TEScenario(nodes=ring, objective=args.objective, seed=args.seed)
            label = f"ring{ring}"
        else:
            from examples.te.loader import read_topology

            topo = read_topology(topology_path(args.topology))
            sc = TEScenario(topology=topo, objective=args.objective, seed=args.seed)
            label = topology_label(args.topology)
        main(f"te-{label}", sc, args, f"TE {label} ({args.objective} flow), {sc.topo.n} nodes")

    one_line_errors(run)
