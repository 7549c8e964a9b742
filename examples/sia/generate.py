"""Write a Sia GPU-scheduling stream: base.parquet + delta_0001.parquet ... (format: docs/formats.md "Deltas and problems").

Synthetic (no data):      python examples/sia/generate.py --out /tmp/sia --rounds 10 --scale 1024
Sia's real workload:      python examples/sia/generate.py --out /tmp/sia --trace newtrace/workload-1.csv --scale 64
Gavel's throughputs:      python examples/sia/generate.py --out /tmp/sia --gavel --scale 1024
(the trace path is relative to $COPTER_DATA/traces/sia/workloads, or absolute; --gavel uses Gavel's 26
job types on K80/P100/V100 with synthetic arrivals).
Offline streams simulate each round's allocation with a greedy (see solver.workloads.sia).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from copter_cli.entry import console_environment  # noqa: E402

console_environment()  # the console script's library settings, before numpy loads (a Kdl stream: 19.4 -> 9.5 s)

from examples.data import count, generator_main, require  # noqa: E402
from examples.sia.loader import load_trace, read_gavel_throughputs  # noqa: E402
from solver.workloads.sia import SiaScenario, fine_configs  # noqa: E402


def build(args) -> SiaScenario:
    """The scenario described by the command-line arguments."""
    kw = dict(total_gpus=args.scale, form=args.form, seed=args.seed)
    if args.trace:
        wl = Path(args.trace)
        if not wl.is_absolute():
            wl = require("traces/sia/workloads") / wl
        arrivals, goodput = load_trace(wl, require("traces/sia/throughput_profiles"), args.trace_max_gpus)
        return SiaScenario(goodput=goodput, arrivals=arrivals, jobs=args.jobs, **kw)
    if args.gavel:
        gp = read_gavel_throughputs(require("traces/gavel/simulation_throughputs_isolated_flat.csv"))
        return SiaScenario(goodput=gp, jobs=args.jobs, **kw)
    return SiaScenario(jobs=args.jobs, config_gpus=fine_configs(args.fine) if args.fine else None, **kw)


def add_arguments(ap) -> None:
    """This domain's options."""
    ap.add_argument("--scale", type=int, default=1024, help="total GPUs (64, 1024, 10240, 25600; default 1024)")
    ap.add_argument("--jobs", type=count(1), default=None,
                    help="jobs at round 0 (default: by scale; with --trace 1, the first arrival: --trace starts at the "
                         "N-th arrival with those N jobs present)")
    ap.add_argument("--form", choices=("max", "min"), default="max", help="max (p=0.5) or Sia's min (p=-0.5) (default max)")
    ap.add_argument("--trace", default=None, help="Sia workload CSV (e.g. newtrace/workload-1.csv)")
    ap.add_argument("--fine", type=count(1), default=None, metavar="MAX_GPUS",
                    help="finer configurations: 1..8 GPUs, then every whole node up to MAX_GPUS (e.g. 512)")
    ap.add_argument("--gavel", action="store_true", help="Gavel's throughputs (K80/P100/V100) instead")
    ap.add_argument("--trace-max-gpus", action="store_true", help="cap jobs at the trace's num_replicas")


def main(argv=None) -> int:
    return generator_main(__doc__, add_arguments, build, argv)


if __name__ == "__main__":
    raise SystemExit(main())
