"""Sia GPU scheduling (MILP) rounds: copter warm/cold against HiGHS cold/warm and POP-4/16.

    .venv/bin/python bench/bench_sia.py --gpus 10240 --rounds 10 --time-limit 120

Scale: total GPUs (1,024 / 10,240 / 25,600 are COpter's sizes; jobs default to 500 / 3,000 / 7,000).
See bench/common.py for what is measured.
"""

from __future__ import annotations

import argparse

from common import add_common_args, main, one_line_errors


def parse(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpus", type=int, default=1024, help="cluster size in GPUs (default 1024)")
    ap.add_argument("--jobs", type=int, default=None, help="concurrent jobs at round 0 (default: by size)")
    ap.add_argument("--form", choices=("max", "min"), default="max", help="objective form (default max)")
    add_common_args(ap)
    return ap.parse_args(argv)


if __name__ == "__main__":
    args = parse()
    from solver.workloads.sia import SiaScenario

    def run() -> None:
        sc = SiaScenario(total_gpus=args.gpus, jobs=args.jobs, form=args.form, seed=args.seed)
        main(f"sia-{args.gpus}", sc, args, f"Sia {args.gpus} GPUs, {sc.n_jobs_target} jobs, form {args.form}")

    one_line_errors(run)
