"""POP's shard load balancing (MILP) rounds: copter warm/cold against HiGHS cold/warm and POP-4/16.

    .venv/bin/python bench/bench_lb.py --scale 1024x128 --rounds 10 --time-limit 120

Scale: SHARDSxSERVERS (POP's benchmark is 1024x128). See bench/common.py for what is measured.
"""

from __future__ import annotations

import argparse

from common import add_common_args, main, one_line_errors


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    # 256x32 as the LB generator's default (examples/lb/README): 1024x128 with six methods at 120 s each was a first
    # run of most of an hour (helper-238)
    ap.add_argument("--scale", default="256x32", help="SHARDSxSERVERS (default 256x32; POP's benchmark: 1024x128)")
    add_common_args(ap)
    return ap.parse_args(argv)


if __name__ == "__main__":
    args = parse()
    from solver.workloads import make_scenario

    one_line_errors(lambda: main(f"lb-{args.scale}", make_scenario("lb", args.scale, seed=args.seed), args,
                                 f"load balancing {args.scale} (shards x servers)"))
